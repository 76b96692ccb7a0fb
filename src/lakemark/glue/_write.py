"""Glue sinks (``write_dynamic_frame.*``, ``getSink().writeFrame``) as core writes.

S3/file sinks append new files to the path, as Glue does, through lakemark's sinks (so a write
inside a job is recorded in the run's manifest under ``sink:<transformation_ctx>``). JDBC sinks
append rows exactly once per run on PostgreSQL and MySQL/MariaDB: the rows and the run's token
commit in one database transaction (:mod:`lakemark.sinks._jdbc`); other engines, and writes
outside a job run, are appended by Spark alone, with a warning that they are not exactly-once.
A catalog sink writes to the table's location in its format, and ``enableUpdateCatalog``
creates or updates the table (and its partitions); a Delta or Iceberg catalog table gets a
table commit (``_delta``, ``_iceberg``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LakemarkError, UnsupportedError
from ._formats import write_format
from ._read import JDBC_TYPES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..sinks import WriteResult
    from .context import GlueContext

__all__ = ["write_catalog", "write_jdbc", "write_options_sink"]

#: Delta's idempotent-write options, accepted in connection_options, format_options and
#: additional_options of a sink (both or neither; Delta targets only).
_TXN_OPTIONS = ("txnAppId", "txnVersion")

_S3_SINK_OPTIONS = {"path", "partitionKeys", "compression", "enableUpdateCatalog",
                    "updateBehavior", "groupFiles", "groupSize", "blockSize"}


def _write_files(glue_ctx: GlueContext, df: DataFrame, path: str, fmt: str, options: dict[str, str],
                 partition_keys: Sequence[str], ctx: str | None) -> WriteResult:
    from ..storage import mapped_path

    path = mapped_path(path) or path  # a bucket mapped to a local folder (--bucket-map)
    job = glue_ctx.active_job()
    if job is not None:
        return job.write(df, path, format=fmt, mode="append", partition_by=list(partition_keys),
                         ctx=ctx, options=options)
    from ..sinks import write_target

    return write_target(glue_ctx.spark_session, df, path, format=fmt, mode="append",
                        partition_by=list(partition_keys), options=options)


def _take_txn(*sources: dict[str, Any]) -> dict[str, str]:
    """Remove ``txnAppId``/``txnVersion`` from each options dict; the merged pair (checked by
    the sink: both or neither, an integer version)."""
    found: dict[str, str] = {}
    for options in sources:
        for key in _TXN_OPTIONS:
            if key in options:
                value = str(options.pop(key))
                if key in found and found[key] != value:
                    raise ConfigError(f"option {key} is given twice with different values "
                                      f"({found[key]!r} and {value!r})")
                found[key] = value
    return found


def write_options_sink(
    glue_ctx: GlueContext,
    df: DataFrame,
    connection_type: str,
    connection_options: Mapping[str, Any] | None,
    format: str | None,
    format_options: Mapping[str, Any] | None,
    transformation_ctx: str | None,
) -> WriteResult | None:
    """``write_dynamic_frame.from_options``."""
    kind = (connection_type or "").strip().lower()
    options = dict(connection_options or {})
    format_opts = dict(format_options or {})
    txn = _take_txn(options, format_opts)
    if kind in JDBC_TYPES:
        if txn:
            raise ConfigError("txnAppId/txnVersion apply to Delta targets only, not to JDBC sinks")
        return write_jdbc(glue_ctx, df, None, options, transformation_ctx or None)
    if kind == "catalog":  # AWS's Hive metastore migration writing Data Catalog entries
        raise UnsupportedError(
            "connection_type 'catalog' (writing Data Catalog entries) is not supported; "
            "create tables with a sink's enableUpdateCatalog=True, or write the entries as "
            "get-tables/get-partitions JSON into the catalog folder (docs/catalog.md)")
    if kind not in ("s3", "file"):
        raise UnsupportedError(
            f"connection_type {connection_type!r} is not supported for writing; lakemark "
            "writes: s3, file, " + ", ".join(JDBC_TYPES)
        )
    unknown = sorted(set(options) - _S3_SINK_OPTIONS)
    if unknown:
        raise UnsupportedError(f"S3 sink connection option(s) not supported: {', '.join(unknown)}")
    path = options.get("path")
    if not path:
        raise ConfigError("an S3/file sink needs connection option 'path'")
    fmt, spark_options = write_format(format, format_opts)
    spark_options.update(txn)
    if options.get("compression") and fmt in ("csv", "json", "parquet", "orc"):
        spark_options["compression"] = str(options["compression"])
    partition_keys = list(options.get("partitionKeys") or [])
    return _write_files(glue_ctx, df, str(path), fmt, spark_options, partition_keys,
                        transformation_ctx or None)


def write_jdbc(glue_ctx: GlueContext, df: DataFrame, catalog_connection: str | None,
               options: Mapping[str, Any], ctx: str | None = None) -> WriteResult:
    """Append ``df`` to a database table: inside a job run, exactly once with the run's token
    (recorded under ``sink:<ctx>``); outside one, by Spark alone (see the module doc). A Spark
    or Java failure (a missing driver jar among them) is one line, with no secret."""
    from ..sinks import JdbcTarget, write_jdbc_table
    from .jdbc import jdbc_failure, jdbc_write_options

    opts = jdbc_write_options(glue_ctx, catalog_connection, options)
    job = glue_ctx.active_job()
    try:
        if job is None:
            return write_jdbc_table(df, JdbcTarget(opts), None)
        named = {k: opts.get(k) for k in ("url", "lakemark.url", "dbtable", "user",
                                           "password", "driver")}
        rest = {k: v for k, v in opts.items()
                if k not in named and k != "permitMysqlScheme"}  # derived from the URL again
        return job.write_jdbc(df, str(named["lakemark.url"] or named["url"]),
                              str(named["dbtable"]), ctx=ctx, user=named["user"],
                              password=named["password"], driver=named["driver"], options=rest)
    except LakemarkError:
        raise
    except Exception as exc:  # Py4JJavaError …: one line, no secret
        raise jdbc_failure(exc, opts, "sink") from None


def write_catalog(
    glue_ctx: GlueContext,
    df: DataFrame,
    database: str,
    table_name: str,
    transformation_ctx: str | None,
    additional_options: Mapping[str, Any] | None = None,
) -> WriteResult | None:
    """``write_dynamic_frame.from_catalog``: append to the table's location in its format."""
    table = glue_ctx.catalog().get_table(database, table_name)
    extra = dict(additional_options or {})
    txn = _take_txn(extra)
    if table.is_jdbc or table.location.startswith("jdbc:"):
        if txn:
            raise ConfigError("txnAppId/txnVersion apply to Delta targets only, not to JDBC "
                              f"table {database}.{table_name}")
        return write_jdbc(glue_ctx, df, table.parameters.get("connectionName"),
                          {"dbtable": table.location}, transformation_ctx or None)
    extra_keys = extra.pop("partitionKeys", None)
    partition_keys = extra_keys or [c.name for c in table.partition_keys]
    extra.pop("enableUpdateCatalog", None)
    extra.pop("updateBehavior", None)
    from ._iceberg import is_iceberg_table, write_iceberg_catalog

    if is_iceberg_table(table):  # the table keeps its own partitioning; its options checked
        return write_iceberg_catalog(glue_ctx, df, table, {**extra, **txn},
                                     list(extra_keys or []), transformation_ctx or None)
    if extra:
        raise UnsupportedError(f"additional_options not supported for catalog sinks: "
                               f"{', '.join(sorted(extra))}")
    from ._delta import catalog_delta_location, is_delta_table

    if is_delta_table(table):  # the table's own partitioning is kept by the Delta sink
        return _write_files(glue_ctx, df, catalog_delta_location(table), "delta", dict(txn),
                            list(extra_keys or []), transformation_ctx or None)
    fmt, spark_options = write_format(table.format, {})
    write_opts = {k: v for k, v in table.read_options().items() if k in ("sep", "quote", "escape")}
    spark_options.update(write_opts)
    spark_options.update(txn)
    return _write_files(glue_ctx, df, table.location, fmt, spark_options, partition_keys,
                        transformation_ctx or None)
