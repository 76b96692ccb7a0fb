"""Reading files that Spark's file sources cannot open: S3 objects (no S3A connector) in every
format, and Avro files anywhere (no spark-avro package).

The driver settles the schema first, the way Spark would:

* partition columns with :func:`~._partitions.discover_partitions` (Spark's own inference);
* data columns from the user's schema, else the first Avro file's header (``_avro``), else
  Spark's inference over a local copy of a few files (``_sample``);

then builds a small DataFrame of the file paths, balanced by size over the tasks, and maps it
with ``mapInArrow`` to the files' contents (``_tasks``): binary formats arrive as typed
columns; text formats arrive as one string per record and are parsed by Spark's ``from_json``,
``from_csv`` or ``from_xml`` with the reader options, so types, formats and malformed-record
rules are Spark's. Malformed records are always parsed PERMISSIVE into a corrupt-record column,
then kept (PERMISSIVE), dropped (DROPMALFORMED) or turned into an error naming the file
(FAILFAST). Partition values are joined per folder; the columns come out in Spark's order
(data columns, a partition column replacing a data column of the same name, then the other
partition columns). A run that reads the same text objects twice (a tracked JSON source: key
scan, then typed frame) fetches them once (``_fetched``) and passes the kept records here.
"""

from __future__ import annotations

import codecs
import heapq
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError, ReadError
from ..connect_compat import default_parallelism, is_connect
from ..storage import arrow_filesystem_from_config, arrow_fs_config, arrow_path
from ._avro import avro_to_spark
from ._errors import READ_ERROR_PREFIX
from ._options import ReadRequest
from ._partitions import Layout, discover_partitions, layout_of
from ._sample import infer_schema
from ._tasks import BINARY_FORMATS, FILE, FOLDER, RECORD, TaskSpec, read_task

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

    from ..planning.files import FileEntry
    from ._fetched import FetchedRecords

__all__ = ["read_with_arrow", "avro_schema", "record_frame", "splitting_options"]

_ROW = "__lakemark_row"
_CORRUPT = "__lakemark_corrupt"
_PART = "__lakemark_part_"

# Reader options that mean nothing to (or would mislead) the from_json/from_csv/from_xml
# functions: they are about files, inference or the mode, which the reader handles itself.
_READER_ONLY = frozenset({
    "header", "inferschema", "samplingratio", "enforceschema", "multiline", "mode",
    "columnnameofcorruptrecord", "recursivefilelookup", "pathglobfilter", "modifiedbefore",
    "modifiedafter", "ignorecorruptfiles", "ignoremissingfiles", "mergeschema", "linesep",
    "encoding", "charset", "wholetext", "compression", "codec", "basepath",
})
# Options the executors need to cut files into records.
_SPLITTING = frozenset({"header", "multiline", "quote", "escape", "comment", "linesep",
                        "encoding", "charset", "wholetext", "rowtag", "ignorenamespace"})


def as_nullable(data_type: DataType) -> DataType:
    """``data_type`` with every field, element and value nullable (as file sources read)."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return T.StructType([T.StructField(f.name, as_nullable(f.dataType), True, f.metadata)
                             for f in data_type.fields])
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(as_nullable(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(as_nullable(data_type.keyType), as_nullable(data_type.valueType), True)
    return data_type


def avro_schema(fs_config: dict[str, Any], entry: FileEntry) -> tuple[StructType, bool]:
    """The Spark schema of an Avro file's header, and whether its values need fixing up."""
    import fastavro

    try:
        fs = arrow_filesystem_from_config(fs_config)
        with fs.open_input_file(arrow_path(entry.path)) as handle:
            writer_schema = fastavro.reader(handle).writer_schema
    except (OSError, ValueError, EOFError) as exc:
        raise ReadError(f"cannot read the avro schema of {entry.path}: {exc}") from None
    return avro_to_spark(writer_schema, entry.path)


