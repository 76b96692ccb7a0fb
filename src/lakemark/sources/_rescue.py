"""The exact tracked read (CSV sources; JSON files with case-variant keys): every record parsed.

JSON sources are read by the faster :mod:`._json_tracked` unless a key differs from a column
only in case or whitespace; this module parses each record itself, which costs several plain
reads (``from_json`` in an expression) but sees every key of every record.

Spark's JSON reader, given a schema, turns a value that does not fit its column (``"X5"`` in a
``long`` column) into ``null`` and drops keys the schema does not name, without a word. To keep
every value, a tracked read parses each record itself:

1. the planned files are read as text (one record per line, or the whole file with
   ``multiLine``), with the source's partition folders and each record's file;
2. each record is parsed into a ``map<string, string>`` with Spark's ``from_json`` (a value's
   text as it appears, nested objects and arrays as JSON text);
3. each tracked column is cast from its text with checks (``try_cast`` for atomic types, dates
   and timestamps by the reader's datetime options (:mod:`._text_cast`),
   ``from_json`` for nested ones): a value whose cast gives ``null`` is put, as its original
   text, into the rescued-data column together with every key that is not a tracked column
   (new columns, names that differ only in case) and the record's file (``_file_path``);
   a record that does not parse at all is kept there whole as ``_corrupt_record``.

:func:`observe` makes one aggregation pass over the parsed records: which keys that are not
tracked columns occur (and in how many records), how many values of each tracked column do not
fit, how many records are corrupt. It is what a run uses instead of schema inference once the
schema is tracked.

CSV records come in the same shape: every field read as a string under the header's names (of
the run's first file), a line Spark cannot split into that many fields (ragged) as its text.

Known limits: the files of one CSV run must share a header (Spark reads one); a JSON string holding
a number (``"5"``) fits a ``long`` column (its text casts); a mismatch inside a nested value
(a struct field of the wrong type, text where a struct belongs) rescues the whole value's
text under its column's name (a struct keeps the fields that fit), and so does a key inside
a struct that its type does not name (:mod:`._nested_keys`); a string whose text is a
JSON object or array is read as one; a key named ``_file_path`` that is not a column is not
rescued.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._options import ReadRequest
from ._text_cast import NESTED_CORRUPT, is_nested, nested_text, typed_text

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from ..planning.files import FileEntry

__all__ = ["RESCUED_DATA", "FILE_PATH_KEY", "CORRUPT_KEY", "RESCUE_FORMATS", "Observation",
           "read_records", "observe", "typed_frame"]

#: The rescued-data column's default name (Auto Loader's).
RESCUED_DATA = "_rescued_data"
FILE_PATH_KEY = "_file_path"
CORRUPT_KEY = "_corrupt_record"
#: Formats whose tracked reads rescue values.
RESCUE_FORMATS = ("json", "csv")

_VALUE = "__lm_value"
_FILE = "__lm_file"
_MAP = "__lm_map"
#: JSON reader options that say how to cut records, not how to parse one.
_CUT_OPTIONS = frozenset({"multiline", "linesep", "encoding", "charset", "compression",
                          "recursivefilelookup", "pathglobfilter", "ignorecorruptfiles",
                          "ignoremissingfiles", "modifiedbefore", "modifiedafter"})


@dataclass(frozen=True)
class Observation:
    """What one pass over a run's parsed records saw."""

    keys: dict[str, int] = field(default_factory=dict)  # untracked key -> records with it
    mismatched: dict[str, int] = field(default_factory=dict)  # tracked column -> bad values
    corrupt: int = 0  # records that are not a JSON object


