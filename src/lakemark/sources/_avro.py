"""Avro without Spark's avro package: Avro schemas as Spark types, and records as Arrow.

Spark's ``spark-avro`` module is a separate Maven artifact that lakemark cannot assume, so Avro
files are decoded with ``fastavro`` on the executors. The column types follow spark-avro's
mapping, so a job reads the same DataFrame either way:

==============================================  ====================================
Avro type                                       Spark type
==============================================  ====================================
null                                            NullType
boolean                                         BooleanType
int                                             IntegerType
int, logicalType date                           DateType
int, logicalType time-millis                    IntegerType (milliseconds of the day)
long                                            LongType
long, logicalType time-micros                   LongType (microseconds of the day)
long, logicalType timestamp-millis / -micros    TimestampType
long, logicalType local-timestamp-millis/-micros TimestampNTZType
float / double                                  FloatType / DoubleType
bytes, fixed                                    BinaryType
bytes or fixed, logicalType decimal(p, s)       DecimalType(p, s) (p at most 38)
string (also logicalType uuid)                  StringType
enum                                            StringType (the symbol)
record                                          StructType (fields in order)
array                                           ArrayType
map                                             MapType(StringType, values)
union [null, T] / [T]                           T (nullable)
union [int, long] / [float, double] (+ null)    LongType / DoubleType
==============================================  ====================================

Other unions (for example ``[string, int]``) and recursive records have no Spark column type
and raise :class:`~lakemark.errors.FormatError` naming the file. Unknown logical types are
ignored, as the Avro specification asks. As for every file source, all columns are nullable.
The schema is taken from the first file; other files' records are matched to it by field name
(missing fields are null).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import FormatError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import DataType, StructType

__all__ = ["avro_to_spark", "avro_batches", "fix_value"]

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
#: Logical types whose fastavro values are not what the Spark column holds.
_FIXED_UP = {"time-millis", "time-micros", "uuid"}
BATCH_ROWS = 8192


class _Mapper:
    """Walks one Avro schema (as fastavro parses it) into Spark types."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.named: dict[str, Any] = {}
        self.active: set[str] = set()
        self.fix = False

    def fail(self, what: str) -> FormatError:
        return FormatError(f"avro file {self.file}: {what} has no Spark column type")

    def named_type(self, schema: dict[str, Any]) -> str | None:
        name = schema.get("name")
        if not name:
            return None
        namespace = schema.get("namespace")
        return f"{namespace}.{name}" if namespace and "." not in name else str(name)

    def to_spark(self, schema: Any) -> DataType:
        from pyspark.sql import types as T

        if isinstance(schema, list):
            return self.union(schema)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self.primitive(schema, None, {})
            target = self.named.get(schema) or next(
                (v for k, v in self.named.items() if k.rsplit(".", 1)[-1] == schema), None)
            if target is None:
                raise self.fail(f"the unknown named type {schema!r}")
            full = self.named_type(target) or schema
            if full in self.active:
                raise self.fail(f"the recursive type {full!r}")
            return self.to_spark(target)
        if not isinstance(schema, dict):
            raise self.fail(f"the schema {schema!r}")
        kind = schema.get("type")
        if isinstance(kind, (list, dict)) or (isinstance(kind, str) and kind not in (
                _PRIMITIVES | {"record", "error", "enum", "array", "map", "fixed"})):
            return self.to_spark(kind)
        name = self.named_type(schema)
        if name and kind in ("record", "error", "enum", "fixed"):
            self.named[name] = schema
        if kind in ("record", "error"):
            if name:
                self.active.add(name)
            fields = [T.StructField(str(f["name"]), self.to_spark(f["type"]), True)
                      for f in schema.get("fields", [])]
            if name:
                self.active.discard(name)
            return T.StructType(fields)
        if kind == "enum":
            return T.StringType()
        if kind == "array":
            return T.ArrayType(self.to_spark(schema["items"]), True)
        if kind == "map":
            return T.MapType(T.StringType(), self.to_spark(schema["values"]), True)
        if kind == "fixed":
            return self.decimal(schema) or T.BinaryType()
        return self.primitive(str(kind), schema.get("logicalType"), schema)

    def decimal(self, schema: dict[str, Any]) -> DataType | None:
        from pyspark.sql import types as T

        if schema.get("logicalType") != "decimal":
            return None
        precision, scale = int(schema.get("precision", 0)), int(schema.get("scale", 0))
        if not 0 < precision <= 38 or not 0 <= scale <= precision:
            raise self.fail(f"decimal({precision}, {scale})")
        return T.DecimalType(precision, scale)

    def primitive(self, kind: str, logical: Any, schema: dict[str, Any]) -> DataType:
        from pyspark.sql import types as T

        if logical in _FIXED_UP:
            self.fix = True
        if kind == "null":
            return T.NullType()
        if kind == "boolean":
            return T.BooleanType()
        if kind == "int":
            return T.DateType() if logical == "date" else T.IntegerType()
        if kind == "long":
            if logical in ("timestamp-millis", "timestamp-micros"):
                return T.TimestampType()
            if logical in ("local-timestamp-millis", "local-timestamp-micros"):
                return T.TimestampNTZType()
            return T.LongType()
        if kind == "float":
            return T.FloatType()
        if kind == "double":
            return T.DoubleType()
        if kind == "bytes":
            return self.decimal(schema) or T.BinaryType()
        return T.StringType()

    def union(self, members: list[Any]) -> DataType:
        from pyspark.sql import types as T

        kinds = [m for m in members if m != "null" and not (
            isinstance(m, dict) and m.get("type") == "null")]
        if not kinds:
            return T.NullType()
        if len(kinds) == 1:
            return self.to_spark(kinds[0])
        types = [self.to_spark(k) for k in kinds]
        names = {type(t).__name__ for t in types}
        if names == {"IntegerType", "LongType"}:
            return T.LongType()
        if names == {"FloatType", "DoubleType"}:
            return T.DoubleType()
        shown = ", ".join(k if isinstance(k, str) else str(k.get("type")) for k in kinds)
        raise self.fail(f"the union [{shown}]")