def _data_schema(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                 user_schema: StructType | None, partition_names: set[str]
                 ) -> tuple[StructType, bool]:
    """The data columns (without partition columns) and the Avro fix-up flag."""
    from pyspark.sql import types as T

    avro_fix = False
    if request.format == "avro":
        try:
            inferred, avro_fix = avro_schema(arrow_fs_config(files[0].path), files[0])
        except FormatError:
            if user_schema is None:
                raise
            avro_fix = True  # the user's schema decides; convert values defensively
    if user_schema is not None:
        data = T.StructType([f for f in user_schema.fields
                             if f.name.lower() not in partition_names])
        if request.format == "text" and (
                len(data.fields) != 1 or not isinstance(data.fields[0].dataType, T.StringType)):
            raise ConfigError(f"format text reads one string column; schema "
                              f"{user_schema.simpleString()} does not fit")
    elif request.format == "avro":
        data = inferred
    elif request.format == "text":
        data = T.StructType([T.StructField("value", T.StringType(), True)])
    else:
        data = infer_schema(spark, request, files)
    result = as_nullable(data)
    assert isinstance(result, T.StructType)
    return result, avro_fix


def _files_frame(spark: SparkSession, files: Sequence[FileEntry], layout: Layout) -> DataFrame:
    """One row ``(path, uri, folder, start, end)`` per file, spread over tasks with balanced
    byte counts. ``[start, end)`` is the planned byte range (``end``: the planned size; ``start``:
    the offset of an appended tail): a text file is read only there (``_tasks``)."""
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("path", T.StringType(), False),
        T.StructField("uri", T.StringType(), False),
        T.StructField("folder", T.IntegerType(), False),
        T.StructField("start", T.LongType(), False),
        T.StructField("end", T.LongType(), False),
    ])
    rows = [(arrow_path(f.path), f.path, layout.folder_of[i], f.offset, f.size,
             max(f.size - f.offset, 1)) for i, f in enumerate(files)]
    tasks = max(1, min(len(rows), default_parallelism(spark)))
    bins: list[list[tuple[str, str, int, int, int]]] = [[] for _ in range(tasks)]
    loads = [(0, i) for i in range(tasks)]
    for path, uri, folder, start, end, size in sorted(rows, key=lambda r: -r[5]):
        load, i = heapq.heappop(loads)
        bins[i].append((path, uri, folder, start, end))
        heapq.heappush(loads, (load + size, i))
    if is_connect(spark):
        return _bins_frame(spark, bins, schema)
    rdd = spark.sparkContext.parallelize(bins, tasks).flatMap(lambda chunk: chunk)
    return spark.createDataFrame(rdd, schema)


def _bins_frame(spark: SparkSession, bins: list[list[tuple[str, str, int, int, int]]],
                schema: StructType) -> DataFrame:
    """The rows of ``bins``, bin ``i`` in partition ``i``, with DataFrame operations only
    (Spark Connect has no RDDs): ``range`` puts one number in each of ``len(bins)``
    partitions, and ``mapInArrow`` turns number ``i`` into the rows of bin ``i``."""
    names = schema.fieldNames()

    def rows_of(batches: Any) -> Any:
        import pyarrow as pa

        for batch in batches:
            for i in batch.column(0).to_pylist():
                if bins[i]:
                    columns = list(zip(*bins[i]))
                    yield pa.RecordBatch.from_arrays(
                        [pa.array(columns[0], pa.string()), pa.array(columns[1], pa.string()),
                         pa.array(columns[2], pa.int32()), pa.array(columns[3], pa.int64()),
                         pa.array(columns[4], pa.int64())], names=names)

    return spark.range(0, len(bins), 1, len(bins)).mapInArrow(rows_of, schema)


def splitting_options(request: ReadRequest) -> tuple[tuple[str, str], ...]:
    """The options (lower-case names) that say how the executors cut a text file into
    records: two reads with equal ones cut the same records from the same files."""
    return tuple(sorted((k.lower(), v) for k, v in request.options.items()
                        if k.lower() in _SPLITTING))