def read_records(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                 root: str) -> tuple[DataFrame, list[str]]:
    """The records of ``files`` as text with their file and parsed map (internal columns),
    and the names of the partition columns (from ``key=value`` folders under ``root``)."""
    from pyspark.sql import functions as F

    from ._read import read_files

    if request.format == "csv":
        return _csv_records(spark, request, files, root)

    text_options: dict[str, str] = {}
    if request.flag("multiLine"):
        text_options["wholetext"] = "true"
    if request.option("lineSep"):
        text_options["lineSep"] = str(request.option("lineSep"))
    for key in ("recursiveFileLookup",):
        if request.option(key):
            text_options[key] = str(request.option(key))
    # The record's file: input_file_name() on local files, the object's URI on S3 (Arrow path).
    raw = read_files(spark, files, root=root, format="text", options=text_options,
                     file_column=_FILE)
    partitions = [c for c in raw.columns if c not in ("value", _FILE)]
    parse_options = {k: v for k, v in request.options.items() if k.lower() not in _CUT_OPTIONS}
    frame = (raw.withColumnRenamed("value", _VALUE)
             .where(F.trim(F.col(_VALUE)) != "")
             .withColumn(_MAP, F.from_json(F.col(_VALUE), "map<string,string>",
                                           {**parse_options, "mode": "PERMISSIVE"})))
    return frame, partitions


