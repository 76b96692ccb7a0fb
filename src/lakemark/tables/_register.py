"""Registering the ``delta`` data source in a Spark session (once per session).

The session remembers the outcome in a SQL setting (:data:`MARK`): ``true`` when lakemark's
source serves ``format("delta")``, ``jars`` when Delta Lake's own jars are on the classpath and
keep the name (lakemark then steps aside: its reader/writer hooks leave ``delta`` alone).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["delta_jars_present", "is_registered", "register", "MARK"]

log = logging.getLogger("lakemark.tables")

#: A class that exists only when Delta Lake's Spark jars are on the classpath.
DELTA_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
MARK = "spark.lakemark.delta"
CATALOG_KEY = "spark.sql.catalog.spark_catalog"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
#: Iceberg's session catalog, as Glue's Iceberg jobs may set ``spark_catalog``.
ICEBERG_SESSION_CATALOG = "org.apache.iceberg.spark.SparkSessionCatalog"


def delta_jars_present(spark: SparkSession) -> bool:
    """True if the session's JVM can load Delta Lake's own Spark classes."""
    try:
        jvm = spark.sparkContext._jvm
        if jvm is None:
            return False
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(DELTA_CLASS, False, loader)
        return True
    except Exception:  # ClassNotFoundException through Py4J, or no JVM (Spark Connect)
        return False


def _drop_delta_catalog(spark: SparkSession) -> None:
    """Delta's session catalog, set as Glue's Delta jobs do (``spark.sql.catalog.spark_catalog``
    = ``DeltaCatalog``), cannot load without Delta's jars and would fail every query; it is
    unset (Spark's own session catalog serves), and the log says so. A missing
    ``spark.sql.extensions`` class only makes Spark warn, so that setting is left alone."""
    try:
        value = str(spark.conf.get(CATALOG_KEY, "") or "")
    except Exception:  # a stopped session
        return
    if value == DELTA_CATALOG:
        spark.conf.unset(CATALOG_KEY)
        log.info("%s=%s needs Delta's jars: unset (lakemark serves format('delta'))",
                 CATALOG_KEY, value)


def _drop_iceberg_session_catalog(spark: SparkSession) -> None:
    """``spark.sql.catalog.spark_catalog`` = Iceberg's ``SparkSessionCatalog`` cannot load
    without Iceberg's Spark runtime and would fail every query: unset when the runtime is
    absent (lakemark serves ``format("iceberg")``). Named catalogs such as
    ``spark.sql.catalog.glue_catalog`` are left alone: Spark loads them only when a query
    names them."""
    try:
        value = str(spark.conf.get(CATALOG_KEY, "") or "")
    except Exception:  # a stopped session
        return
    if value != ICEBERG_SESSION_CATALOG:
        return
    from ._iceberg import iceberg_runtime_present

    if not iceberg_runtime_present(spark):
        spark.conf.unset(CATALOG_KEY)
        log.info("%s=%s needs Iceberg's Spark runtime: unset (lakemark serves "
                 "format('iceberg'))", CATALOG_KEY, value)


def _mark(spark: SparkSession) -> str:
    try:
        return str(spark.conf.get(MARK, "") or "")
    except Exception:  # a stopped session
        return ""


def is_registered(spark: SparkSession) -> bool:
    """Whether lakemark's ``delta`` source serves this session."""
    return _mark(spark) == "true"


def register(spark: SparkSession) -> bool:
    """Serve ``format("delta")`` in ``spark`` with lakemark's data source; False (and nothing
    changed) when Delta's own jars are present. Cheap and safe to call again."""
    _drop_iceberg_session_catalog(spark)
    mark = _mark(spark)
    if mark in ("true", "jars"):
        return mark == "true"
    if delta_jars_present(spark):
        log.info("Delta Lake's jars are on the classpath: format('delta') stays theirs")
        spark.conf.set(MARK, "jars")
        return False
    _drop_delta_catalog(spark)
    from ._delta_source import DeltaDataSource

    spark.dataSource.register(DeltaDataSource)
    # Let Spark hand filters to Python data sources (the delta reader prunes files by them).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.conf.set(MARK, "true")
    return True
