"""The fast tracked JSON read: Spark's own JSON reader parses, Python never sees a record.

Parsing JSON in an expression (``from_json`` on a text column) is about 3x slower than Spark's
JSON file source (the expression decodes each record through a character reader), so a
tracked read that parses every record itself (:mod:`._rescue`) costs several plain reads. This
module keeps the plain read and adds only what is needed to lose no value:

1. :func:`scan_keys` — one scan of the records' text finds the top-level keys that are not
   tracked columns. A native regular expression (``rlike``) flags the records that might hold
   one (a ``"key":`` after ``{`` or ``,`` that is not a top-level column's name); only those
   are tokenised (``json_object_keys``) to get their exact keys, counted per key with the
   files they occur in. Flat records without drift cost one regex scan, not a parse; a
   record holding a struct whose field names are not top-level columns is always tokenised
   (the text does not say a key's depth). A record holding an object or array under a column
   whose type holds structs also has that value walked (:mod:`._nested_keys`) for keys the
   type does not name (``address.zip``): Spark's reader would drop them without a word.
   On S3 the scan computes the run's records fetched
   once (:mod:`._fetched`); the typed frame parses them from there instead of fetching the
   objects again.
2. :func:`typed_frame` — Spark's JSON reader with the schema the run decided, every untracked
   key to rescue as a hidden ``string`` column (the reader keeps a value of any shape as its
   JSON text) and a corrupt-record column: a record whose value does not fit its column comes
   back with its text (the other columns keep their values), so only those rare records are
   parsed again (``from_json`` to a map, inside a ``when``) to name the values that did not
   fit. The rescued-data column is built natively; a record with nothing to rescue costs a
   null check.
3. The counts (values rescued per column, corrupt records) are gathered while the frame is
   written (``DataFrame.observe`` on the reader's own rows), not in a pass of their own.

Keys that differ from a column only in case or whitespace cannot be read by name next to their
column (Spark resolves names case-insensitively), so the files holding them are read by the
exact, slower path (:mod:`._rescue`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..connect_compat import mark_batch
from ..planning.schema import Field, name_key
from ..planning.schema_nested import path_text
from ..storage import parse_uri
from ._formats import Framed, Observed, TrackedInput, files_named
from ._options import ReadRequest
from ._rescue import CORRUPT_KEY, FILE_PATH_KEY, read_records
from ._rescue import observe as observe_exact
from ._rescue import typed_frame as exact_frame
from ._formats import _fields, _later_columns, _struct, _to_type, _with_inside

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

    from ..planning.files import FileEntry
    from ..planning.schema import SchemaDecision
    from ._fetched import FetchedRecords

__all__ = ["JsonTracked", "KeyScan", "scan_keys", "typed_frame", "files_named", "text_options",
           "observed_counts"]

_CR = "__lm_corrupt"
_MAP = "__lm_map"
_FILE = "__lm_file"


@dataclass(frozen=True)
class KeyScan:
    """Untracked top-level keys of a run's records: records having each, and its files; and
    the keys inside tracked columns that their types do not name, by path
    (``("address", "zip")``, :mod:`._nested_keys`), with the records and files holding each."""

    keys: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)  # as input_file_name() gives
    fields: dict[tuple[str, ...], int] = field(default_factory=dict)
    field_files: dict[tuple[str, ...], list[str]] = field(default_factory=dict)


def text_options(request: ReadRequest) -> dict[str, str]:
    """Options of the text reader that cut the records as the JSON reader does."""
    out: dict[str, str] = {}
    if request.flag("multiLine"):
        out["wholetext"] = "true"
    for key in ("lineSep", "recursiveFileLookup", "pathGlobFilter"):
        if request.option(key):
            out[key] = str(request.option(key))
    return out


def _java_quote(text: str) -> str:
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def _candidate_regex(schema: StructType) -> str:
    """A Java regex found in every record with a key that is not a top-level column (and in
    a few others: a string value holding ``, "x":``, a key with escapes — they are checked
    exactly).

    A key of a JSON object always follows its ``{`` or ``,`` (and optional whitespace), so the
    pattern is tried only there — about once per key instead of once per quote, which made
    the scan cost more than Spark's JSON reader. The key's text may hold escapes (``\\"``),
    so an unknown key is never cut short at an escaped quote.

    Only the top-level column names are known to the pattern: a text scan cannot tell a key's
    depth, so a key named like a field nested in a struct (or any key inside a map) flags its
    record, and the exact check (tokenising the record) says whether it is a top-level key.
    Treating nested names as known missed a new top-level key that shares a nested field's
    name; the price is that records holding structs whose field names are not top-level
    columns are all tokenised."""
    names = {f.name for f in schema.fields}
    if not names:
        return '"(?:[^"\\\\]|\\\\.)*+"\\s*+:'  # any key: every record is checked exactly
    known = "|".join(_java_quote(n) for n in sorted(names, key=len, reverse=True))
    unknown = '[{,]\\s*+"(?!(?:' + known + ')"\\s*+:)(?:[^"\\\\]|\\\\.)*+"\\s*+:'
    from ._nested_keys import has_structs

    nested = [f.name for f in schema.fields if has_structs(f.dataType)]
    if not nested:
        return unknown
    # A record with an object or array under a column whose type holds structs: its keys
    # inside are checked exactly (a new one may share any name, a top-level one's too).
    holding = "|".join(_java_quote(n) for n in sorted(nested, key=len, reverse=True))
    return unknown + '|[{,]\\s*+"(?:' + holding + ')"\\s*+:\\s*+[\\[{]'


def scan_keys(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
              root: str, schema: StructType, records: FetchedRecords | None = None) -> KeyScan:
    """The top-level keys of ``files``' records that are not ``schema``'s columns (exact
    names), with the number of records having each and the files they occur in.
    ``records``: the files' records fetched once for the run (S3, :mod:`._fetched`), scanned
    instead of reading the files as text; this scan is what fetches and keeps them. A small
    local increment without struct-holding columns is scanned in the client instead, with
    the same result (:mod:`._client_keys`)."""
    from pyspark.sql import functions as F

    from ._fetched import FILE_URI
    from ._read import read_files

    from ._nested_keys import has_structs, unknown_paths

    names = [f.name for f in schema.fields]
    nested = [f for f in schema.fields if has_structs(f.dataType)]
    if records is None and not nested:  # a small local increment: no Spark job
        from ._client_keys import client_scan

        local = client_scan(spark, request, files, root, names)
        if local is not None:
            return KeyScan(*local)
    if records is None:
        raw = read_files(spark, files, root=root, format="text", options=text_options(request))
        file = F.input_file_name()
    else:
        raw, file = records.text(), F.col(FILE_URI)
    value = F.col("value")
    keys = F.array_distinct(F.json_object_keys(value))
    unknown = F.array_except(keys, F.array(*[F.lit(n) for n in names])) if names else keys
    # Top-level keys as one-name paths, then the keys inside tracked columns by path.
    paths = F.transform(F.coalesce(unknown, F.array().cast("array<string>")),
                        lambda k: F.array(k))
    if nested:
        texts = F.from_json(value, ", ".join(f"{_quoted(f.name)} string" for f in nested))
        paths = F.concat(paths, *[unknown_paths(texts.getField(f.name), f.dataType, [f.name])
                                  for f in nested])
    rows = (raw.where(value.rlike(_candidate_regex(schema)))
            .select(F.explode(F.array_distinct(paths)).alias("k"), file.alias("f"))
            .groupBy("k").agg(F.count(F.lit(1)).alias("n"), F.collect_set("f").alias("fs"))
            .collect())
    top = [r for r in rows if len(r["k"]) == 1]
    inner = [r for r in rows if len(r["k"]) > 1]
    return KeyScan({r["k"][0]: int(r["n"]) for r in top},
                   {r["k"][0]: sorted(r["fs"]) for r in top},
                   {tuple(r["k"]): int(r["n"]) for r in inner},
                   {tuple(r["k"]): sorted(r["fs"]) for r in inner})


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _count(condition: Column) -> Column:
    """The rows where ``condition`` holds, as an aggregate that needs no projection of its own.

    ``count_if`` is rewritten by Spark 4 into a common expression that a projection below the
    aggregate computes, which copies every row (strings, arrays) once more before the counts
    see it; ``count(when(...))`` is evaluated on the reader's row as it is."""
    from pyspark.sql import functions as F

    return F.count(F.when(condition, F.lit(1)))


def _unfit(typed: Column, text: Column, data_type: DataType) -> Column:
    """Whether a value (``text``, present) did not fit: its column is null, or, for a struct,
    a field inside did not fit (Spark keeps the rest of the struct)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    if not isinstance(data_type, StructType):
        return typed.isNull()
    inner = StructType(list(data_type.fields) + [StructField(_CR, StringType())])
    again = F.from_json(text, inner, {"columnNameOfCorruptRecord": _CR})
    return typed.isNull() | again.getField(_CR).isNotNull()


def typed_frame(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                root: str, schema: StructType, hidden: Sequence[str], *,
                rescued_column: str | None, file_key: str, corrupt_key: str,
                observation: Any = None, records: FetchedRecords | None = None,
                partitions: Sequence[str] | None = None) -> tuple[DataFrame, list[str]]:
    """``files`` read by Spark's JSON reader with ``schema``: its columns, the partition
    columns, then the rescued-data column (``rescued_column``; None: a ``corrupt_key`` column
    with the records that are not JSON objects). ``hidden``: untracked keys whose values go to
    the rescued data. Returns the frame and the partition column names. ``observation`` (a
    ``pyspark.sql.Observation``) gets, once the frame is written, the rescued values per
    column (``v:<column>``) and the corrupt records (``corrupt``): see
    :func:`observed_counts`. ``records``: the files' records fetched once for the run (S3,
    :mod:`._fetched`), parsed instead of fetching the files again; they carry each object's
    URI for ``file_key``. ``partitions``: the partition columns when the caller knows them
    (local files: :func:`_partition_names`), so the frame's columns are not asked for.

    Cost: the counts are observed on the reader's own rows, before anything else is computed,
    and each metric looks at a record only when the reader flagged it (a null check
    otherwise); the record's file is looked up only for a row that has something to rescue.
    Observing after the record's file had been added to every row (``input_file_name()`` as a
    column) cost about half a plain read more.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from ._read import read_files

    taken = {f.name for f in schema.fields}
    extra = [h for h in hidden if h not in taken and h != _CR]
    read_schema = StructType(list(schema.fields) + [StructField(h, StringType()) for h in extra]
                             + [StructField(_CR, StringType())])
    options = {k: v for k, v in request.options.items()
               if k.lower() not in ("columnnameofcorruptrecord", "inferschema",
                                    "samplingratio", "primitivesasstring", "prefersdecimal")}
    options["columnNameOfCorruptRecord"] = _CR
    raw = read_files(spark, files, root=root, format="json", options=options,
                     schema=read_schema, mode="PERMISSIVE", records=records,
                     file_column=_FILE if records is not None else None)
    # Spark's reader: the file is looked up only for a row with something to rescue.
    file = F.col(_FILE) if records is not None else F.input_file_name()
    named = {f.name.lower() for f in read_schema.fields} | {_FILE.lower()}
    if partitions is None or records is not None or any(p.lower() in named
                                                         for p in partitions):
        partitions = [c for c in raw.columns  # a round trip over Spark Connect
                      if c not in {f.name for f in read_schema.fields} and c != _FILE]
    else:
        partitions = list(partitions)
    cr = F.col(_CR)
    flagged = cr.isNotNull()
    # The record's values as text, parsed again only when the reader flagged the record.
    mapped = F.when(flagged, F.from_json(cr, "map<string,string>"))

    def mismatches(values: Column) -> dict[str, Column]:
        return {f.name: flagged & values[f.name].isNotNull()
                & _unfit(F.col(_quoted(f.name)), values[f.name], f.dataType)
                for f in schema.fields}

    if observation is not None:
        counted = mismatches(mapped)
        metrics = [_count(flagged & mapped.isNull()).alias("corrupt")]
        metrics += [_count(c).alias(f"v:{n}") for n, c in counted.items()]
        raw = mark_batch(raw).observe(observation, *metrics)
    parsed = raw.select("*", mapped.alias(_MAP))
    values = F.col(_MAP)
    mismatch = mismatches(values)
    corrupt = flagged & values.isNull()
    out = [F.col(_quoted(f.name)) for f in schema.fields] + [F.col(_quoted(p))
                                                              for p in partitions]
    if rescued_column is None:
        out.append(F.when(corrupt, cr).alias(corrupt_key))
        return parsed.select(*out), partitions
    # A struct whose null fields to_json leaves out: no higher-order function, so the whole
    # projection stays generated code (a filter over an array of entries doubled its cost).
    fitted = F.lit(True)
    for c in mismatch.values():
        fitted = fitted & ~c
    # A record Spark flagged although every top-level value fits: a value nested in an array
    # or map did not fit. The whole record is kept rather than lose that value.
    fields = [F.when(c, values[n]).alias(n) for n, c in mismatch.items()]
    fields += [F.col(_quoted(h)).alias(h) for h in extra]
    fields.append(F.when(flagged & (fitted | values.isNull()), cr).alias(corrupt_key))
    fields.append(file.alias(file_key))
    anything = flagged
    for h in extra:
        anything = anything | F.col(_quoted(h)).isNotNull()
    rescued = F.when(anything, F.to_json(F.struct(*fields)))
    return parsed.select(*out, rescued.alias(rescued_column)), partitions


