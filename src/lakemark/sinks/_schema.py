"""The Delta schema of a DataFrame, and how it compares with an existing table's.

The schema comes from the DataFrame (through Spark's own Spark→Arrow type mapping, then
deltalake's Arrow→Delta mapping) rather than from the files written, so that it is known before
anything is written, includes partition columns (Spark leaves them out of the files) with their
DataFrame types, and exists for an empty DataFrame too. Spark writes ``TimestampType`` as UTC
instants (``timestamp``) and ``TimestampNTZType`` as ``timestamp_ntz``; decimals keep their
precision and scale.

Like Delta's Spark writer, lakemark makes every column of a new table nullable, and ignores
nullability when comparing (a non-nullable DataFrame column fits a nullable table column).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError
from ._values import PARTITION_KINDS, kind_of

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import Schema as DeltaSchema
    from pyspark.sql.types import StructType

__all__ = ["spark_kinds", "arrow_schema", "delta_schema", "fields_of", "kinds_of",
           "schema_differences", "check_partition_kinds", "spark_type_of", "grows_inside",
           "grown_columns"]

_NULLABILITY_KEYS = frozenset({"nullable", "containsNull", "valueContainsNull", "metadata"})


def spark_kinds(schema: StructType) -> dict[str, str]:
    """Top-level column name → kind (as :func:`~lakemark.sinks._values.kind_of` names them),
    straight from Spark types; ``"complex"`` for nested and ``"other"`` for anything else."""
    from pyspark.sql import types as T

    simple: list[tuple[type, str]] = [
        (T.StringType, "string"), (T.CharType, "string"), (T.VarcharType, "string"),
        (T.LongType, "long"), (T.IntegerType, "integer"), (T.ShortType, "short"),
        (T.ByteType, "byte"), (T.BooleanType, "boolean"), (T.DoubleType, "double"),
        (T.FloatType, "float"), (T.DecimalType, "decimal"), (T.DateType, "date"),
        (T.TimestampNTZType, "timestamp_ntz"), (T.TimestampType, "timestamp"),
        (T.BinaryType, "binary"), (T.StructType, "complex"), (T.ArrayType, "complex"),
        (T.MapType, "complex"),
    ]
    kinds = {}
    for field in schema.fields:
        kinds[field.name] = next(
            (kind for cls, kind in simple if isinstance(field.dataType, cls)), "other")
    return kinds


def arrow_schema(schema: StructType, *, target: str) -> pa.Schema:
    """The Arrow schema Spark uses for ``schema`` (all top-level fields nullable).

    Raises FormatError naming the columns whose Spark type has no Arrow equivalent.
    """
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType as _StructType

    fields = []
    bad = []
    for field in schema.fields:
        try:
            converted = to_arrow_schema(_StructType([field]), timezone="UTC")
        except Exception as exc:  # pyspark raises its own type errors for unsupported types
            bad.append(f"{field.name} ({field.dataType.simpleString()}: {exc})")
            continue
        fields.append(converted.field(0).with_nullable(True))
    if bad:
        raise FormatError(f"cannot write to {target}: unsupported column type(s): " +
                          "; ".join(bad))
    return pa.schema(fields)


def delta_schema(schema: StructType, *, target: str) -> DeltaSchema:
    """The Delta schema for a DataFrame schema; FormatError naming unsupported columns."""
    import pyarrow as pa
    from deltalake import Schema

    arrow = arrow_schema(schema, target=target)
    try:
        return Schema.from_arrow(arrow)
    except Exception:
        bad = []
        for field in arrow:
            try:
                Schema.from_arrow(pa.schema([field]))
            except Exception as exc:
                bad.append(f"{field.name} ({field.type}: {exc})")
        raise FormatError(
            f"cannot write to Delta table {target}: no Delta type for column(s): " +
            "; ".join(bad or ["(unknown)"])
        ) from None


def fields_of(schema: DeltaSchema) -> list[dict[str, Any]]:
    """The top-level fields of a Delta schema as JSON dicts (name, type, nullable, ...)."""
    fields: list[dict[str, Any]] = json.loads(schema.to_json())["fields"]
    return fields


def kinds_of(schema: DeltaSchema) -> dict[str, str]:
    """Top-level column name → kind (see :func:`~lakemark.sinks._values.kind_of`)."""
    return {f["name"]: kind_of(f["type"]) for f in fields_of(schema)}


def _bare(value: Any) -> Any:
    """A Delta type with nullability and metadata removed, for comparing types."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k not in _NULLABILITY_KEYS}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _type_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(_bare(value), separators=(",", ":"))


