"""Builder calls of pyspark's readers and writers, recorded on the builder for lakemark.

``spark.read.format(…).option(…)`` and ``df.writeTo(…).option(…)`` only build a Java object;
lakemark decides at the terminal call (``load``, ``save``, ``append``…) whether the call is
its own (Delta/Iceberg without jars, S3 without S3A), so it needs the options, format and
partitioning given so far. :func:`recording` wraps a builder method to keep them in a plain
dict on the builder as well; :mod:`lakemark.spark_io` (``DataFrameReader``/``Writer``) and
:mod:`lakemark.tables._iceberg_v2` (``DataFrameWriterV2``) both use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Record", "option_text", "record_option", "record_options", "recording"]

#: Records one call's arguments ``(state, args, kwargs)`` into the builder's state.
Record = Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], None]


def option_text(value: Any) -> str:
    """An option value as Spark passes it on: booleans as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def record_option(state: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``.option(key, value)``: kept in ``state["options"]`` (a None value is not kept)."""
    key = args[0] if args else kwargs.get("key")
    value = args[1] if len(args) > 1 else kwargs.get("value")
    if key is not None and value is not None:
        state["options"][str(key)] = option_text(value)


def record_options(state: dict[str, Any], _args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> None:
    """``.options(**kwargs)``: each kept as :func:`record_option` keeps one."""
    for key, value in kwargs.items():
        record_option(state, (key, value), {})


def recording(original: Callable[..., Any], record: Record,
              state_of: Callable[[Any], dict[str, Any]]) -> Any:
    """``original`` (a builder method) that also records its arguments with ``record`` into
    ``state_of(builder)``; a builder it returns that is not the same object gets a copy of the
    state, so chained calls see everything recorded before them."""
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        record(state_of(self), args, kwargs)
        if result is not None and result is not self:
            state_of(result).update({k: (dict(v) if isinstance(v, dict) else
                                         list(v) if isinstance(v, list) else v)
                                     for k, v in state_of(self).items()})
        return result
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method