def _csv_records(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                 root: str) -> tuple[DataFrame, list[str]]:
    """CSV records as the same internal columns: every field read as a string under the
    header's names (of the run's first file: Spark reads one header), a ragged or unparseable
    line as the record's text with no map."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from ._read import read_files

    options = {k: v for k, v in request.options.items()
               if k.lower() not in ("inferschema", "columnnameofcorruptrecord")}
    options["inferSchema"] = "false"
    header = read_files(spark, files[:1], root=root, format="csv", options=options)
    partition_probe = read_files(spark, files[:1], root=root, format="text")
    partitions = [c for c in partition_probe.columns if c != "value"]
    names = [c for c in header.columns if c not in partitions]
    strings = StructType([StructField(n, StringType()) for n in names]
                         + [StructField(_VALUE, StringType())])
    raw = read_files(spark, files, root=root, format="csv",
                     options={**options, "columnNameOfCorruptRecord": _VALUE}, schema=strings)
    parsed = F.map_from_arrays(F.array(*[F.lit(n) for n in names]),
                               F.array(*[F.col(_quoted(n)) for n in names]))
    frame = (raw.withColumn(_FILE, F.input_file_name())
             .withColumn(_MAP, F.when(F.col(_VALUE).isNull(), parsed)))
    return frame, partitions


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _mismatch(raw: Column, data_type: Any, options: Mapping[str, str] | None,
              rescue_new: bool = True) -> Column:
    """Whether a present value did not fit its column's type, anywhere inside it: also a key
    inside a struct that the type does not name (``rescue_new`` False, mode ``none``: only
    one that differs from a field's name in case or whitespace; the others are dropped)."""
    if is_nested(data_type):
        from pyspark.sql import functions as F

        from ._nested_keys import has_structs, unknown_paths

        parsed = nested_text(raw, data_type, options)
        bad = parsed.getField("v").isNull() | parsed.getField(NESTED_CORRUPT).isNotNull()
        if has_structs(data_type):  # a key the struct does not name: the reader drops it
            bad = bad | (F.size(unknown_paths(raw, data_type, ["_"],
                                              variants_only=not rescue_new)) > 0)
        return raw.isNotNull() & bad
    return raw.isNotNull() & typed_text(raw, data_type, options).isNull()


def _empty_array() -> Column:
    from pyspark.sql import functions as F

    return F.array().cast("array<string>")


def observe(records: DataFrame, tracked: StructType | None,
            options: Mapping[str, str] | None = None, rescue_new: bool = True) -> Observation:
    """One pass over ``records`` (from :func:`read_records`): the keys seen, the values of
    tracked columns that do not fit their type (dates and timestamps by the reader's datetime
    ``options``; ``rescue_new`` as :func:`typed_frame` takes it), the corrupt records."""
    from pyspark.sql import functions as F

    parsed = F.col(_MAP)
    names = [f.name for f in (tracked.fields if tracked is not None else [])]
    # Only keys that are not tracked columns are counted: they are rare, so the exploded
    # tokens stay few (counting every key of every record made this pass cost several reads).
    some = F.coalesce(parsed, F.create_map().cast("map<string,string>"))
    unknown = F.map_filter(some, lambda k, _: ~k.isin(names)) if names else some
    keys = F.transform(F.map_keys(unknown), lambda k: F.concat(F.lit("k:"), k))
    checks = [F.when(_mismatch(parsed[f.name], f.dataType, options, rescue_new),
                     F.lit("t:" + f.name))
              for f in (tracked.fields if tracked is not None else [])]
    bad = F.filter(F.array(*checks), lambda x: x.isNotNull()) if checks else _empty_array()
    corrupt = F.when(parsed.isNull(), F.array(F.lit("c:"))).otherwise(_empty_array())
    tokens = records.select(F.explode(F.concat(keys, bad, corrupt)).alias("t"))
    counts = {row["t"]: int(row["count"]) for row in tokens.groupBy("t").count().collect()}
    return Observation(
        keys={t[2:]: n for t, n in counts.items() if t.startswith("k:")},
        mismatched={t[2:]: n for t, n in counts.items() if t.startswith("t:")},
        corrupt=counts.get("c:", 0),
    )


def typed_frame(records: DataFrame, schema: StructType, partitions: Sequence[str], *,
                rescued_column: str | None, rescue_new: bool,
                options: Mapping[str, str] | None = None) -> DataFrame:
    """The DataFrame a tracked read returns: ``schema``'s columns cast with checks, then the
    partition columns, then (unless ``rescued_column`` is None) the rescued-data column.

    ``rescue_new``: keys that are not columns go to the rescued data (all modes but ``none``,
    which rescues only names that differ from a column in case or whitespace). Without a
    rescued-data column, corrupt records come out in Spark's ``_corrupt_record`` column, which
    sinks set aside (see ``sinks._rejected``).
    """
    from pyspark.sql import functions as F

    parsed = F.col(_MAP)
    columns = [typed_text(parsed[f.name], f.dataType, options).alias(f.name)
               for f in schema.fields]
    out = columns + [F.col(_quoted(p)) for p in partitions]
    if rescued_column is None:
        out.append(F.when(parsed.isNull(), F.col(_VALUE)).alias(CORRUPT_KEY))
        return records.select(*out)
    names = [f.name for f in schema.fields]
    lowered = sorted({n.strip().lower() for n in names})
    entries = [F.when(_mismatch(parsed[f.name], f.dataType, options, rescue_new),
                      F.struct(F.lit(f.name).alias("key"), parsed[f.name].alias("value")))
               for f in schema.fields]
    mismatched = (F.filter(F.array(*entries), lambda x: x.isNotNull()) if entries
                  else F.array().cast("array<struct<key:string,value:string>>"))
    skip = names + [FILE_PATH_KEY]

    def extra(k: Column, _: Column) -> Column:
        unknown = ~k.isin(skip) if skip else F.lit(True)
        if rescue_new:
            return unknown
        return unknown & F.lower(F.trim(k)).isin(lowered) if lowered else F.lit(False)

    others = F.map_entries(F.map_filter(
        F.coalesce(parsed, F.create_map().cast("map<string,string>")), extra))
    corrupt = F.when(parsed.isNull(), F.array(F.struct(F.lit(CORRUPT_KEY).alias("key"),
                                                       F.col(_VALUE).alias("value")))) \
        .otherwise(F.array().cast("array<struct<key:string,value:string>>"))
    found = F.concat(mismatched, others, corrupt)
    file_entry = F.array(F.struct(F.lit(FILE_PATH_KEY).alias("key"), F.col(_FILE).alias("value")))
    rescued = F.when(F.size(found) > 0,
                     F.to_json(F.map_from_entries(F.concat(found, file_entry))))
    return records.select(*out, rescued.alias(rescued_column))
