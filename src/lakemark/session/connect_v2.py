"""``df.writeTo(name)`` (DataFrameWriterV2) of an Iceberg table over Spark Connect
(docs/connect.md).

A classic session without Iceberg's Spark runtime serves ``writeTo`` of a table of a Spark
catalog whose plugin is Iceberg's (or after ``.using("iceberg")``) with lakemark's Iceberg
sink (:mod:`lakemark.tables._iceberg_v2`: ``append``, ``create``, ``createOrReplace``,
``replace``; ``overwrite(condition)``, ``overwritePartitions``, ``tableProperty`` refused by
name). That sink writes from this process (pyiceberg, the rows collected over Arrow), so it
runs over Connect as it is: :func:`install` wraps Connect's ``DataFrameWriterV2`` and hands
what the script set on it (provider, options, ``partitionedBy`` columns, table properties) to
the same code, with the same rules and errors. Every other ``writeTo`` is Spark's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["install"]

_TERMINALS = ("append", "create", "createOrReplace", "replace", "overwrite",
              "overwritePartitions")


class _Classic:
    """What :func:`lakemark.tables._iceberg_v2._write` reads of a classic writer, made from
    a Connect one: the session, the frame, and the recorded builder calls."""

    def __init__(self, writer: Any, state: dict[str, Any]) -> None:
        from pyspark.sql.connect.dataframe import DataFrame

        from ..tables._iceberg_v2 import _STATE

        self._spark = writer._spark
        self._df = DataFrame(writer._df, writer._spark)
        self.__dict__[_STATE] = state


def _state(writer: Any) -> dict[str, Any]:
    write = writer._write
    return {"table": writer._table_name, "provider": write.provider,
            "options": {k: v for k, v in write.options.items() if v is not None},
            # a Connect column prints as the classic one's toString(): "d", "days(ts)"
            "partition": [str(c._expr) for c in write.partitioning_columns],
            "properties": list(write.table_properties.items())}


def _terminal(name: str, original: Callable[..., None]) -> Callable[..., None]:
    def method(self: Any, *args: Any, **kwargs: Any) -> None:
        from ..tables._iceberg_v2 import _write

        def spark_own(_writer: Any, *a: Any, **k: Any) -> None:
            original(self, *a, **k)

        _write(_Classic(self, _state(self)), name, spark_own, args, kwargs)

    method.__name__ = name
    method.__doc__ = original.__doc__
    return method


def install() -> None:
    """Wrap Spark Connect's ``DataFrameWriterV2`` terminal methods (once per process)."""
    from pyspark.sql.connect.readwriter import DataFrameWriterV2

    if getattr(DataFrameWriterV2.append, "_lakemark", False):
        return
    for name in _TERMINALS:
        method = _terminal(name, getattr(DataFrameWriterV2, name))
        method._lakemark = True  # type: ignore[attr-defined]
        setattr(DataFrameWriterV2, name, method)
