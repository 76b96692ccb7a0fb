"""The tracked Avro read: writer schemas say the columns, values that do not fit are rescued.

Avro records are typed by the schema of the program that wrote each file (in the file's
header), so an Avro source never needs inference: a run reads its files' headers (a few
bytes each, on the driver) and compares each file's top-level fields with the tracked schema
(:func:`plan_files`). Per file and field:

* a field whose Spark type (``_avro``'s mapping) is the tracked column's type, or converts to
  it without loss (``int`` → ``long``/``double``, ``float`` → ``double``, a decimal into one
  with as many digits on both sides of the point, a record whose fields all fit), is read
  into the column;
* any other type (a ``string`` where the column is ``long``, a union with no Spark type) is a
  *misfit*: the column is ``null`` for that file's records and each value goes to the rescued
  data, as its text (numbers and strings as written, records, arrays and maps as JSON, bytes
  in base64, dates and times in ISO 8601);
* a record field whose record type adds fields to the column's struct (at any depth:
  ``address.zip``) has new fields: ``addNewColumns`` adds them to the column's type (then
  the record fits), ``rescue`` rescues the value, ``failOnNewColumns`` fails naming them,
  ``none`` drops them (counted per path);
* a field that is not a tracked column is new (added, rescued, failing the run or ignored by
  the evolution mode, as for JSON), and a field that differs from a column only in case or
  surrounding whitespace is rescued in every mode.

The first run's schema is the union of the run's files' fields in file order, a field's
first type winning unless a later file's type holds it without loss (``int`` then ``long``
gives ``long``). The rows are made on the executors (:mod:`._tracked_rows`) by ``fastavro``;
the counts (values rescued per column, records per new or ignored field) are observed while
the frame is written. An Avro file that cannot be decoded fails the run naming the file, as
an untracked read does: Avro has no record boundaries to resynchronise on, so there is no
corrupt *record* to keep.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..connect_compat import mark_batch
from ..errors import FormatError, ReadError
from ..storage import arrow_filesystem_from_config, arrow_fs_config, arrow_path, mapped_path
from ._formats import Framed, Observed, TrackedInput
from ._rescue import FILE_PATH_KEY

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

    from ..planning.files import FileEntry
    from ..planning.schema import SchemaDecision

__all__ = ["FileFields", "FilePlan", "read_headers", "fits", "merge_fields", "plan_files",
           "AvroTracked", "typed_frame", "value_text"]

RESCUED = "__lm_rescued"
KEYS = "__lm_keys"
BATCH_ROWS = 8192


@dataclass(frozen=True)
class FileFields:
    """One file's top-level fields: name → Spark type (None: no Spark type), in order;
    ``path`` is where it is read (a mapped bucket's local file)."""

    path: str
    fields: tuple[tuple[str, DataType | None], ...]
    single: bool = False  # not a record: its values fill one column named ``value``


def read_headers(files: Sequence[FileEntry]) -> list[FileFields]:
    """The writer schema of each file, as Spark types per top-level field (ReadError naming
    a file whose header cannot be read)."""
    import fastavro

    from ._avro import _Mapper

    out = []
    for entry in files:
        path = mapped_path(entry.path) or entry.path  # a bucket mapped to a folder
        try:
            fs = arrow_filesystem_from_config(arrow_fs_config(path))
            with fs.open_input_file(arrow_path(path)) as handle:
                schema = fastavro.reader(handle).writer_schema
        except (OSError, ValueError, EOFError) as exc:
            raise ReadError(f"cannot read the avro schema of {entry.path}: {exc}") from None
        mapper = _Mapper(entry.path)
        if not (isinstance(schema, dict) and schema.get("type") in ("record", "error")):
            out.append(FileFields(path, (("value", _mapped(mapper, schema)),), True))
            continue
        name = mapper.named_type(schema)
        if name:
            mapper.named[name] = schema
            mapper.active.add(name)
        out.append(FileFields(path, tuple(
            (str(f["name"]), _mapped(mapper, f["type"])) for f in schema.get("fields", []))))
    return out


def _mapped(mapper: Any, avro_type: Any) -> DataType | None:
    try:
        result: DataType = mapper.to_spark(avro_type)
    except FormatError:
        return None
    from ._arrow_reader import as_nullable

    return as_nullable(result)


_INTEGRAL = ("ByteType", "ShortType", "IntegerType", "LongType")
_DIGITS = {"ByteType": 3, "ShortType": 5, "IntegerType": 10, "LongType": 19}


def fits(source: DataType, target: DataType, loose: bool = False) -> bool:
    """Whether every value of type ``source`` converts to ``target`` without loss.
    ``loose`` (mode ``none``): a struct field of ``source`` that ``target`` does not name,
    even up to case, is dropped rather than making the value a misfit."""
    from pyspark.sql import types as T

    from ..planning.schema import name_key

    if source == target or isinstance(source, T.NullType):
        return True
    s, t = type(source).__name__, type(target).__name__
    if s in _INTEGRAL and t in _INTEGRAL:
        return _INTEGRAL.index(s) <= _INTEGRAL.index(t)
    if s in _INTEGRAL and t == "DoubleType":
        return s != "LongType"
    if s == "FloatType" and t == "DoubleType":
        return True
    if isinstance(target, T.DecimalType):
        if isinstance(source, T.DecimalType):
            return (target.scale >= source.scale
                    and target.precision - target.scale >= source.precision - source.scale)
        if s in _INTEGRAL:
            return target.precision - target.scale >= _DIGITS[s]
        return False
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        inner = {f.name: f.dataType for f in target.fields}
        keys = {name_key(n) for n in inner}
        return all(fits(f.dataType, inner[f.name], loose) if f.name in inner
                   else loose and name_key(f.name) not in keys for f in source.fields)
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType):
        return fits(source.elementType, target.elementType, loose)
    if isinstance(source, T.MapType) and isinstance(target, T.MapType):
        return fits(source.keyType, target.keyType) and fits(source.valueType,
                                                             target.valueType, loose)
    return False


