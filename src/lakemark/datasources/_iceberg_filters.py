"""Spark's pushed filters as pyiceberg row filters, for pruning an Iceberg scan's files.

Pure translation (no I/O): each :class:`pyspark.sql.datasource.Filter` that has an Iceberg
counterpart on a top-level column becomes one; the rest are dropped from the pruning (Spark
checks every filter on the rows anyway, so dropping one only reads more files).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["row_filter"]


def _one(flt: Any, columns: frozenset[str]) -> Any:
    from pyiceberg import expressions
    from pyspark.sql import datasource as D

    E: Any = expressions  # pyiceberg's pydantic constructors take what mypy cannot see

    ref = getattr(flt, "attribute", None)
    if isinstance(flt, D.Not):
        inner = _one(flt.child, columns)
        return E.Not(inner) if inner is not None else None
    if not isinstance(ref, tuple) or len(ref) != 1 or ref[0] not in columns:
        return None
    name = ref[0]
    value = getattr(flt, "value", None)
    if isinstance(flt, D.EqualTo) and value is not None:
        return E.EqualTo(name, value)
    if isinstance(flt, D.GreaterThan):
        return E.GreaterThan(name, value)
    if isinstance(flt, D.GreaterThanOrEqual):
        return E.GreaterThanOrEqual(name, value)
    if isinstance(flt, D.LessThan):
        return E.LessThan(name, value)
    if isinstance(flt, D.LessThanOrEqual):
        return E.LessThanOrEqual(name, value)
    if isinstance(flt, D.In) and value and None not in value:
        return E.In(name, set(value))
    if isinstance(flt, D.IsNull):
        return E.IsNull(name)
    if isinstance(flt, D.IsNotNull):
        return E.NotNull(name)
    if isinstance(flt, D.StringStartsWith) and isinstance(value, str):
        return E.StartsWith(name, value)
    return None


def row_filter(filters: Sequence[Any], columns: Sequence[str]) -> Any:
    """The AND of the filters pyiceberg can prune by (``AlwaysTrue`` when none)."""
    from pyiceberg import expressions

    E: Any = expressions
    names = frozenset(columns)
    out: Any = E.AlwaysTrue()
    for flt in filters:
        try:
            expr = _one(flt, names)
        except (TypeError, ValueError):  # a literal pyiceberg cannot take: no pruning by it
            expr = None
        if expr is not None:
            out = E.And(out, expr)
    return out
