"""Glue's record functions (``Map``, ``Filter``) on the executors, and the error records they leave.

A record is handed to the user's function as a plain ``dict`` (nested structs are dicts, arrays
are lists, maps are dicts), the way Glue's Python transforms see a DynamicRecord.

* ``Filter`` keeps the rows (unchanged, schema kept) for which the function returns a true value.
* ``Map`` keeps what the function returns. The output schema is inferred from *every* returned
  record when ``map`` is called (one Spark job): keys keep their first-seen order, a key that
  is missing or None in a record is null there, a field whose values still fit the input
  field's type keeps that type, integers and floats of one field widen to double, and values
  of one field with kinds that do not merge (a number here, a string there) make a choice type
  (``_choicetype``), as Glue's schema would, each value kept under its own type. The function
  therefore
  runs once for the inference and again whenever the result is computed.
* A record on which the function raises (or, for Map, returns something other than a dict) is
  an *error record*: it is dropped from the output and counted, as Glue does. The count is
  computed on demand (``errorsCount()`` runs the function over the input again), so it does
  not depend on how often the frame was evaluated.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..connect_compat import empty_frame, is_connect
from ..errors import ConfigError, ReadError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.types import DataType

__all__ = ["check_thresholds", "filter_frame", "map_frame", "RecordErrors", "ERROR_SCHEMA",
           "to_record"]

log = logging.getLogger("lakemark.glue")

#: Schema of the frame ``errorsAsDynamicFrame`` returns.
ERROR_SCHEMA = "transformation string, error string, record string"

_INT_RANGES = {"byte": 2**7, "short": 2**15, "integer": 2**31, "long": 2**63}


def to_record(row: Row) -> dict[str, Any]:
    """A Spark Row as the dict a Glue record function receives (a choice field holds the
    record's own value, as in Glue)."""
    record = row.asDict(recursive=True)
    return _unchoice(record) if _nested(row) else record


_CHOICE_PREFIX = "__choice__:"


def _nested(row: Row) -> bool:
    from pyspark.sql import Row as R

    return any(isinstance(v, (R, list, dict)) for v in row)


def _unchoice(value: Any) -> Any:
    """Choice structs (dicts keyed ``__choice__:<type>``) replaced by the value they hold."""
    if isinstance(value, dict):
        if value and all(isinstance(k, str) and k.startswith(_CHOICE_PREFIX) for k in value):
            return next((v for v in value.values() if v is not None), None)
        return {k: _unchoice(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unchoice(v) for v in value]
    return value


# ---------------------------------------------------------------- Filter / Map on the executors

def _filter_partition(f: Callable[[dict[str, Any]], Any]
                      ) -> Callable[[Iterable[Row]], Iterator[Row]]:
    def run(rows: Iterable[Row]) -> Iterator[Row]:
        for row in rows:
            try:
                keep = f(to_record(row))
            except Exception:
                continue
            if keep:
                yield row
    return run


def _map_partition(
    f: Callable[[dict[str, Any]], Any],
) -> Callable[[Iterable[Row]], Iterator[dict[str, Any]]]:
    def run(rows: Iterable[Row]) -> Iterator[dict[str, Any]]:
        for row in rows:
            try:
                out = f(to_record(row))
            except Exception:
                continue
            if isinstance(out, dict):
                yield out
    return run


def filter_frame(df: DataFrame, f: Callable[[dict[str, Any]], Any]) -> DataFrame:
    """Rows of ``df`` for which ``f(record)`` is true (error records dropped)."""
    _check_callable(f, "Filter")
    if is_connect(df.sparkSession):  # no RDD over Spark Connect: Arrow batches instead
        return df.mapInArrow(_arrow_filter(f), df.schema)
    rdd = df.rdd.mapPartitions(_filter_partition(f), preservesPartitioning=True)
    return df.sparkSession.createDataFrame(rdd, df.schema, verifySchema=False)


def map_frame(df: DataFrame, f: Callable[[dict[str, Any]], Any]) -> DataFrame:
    """``f`` applied to every record of ``df``; the schema is inferred from the results."""
    _check_callable(f, "Map")
    if is_connect(df.sparkSession):  # no RDD over Spark Connect: Arrow batches instead
        return _map_frame_arrow(df, f)
    hint = df.schema
    mapped = df.rdd.mapPartitions(_map_partition(f))
    from pyspark.sql.types import NullType

    try:
        merged = mapped.map(lambda rec: infer_type(rec, hint)).fold(NullType(), merge_types)
    except Exception as exc:
        _reraise_config_error(exc)
        raise
    from pyspark.sql.types import StructType

    if not isinstance(merged, StructType):  # no record came out: keep the input's schema
        return df.sparkSession.createDataFrame([], df.schema)
    schema = _no_null_types(merged)
    assert isinstance(schema, StructType)
    rows = mapped.map(lambda rec: coerce(rec, schema))
    return df.sparkSession.createDataFrame(rows, schema, verifySchema=False)


def _reraise_config_error(exc: BaseException) -> None:
    """A ConfigError raised on an executor arrives wrapped; raise it as itself."""
    marker = "lakemark.errors.ConfigError: "
    text = str(exc)
    if marker in text:
        message = text.split(marker, 1)[1].splitlines()[0]
        raise ConfigError(message) from None


def _check_callable(f: Any, what: str) -> None:
    if not callable(f):
        raise ConfigError(f"{what} needs a function of one record (f=), got {type(f).__name__}")


# ---------------------------------------------------------------------------- error records

def _error_of(f: Callable[[dict[str, Any]], Any], row: Row, kind: str) -> str | None:
    try:
        out = f(to_record(row))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if kind == "Map" and not isinstance(out, dict):
        return f"Map function returned {type(out).__name__}, not a dict"
    return None


class RecordErrors:
    """The error records one Map/Filter left: the input rows on which its function failed."""

    def __init__(self, kind: str, df: DataFrame, f: Callable[[dict[str, Any]], Any]) -> None:
        self.kind = kind
        self._df = df
        self._f = f
        self._count: int | None = None

    def count(self) -> int:
        """How many input records the function failed on (one Spark job, then remembered)."""
        if self._count is None and is_connect(self._df.sparkSession):
            rows = self._df.mapInArrow(_arrow_errors(self._f, self.kind), ERROR_SCHEMA)
            self._count = rows.count()
        if self._count is None:
            f, kind = self._f, self.kind
            self._count = int(
                self._df.rdd.map(lambda row: 0 if _error_of(f, row, kind) is None else 1).sum()
            )
        return self._count

    def frame(self, spark: SparkSession) -> DataFrame:
        """The error records: the transformation, the error, and the record as JSON."""
        f, kind = self._f, self.kind
        if is_connect(spark):
            return self._df.mapInArrow(_arrow_errors(f, kind), ERROR_SCHEMA)

        def errors(rows: Iterable[Row]) -> Iterator[tuple[str, str, str]]:
            for row in rows:
                err = _error_of(f, row, kind)
                if err is not None:
                    yield kind, err, json.dumps(to_record(row), default=str, sort_keys=False)

        return spark.createDataFrame(self._df.rdd.mapPartitions(errors), ERROR_SCHEMA)


def _arrow_record(value: Any) -> Any:
    """A value of ``pyarrow``'s ``to_pylist`` as a Glue record function sees it: a map (a list
    of key-value tuples) as a dict, a choice struct as the value it holds."""
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {k: _arrow_record(v) for k, v in value}
        return [_arrow_record(v) for v in value]
    if isinstance(value, dict):
        return _unchoice({k: _arrow_record(v) for k, v in value.items()})
    return value


def _arrow_filter(f: Callable[[dict[str, Any]], Any]) -> Callable[[Any], Iterator[Any]]:
    """Filter over Arrow batches (``mapInArrow``, Spark Connect): the rows ``f`` keeps."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            keep = []
            for record in batch.to_pylist():
                try:
                    keep.append(bool(f(_arrow_record(record))))
                except Exception:
                    keep.append(False)
            yield batch.filter(pa.array(keep, pa.bool_()))
    return run


def _arrow_errors(f: Callable[[dict[str, Any]], Any], kind: str
                  ) -> Callable[[Any], Iterator[Any]]:
    """The error records of ``f`` over Arrow batches (``mapInArrow``, Spark Connect)."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            out: list[dict[str, str]] = []
            for record in batch.to_pylist():
                value = _arrow_record(record)
                try:
                    result = f(value)
                    err = (None if kind != "Map" or isinstance(result, dict) else
                           f"Map function returned {type(result).__name__}, not a dict")
                except Exception as exc:
                    err = f"{type(exc).__name__}: {exc}"
                if err is not None:
                    out.append({"transformation": kind, "error": err,
                                "record": json.dumps(value, default=str, sort_keys=False)})
            names = ["transformation", "error", "record"]
            yield pa.RecordBatch.from_pylist(out, schema=pa.schema([(n, pa.string())
                                                                    for n in names]))
    return run


def _map_frame_arrow(df: DataFrame, f: Callable[[dict[str, Any]], Any]) -> DataFrame:
    """``map_frame`` over Arrow batches (``mapInArrow``, Spark Connect): each batch's records
    give their merged type (one Spark job), merged here as the classic fold does; then the
    function runs again and its records are written with that schema."""
    from pyspark.sql.types import NullType, StructType, _parse_datatype_json_string

    hint = df.schema
    merged: DataType = NullType()
    try:
        for row in df.mapInArrow(_arrow_map_types(f, hint), "type string").collect():
            merged = merge_types(merged, _parse_datatype_json_string(row["type"]))
    except Exception as exc:
        _reraise_config_error(exc)
        raise
    if not isinstance(merged, StructType):  # no record came out: keep the input's schema
        return empty_frame(df.sparkSession, df.schema)
    schema = _no_null_types(merged)
    assert isinstance(schema, StructType)
    return df.mapInArrow(_arrow_map_rows(f, schema), schema)


def _arrow_map_types(f: Callable[[dict[str, Any]], Any], hint: DataType
                     ) -> Callable[[Any], Iterator[Any]]:
    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.types import NullType

        for batch in batches:
            merged: DataType = NullType()
            for out in _arrow_outputs(f, batch):
                merged = merge_types(merged, infer_type(out, hint))
            if not isinstance(merged, NullType):
                yield pa.RecordBatch.from_pylist([{"type": merged.json()}],
                                                 schema=pa.schema([("type", pa.string())]))
    return run


def _arrow_map_rows(f: Callable[[dict[str, Any]], Any], schema: DataType
                    ) -> Callable[[Any], Iterator[Any]]:
    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow_schema = to_arrow_schema(schema)  # type: ignore[arg-type]
        for batch in batches:
            rows = [_arrow_value(coerce(out, schema), schema)
                    for out in _arrow_outputs(f, batch)]
            yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)
    return run


def _arrow_outputs(f: Callable[[dict[str, Any]], Any], batch: Any) -> Iterator[dict[str, Any]]:
    """What a Map function returns for the records of an Arrow batch (error records left
    out, as ``_map_partition`` does for Rows)."""
    for record in batch.to_pylist():
        try:
            out = f(_arrow_record(record))
        except Exception:
            continue
        if isinstance(out, dict):
            yield out


def _arrow_value(value: Any, dtype: DataType) -> Any:
    """A value ``coerce`` made for Spark (structs as tuples) as pyarrow's ``from_pylist``
    takes it (structs as dicts, maps as key-value pairs)."""
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(dtype, T.StructType):
        return {fld.name: _arrow_value(v, fld.dataType) for fld, v in zip(dtype.fields, value,
                                                                         strict=True)}
    if isinstance(dtype, T.ArrayType):
        return [_arrow_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, T.MapType):
        return [(_arrow_value(k, dtype.keyType), _arrow_value(v, dtype.valueType))
                for k, v in value.items()]
    return value


def _threshold(value: Any, name: str, what: str) -> int:
    try:
        number = int(value or 0)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {name} must be a whole number of error records, "
                          f"not {value!r}") from None
    if number < 0:
        raise ConfigError(f"{what}: {name} must be >= 0 (0 sets no limit), not {number}")
    return number


