"""Registering the ``delta`` data source in a Spark session (once per session)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["delta_jars_present", "is_registered", "register"]

log = logging.getLogger("lakemark.tables")

#: A class that exists only when Delta Lake's Spark jars are on the classpath.
DELTA_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
_MARK = "spark.lakemark.delta.registered"


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


def is_registered(spark: SparkSession) -> bool:
    """Whether :func:`register` put lakemark's ``delta`` source in this session."""
    try:
        return spark.conf.get(_MARK, "false") == "true"
    except Exception:  # a stopped session
        return False


def register(spark: SparkSession) -> bool:
    """Serve ``format("delta")`` in ``spark`` with lakemark's data source; False (and nothing
    changed) when Delta's own jars are present. Safe to call more than once."""
    if spark.conf.get(_MARK, "false") == "true":
        return True
    if delta_jars_present(spark):
        log.info("Delta Lake's jars are on the classpath: format('delta') stays theirs")
        return False
    from ._delta_source import DeltaDataSource

    spark.dataSource.register(DeltaDataSource)
    # Let Spark hand filters to Python data sources (the delta reader prunes files by them).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.conf.set(_MARK, "true")
    return True