def observed_counts(values: Mapping[str, Any]) -> tuple[dict[str, int], int]:
    """(rescued values per column, corrupt records) from the metrics of :func:`typed_frame`."""
    rescued = {k[2:]: int(v) for k, v in values.items() if k.startswith("v:") and v}
    return dict(sorted(rescued.items())), int(values.get("corrupt") or 0)



@dataclass
class _Looked:
    """What :meth:`JsonTracked.observe` found, for :meth:`JsonTracked.frame`: the key scan,
    the untracked top-level keys and the keys inside columns, the run's S3 records (None:
    local files) and the frames persisted for the run."""

    scan: KeyScan
    keys: dict[str, int]
    inside: dict[tuple[str, ...], int]
    fetched: FetchedRecords | None
    kept: list[DataFrame]
    partitions: list[str] | None = None


def _partition_names(spark: SparkSession, files: Sequence[FileEntry], root: str,
                     request: ReadRequest) -> tuple[list[str], bool]:
    """The partition columns (``key=value`` folders under ``root``) of ``files``, and whether
    every file has them (local files under the same ``key=value`` folders,
    :func:`._client_keys.plain_partitions`: known without asking Spark)."""
    from ._client_keys import plain_partitions
    from ..planning.files import partition_probe
    from ._partitions import layout_of
    from ._read import read_files

    first = partition_probe(files, root)  # a root file beside key=value folders shows none
    if not parse_uri(root).is_s3:  # local files: no probe in the usual layouts
        names = plain_partitions(files, root, request)
        if names is not None:
            return names, True
        if not layout_of(root, first).may_have_partitions:
            return [], False
    probe = read_files(spark, first, root=root, format="text")
    return [c for c in probe.columns if c != "value"], False