def check_thresholds(frame: Any, thresholds: tuple[Any, Any], what: str) -> None:
    """Glue's ``stageThreshold`` / ``totalThreshold`` on the frame a transform made: more error
    records than a positive threshold fails the transform (ReadError naming both numbers);
    0 sets no limit. Counting runs the record functions (only when a threshold is set)."""
    stage = _threshold(thresholds[0], "stageThreshold", what)
    total = _threshold(thresholds[1], "totalThreshold", what)
    ctx = f" (transformation_ctx {frame.transformation_ctx!r})" if frame.transformation_ctx else ""
    if stage:
        count = frame.stageErrorsCount()
        if count > stage:
            raise ReadError(f"{what}{ctx}: {count} error record(s), more than stageThreshold="
                            f"{stage}; errorsAsDynamicFrame() shows them")
    if total:
        count = frame.errorsCount()
        if count > total:
            raise ReadError(f"{what}{ctx}: {count} error record(s) in this frame and the frames "
                            f"it came from, more than totalThreshold={total}; "
                            "errorsAsDynamicFrame() shows them")


# ------------------------------------------------------------------------- schema inference

def _int_fits(value: int, dtype: DataType) -> bool:
    from pyspark.sql import types as T

    for cls, key in ((T.ByteType, "byte"), (T.ShortType, "short"),
                     (T.IntegerType, "integer"), (T.LongType, "long")):
        if isinstance(dtype, cls):
            bound = _INT_RANGES[key]
            return -bound <= value < bound
    return False