def record_frame(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                 root: str, layout: Layout, *, with_file: bool) -> DataFrame:
    """The records of text-format ``files``, cut on the executors (``mapInArrow``): one row
    ``(RECORD, FOLDER)`` per record (FOLDER: the index of its folder in ``layout``), and
    FILE (the file's URI) ``with_file``. Lazy: the files are fetched when it is computed."""
    from pyspark.sql import types as T

    _check_options(request)
    fields = [T.StructField(RECORD, T.StringType(), True),
              T.StructField(FOLDER, T.IntegerType(), False)]
    if with_file:
        fields.append(T.StructField(FILE, T.StringType(), True))
    spec = TaskSpec(arrow_fs_config(root), request.format, options=splitting_options(request),
                    with_file=with_file)
    return _files_frame(spark, files, layout).mapInArrow(partial(read_task, spec),
                                                         T.StructType(fields))


def _fetched_frame(spark: SparkSession, records: FetchedRecords, request: ReadRequest,
                   files: Sequence[FileEntry], root: str, layout: Layout) -> DataFrame | None:
    """The records of ``files`` taken from ``records`` (fetched before in this run), with
    FOLDER as ``layout`` numbers it; None when they do not hold exactly what a fetch of
    ``files`` would give (another root, format or way of cutting records, a file not
    fetched), so that the caller fetches the files itself."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if (records.root != root or records.format != request.format
            or records.splitting != splitting_options(request)):
        return None
    paths = tuple(f.path for f in files)
    if paths == records.paths:
        return records.frame
    if not set(paths) <= set(records.paths):
        return None
    folders = spark.createDataFrame(
        list(zip(paths, layout.folder_of)),
        T.StructType([T.StructField(FILE, T.StringType(), False),
                      T.StructField(FOLDER, T.IntegerType(), False)]))
    return (records.frame.where(F.col(FILE).isin(list(paths))).drop(FOLDER)
            .join(F.broadcast(folders), on=FILE, how="inner"))


def _function_options(request: ReadRequest) -> dict[str, str]:
    return {k: v for k, v in request.options.items() if k.lower() not in _READER_ONLY}


def _ddl(schema: StructType) -> str:
    return ", ".join("`" + f.name.replace("`", "``") + "` " + f.dataType.simpleString()
                     for f in schema.fields)


def _parse_records(raw: DataFrame, request: ReadRequest, data: StructType, spark: SparkSession,
                   *, keep_file: bool = False) -> DataFrame:
    """Records parsed by Spark's own parser, with the mode applied; data columns, FOLDER
    (and FILE when ``keep_file`` or FAILFAST needs it)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    corrupt = (request.option("columnNameOfCorruptRecord")
               or spark.conf.get("spark.sql.columnNameOfCorruptRecord", None)
               or "_corrupt_record")
    user_corrupt = any(f.name == corrupt and isinstance(f.dataType, T.StringType)
                       for f in data.fields)
    column = corrupt if user_corrupt else _CORRUPT
    schema = data if user_corrupt else T.StructType(
        [*data.fields, T.StructField(_CORRUPT, T.StringType(), True)])
    options = {**_function_options(request), "mode": "PERMISSIVE",
               "columnNameOfCorruptRecord": column}
    record = F.col(RECORD)
    parsed: Column
    if request.format == "json":
        parsed = F.from_json(record, schema, options)
    elif request.format == "csv":
        parsed = F.from_csv(record, _ddl(schema), options)
    else:
        # Spark 4's from_xml leaves every field null when the corrupt-record column comes
        # first (where inference puts `_corrupt_record`); fields are taken by name below.
        last = T.StructType([f for f in schema.fields if f.name != column]
                            + [f for f in schema.fields if f.name == column])
        parsed = F.from_xml(record, last, options)
    extra = [F.col(FILE)] if request.mode == "FAILFAST" or keep_file else []
    rows = raw.select(parsed.alias(_ROW), F.col(FOLDER), *extra)
    df = rows.select(*(F.col(_ROW).getField(f.name).alias(f.name) for f in schema.fields),
                     F.col(FOLDER), *extra)
    bad = F.col(_quote(column)).isNotNull()
    if request.mode == "DROPMALFORMED":
        df = df.filter(~bad)
    elif request.mode == "FAILFAST":
        message = F.concat(F.lit(f"{READ_ERROR_PREFIX}malformed {request.format} record in "),
                           F.col(FILE), F.lit(" (mode FAILFAST)"))
        df = df.filter(F.when(bad, F.raise_error(message).cast("boolean")).otherwise(F.lit(True)))
    return df


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _check_options(request: ReadRequest) -> None:
    encoding = request.option("encoding") or request.option("charset")
    if encoding:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ConfigError(f"option encoding: unknown encoding {encoding!r}") from None


