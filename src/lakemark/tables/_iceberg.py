"""``format("iceberg")`` in plain Spark without the Iceberg runtime jar (docs/iceberg.md).

* ``spark.read.format("iceberg").load("db.events")`` — the table as of its current snapshot,
  or of the one given by ``snapshot-id`` or ``as-of-timestamp`` (milliseconds since the
  epoch: the snapshot current at that time), read by Spark's own Parquet reader on the
  snapshot's data files (:mod:`lakemark.sources.iceberg`);
* ``df.write.format("iceberg").mode("append"|"overwrite").save("db.events")`` — lakemark's
  Iceberg sink (Spark writes the Parquet files, pyiceberg commits); ``partitionBy`` gives a
  new table its partition spec (columns, or transforms as ``"days(ts)"``), ``mergeSchema``
  adds new columns. Save modes ``error``
  (Spark's default) and ``ignore`` act on whether the table exists.

A name ``cat.db.table`` whose ``cat`` is a Spark catalog configured with Iceberg's plugin
resolves through that catalog's ``spark.sql.catalog.cat.*`` settings (:func:`resolve_name`, the
same for ``load``, ``save``, ``spark.table`` and ``writeTo``). Otherwise the catalog is the
option ``iceberg_catalog``, else ``LAKEMARK_ICEBERG_CATALOG``, else the default. When the
real Iceberg runtime is on the session's classpath (its Spark source class loads), lakemark
steps aside and ``format("iceberg")`` stays the runtime's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SourceError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..catalog._iceberg import CatalogChoice

__all__ = ["ICEBERG_CLASS", "ICEBERG_MARK", "iceberg_runtime_present", "lakemark_iceberg",
           "load_iceberg", "resolve_name", "save_iceberg", "snapshot_of"]

log = logging.getLogger("lakemark.tables")

#: A class that exists only when Iceberg's Spark runtime is on the classpath.
ICEBERG_CLASS = "org.apache.iceberg.spark.source.IcebergSource"
ICEBERG_MARK = "spark.lakemark.iceberg"
_READ_OPTIONS = ("snapshot-id", "as-of-timestamp", "iceberg_catalog")


def iceberg_runtime_present(spark: SparkSession) -> bool:
    """True if the session's JVM can load Iceberg's own Spark source."""
    try:
        jvm = spark.sparkContext._jvm
        if jvm is None:
            return False
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(ICEBERG_CLASS, False, loader)
        return True
    except Exception:  # ClassNotFoundException through Py4J, or no JVM (Spark Connect)
        return False


def lakemark_iceberg(spark: SparkSession) -> bool:
    """Whether ``format("iceberg")`` in this session is lakemark's (decided once per session
    and remembered in the setting :data:`ICEBERG_MARK`)."""
    try:
        mark = str(spark.conf.get(ICEBERG_MARK, "") or "")
    except Exception:  # a stopped session
        return False
    if mark in ("true", "jars"):
        return mark == "true"
    if iceberg_runtime_present(spark):
        log.info("Iceberg's Spark runtime is on the classpath: format('iceberg') stays theirs")
        spark.conf.set(ICEBERG_MARK, "jars")
        return False
    spark.conf.set(ICEBERG_MARK, "true")
    return True


def resolve_name(spark: SparkSession, table: str, catalog: str | None
                 ) -> tuple[str, CatalogChoice]:
    """``(table name, catalog)`` for ``table`` as Iceberg's Spark runtime resolves it; the one
    resolution of ``load``, ``save``, ``spark.table`` and ``writeTo``.

    ``cat.db.table`` whose ``cat`` is a Spark catalog with Iceberg's plugin
    (``spark.sql.catalog.cat = org.apache.iceberg.spark.SparkCatalog``) goes through that
    catalog's settings mapped to pyiceberg (:mod:`lakemark.catalog._iceberg_spark`; what
    cannot be mapped is a ConfigError naming it). A plugin with no settings at all names
    lakemark's own catalog (``catalog``: option ``iceberg_catalog``, else the environment's,
    else the default), and the table is ``db.table`` there. Any other name is unchanged."""
    from ..catalog._iceberg_spark import is_iceberg_plugin, spark_catalog_spec

    parts = table.split(".")
    if len(parts) != 3:
        return table, catalog
    prefix = f"spark.sql.catalog.{parts[0]}"
    try:
        plugin = spark.conf.get(prefix, None)
        settings = dict(spark.conf.getAll) if is_iceberg_plugin(plugin) else {}
    except Exception:  # a stopped session
        return table, catalog
    conf = {k: str(v) for k, v in settings.items()
            if k == prefix or k.startswith(prefix + ".")}
    if not conf:
        return table, catalog
    if len(conf) == 1:  # only the plugin: lakemark's own catalog
        return ".".join(parts[1:]), catalog
    return table, spark_catalog_spec(parts[0], conf)


def _option(options: Mapping[str, str], key: str) -> str | None:
    return next((str(v) for k, v in options.items() if k.lower() == key.lower()), None)


def _integer(table: str, key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"reading Iceberg table {table}: option {key} must be an integer, not "
                          f"{value!r}") from None


def load_iceberg(spark: SparkSession, table: str, options: Mapping[str, str],
                 schema: object = None) -> DataFrame:
    """The rows of Iceberg table ``table`` at the snapshot the options select."""
    from ..planning.iceberg import SnapshotRange
    from ..sources.iceberg import open_table, read_files_of, spark_schema, table_files

    if schema is not None:
        raise ConfigError(f"reading Iceberg table {table}: a user schema is not supported (the "
                          "table has its own)")
    unknown = sorted(k for k in options if k.lower() not in _READ_OPTIONS)
    if unknown:
        raise ConfigError(f"option(s) {', '.join(unknown)} are not supported reading Iceberg "
                          f"table {table}; supported: {', '.join(_READ_OPTIONS)}")
    snapshot_id, as_of = _option(options, "snapshot-id"), _option(options, "as-of-timestamp")
    if snapshot_id is not None and as_of is not None:
        raise ConfigError(f"reading Iceberg table {table}: give snapshot-id or as-of-timestamp, "
                          "not both")
    name, catalog = resolve_name(spark, table, _option(options, "iceberg_catalog"))
    iceberg = open_table(name, catalog)
    through = snapshot_of(table, iceberg, snapshot_id, as_of)
    files = table_files(iceberg, SnapshotRange(table, None, through, full=True))
    return read_files_of(spark, table, spark_schema(iceberg, through), files)


def save_iceberg(df: DataFrame, table: str, *, mode: str | None, partition_by: Sequence[str],
                 options: Mapping[str, str]) -> None:
    """``df.write.format("iceberg")…save(table)`` with Spark's save modes."""
    from ..sinks import write_target
    from ..sources.iceberg import open_table

    how = (mode or "errorifexists").strip().lower()
    if how not in ("append", "overwrite", "ignore", "error", "errorifexists", "default"):
        raise ConfigError(f"writing Iceberg table {table}: unknown save mode {mode!r} (append, "
                          "overwrite, ignore, error/errorifexists)")
    table, catalog = resolve_name(df.sparkSession, table, _option(options, "iceberg_catalog"))
    writer = {k: v for k, v in options.items() if k.lower() != "iceberg_catalog"}
    if how in ("ignore", "error", "errorifexists", "default"):
        try:
            open_table(table, catalog)
            exists = True
        except SourceError:
            exists = False
        if exists and how == "ignore":
            log.info("writing Iceberg table %s skipped: it exists and the save mode is "
                     "'ignore'", table)
            return
        if exists:
            raise ConfigError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Iceberg table {table} already "
                              "exists. Set mode as \"append\" or \"overwrite\".")
        how = "append"
    write_target(df.sparkSession, df, table, format="iceberg", mode=how,
                 partition_by=list(partition_by), options=writer, iceberg_catalog=catalog)


def snapshot_of(table: str, iceberg: Any, snapshot_id: str | None, as_of: str | None
                ) -> int | None:
    """The id of the snapshot a read of ``iceberg`` is of: ``snapshot-id``, else the one
    current at ``as-of-timestamp`` (ms since the epoch), else the current one (None: the
    table has none). Shared by the wrapper's read and the ``iceberg`` data source."""
    if snapshot_id is not None:
        snapshot = iceberg.snapshot_by_id(_integer(table, "snapshot-id", snapshot_id))
        if snapshot is None:
            raise SourceError(f"Iceberg table {table} has no snapshot {snapshot_id}")
    elif as_of is not None:
        snapshot = iceberg.snapshot_as_of_timestamp(_integer(table, "as-of-timestamp", as_of))
        if snapshot is None:
            raise SourceError(f"Iceberg table {table} has no snapshot at or before "
                              f"as-of-timestamp {as_of} (ms since the epoch)")
    else:
        snapshot = iceberg.current_snapshot()
    return int(snapshot.snapshot_id) if snapshot is not None else None