def infer_type(value: Any, hint: DataType | None = None) -> DataType:
    """The Spark type of a Python value, preferring ``hint`` (the input field's type) when the
    value fits it."""
    from pyspark.sql import Row
    from pyspark.sql import types as T

    if value is None:
        return T.NullType()
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        if hint is not None and _int_fits(value, hint):
            return hint
        return T.LongType() if _int_fits(value, T.LongType()) else T.DecimalType(38, 0)
    if isinstance(value, float):
        return hint if isinstance(hint, (T.FloatType, T.DoubleType)) else T.DoubleType()
    if isinstance(value, str):
        return T.StringType()
    if isinstance(value, decimal.Decimal):
        return hint if isinstance(hint, T.DecimalType) else T.DecimalType(38, 18)
    if isinstance(value, _dt.datetime):
        return hint if isinstance(hint, T.TimestampNTZType) else T.TimestampType()
    if isinstance(value, _dt.date):
        return T.DateType()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return T.BinaryType()
    if isinstance(value, Row):
        value = value.asDict(recursive=True)
    if isinstance(value, dict):
        if isinstance(hint, T.MapType):
            kt: DataType = T.NullType()
            vt: DataType = T.NullType()
            for k, v in value.items():
                kt = merge_types(kt, infer_type(k, hint.keyType))
                vt = merge_types(vt, infer_type(v, hint.valueType))
            return T.MapType(kt, vt, True)
        hint_struct = hint if isinstance(hint, T.StructType) else None
        fields = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(f"a record's keys must be strings, got {k!r}")
            sub = None
            if hint_struct is not None and k in hint_struct.fieldNames():
                sub = hint_struct[k].dataType
            fields.append(T.StructField(k, infer_type(v, sub), True))
        return T.StructType(fields)
    if isinstance(value, (list, tuple)):
        elem_hint = hint.elementType if isinstance(hint, T.ArrayType) else None
        et: DataType = T.NullType()
        for v in value:
            et = merge_types(et, infer_type(v, elem_hint))
        return T.ArrayType(et, True)
    raise ConfigError(f"a Map function returned a value of type {type(value).__name__} "
                      f"({value!r:.80}); use str, int, float, bool, Decimal, date, datetime, "
                      "bytes, dict or list")