def _inferred_fields(read: TrackedInput, files: Sequence[FileEntry],
                     fetched: FetchedRecords | None) -> list[Field]:
    """The columns Spark infers from ``files``, one per name up to case.

    Spark refuses to infer a schema from JSON records holding keys that differ only in case
    (``code`` and ``Code``: COLUMN_ALREADY_EXISTS) unless the session is case-sensitive, which
    would leave a source's first run failing forever. So inference runs case-sensitively and
    keeps one column per case-insensitive name: the all-lowercase spelling when the files have
    it, else the first in Spark's order. The other spellings are case variants, rescued.
    ``fetched``: infer from the run's records kept from S3
    (:meth:`._fetched.FetchedRecords.infer_json`) instead of copying the files again.
    """
    from ._read import read_files

    conf = read.spark.conf
    before = conf.get("spark.sql.caseSensitive", "false") or "false"
    conf.set("spark.sql.caseSensitive", "true")
    try:
        if fetched is not None:
            fields = _fields(fetched.infer_json(read.request, files))
        else:
            fields = _fields(read_files(read.spark, files, root=read.root, format=read.format,
                                        options=read.options, mode=read.mode).schema)
    finally:
        conf.set("spark.sql.caseSensitive", before)
    chosen: dict[str, Field] = {}
    for f in fields:
        key = name_key(f.name)
        if key not in chosen or (f.name == f.name.lower() != chosen[key].name):
            chosen[key] = f
    keep = {id(f) for f in chosen.values()}
    return [f for f in fields if id(f) in keep]