def avro_to_spark(schema: Any, file: str) -> tuple[StructType, bool]:
    """The Spark schema of a file's Avro writer schema, and whether values need fixing up
    (:func:`fix_value`). FormatError naming ``file`` for types with no Spark equivalent."""
    from pyspark.sql import types as T

    mapper = _Mapper(file)
    spark_type = mapper.to_spark(schema)
    if not isinstance(spark_type, T.StructType):  # a non-record top level: one column
        spark_type = T.StructType([T.StructField("value", spark_type, True)])
    return spark_type, mapper.fix


def fix_value(value: Any, arrow_type: pa.DataType) -> Any:
    """A fastavro value as the Arrow column type wants it: times of day as integers (ms for
    int32, µs for int64), UUIDs as strings; containers are walked."""
    import pyarrow.types as pat

    if value is None:
        return None
    if isinstance(value, dt.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 \
            + value.microsecond
        return micros // 1000 if pat.is_int32(arrow_type) else micros
    if isinstance(value, uuid.UUID):
        return str(value)
    if pat.is_struct(arrow_type) and isinstance(value, dict):
        return {arrow_type.field(i).name: fix_value(value.get(arrow_type.field(i).name),
                                                    arrow_type.field(i).type)
                for i in range(arrow_type.num_fields)}
    if pat.is_map(arrow_type) and isinstance(value, dict):
        return {k: fix_value(v, arrow_type.item_type) for k, v in value.items()}
    if pat.is_list(arrow_type) and isinstance(value, list):
        return [fix_value(v, arrow_type.value_type) for v in value]
    return value


def avro_batches(stream: Any, schema: pa.Schema, fix: bool) -> Iterator[pa.Table]:
    """The records of one Avro file as Arrow tables of ``schema`` (top-level record fields
    matched by name; a non-record file fills the single ``value`` column)."""
    import fastavro
    import pyarrow as pa

    from ._avro_codecs import ensure_codecs

    ensure_codecs()
    reader = fastavro.reader(stream)
    single = len(schema) == 1 and schema.names == ["value"] and not _is_record(
        reader.writer_schema)
    chunk: list[Any] = []

    def table(rows: list[Any]) -> pa.Table:
        if single:
            rows = [{"value": r} for r in rows]
        if fix:
            rows = [{f.name: fix_value(r.get(f.name), f.type) for f in schema} for r in rows]
        return pa.Table.from_pylist(rows, schema=schema)

    for record in reader:
        chunk.append(record)
        if len(chunk) >= BATCH_ROWS:
            yield table(chunk)
            chunk = []
    if chunk:
        yield table(chunk)


def _is_record(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") in ("record", "error")
