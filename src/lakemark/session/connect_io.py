"""``format("delta"|"iceberg")`` reads and writes of a Spark Connect session, served by
lakemark's Python data sources on the server (docs/connect.md).

Spark refuses a Python data source's ``errorifexists`` / ``ignore`` save modes and its
``partitionBy`` before the source sees the write, and the server's Python workers do not see
the client's settings. A classic session's reader and writer wrappers (:mod:`lakemark.spark_io`)
pass them on as hidden options; Connect's reader and writer are other classes, so
:func:`install` wraps their ``save`` and ``load`` the same way: the save mode and
``partitionBy`` become hidden options (Spark is given ``append`` or ``overwrite``), the
client's S3 endpoint settings and time zone ride along, and an error lakemark raised in a
worker comes back as its own one line. ``spark.table`` / ``spark.read.table`` of an Iceberg
catalog's ``cat.db.table`` read it with ``format("iceberg")``; ``df.writeTo`` of one is
refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["install"]

#: Formats this module hands to lakemark's data sources.
FORMATS = ("delta", "iceberg")

#: Spark's names for the default save mode.
_ERROR_MODES = ("error", "errorifexists", "default")


def _served(spark: SparkSession, fmt: str) -> bool:
    """Whether lakemark's data source serves ``fmt`` in ``spark`` (not the format's jars)."""
    from ..tables import is_registered, lakemark_iceberg

    if fmt == "delta":
        return is_registered(spark)
    return fmt == "iceberg" and lakemark_iceberg(spark)


def _hidden(spark: SparkSession, fmt: str, path: str) -> dict[str, str]:
    from ..datasources._classic import hidden_options
    from ..spark_io import driver_endpoint

    return hidden_options(spark, fmt, path, driver_endpoint())


def _save(original: Callable[..., None]) -> Callable[..., None]:
    def save(self: Any, path: str | None = None, format: str | None = None,  # noqa: A002
             mode: str | None = None, partitionBy: Any = None,  # noqa: N803
             **options: Any) -> None:
        fmt = str(format or self._write.source or "").strip().lower()
        if fmt not in FORMATS or path is None or not _served(self._spark, fmt):
            return original(self, path, format, mode, partitionBy, **options)
        from ..datasources import PARTITION_OPTION, SAVE_MODE_OPTION
        from ..datasources._classic import lakemark_errors

        self.mode(mode).options(**options)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        how = str(self._write.mode or "errorifexists").strip().lower()
        how = "errorifexists" if how in _ERROR_MODES else how
        write = self._write
        write.options.update({SAVE_MODE_OPTION: how,
                              PARTITION_OPTION: json.dumps(list(write.partitioning_cols))})
        write.options.update(_hidden(self._spark, fmt, path))
        write.mode = "overwrite" if how == "overwrite" else "append"
        write.partitioning_cols = []
        with lakemark_errors():
            return original(self, path, fmt)

    save.__doc__ = original.__doc__
    return save


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    def load(self: Any, path: Any = None, format: str | None = None,  # noqa: A002
             schema: Any = None, **options: Any) -> Any:
        fmt = str(format or self._format or "").strip().lower()
        if fmt not in FORMATS or not isinstance(path, str) or not _served(self._client, fmt):
            return original(self, path, format, schema, **options)
        from ..datasources._classic import lakemark_errors

        options = {**options, **_hidden(self._client, fmt, path)}
        with lakemark_errors():
            frame = original(self, path, format, schema, **options)
            frame.schema  # noqa: B018 - the source plans now: its error is one line here
            return frame

    load.__doc__ = original.__doc__
    return load


def _iceberg_catalog_name(spark: SparkSession, name: object) -> bool:
    """Whether ``name`` is ``cat.db.table`` of a Spark catalog with Iceberg's plugin that
    lakemark's ``iceberg`` source serves here (Iceberg's Spark runtime is absent)."""
    from ..catalog._iceberg_spark import is_iceberg_plugin

    parts = str(name).split(".")
    if len(parts) != 3 or not _served(spark, "iceberg"):
        return False
    try:
        return is_iceberg_plugin(spark.conf.get(f"spark.sql.catalog.{parts[0]}", None))
    except Exception:  # a stopped session
        return False


def _table(original: Callable[..., Any], session_of: Callable[[Any], Any]
           ) -> Callable[..., Any]:
    """``spark.table(name)`` / ``spark.read.table(name)``: an Iceberg catalog's table is read
    with ``format("iceberg")``, as in a classic session."""
    def table(self: Any, tableName: str) -> Any:  # noqa: N803
        spark = session_of(self)
        if _iceberg_catalog_name(spark, tableName):
            return spark.read.format("iceberg").load(tableName)
        return original(self, tableName)

    table.__doc__ = original.__doc__
    return table


def _write_to(original: Callable[..., Any]) -> Callable[..., Any]:
    """``df.writeTo(name)`` of an Iceberg catalog's table: refused by name (classic mode
    serves it with lakemark's Iceberg sink; over Connect use ``format("iceberg").save``)."""
    def write_to(self: Any, table: str) -> Any:
        if _iceberg_catalog_name(self.sparkSession, table):
            from ..errors import UnsupportedError

            raise UnsupportedError(f"df.writeTo({table!r}) on an Iceberg catalog's table is "
                                   "not available over Spark Connect yet (write it with "
                                   "df.write.format('iceberg').save(NAME))")
        return original(self, table)

    write_to.__doc__ = original.__doc__
    return write_to


def install(session: SparkSession) -> None:
    """Serve ``format("iceberg")`` in ``session`` with lakemark's data source (unless
    Iceberg's Spark runtime does; ``delta`` is registered with every session lakemark hands
    out) and wrap Spark Connect's ``DataFrameWriter.save`` and ``DataFrameReader.load`` (once
    per process)."""
    from pyspark.sql.connect.readwriter import DataFrameReader, DataFrameWriter

    from ..datasources import register_sources
    from ..tables import lakemark_iceberg

    if lakemark_iceberg(session):
        register_sources(session, delta=False, iceberg=True)
    if getattr(DataFrameWriter.save, "_lakemark", False):
        return
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    save, load = _save(DataFrameWriter.save), _load(DataFrameReader.load)
    save._lakemark = load._lakemark = True  # type: ignore[attr-defined]
    DataFrameWriter.save = save  # type: ignore[method-assign]
    DataFrameReader.load = load  # type: ignore[method-assign]
    DataFrameReader.table = _table(DataFrameReader.table,  # type: ignore[method-assign]
                                   lambda reader: reader._client)
    ConnectSession.table = _table(ConnectSession.table,  # type: ignore[method-assign]
                                  lambda spark: spark)
    DataFrame.writeTo = _write_to(DataFrame.writeTo)  # type: ignore[method-assign]