_NUMERIC_ORDER = ("ByteType", "ShortType", "IntegerType", "LongType")


def merge_types(a: DataType, b: DataType) -> DataType:
    """One type that holds values of both ``a`` and ``b`` (strings when nothing else does)."""
    from pyspark.sql import types as T

    if a == b:
        return a
    if isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType):
        return a
    na, nb = type(a).__name__, type(b).__name__
    if na in _NUMERIC_ORDER and nb in _NUMERIC_ORDER:
        return a if _NUMERIC_ORDER.index(na) >= _NUMERIC_ORDER.index(nb) else b
    if isinstance(a, T.DecimalType) and isinstance(b, T.DecimalType):
        scale = max(a.scale, b.scale)
        digits = max(a.precision - a.scale, b.precision - b.scale)
        return T.DecimalType(min(38, digits + scale), min(scale, 38))
    if isinstance(a, T.NumericType) and isinstance(b, T.NumericType):
        return T.DoubleType()
    if {na, nb} == {"DateType", "TimestampType"}:
        return T.TimestampType()
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        fields = []
        names_b = set(b.fieldNames())
        for f in a.fields:
            dt = merge_types(f.dataType, b[f.name].dataType) if f.name in names_b else f.dataType
            fields.append(T.StructField(f.name, dt, True))
        names_a = set(a.fieldNames())
        fields.extend(T.StructField(f.name, f.dataType, True)
                      for f in b.fields if f.name not in names_a)
        return T.StructType(fields)
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(merge_types(a.elementType, b.elementType), True)
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return T.MapType(merge_types(a.keyType, b.keyType),
                         merge_types(a.valueType, b.valueType), True)
    from ._choicetype import choice_type

    return choice_type([a, b])


