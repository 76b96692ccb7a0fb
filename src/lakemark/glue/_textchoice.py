"""Per-value types for CSV read into a DynamicFrame, as Glue's own CSV reader gives them.

Glue does not type a CSV column once from a sample or from the catalog: it types every value.
A column of whole numbers is ``long``, one with decimals ``double``, text is ``string``; a
column whose values are of more than one kind becomes a choice — ``10001`` in most rows and
``ABC0`` in a few is ``choice(long, string)`` (Glue's Medicare example), and ``resolveChoice``
decides what to keep. lakemark reads the CSV with every column as a string and then looks at
every value (one Spark job over the input, like Spark's ``inferSchema``):

* a value matching ``[+-]digits`` that fits a long is a ``long``;
* another number (``1.5``, ``-2e3``, ``.5``) is a ``double``; a column with whole numbers and
  decimals (and nothing else) is ``double``, as Glue widens numbers;
* anything else is a ``string``; empty fields are null (Spark's CSV default) and have no type.

Columns with one kind get that type; columns with text and numbers get the choice
``choice(long|double, string)``, each record's value kept under its own type, so nothing is
lost before the script decides. Partition columns (from folder names) are left as Spark types
them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["type_text_columns"]

_LONG = r"^[+-]?[0-9]+$"
_DOUBLE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _kinds(col: Column) -> tuple[Column, Column, Column]:

    is_long = col.rlike(_LONG) & col.try_cast("bigint").isNotNull()
    is_double = ~is_long & col.rlike(_DOUBLE) & col.try_cast("double").isNotNull()
    is_string = col.isNotNull() & ~is_long & ~is_double
    return is_long, is_double, is_string


def type_text_columns(df: DataFrame, columns: Iterable[str]) -> DataFrame:
    """``df`` with each of the string ``columns`` typed from its values (module docstring)."""
    from pyspark.sql import functions as F

    from ._choicetype import choice_type, member_name
    from ._fieldpaths import quote

    names = [c for c in columns if c in df.columns]
    if not names:
        return df
    aggs = []
    for i, name in enumerate(names):
        for j, flag in enumerate(_kinds(F.col(quote(name)))):
            aggs.append(F.max(flag.cast("int")).alias(f"k{i}_{j}"))
    row = df.agg(*aggs).collect()[0]
    from pyspark.sql.types import DoubleType, LongType, StringType

    out = []
    for c in df.columns:
        if c not in names:
            out.append(F.col(quote(c)))
            continue
        i = names.index(c)
        has_long, has_double, has_string = (bool(row[f"k{i}_{j}"]) for j in range(3))
        col = F.col(quote(c))
        number = DoubleType() if has_double else LongType() if has_long else None
        if number is None:
            out.append(col)
        elif not has_string:
            out.append(col.try_cast(number).alias(c))
        else:
            is_long, is_double, is_string = _kinds(col)
            is_number = is_long | is_double
            target = choice_type([number, StringType()])
            value = F.struct(
                F.when(is_number, col.try_cast(number)).alias(member_name(number)),
                F.when(is_string, col).alias(member_name(StringType())),
            )
            out.append(F.when(col.isNull(), F.lit(None).cast(target)).otherwise(value).alias(c))
    return df.select(*out)
