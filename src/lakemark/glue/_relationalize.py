"""Glue's Relationalize: nested structs flattened, arrays pivoted out into their own tables.

For a root table named ``root``:

* every struct field becomes a top-level column named by its dotted path (``name.first``);
* every array column ``c`` becomes a table ``root_c`` with the columns ``id`` (the join key),
  ``index`` (the element's position, from 0) and ``c.val`` — for an array of structs the
  element's fields flattened as ``c.val.<field>``; in the parent table column ``c`` holds that
  ``id`` (null where the array was null; an empty array has an id but no rows);
* arrays inside those elements recurse the same way: column ``c.val.d`` of ``root_c`` is pivoted
  into ``root_c.val.d`` (a table is always named ``<root>_<column name in its parent>``).

The tables come back in parent-before-child order, the root first. Join keys are unique longs
(not consecutive). Each level that has arrays is materialised once (``localCheckpoint``) so that
a parent and its child tables always agree on the ids, however often each is recomputed;
``staging_path`` (where Glue stages the pivoted tables) is not needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._fieldpaths import flatten_columns, quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["relationalize"]

_ROW_ID = "__lakemark_relationalize_id"


def relationalize(df: DataFrame, root_name: str) -> dict[str, DataFrame]:
    """The tables Relationalize makes from ``df``, by name (the root first)."""
    out: dict[str, DataFrame] = {}
    _pivot(df, root_name, root_name, out)
    return out


def _pivot(df: DataFrame, table: str, root: str, out: dict[str, DataFrame]) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType

    flat = df.select(*flatten_columns(df.schema))
    arrays = [f.name for f in flat.schema.fields if isinstance(f.dataType, ArrayType)]
    if not arrays:
        out[table] = flat
        return
    keyed = flat.withColumn(_ROW_ID, F.monotonically_increasing_id()).localCheckpoint(eager=True)
    row_id = F.col(quote(_ROW_ID))
    parent_cols = []
    for name in flat.columns:
        col = F.col(quote(name))
        if name in arrays:
            col = F.when(col.isNull(), F.lit(None)).otherwise(row_id)
        parent_cols.append(col.alias(name))
    out[table] = keyed.select(*parent_cols)
    for name in arrays:
        child = keyed.select(
            row_id.alias("id"),
            F.posexplode(F.col(quote(name))).alias("index", f"{name}.val"),
        )
        _pivot(child, f"{root}_{name}", root, out)
