"""The tracked XML read: each record parsed on its own, every value cast with checks.

Spark's XML reader, given a schema, turns a record with one value that does not fit into a row
of nulls and puts the text of the *whole file* in its corrupt-record column (Spark 4.x), and a
malformed record swallows the records after it in the same file; it also drops elements the
schema does not name, and merges names that differ only in case. A tracked read cannot keep
every value that way, so it cuts the records itself (``rowTag``, as the Arrow reader does,
``_records.xml_records``) and parses each one alone (Python's ``xml.etree`` on the
executors, :mod:`._tracked_rows`) into two maps of its top-level values:

* *plain* values — the row element's attributes (``attributePrefix`` + name, unless
  ``excludeAttribute``), its own text (``valueTag``) and each child element that occurs once
  with text only: their text (surrounding spaces trimmed, ``nullValue`` and empty text as
  null);
* *structured* values — a child with attributes or children, or one that repeats: the XML of
  its occurrences. A struct or array column reads it with Spark's ``from_xml``; a nested
  element or attribute that the column's type does not name, or an element repeated where
  the type holds one (``from_xml`` would keep the last), marks the value as not fitting
  (unless mode ``none`` drops the name). The unknown names are listed by path
  (``address.zip``) for the scan, so that ``addNewColumns`` adds them and the other modes
  name them. A plain value in a struct column with the ``valueTag`` field is read as that
  field.

A record that is not well-formed XML keeps its text (``_corrupt_record``) and is counted;
the records around it are unaffected. An opening ``rowTag`` that is never closed (a
truncated file) keeps the rest of the file, from that tag, as one corrupt record. Then, as
for CSV (:mod:`._csv_tracked`), each tracked column is cast with checks (:mod:`._text_cast`), and
the rescued-data column is built natively from the values that did not fit, the keys that are
not columns and the corrupt records. A first
pass over the records (:func:`scan`) finds the keys that are not tracked columns, with the
records and files holding them; new columns' types (``addNewColumns``) and the first run's
schema come from Spark's XML inference over the files that hold them.

Names are read as written, as Spark's XML reader names its columns: ``<geo:lat>`` is
``geo:lat`` and ``xml:lang="en"`` is ``_xml:lang`` wherever the prefix is declared (feeds
declare them on the document's root, outside the records); namespace declarations are not
attributes; ``ignoreNamespace=true`` drops the prefixes (and ``<ns:rowTag>`` is a row too). A
file is decoded by the ``encoding`` option, else its byte-order mark, else its XML
declaration (``encoding="ISO-8859-1"``), else as UTF-8; bytes that are not of that encoding
fail the read naming the file (replacing them would change values without a word). Plain
values are cast as Spark's XML reader reads text: ``CAST``'s rules, dates and timestamps by
the reader's ``timestampFormat``, ``timestampNTZFormat``, ``dateFormat`` and ``timeZone``
(:mod:`._text_cast`).
"""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET
from xml.parsers import expat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..connect_compat import mark_batch
from ..errors import ConfigError, ReadError
from ._formats import Framed, Observed, TrackedInput
from ._rescue import CORRUPT_KEY, FILE_PATH_KEY
from ._text_cast import cast_text

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

    from ..planning.files import FileEntry
    from ..planning.schema import SchemaDecision
    from ._options import ReadRequest

__all__ = ["XmlRows", "KeyScan", "parse_record", "scan", "typed_frame", "XmlTracked"]

VALUE = "__lm_value"
TEXTS = "__lm_texts"
XMLS = "__lm_xmls"
ODD = "__lm_odd"
NEW = "__lm_new"  # paths (JSON arrays) of names inside columns their types do not know
FILE = "__lm_file"
_CR = "__lm_cr"
_WRAP = "__lm_row"
_CORRUPT_TOKEN = "\u0000corrupt"
_PATH_TOKEN = "\u0000path:"
BATCH_ROWS = 4096

#: A tree of the names a struct column knows, level by level: name -> (whether the element
#: may repeat (an array), the names inside it: None for any name (a map) or text only).
Names = dict[str, tuple[bool, Any]]