def merge_fields(headers: Sequence[FileFields], skip: set[str]) -> list[tuple[str, DataType]]:
    """The first run's columns: every field with a Spark type, in first-seen order; a later
    file's type replaces the first one only when it holds it without loss (widening)."""
    merged: dict[str, DataType] = {}
    for header in headers:
        for name, data_type in header.fields:
            if data_type is None or name in skip:
                continue
            known = merged.get(name)
            if known is None:
                merged[name] = data_type
            elif known != data_type and fits(known, data_type):
                merged[name] = data_type
    return list(merged.items())


@dataclass(frozen=True)
class FilePlan:
    """What the task does with one writer schema's fields."""

    take: tuple[tuple[str, str], ...] = ()  # (column, field): read into the column
    rescue: tuple[tuple[str, str], ...] = ()  # (key, field): values to the rescued data
    ignore: tuple[str, ...] = ()  # fields dropped (mode none), counted
    single: bool = False
    #: (column, path) of fields inside a column that its type does not name (address.zip):
    #: a record with a value in the column counts for the path.
    inside: tuple[tuple[str, str], ...] = ()


def plan_files(headers: Sequence[FileFields], schema: StructType, *, rescue_new: bool
               ) -> tuple[dict[str, int], list[FilePlan]]:
    """Per file (by path) the index of its plan, and the distinct plans. ``rescue_new``:
    fields that are not columns are rescued (else ignored, unless they differ from a column
    only in case or whitespace: those are always rescued)."""
    from ..planning.schema import name_key
    from ..planning.schema_nested import additions, path_text

    columns = {f.name: f.dataType for f in schema.fields}
    column_keys = {name_key(n) for n in columns}
    plans: dict[FilePlan, int] = {}
    of: dict[str, int] = {}
    for header in headers:
        present = dict(header.fields)
        take, rescue, ignore = [], [], []
        inside: list[tuple[str, str]] = []
        for name, target in columns.items():
            if name not in present:
                continue
            source = present[name]
            if source is not None and fits(source, target, loose=not rescue_new):
                take.append((name, name))
            else:
                rescue.append((name, name))
            if source is not None:
                inside += [(name, path_text((name, *p))) for p, _ in
                           additions(target.jsonValue(), source.jsonValue())]
        for name, _source in header.fields:
            if name in columns:
                continue
            if rescue_new or name_key(name) in column_keys:
                rescue.append((name, name))
            else:
                ignore.append(name)
        plan = FilePlan(tuple(take), tuple(rescue), tuple(ignore), header.single,
                        tuple(inside))
        of[header.path] = plans.setdefault(plan, len(plans))
    return of, list(plans)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def value_text(value: Any) -> str:
    """A decoded Avro value as rescued text: strings as they are, numbers as written,
    booleans ``true``/``false``, bytes in base64, dates and times in ISO 8601, records,
    arrays and maps as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=_json_default, separators=(",", ":"),
                          ensure_ascii=False)
    if isinstance(value, float):
        return json.dumps(value)
    return str(_json_default(value)) if not isinstance(value, int) else str(value)


@dataclass(frozen=True)
class AvroRows:
    """The row maker of a tracked Avro read (see :mod:`._tracked_rows`)."""

    target: Any  # pa.Schema of the tracked columns
    plan_of: dict[str, int] = field(default_factory=dict)  # arrow path -> plan index
    plans: tuple[FilePlan, ...] = ()
    with_rescued: bool = True
    file_key: str = "_file_path"

    def batches(self, fs: pafs.FileSystem, path: str, uri: str) -> Iterator[pa.Table]:
        import fastavro

        from ._avro_codecs import ensure_codecs
        from ._tracked_rows import file_uri

        ensure_codecs()
        plan = self.plans[self.plan_of[path]]
        shown = file_uri(uri)
        with fs.open_input_file(path) as handle:
            chunk: list[Any] = []
            for record in fastavro.reader(handle):
                chunk.append({"value": record} if plan.single else record)
                if len(chunk) >= BATCH_ROWS:
                    yield self._table(chunk, plan, shown)
                    chunk = []
            if chunk:
                yield self._table(chunk, plan, shown)

    def _table(self, records: list[Any], plan: FilePlan, shown: str) -> pa.Table:
        import pyarrow as pa

        from ._avro import fix_value

        taken = dict(plan.take)
        columns = []
        for target in self.target:
            source = taken.get(target.name)
            if source is None:
                columns.append(pa.nulls(len(records), target.type))
                continue
            values = [fix_value(r.get(source), target.type) for r in records]
            columns.append(pa.array(values, type=target.type))
        rescued: list[str | None] = [None] * len(records)
        keys: list[list[str] | None] = [None] * len(records)
        if plan.rescue or plan.ignore or plan.inside:
            for i, record in enumerate(records):
                found = {k: value_text(record[f]) for k, f in plan.rescue
                         if record.get(f) is not None}
                dropped = [f for f in plan.ignore if record.get(f) is not None]
                paths = [p for c, p in plan.inside if record.get(c) is not None]
                if found or dropped or paths:
                    keys[i] = list(found) + dropped + paths
                if found and self.with_rescued:
                    found[self.file_key] = shown
                    rescued[i] = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        columns.append(pa.array(rescued, type=pa.string()))
        columns.append(pa.array(keys, type=pa.list_(pa.string())))
        names = [*self.target.names, RESCUED, KEYS]
        return pa.Table.from_arrays(columns, names=names)


def typed_frame(spark: SparkSession, files: Sequence[FileEntry], root: str,
                headers: Sequence[FileFields], schema: StructType, *,
                rescued_column: str | None, rescue_new: bool, file_key: str,
                recursive: bool = False, observation: Any = None) -> DataFrame:
    """``files`` as ``schema``'s columns, the partition columns and (unless
    ``rescued_column`` is None) the rescued-data column. ``observation`` gets ``v:<column>``
    (values rescued) and ``k:<field>`` (records with a value in a field that is not a
    column) once the frame is written."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema

    from ._tracked_rows import python_rows

    of, plans = plan_files(headers, schema, rescue_new=rescue_new)
    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    try:
        target = to_arrow_schema(schema, timezone="UTC", prefers_large_types=large)
    except Exception as exc:  # pyspark raises its own error types for unsupported types
        raise FormatError(f"cannot read avro columns {schema.simpleString()} with Arrow: "
                          f"{exc}") from None
    maker = AvroRows(target, {arrow_path(p): i for p, i in of.items()}, tuple(plans),
                     with_rescued=rescued_column is not None, file_key=file_key)
    rows = T.StructType([*schema.fields, T.StructField(RESCUED, T.StringType()),
                         T.StructField(KEYS, T.ArrayType(T.StringType()))])
    frame, partitions = python_rows(spark, files, root, rows, maker, recursive=recursive)
    keys = F.col(KEYS)
    if observation is not None:
        columns = {f.name for f in schema.fields}
        named = sorted({k for p in plans for k, _ in p.rescue} | {f for p in plans
                                                                   for f in p.ignore}
                       | {path for p in plans for _, path in p.inside})
        metrics: list[Column] = [F.count(F.lit(1)).alias("rows")]
        metrics += [F.sum(F.array_contains(keys, n).cast("long"))
                    .alias(("v:" if n in columns else "k:") + n) for n in named]
        frame = mark_batch(frame).observe(observation, *metrics)
    out = [F.col(_quote(f.name)) for f in schema.fields] + [F.col(_quote(p)) for p in partitions]
    if rescued_column is not None:
        out.append(F.col(RESCUED).alias(rescued_column))
    return frame.select(*out)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class AvroTracked:
    """The tracked Avro read (:class:`._formats.TrackedFormat`, the module doc): the files'
    headers, then the typed frame."""

    def observe(self, read: TrackedInput) -> Observed:
        """The fields of the files' writer schemas: the first run's columns, or the tracked
        ones grown by the fields their record types add, then the new fields."""
        from ..planning.schema import Field, new_columns
        from ..planning.schema_nested import additions, with_fields
        from ._partitions import _partition_keys, layout_of

        files, tracked, tracking, reserved = read.files, read.tracked, read.tracking, read.reserved
        headers = read_headers(files)
        recursive = read.request.flag("recursiveFileLookup")
        partitions = set() if recursive else _partition_keys(layout_of(read.root, files).folders)
        skip = {p.lower() for p in partitions} | set(reserved)
        names = list(dict.fromkeys(n for h in headers for n, _ in h.fields))
        keys = {n: 0 for n in names if n not in skip and n.lower() not in partitions}
        types = {n: t.jsonValue() for n, t in merge_fields(headers, skip)}
        if tracked is None:
            observed = [Field(n, t) for n, t in types.items() if n.lower() not in partitions]
            known = {f.name for f in observed}
            observed += [Field(k) for k in keys if k not in known and k in types]
        else:
            # A tracked column whose writer types add fields inside it (address.zip): observed
            # with every file's additions, for the mode to add, rescue, refuse or ignore.
            observed = []
            for f in tracked:
                grown = f.type
                for header in headers:
                    for name, data_type in header.fields:
                        if name == f.name and data_type is not None and grown is not None:
                            grown = with_fields(grown, additions(grown, data_type.jsonValue()))
                observed.append(Field(f.name, grown))
            typed_keys = [k for k in keys if k in types]
            if tracking.mode == "addNewColumns":
                fresh = new_columns(tracked, typed_keys, reserved)
                observed += [Field(n, types[n]) for n in fresh]
            else:
                fresh = new_columns(tracked, list(keys), reserved)
                observed += [Field(n) for n in fresh]
            known = {f.name for f in observed}
            observed += [Field(k) for k in typed_keys if k not in known]
        # Fields with no Spark type never enter the schema: their values are rescued.
        untyped = {k: 0 for k in keys if k not in types}
        return Observed(observed, keys, skip, tracked is None, untyped=untyped,
                        state=(headers, recursive))

    def frame(self, read: TrackedInput, seen: Observed, decision: SchemaDecision) -> Framed:
        """The records made from the files on the executors with the decided schema."""
        from pyspark.sql import Observation

        from ._errors import guard
        from ._formats import _struct

        headers, recursive = seen.state
        observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
        frame = typed_frame(read.spark, read.files, read.root, headers,
                            _struct(decision.schema),
                            rescued_column=read.tracking.rescued_data_column,
                            rescue_new=read.tracking.mode != "none", file_key=FILE_PATH_KEY,
                            recursive=recursive, observation=observation)
        # A file that cannot be decoded fails the frame's actions with a ReadError naming it.
        return Framed(guard(frame, "avro"), observation)
