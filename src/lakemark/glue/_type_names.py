"""Glue's name for a Spark type (``int``, ``long``, ``struct`` …), on its own so that both the
type parser/caster (``_df_types``) and the choice type (``_choicetype``) can use it without
importing each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

__all__ = ["glue_type_name"]


def glue_type_name(dtype: DataType) -> str:
    """Glue's name for a Spark type (``int``, ``long``, ``string``, ``struct`` …)."""
    from pyspark.sql import types as T

    names: list[tuple[type, str]] = [
        (T.StringType, "string"), (T.IntegerType, "int"), (T.LongType, "long"),
        (T.ShortType, "short"), (T.ByteType, "byte"), (T.FloatType, "float"),
        (T.DoubleType, "double"), (T.BooleanType, "boolean"), (T.DecimalType, "decimal"),
        (T.DateType, "date"), (T.TimestampType, "timestamp"),
        (T.TimestampNTZType, "timestamp"), (T.BinaryType, "binary"),
        (T.StructType, "struct"), (T.ArrayType, "array"), (T.MapType, "map"),
        (T.NullType, "null"),
    ]
    for cls, text in names:
        if isinstance(dtype, cls):
            return text
    return dtype.simpleString()