def known_names(data_type: DataType) -> Names | None:
    """The nested names ``data_type`` knows (arrays see through to their elements); None
    when anything goes (a map, or an atomic type: text only)."""
    from pyspark.sql.types import ArrayType, StructType

    while isinstance(data_type, ArrayType):
        data_type = data_type.elementType
    if not isinstance(data_type, StructType):
        return None
    return {f.name: known_type(f.dataType) for f in data_type.fields}


def known_type(data_type: DataType) -> tuple[bool, Names | None]:
    """What an element read as ``data_type`` may hold: (it may repeat, its names)."""
    from pyspark.sql.types import ArrayType

    return isinstance(data_type, ArrayType), known_names(data_type)


@dataclass(frozen=True)
class XmlOptions:
    """The reader options a record's parse needs."""

    row_tag: str
    attribute_prefix: str = "_"
    value_tag: str = "_VALUE"
    exclude_attributes: bool = False
    null_value: str | None = None
    encoding: str | None = None  # None: a BOM, else the XML declaration's, else UTF-8
    ignore_namespace: bool = False  # names without their prefix (``geo:lat`` is ``lat``)

    @staticmethod
    def of(request: ReadRequest) -> XmlOptions:
        tag = (request.option("rowTag") or "").strip()
        if not tag:
            raise ConfigError("an xml source needs option rowTag (the element that holds one "
                              "record), e.g. --option rowTag=row")
        return XmlOptions(tag, request.option("attributePrefix") or "_",
                          request.option("valueTag") or "_VALUE",
                          request.flag("excludeAttribute"), request.option("nullValue"),
                          request.option("encoding") or request.option("charset") or None,
                          request.flag("ignoreNamespace"))


def _text(value: str | None, options: XmlOptions) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value or value == options.null_value:
        return None
    return value


def _unknown(element: ET.Element, names: Names, options: XmlOptions,
             path: tuple[str, ...] = (), new: list[tuple[str, ...]] | None = None,
             drop_new: bool = False) -> bool:
    """Whether ``element`` has an attribute or child that ``names`` does not know, or a
    child repeated where its type holds one (Spark's parser would keep the last only).
    The unknown names are added to ``new`` as paths below ``path`` (``element`` for the
    elements of an array); ``drop_new`` (mode ``none``): an unknown name that is not a known
    one up to case does not make the element odd (Spark's parser drops it)."""
    from ..planning.schema import name_key

    keys = {name_key(n) for n in names}
    odd = False

    def unknown(name: str) -> bool:
        if new is not None:
            new.append((*path, name))
        return not drop_new or name_key(name) in keys

    if not options.exclude_attributes:
        for attribute in element.attrib:
            if options.attribute_prefix + attribute not in names:
                odd = unknown(options.attribute_prefix + attribute) or odd
    if _text(element.text, options) is not None and len(element) and \
            options.value_tag not in names:
        odd = True
    tags = [child.tag for child in element]
    for child in element:
        if child.tag not in names:
            odd = unknown(child.tag) or odd
            continue
        many, inner = names[child.tag]
        if not many and tags.count(child.tag) > 1:
            odd = True
        below = (*path, child.tag, "element") if many else (*path, child.tag)
        if inner is not None and _unknown(child, inner, options, below, new, drop_new):
            odd = True
        if inner is None and (len(child) or (child.attrib and not options.exclude_attributes)):
            odd = True
    return odd