def grows_inside(table_type: Any, frame_type: Any) -> bool:
    """Whether ``frame_type`` is ``table_type`` with fields added inside its structs (at any
    depth, through array elements and map values) and nothing else changed: what
    ``mergeSchema`` adds to a column (a tracked source's ``address.zip``)."""
    from ..planning.schema_nested import additions, with_fields

    inside = additions(_bare(table_type), _bare(frame_type))
    return bool(inside) and _bare(with_fields(_bare(table_type), inside)) == _bare(frame_type)


def grown_columns(table: DeltaSchema, frame: DeltaSchema) -> list[str]:
    """The table's columns to which the DataFrame adds nested fields (:func:`grows_inside`)."""
    want = {f["name"]: f["type"] for f in fields_of(table)}
    return [f["name"] for f in fields_of(frame)
            if f["name"] in want and grows_inside(want[f["name"]], f["type"])]


def schema_differences(table: DeltaSchema, frame: DeltaSchema, *,
                       merge: bool = False) -> list[str]:
    """Human-readable differences between a table's columns and a DataFrame's (by name).

    Column order does not matter (lakemark reorders the DataFrame to the table's order);
    nullability does not matter either. An empty list means the DataFrame fits. A nullable
    table column the DataFrame lacks is written as nulls (as Delta's own writer does: a batch
    that simply has no value for an optional field must not fail); a NOT NULL one is refused.
    ``merge`` (Delta's ``mergeSchema``): new columns of the DataFrame are added to the table,
    and so are new fields inside a column's structs (:func:`grows_inside`).
    """
    want = {f["name"]: f["type"] for f in fields_of(table)}
    required = {f["name"] for f in fields_of(table) if f.get("nullable") is False}
    have = {f["name"]: f["type"] for f in fields_of(frame)}
    out = []
    for name, typ in want.items():
        if name not in have:
            if name in required:
                out.append(f"{name}: a NOT NULL column of the table ({_type_text(typ)}), "
                           "missing from the DataFrame")
        elif _bare(have[name]) != _bare(typ) and not (merge and grows_inside(typ, have[name])):
            out.append(f"{name}: table has {_type_text(typ)}, DataFrame has "
                       f"{_type_text(have[name])}")
    for name, typ in have.items():
        if name not in want and not merge:
            out.append(f"{name}: in the DataFrame ({_type_text(typ)}), not in the table")
    return out


def check_partition_kinds(kinds: Mapping[str, str], partition_by: Sequence[str],
                          *, target: str) -> None:
    """ConfigError unless every partition column has a type lakemark can partition by."""
    bad = [f"{c} ({kinds.get(c)})" for c in partition_by if kinds.get(c) not in PARTITION_KINDS]
    if bad:
        raise ConfigError(f"cannot partition {target} by column(s) of unsupported type: " +
                        ", ".join(bad))


def spark_type_of(field: Mapping[str, Any]) -> Any:
    """The Spark type of one Delta field (as :func:`fields_of` gives it): Delta writes its
    schema in Spark's own JSON form."""
    from pyspark.sql.types import StructType

    return StructType.fromJson({"type": "struct", "fields": [dict(field)]}).fields[0].dataType
