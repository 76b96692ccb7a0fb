"""The tracked CSV read in one pass: the header says which columns are new, casts say what fits.

A CSV run's columns are its header's names (of the run's first file: Spark reads one header),
so no pass over the records is needed to find new columns. :func:`typed_frame` reads every
field as text with Spark's CSV reader (a ragged line comes back whole in a corrupt-record
column), casts each tracked column with checks (``try_cast``, dates and timestamps by the
reader's datetime options, :mod:`._text_cast`; ``from_json`` for nested types)
and builds the rescued-data column natively from the values whose cast gave ``null``, the
header's columns that are not tracked, and the ragged lines. The counts (values rescued per
column, ragged lines, records with each untracked column) are observed while the frame is
written (``DataFrame.observe``), as for JSON (:mod:`._json_tracked`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..connect_compat import mark_batch
from ..planning.files import FileEntry
from ..planning.schema import name_key
from ._formats import Framed, Observed, TrackedInput
from ._options import ReadRequest
from ._rescue import CORRUPT_KEY, FILE_PATH_KEY
from ._formats import _fields, _later_columns, _struct, _to_type
from ._text_cast import typed_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from ..planning.schema import SchemaDecision


__all__ = ["CsvTracked", "header_of", "typed_frame"]

_CR = "__lm_corrupt"
_FILE = "__lm_file"


def _options(request: ReadRequest) -> dict[str, str]:
    out = {k: v for k, v in request.options.items()
           if k.lower() not in ("inferschema", "columnnameofcorruptrecord", "samplingratio")}
    out["inferSchema"] = "false"
    return out


def header_of(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
              root: str) -> tuple[list[str], list[str]]:
    """(the header's column names, the partition column names) of the run's first file (the
    partition columns: of its first file under a ``key=value`` folder, if any)."""
    from ..planning.files import partition_probe
    from ._read import read_files

    # the whole first file: an appended tail (an offset) holds no header line
    first = [FileEntry(f.mtime, f.path, f.size) for f in files[:1]]
    header = read_files(spark, first, root=root, format="csv", options=_options(request))
    probed = [FileEntry(f.mtime, f.path, f.size) for f in partition_probe(files, root)]
    probe = read_files(spark, probed, root=root, format="text")
    partitions = [c for c in probe.columns if c != "value"]
    return [c for c in header.columns if c not in partitions], partitions


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def typed_frame(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                root: str, schema: StructType, header: Sequence[str], *,
                rescued_column: str | None, rescue_new: bool, file_key: str,
                corrupt_key: str, observation: Any = None) -> DataFrame:
    """``files`` (whose header is ``header``) as ``schema``'s columns cast with checks, the
    partition columns and the rescued-data column (None: a ``corrupt_key`` column with the
    ragged lines). ``rescue_new``: header columns that are not tracked go to the rescued data
    (otherwise only those differing from a column in case or whitespace). ``observation``
    gets ``v:<column>`` (values rescued), ``corrupt`` (ragged lines) and ``k:<column>``
    (records with a value in an untracked column) once the frame is written."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from ._read import read_files

    strings = StructType([StructField(n, StringType()) for n in header]
                         + [StructField(_CR, StringType())])
    # The record's file: input_file_name() on local files, the object's URI on S3 (Arrow path).
    frame = read_files(spark, files, root=root, format="csv",
                       options={**_options(request), "columnNameOfCorruptRecord": _CR},
                       schema=strings, file_column=_FILE)
    partitions = [c for c in frame.columns if c not in set(header) | {_CR, _FILE}]
    cr = F.col(_CR)
    text = {n: F.when(cr.isNull(), F.col(_quoted(n))) for n in header}
    tracked = {f.name for f in schema.fields}
    keys = {name_key(n) for n in tracked}
    extra = [n for n in header if n not in tracked
             and (rescue_new or name_key(n) in keys)]
    untracked = [n for n in header if n not in tracked]
    columns = []
    mismatch = {}
    for f in schema.fields:
        value = text.get(f.name, F.lit(None).cast("string"))
        typed = typed_text(value, f.dataType, request.options)
        columns.append(typed.alias(f.name))
        if not isinstance(f.dataType, StringType) and f.name in text:
            mismatch[f.name] = value.isNotNull() & typed.isNull()
    if observation is not None:
        # Counted on the reader's own rows, before anything else is computed.
        metrics = [F.count(F.when(cr.isNotNull(), 1)).alias("corrupt")]
        metrics += [F.count(F.when(c, 1)).alias(f"v:{n}") for n, c in mismatch.items()]
        metrics += [F.count(text[n]).alias(f"k:{n}") for n in untracked]
        frame = mark_batch(frame).observe(observation, *metrics)
    out = columns + [F.col(_quoted(p)) for p in partitions]
    if rescued_column is None:
        return frame.select(*out, cr.alias(corrupt_key))
    # A struct whose null fields to_json leaves out (no higher-order function: generated code).
    fields = [F.when(c, text[n]).alias(n) for n, c in mismatch.items()]
    fields += [text[n].alias(n) for n in extra]
    fields.append(cr.alias(corrupt_key))
    fields.append(F.col(_FILE).alias(file_key))
    anything = cr.isNotNull()
    for c in mismatch.values():
        anything = anything | c
    for n in extra:
        anything = anything | text[n].isNotNull()
    rescued = F.when(anything, F.to_json(F.struct(*fields)))
    return frame.select(*out, rescued.alias(rescued_column))


class CsvTracked:
    """The tracked CSV read (:class:`._formats.TrackedFormat`) in one pass: the header names
    the columns, the frame casts each value with checks."""

    def observe(self, read: TrackedInput) -> Observed:
        """The header's columns; the first run's types (and a new column's, where the mode
        adds it) by Spark's inference over the files."""
        from ._read import read_files

        header, partitions = header_of(read.spark, read.request, read.files, read.root)
        skip = set(partitions) | set(read.reserved)
        keys = {n: 0 for n in header if n not in skip}

        def inferred_types() -> list[Any]:
            return _fields(read_files(read.spark, read.files, root=read.root,
                                      format=read.format, options=read.options,
                                      mode=read.mode).schema)

        if read.tracked is None:
            observed = [f for f in inferred_types() if f.name not in skip]
            inferred = True
        else:
            types_of = ({f.name: f.type for f in inferred_types()}
                        if _to_type(read.tracked, list(keys), read.reserved,
                                    read.tracking.mode) else None)
            observed = _later_columns(read.tracked, list(keys), read.reserved, types_of)
            inferred = types_of is not None
        return Observed(observed, keys, skip, inferred, state=header)

    def frame(self, read: TrackedInput, seen: Observed, decision: SchemaDecision) -> Framed:
        """The files read as text, cast to the decided schema, misfits rescued."""
        from pyspark.sql import Observation

        observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
        frame = typed_frame(read.spark, read.request, read.files, read.root,
                            _struct(decision.schema), seen.state,
                            rescued_column=read.tracking.rescued_data_column,
                            rescue_new=read.tracking.mode != "none", file_key=FILE_PATH_KEY,
                            corrupt_key=CORRUPT_KEY, observation=observation)
        return Framed(frame, observation)