def _tree(record: str, ignore_namespace: bool = False) -> ET.Element | None:
    """``record`` parsed with names as written (``geo:lat``, an attribute ``xml:lang``), as
    Spark's XML reader names columns, so that a prefix declared outside the record (on the
    document's root, as feeds do) is no error; namespace declarations are not attributes.
    ``ignore_namespace`` drops the prefixes, as Spark's ``ignoreNamespace``. None when it is
    not well-formed."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()  # no namespace processing

    def name(raw: str) -> str:
        return raw.rpartition(":")[2] if ignore_namespace else raw

    def start(tag: str, attributes: dict[str, str]) -> None:
        builder.start(name(tag), {name(k): v for k, v in attributes.items()
                                  if k != "xmlns" and not k.startswith("xmlns:")})

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: builder.end(name(tag))
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(record, True)
        return builder.close()
    except (expat.ExpatError, AssertionError):
        return None


def parse_record(record: str, options: XmlOptions, columns: Names,
                 new: list[tuple[str, ...]] | None = None, drop_new: bool = False
                 ) -> tuple[dict[str, str | None], dict[str, str], list[str]] | None:
    """A record's top-level values: (plain values, structured values as XML, the structured
    columns (``columns``: their :func:`known_type`) holding a name their type does not know
    or repeated where the type holds one); None when it is not well-formed. ``new`` gets
    the paths of the names inside columns their types do not know (``drop_new``: see
    :func:`_unknown`)."""
    row = _tree(record, options.ignore_namespace)
    if row is None:
        return None
    plain: dict[str, str | None] = {}
    structured: dict[str, str] = {}
    odd: list[str] = []
    if not options.exclude_attributes:
        for name, value in row.attrib.items():
            plain[options.attribute_prefix + name] = _text(value, options)
    own = _text(row.text, options)
    if own is not None:
        plain[options.value_tag] = own
    groups: dict[str, list[ET.Element]] = {}
    for child in row:
        groups.setdefault(child.tag, []).append(child)
    for tag, elements in groups.items():
        first = elements[0]
        if len(elements) == 1 and not len(first) and not first.attrib:
            plain[tag] = _text(first.text, options)
            continue
        for element in elements:
            element.tail = None
        structured[tag] = "".join(ET.tostring(e, encoding="unicode") for e in elements)
        many, names = columns.get(tag, (True, None))
        below = (tag, "element") if many and tag in columns else (tag,)
        if (len(elements) > 1 and not many) or (names is not None and any(
                [_unknown(e, names, options, below, new, drop_new) for e in elements])):
            odd.append(tag)
    return plain, structured, odd


@dataclass(frozen=True)
class XmlRows:
    """The row maker of a tracked XML read (see :mod:`._tracked_rows`)."""

    options: XmlOptions
    known: Names = field(default_factory=dict)  # the struct, array and map columns
    drop_new: bool = False  # mode none: names inside columns their types lack are dropped

    def batches(self, fs: pafs.FileSystem, path: str, uri: str) -> Iterator[pa.Table]:
        import pyarrow as pa

        from ._records import xml_encoding, xml_records
        from ._tracked_rows import file_uri

        with fs.open_input_stream(path, compression="detect") as stream:
            data = stream.read()
        encoding = xml_encoding(data, self.options.encoding)
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:  # replacing the bytes would change values unseen
            raise ReadError(f"cannot read {uri} as {encoding}: byte {exc.start} is not "
                            f"{encoding} text; give the file's encoding with the option "
                            f"encoding (--option encoding=NAME)") from None
        shown = file_uri(uri)
        rows: list[dict[str, Any]] = []
        for record in xml_records(text, self.options.row_tag,
                                  any_prefix=self.options.ignore_namespace):
            new: list[tuple[str, ...]] = []
            parsed = parse_record(record, self.options, self.known, new, self.drop_new)
            if parsed is None:
                rows.append({VALUE: record, TEXTS: None, XMLS: None, ODD: None, NEW: None,
                             FILE: shown})
            else:
                plain, structured, odd = parsed
                paths = sorted({json.dumps(p) for p in new}) or None
                rows.append({VALUE: None, TEXTS: list(plain.items()),
                             XMLS: list(structured.items()), ODD: odd or None, NEW: paths,
                             FILE: shown})
            if len(rows) >= BATCH_ROWS:
                yield pa.Table.from_pylist(rows, schema=_arrow_schema())
                rows = []
        if rows:
            yield pa.Table.from_pylist(rows, schema=_arrow_schema())


def _arrow_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(VALUE, pa.string()), (TEXTS, pa.map_(pa.string(), pa.string())),
                      (XMLS, pa.map_(pa.string(), pa.string())), (ODD, pa.list_(pa.string())),
                      (NEW, pa.list_(pa.string())), (FILE, pa.string())])


def _spark_schema() -> StructType:
    from pyspark.sql import types as T

    text_map = T.MapType(T.StringType(), T.StringType())
    return T.StructType([T.StructField(VALUE, T.StringType()), T.StructField(TEXTS, text_map),
                         T.StructField(XMLS, text_map),
                         T.StructField(ODD, T.ArrayType(T.StringType())),
                         T.StructField(NEW, T.ArrayType(T.StringType())),
                         T.StructField(FILE, T.StringType())])


def records(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry], root: str,
            schema: StructType | None, drop_new: bool = False) -> tuple[DataFrame, list[str]]:
    """The parsed records of ``files`` (internal columns) and the partition column names.
    ``drop_new`` (mode ``none``): names inside columns that their types lack are dropped."""
    from ._tracked_rows import python_rows

    from pyspark.sql.types import ArrayType, MapType, StructType

    nested = {f.name: known_type(f.dataType) for f in (schema.fields if schema else [])
              if isinstance(f.dataType, (StructType, ArrayType, MapType))}
    maker = XmlRows(XmlOptions.of(request), nested, drop_new)
    return python_rows(spark, files, root, _spark_schema(), maker,
                       recursive=request.flag("recursiveFileLookup"))


@dataclass(frozen=True)
class KeyScan:
    """Keys of a run's records that are not tracked columns (records having each, and
    their files), and the records that are not well-formed."""

    keys: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    corrupt: int = 0
    #: names inside columns that their types do not know, by path (``("address", "zip")``)
    fields: dict[tuple[str, ...], int] = field(default_factory=dict)
    field_files: dict[tuple[str, ...], list[str]] = field(default_factory=dict)


def scan(rows: DataFrame, names: Sequence[str]) -> KeyScan:
    """One pass over ``rows`` (from :func:`records`): the keys that are not in ``names``."""
    from pyspark.sql import functions as F

    empty = F.array().cast("array<string>")
    keys = F.array_union(F.coalesce(F.map_keys(F.col(TEXTS)), empty),
                         F.coalesce(F.map_keys(F.col(XMLS)), empty))
    if names:
        keys = F.array_except(keys, F.array(*[F.lit(n) for n in names]))
    keys = F.concat(keys, F.when(F.col(TEXTS).isNull(), F.array(F.lit(_CORRUPT_TOKEN)))
                    .otherwise(empty),
                    F.transform(F.coalesce(F.col(NEW), empty),
                                lambda p: F.concat(F.lit(_PATH_TOKEN), p)))
    found = (rows.select(F.explode(keys).alias("k"), F.col(FILE).alias("f"))
             .groupBy("k").agg(F.count(F.lit(1)).alias("n"), F.collect_set("f").alias("fs"))
             .collect())
    counts = {r["k"]: int(r["n"]) for r in found}
    corrupt = counts.pop(_CORRUPT_TOKEN, 0)
    paths = {k: tuple(json.loads(k[len(_PATH_TOKEN):])) for k in counts
             if k.startswith(_PATH_TOKEN)}
    return KeyScan({k: n for k, n in counts.items() if k not in paths},
                   {r["k"]: sorted(r["fs"]) for r in found
                    if r["k"] in counts and r["k"] not in paths},
                   corrupt, {p: counts[k] for k, p in paths.items()},
                   {paths[r["k"]]: sorted(r["fs"]) for r in found if r["k"] in paths})


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _column(name: str, data_type: DataType, options: dict[str, str]) -> tuple[Column, Column]:
    """(the typed value of column ``name``, whether a present value did not fit)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StringType, StructField, StructType

    text = F.col(TEXTS)[name]
    xml = F.col(XMLS)[name]
    odd = F.coalesce(F.array_contains(F.col(ODD), name), F.lit(False))
    if isinstance(data_type, StringType):
        return text, xml.isNotNull()
    if isinstance(data_type, (StructType, ArrayType, MapType)):
        element: DataType = data_type
        while isinstance(element, ArrayType):
            element = element.elementType
        value_tag = next((v for k, v in options.items() if k.lower() == "valuetag"), "_VALUE")
        if isinstance(element, StructType) and value_tag in element.fieldNames():
            # <price>6</price> where <price currency="EUR">5</price> made the type: its
            # text is the struct's value tag, as Spark's parser reads it.
            escaped = F.regexp_replace(F.regexp_replace(F.regexp_replace(
                text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;")
            xml = F.coalesce(xml, F.when(text.isNotNull(), F.concat(
                F.lit(f"<{name}>"), escaped, F.lit(f"</{name}>"))))
            text = F.lit(None).cast("string")
        wrapper = StructType([StructField(name, data_type), StructField(_CR, StringType())])
        parsed = F.from_xml(F.concat(F.lit(f"<{_WRAP}>"), xml, F.lit(f"</{_WRAP}>")), wrapper,
                            {**options, "rowTag": _WRAP, "mode": "PERMISSIVE",
                             "columnNameOfCorruptRecord": _CR})
        structured = F.when(xml.isNotNull() & ~odd, parsed.getField(name))
        bad_xml = xml.isNotNull() & (odd | parsed.getField(_CR).isNotNull()
                                     | parsed.getField(name).isNull())
        if isinstance(data_type, ArrayType) and not isinstance(
                data_type.elementType, (StructType, ArrayType, MapType)):
            single = cast_text(text, data_type.elementType, options)
            value = F.coalesce(structured, F.when(single.isNotNull(), F.array(single)))
            return value, bad_xml | (text.isNotNull() & single.isNull())
        return F.when(bad_xml, F.lit(None)).otherwise(structured), bad_xml | text.isNotNull()
    typed = cast_text(text, data_type, options)
    return typed, xml.isNotNull() | (text.isNotNull() & typed.isNull())


def typed_frame(rows: DataFrame, schema: StructType, partitions: Sequence[str],
                hidden: Sequence[str], *, rescued_column: str | None,
                options: Mapping[str, str], observation: Any = None) -> DataFrame:
    """``schema``'s columns cast with checks, the partition columns and the rescued-data
    column (None: a ``_corrupt_record`` column with the records that are not well-formed,
    which sinks set aside). ``hidden``: keys that are not columns whose values go to the
    rescued data. ``observation`` gets ``v:<column>``, ``k:<key>`` and ``corrupt``."""
    from pyspark.sql import functions as F

    parse_options = {k: v for k, v in options.items()
                     if k.lower() not in ("rowtag", "mode", "columnnameofcorruptrecord",
                                          "inferschema", "samplingratio", "rowvalidationxsdpath",
                                          "recursivefilelookup", "pathglobfilter", "encoding",
                                          "charset", "compression")}
    corrupt = F.col(TEXTS).isNull()
    columns, mismatch, raw = [], {}, {}
    for f in schema.fields:
        typed, bad = _column(f.name, f.dataType, parse_options)
        columns.append(F.when(bad, F.lit(None)).otherwise(typed).alias(f.name))
        mismatch[f.name] = ~corrupt & bad
        raw[f.name] = F.coalesce(F.col(XMLS)[f.name], F.col(TEXTS)[f.name])
    extra = {h: F.coalesce(F.col(XMLS)[h], F.col(TEXTS)[h]) for h in hidden}
    frame = rows
    if observation is not None:
        metrics = [F.sum(corrupt.cast("long")).alias("corrupt")]
        metrics += [F.sum(c.cast("long")).alias(f"v:{n}") for n, c in mismatch.items()]
        metrics += [F.sum(v.isNotNull().cast("long")).alias(f"k:{n}") for n, v in extra.items()]
        frame = mark_batch(frame).observe(observation, *metrics)
    out = columns + [F.col(_quoted(p)) for p in partitions]
    if rescued_column is None:
        return frame.select(*out, F.col(VALUE).alias(CORRUPT_KEY))
    fields = [F.when(c, raw[n]).alias(n) for n, c in mismatch.items()]
    fields += [v.alias(n) for n, v in extra.items()]
    fields.append(F.col(VALUE).alias(CORRUPT_KEY))
    fields.append(F.col(FILE).alias(FILE_PATH_KEY))
    anything = corrupt
    for c in mismatch.values():
        anything = anything | c
    for v in extra.values():
        anything = anything | v.isNotNull()
    rescued = F.when(anything, F.to_json(F.struct(*fields)))
    return frame.select(*out, rescued.alias(rescued_column))


@dataclass
class _Looked:
    """What :meth:`XmlTracked.observe` found: the parsed records and partition columns, and
    the untracked keys (for :meth:`XmlTracked.frame`)."""

    rows: DataFrame
    partitions: list[str]
    keys: dict[str, int]


class XmlTracked:
    """The tracked XML read (:class:`._formats.TrackedFormat`, the module doc): the records
    parsed and scanned, then the typed frame."""

    def observe(self, read: TrackedInput) -> Observed:
        """The keys of the parsed records that are not tracked columns (and the names inside
        columns), typed by Spark's XML inference over the files holding them where the mode
        adds them; the first run's columns by inference."""
        from ..planning.schema import Field, name_key
        from ..planning.schema_nested import path_text
        from ._errors import read_error, spark_errors
        from ._formats import files_named
        from ._read import read_files
        from ._formats import _fields, _later_columns, _struct, _to_type, _with_inside

        spark, request, files, root = read.spark, read.request, read.files, read.root
        tracked, tracking, reserved = read.tracked, read.tracking, read.reserved
        options = dict(request.options)
        XmlOptions.of(request)  # rowTag is checked before any work

        def infer(chosen: Sequence[FileEntry]) -> dict[str, Any]:
            frame = read_files(spark, chosen, root=root, format="xml", options=options)
            return {f.name: f.type for f in _fields(frame.schema)}

        drop_new = tracking.mode == "none"
        rows, partitions = records(spark, request, files, root,
                                   _struct(tracked) if tracked is not None else None, drop_new)
        skip = {p for p in partitions} | set(reserved)
        try:
            found = scan(rows, [f.name for f in tracked or []])
        except spark_errors() as exc:  # a file that cannot be read: ReadError naming it
            error = read_error(exc, "xml")
            if error is None:
                raise
            raise error from exc
        keys = {k: n for k, n in found.keys.items() if k not in skip}
        inferred = False
        if tracked is None:
            types = infer(files)
            by_key = {name_key(n): t for n, t in types.items()}
            observed = [Field(n, t) for n, t in types.items() if n not in skip]
            known = {f.name for f in observed}
            # Keys Spark's inference did not name (case variants, fields after a malformed
            # record): their own type up to case, else string.
            observed += [Field(k, by_key.get(name_key(k), "string")) for k in sorted(keys)
                         if k not in known]
            inferred = True
        else:
            fresh = _to_type(tracked, sorted(keys), reserved, tracking.mode)
            types_of = None
            if fresh:
                holding = files_named(files, sorted({p for n in fresh for p in found.files[n]}))
                types = infer(holding if holding else files)
                by_key = {name_key(n): t for n, t in types.items()}
                types_of = {n: types.get(n, by_key.get(name_key(n), "string")) for n in fresh}
            observed = _later_columns(tracked, sorted(keys), reserved, types_of)
            inferred = types_of is not None
        # Names inside tracked columns that their types do not know (address.zip): typed by
        # inference over the files holding them when addNewColumns adds them.
        inside = {p: n for p, n in sorted(found.fields.items()) if p[0] not in skip}
        if inside and tracked is not None:
            typed: dict[str, Any] = {}
            if tracking.mode == "addNewColumns":
                holding = files_named(files, sorted({f for p in inside
                                                     for f in found.field_files[p]}))
                typed = infer(holding if holding else files)
                inferred = True
            observed = _with_inside(observed, inside, typed)
        counted = {**keys, **{path_text(p): n for p, n in inside.items()}}
        return Observed(observed, counted, skip, inferred,
                        state=_Looked(rows, list(partitions), keys))

    def frame(self, read: TrackedInput, seen: Observed, decision: SchemaDecision) -> Framed:
        """The records cast to the decided schema (parsed again when the decision knows new
        columns or fields), misfits, untracked keys and corrupt records rescued."""
        from pyspark.sql import Observation

        from ..planning.schema import name_key
        from ._errors import guard
        from ._formats import _struct

        looked: _Looked = seen.state
        tracking = read.tracking
        schema = _struct(decision.schema)
        names = {f.name for f in decision.schema}
        column_keys = {name_key(n) for n in names}
        hidden = [k for k in sorted(looked.keys) if k not in names
                  and (tracking.mode != "none" or name_key(k) in column_keys)]
        rows, partitions = looked.rows, looked.partitions
        if read.tracked is None or decision.changed:  # knows new columns and nested fields
            rows, partitions = records(read.spark, read.request, read.files, read.root,
                                       schema, tracking.mode == "none")
        observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
        frame = typed_frame(rows, schema, partitions, hidden,
                            rescued_column=tracking.rescued_data_column,
                            options=dict(read.request.options), observation=observation)
        return Framed(guard(frame, "xml"), observation)