def read_with_arrow(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                    root: str, user_schema: StructType | None, *,
                    records: FetchedRecords | None = None,
                    file_column: str | None = None) -> DataFrame:
    """A lazy DataFrame of ``files`` read with pyarrow/fastavro on the executors.

    ``records``: the run's text records fetched before (:mod:`._fetched`), parsed instead of
    fetching the files again when they hold these files cut the same way. ``file_column``:
    a last column with each row's file URI."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema

    _check_options(request)
    layout = layout_of(root, files)
    values: list[tuple[Any, ...]] = []
    if request.flag("recursiveFileLookup"):
        partitions = T.StructType([])
    else:
        partitions, values = discover_partitions(spark, layout, user_schema)
    by_name = {f.name.lower(): i for i, f in enumerate(partitions.fields)}
    data, avro_fix = _data_schema(spark, request, files, user_schema, set(by_name))

    binary = request.format in BINARY_FORMATS
    keep_file = file_column is not None
    with_file = (request.mode == "FAILFAST" and request.uses_mode) or keep_file
    if binary:
        large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
        try:
            arrow = to_arrow_schema(data, timezone="UTC", prefers_large_types=large)
        except Exception as exc:  # pyspark raises its own error types for unsupported types
            raise FormatError(f"cannot read {request.format} columns {data.simpleString()} "
                              f"with Arrow: {exc}") from None
        out = T.StructType([*data.fields, T.StructField(FOLDER, T.IntegerType(), False)]
                           + ([T.StructField(FILE, T.StringType(), True)] if keep_file else []))
        spec = TaskSpec(arrow_fs_config(root), request.format, schema=arrow, avro_fix=avro_fix,
                        with_file=keep_file)
        df = _files_frame(spark, files, layout).mapInArrow(partial(read_task, spec), out)
    else:
        fetched = (_fetched_frame(spark, records, request, files, root, layout)
                   if records is not None else None)
        df = fetched if fetched is not None else record_frame(
            spark, request, files, root, layout, with_file=with_file)
    kept = [F.col(FILE)] if keep_file else []
    if request.format == "text":
        df = df.select(F.col(RECORD).alias(data.fields[0].name), F.col(FOLDER), *kept)
    elif not binary:
        df = _parse_records(df, request, data, spark, keep_file=keep_file)

    columns: list[Column] = []
    if partitions.fields:
        part_schema = T.StructType(
            [T.StructField(FOLDER, T.IntegerType(), False)]
            + [T.StructField(f"{_PART}{i}", f.dataType, True)
               for i, f in enumerate(partitions.fields)])
        folders = spark.createDataFrame(values, part_schema)
        df = df.join(F.broadcast(folders), on=FOLDER, how="left")
    names = {f.name.lower() for f in data.fields}
    for f in data.fields:
        index = by_name.get(f.name.lower())
        if index is None:
            columns.append(F.col(_quote(f.name)))
        else:
            columns.append(F.col(f"{_PART}{index}").alias(partitions.fields[index].name))
    for i, p in enumerate(partitions.fields):
        if p.name.lower() not in names:
            columns.append(F.col(f"{_PART}{i}").alias(p.name))
    if file_column is not None:
        columns.append(F.col(FILE).alias(file_column))
    return df.select(*columns)