class JsonTracked:
    """The tracked JSON read (:class:`._formats.TrackedFormat`): one scan of the text for
    untracked keys instead of a parse of every record, then Spark's JSON reader with the
    decided schema; the exact path (:mod:`._rescue`) only for files with keys that differ from
    a column in case. S3 objects are fetched once for the scan and the typed frame
    (:mod:`._fetched`), kept until :attr:`Observed.release` is called."""

    def observe(self, read: TrackedInput) -> Observed:
        """The untracked keys of the files (and inside tracked columns), typed by inference
        over the files holding them where the mode adds them; the first run's columns by
        inference."""
        from ._fetched import fetch_records

        fetched = fetch_records(read.spark, read.request, read.files, read.root)
        kept: list[DataFrame] = []  # other frames persisted for the run (exact path, S3)

        def release() -> None:
            if fetched is not None:
                fetched.release()
            for frame in kept:
                frame.unpersist(blocking=True)

        try:
            seen = self._observe(read, fetched, kept)
        except BaseException:
            release()
            raise
        seen.release = release if fetched is not None else None
        return seen

    def _observe(self, read: TrackedInput, fetched: FetchedRecords | None,
                 kept: list[DataFrame]) -> Observed:
        files, tracked, tracking = read.files, read.tracked, read.tracking
        names, plain = _partition_names(read.spark, files, read.root, read.request)
        partitions = set(names)
        inferred = False
        if tracked is None:
            base = [f for f in _inferred_fields(read, files, fetched)
                    if f.name not in partitions]
            inferred = True
        else:
            base = list(tracked)
        skip = partitions | set(read.reserved)
        scan = scan_keys(read.spark, read.request, files, read.root, _struct(base), fetched)
        keys = {k: n for k, n in scan.keys.items() if k not in skip}
        if tracked is None:
            observed = [f for f in base if f.name not in skip]
            known = {f.name for f in observed}
            observed += [Field(k) for k in sorted(keys) if k not in known]
        else:
            fresh = _to_type(tracked, sorted(keys), read.reserved, tracking.mode)
            types_of = None
            if fresh:
                holding = files_named(files, sorted({p for n in fresh for p in scan.files[n]}))
                types_of = {f.name: f.type for f in _inferred_fields(
                    read, holding if holding else files, fetched)}
            observed = _later_columns(tracked, sorted(keys), read.reserved, types_of)
            inferred = types_of is not None
        # Keys inside tracked columns that their types do not name (address.zip): typed by
        # inference over the files holding them when addNewColumns adds them.
        inside = {p: n for p, n in sorted(scan.fields.items()) if p[0] not in skip}
        if inside:
            types: Mapping[str, Any] = {}
            if tracked is not None and tracking.mode == "addNewColumns":
                holding = files_named(files, sorted({f for p in inside
                                                     for f in scan.field_files[p]}))
                types = {f.name: f.type for f in _inferred_fields(
                    read, holding if holding else files, fetched)}
                inferred = True
            observed = _with_inside(observed, inside, types)
        counted = {**keys, **{path_text(p): n for p, n in inside.items()}}
        return Observed(observed, counted, skip, inferred,
                        state=_Looked(scan, keys, inside, fetched, kept,
                                      names if plain else None))

    def frame(self, read: TrackedInput, seen: Observed, decision: SchemaDecision) -> Framed:
        """Spark's JSON reader for the files without case variants of a column, the exact
        path for the others, in one frame."""
        from pyspark import StorageLevel
        from pyspark.sql import Observation

        looked: _Looked = seen.state
        spark, files, tracking = read.spark, read.files, read.tracking
        scan, keys, inside = looked.scan, looked.keys, looked.inside
        schema = _struct(decision.schema)
        names = {f.name for f in decision.schema}
        column_keys = {name_key(n) for n in names}
        variants = [k for k in keys if k not in names and name_key(k) in column_keys]
        hidden = ([k for k in keys if k not in names and k not in variants]
                  if tracking.mode != "none" else [])
        # Nested keys the schema does not take (mode rescue; case variants in every mode;
        # not those mode none ignores): their files go to the exact path, which rescues the
        # value.
        taken = {*decision.added_fields, *decision.ignored_fields}
        left = [p for p in inside if path_text(p) not in taken]
        slow_files: list[FileEntry] = []
        if variants or left:
            named = files_named(files, sorted({p for k in variants for p in scan.files[k]}
                                              | {f for p in left for f in scan.field_files[p]}))
            slow_files = named if named is not None else list(files)
        slow_paths = {f.path for f in slow_files}
        fast_files = [f for f in files if f.path not in slow_paths]
        frames = []
        observation = None
        counts: dict[str, Any] = {}
        if fast_files:
            observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
            fast, _ = typed_frame(spark, read.request, fast_files, read.root, schema, hidden,
                                  rescued_column=tracking.rescued_data_column,
                                  file_key=FILE_PATH_KEY, corrupt_key=CORRUPT_KEY,
                                  observation=observation, records=looked.fetched,
                                  partitions=looked.partitions)
            frames.append(fast)
        if slow_files:
            records, parts = read_records(spark, read.request, slow_files, read.root)
            if looked.fetched is not None:  # S3: the exact path's count and frame share a fetch
                records = records.persist(StorageLevel.MEMORY_AND_DISK)
                looked.kept.append(records)
            exact = observe_exact(records, schema, read.request.options,
                            rescue_new=tracking.mode != "none")
            counts = {"rescued_values": dict(sorted(exact.mismatched.items())),
                      "corrupt_records": exact.corrupt}
            frames.append(exact_frame(records, schema, parts,
                                      rescued_column=tracking.rescued_data_column,
                                      rescue_new=tracking.mode != "none",
                                      options=read.request.options))
        frame = frames[0]
        for other in frames[1:]:
            frame = frame.unionByName(other, allowMissingColumns=True)
        return Framed(frame, observation, counts)
