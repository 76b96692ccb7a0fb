"""``format("delta"|"iceberg")`` reads and writes of a Spark Connect session, served by
lakemark's Python data sources on the server (docs/connect.md).

Spark refuses a Python data source's ``errorifexists`` / ``ignore`` save modes and its
``partitionBy`` before the source sees the write, and the server's Python workers do not see
the client's settings. A classic session's reader and writer wrappers (:mod:`lakemark.spark_io`)
pass them on as hidden options; Connect's reader and writer are other classes, so
:func:`install` wraps their ``save`` and ``load`` the same way: the save mode and
``partitionBy`` become hidden options (Spark is given ``append`` or ``overwrite``), the
client's S3 endpoint settings and time zone ride along, and an error lakemark raised in a
worker comes back as its own one line; a Delta write's ``replaceWhere``, ``txnAppId`` and
``ignore`` are checked and planned in this process first, as a classic session's driver does
(``datasources._classic._delta_first``); ``mode("errorifexists"|"default")``, which Connect's
client refuses, is given to it as ``error``. ``spark.table`` / ``spark.read.table`` of an Iceberg
catalog's ``cat.db.table`` read it with ``format("iceberg")``. Beside it: ``df.writeTo`` of
such a table is served by :mod:`.connect_v2`, plain-format ``s3://`` paths by
:mod:`.connect_s3`, ``spark.sql`` on Delta and Iceberg tables by :mod:`.connect_sql`.
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
        self.mode(mode).options(**options)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if not fmt and {k.lower() for k in self._write.options} & {"txnappid", "txnversion"}:
            # only a Delta table can honour them: Spark's default Parquet writer would ignore
            # them and write a retried write twice (as spark_io._delta_write decides)
            fmt = "delta"
        if fmt not in FORMATS or path is None or not _served(self._spark, fmt):
            from .connect_s3 import s3_save

            if format is not None:
                self.format(format)
            written, target = s3_save(self, path)
            return None if written else original(self, target)
        from ..datasources import PARTITION_OPTION, SAVE_MODE_OPTION
        from ..datasources._classic import lakemark_errors

        how = str(self._write.mode or "errorifexists").strip().lower()
        how = "errorifexists" if how in _ERROR_MODES else how
        writer = self
        if fmt == "delta":
            writer = _delta_first(self, path, how)
            if writer is None:  # already recorded, or ignore on an existing table
                return None
        write = writer._write
        write.options.update({SAVE_MODE_OPTION: how,
                              PARTITION_OPTION: json.dumps(list(write.partitioning_cols))})
        write.options.update(_hidden(self._spark, fmt, path))
        write.mode = "overwrite" if how == "overwrite" else "append"
        write.partitioning_cols = []
        with lakemark_errors():
            return original(writer, path, fmt)

    save.__doc__ = original.__doc__
    return save


def _mode(original: Callable[..., Any]) -> Callable[..., Any]:
    """``mode("errorifexists")`` / ``mode("default")``: Spark's names of the default save mode,
    which a classic writer takes and Connect's client refuses at the write (``errorifexists is
    not supported``); given to Connect as ``error``, its name of the same mode."""
    def mode(self: Any, saveMode: str | None) -> Any:  # noqa: N803
        if isinstance(saveMode, str) and saveMode.strip().lower() in _ERROR_MODES:
            saveMode = "error"
        return original(self, saveMode)

    mode.__doc__ = original.__doc__
    return mode


def _delta_first(writer: Any, path: str, how: str) -> Any:
    """The writer to hand to Spark after the driver-side part of a Delta write (a classic
    session's, :func:`lakemark.datasources._classic._delta_first`) ran here: None when the
    write is skipped; a writer of other rows when ``replaceWhere`` keeps rows of the table."""
    from pyspark.sql.connect.dataframe import DataFrame

    from ..datasources._classic import _delta_first as plan, lakemark_errors

    frame = DataFrame(writer._df, writer._spark)
    with lakemark_errors():
        planned = plan(frame, path, how, dict(writer._write.options))
    if planned is None:
        return None
    rows, options = planned
    if rows is not frame:
        other: Any = rows.write.format("delta")
        other._write.partitioning_cols = list(writer._write.partitioning_cols)
        writer = other
    writer._write.options = dict(options)
    return writer


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    def load(self: Any, path: Any = None, format: str | None = None,  # noqa: A002
             schema: Any = None, **options: Any) -> Any:
        fmt = str(format or self._format or "").strip().lower()
        if fmt not in FORMATS or not isinstance(path, str) or not _served(self._client, fmt):
            from .connect_s3 import s3_load

            if format is not None:
                self.format(format)
            if schema is not None:
                self.schema(schema)
            self.options(**options)
            frame = s3_load(self, path)
            return original(self, path) if frame is None else frame
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


def install(session: SparkSession) -> None:
    """Serve ``format("iceberg")`` in ``session`` with lakemark's data source (unless
    Iceberg's Spark runtime does; ``delta`` is registered with every session lakemark hands
    out) and wrap Spark Connect's ``DataFrameWriter.save``, ``DataFrameReader.load`` and
    ``DataFrameWriterV2`` (once per process)."""
    from pyspark.sql.connect.readwriter import DataFrameReader, DataFrameWriter

    from ..datasources import register_sources
    from ..tables import lakemark_iceberg
    from . import connect_sql, connect_v2

    connect_v2.install()
    if lakemark_iceberg(session):
        register_sources(session, delta=False, iceberg=True)
    if getattr(DataFrameWriter.save, "_lakemark", False):
        return
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    save, load = _save(DataFrameWriter.save), _load(DataFrameReader.load)
    save._lakemark = load._lakemark = True  # type: ignore[attr-defined]
    DataFrameWriter.save = save  # type: ignore[method-assign]
    DataFrameWriter.mode = _mode(DataFrameWriter.mode)  # type: ignore[method-assign]
    DataFrameReader.load = load  # type: ignore[method-assign]
    DataFrameReader.table = _table(DataFrameReader.table,  # type: ignore[method-assign]
                                   lambda reader: reader._client)
    ConnectSession.table = _table(ConnectSession.table,  # type: ignore[method-assign]
                                  lambda spark: spark)
    ConnectSession.sql = connect_sql.sql(ConnectSession.sql)  # type: ignore[method-assign]