def _no_null_types(dtype: DataType) -> DataType:
    """NullType (a field that was None in every record) becomes string, which every sink takes."""
    from pyspark.sql import types as T

    if isinstance(dtype, T.NullType):
        return T.StringType()
    if isinstance(dtype, T.StructType):
        return T.StructType([T.StructField(f.name, _no_null_types(f.dataType), True)
                             for f in dtype.fields])
    if isinstance(dtype, T.ArrayType):
        return T.ArrayType(_no_null_types(dtype.elementType), True)
    if isinstance(dtype, T.MapType):
        return T.MapType(_no_null_types(dtype.keyType), _no_null_types(dtype.valueType), True)
    return dtype


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=str)
    return str(value)


_KINDS: dict[str, tuple[type, ...]] = {
    "boolean": (bool,), "string": (str,), "struct": (dict,), "map": (dict,),
    "array": (list, tuple), "binary": (bytes, bytearray),
    "date": (_dt.date,), "timestamp": (_dt.datetime,),
}


def _fits_kind(value: Any, member: str) -> bool:
    """Whether a Python value is of the kind a choice member (Glue type name) holds."""
    if isinstance(value, bool):
        return member == "boolean"
    if isinstance(value, int):
        return member in ("byte", "short", "int", "long", "decimal")
    if isinstance(value, float):
        return member in ("float", "double")
    if isinstance(value, decimal.Decimal):
        return member == "decimal"
    if member == "date":
        return isinstance(value, _dt.date) and not isinstance(value, _dt.datetime)
    return isinstance(value, _KINDS.get(member, ()))


def coerce(value: Any, dtype: DataType) -> Any:
    """``value`` as Spark expects it for ``dtype`` (structs as tuples, numbers widened)."""
    from pyspark.sql import Row
    from pyspark.sql import types as T

    if value is None:
        return None
    from ._choicetype import is_choice, members

    if is_choice(dtype):  # the value goes to the member of its own kind
        slots: list[Any] = [None] * len(dtype.fields)  # type: ignore[attr-defined]
        mems = members(dtype)
        for i, (name, t) in enumerate(mems):
            if _fits_kind(value, name):
                slots[i] = coerce(value, t)
                return tuple(slots)
        for i, (name, _t) in enumerate(mems):
            if name == "string":
                slots[i] = _as_text(value)
        return tuple(slots)
    if isinstance(dtype, T.StructType):
        if isinstance(value, Row):
            value = value.asDict(recursive=True)
        if not isinstance(value, dict):
            return None
        return tuple(coerce(value.get(f.name), f.dataType) for f in dtype.fields)
    if isinstance(dtype, T.ArrayType):
        if not isinstance(value, (list, tuple)):
            return None
        return [coerce(v, dtype.elementType) for v in value]
    if isinstance(dtype, T.MapType):
        if not isinstance(value, dict):
            return None
        return {coerce(k, dtype.keyType): coerce(v, dtype.valueType) for k, v in value.items()}
    if isinstance(dtype, T.StringType):
        return _as_text(value)
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return float(value)
    if isinstance(dtype, T.DecimalType):
        return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    if isinstance(dtype, T.TimestampType) and not isinstance(value, _dt.datetime):
        return _dt.datetime(value.year, value.month, value.day)
    return value
