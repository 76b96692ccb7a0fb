"""``format("delta")`` and ``format("iceberg")`` served through Spark's Python Data Source API.

Two ways serve these format names in a session without Delta's or Iceberg's jars, chosen by
the environment variable :data:`SERVING_ENV` (``LAKEMARK_FORMAT_SERVING``):

* ``patch`` (the default): :mod:`lakemark.spark_io` wraps PySpark's ``DataFrameReader`` /
  ``DataFrameWriter`` and hands ``format("delta"|"iceberg")`` to :mod:`lakemark.tables`
  (Spark's own Parquet reader on the snapshot's files; the sinks for writes);
* ``datasource``: the Python data sources of this package, registered on the session with
  ``spark.dataSource.register``, serve both names (:mod:`.delta`, :mod:`.iceberg`): reads
  plan the snapshot's files on the driver and read them with pyarrow in Spark's Python
  workers, writes have their tasks write Parquet files and commit them once, in the
  driver-side ``commit``.

Spark's Python data source writer takes only the ``append`` and ``overwrite`` save modes and no
``partitionBy``. Under ``datasource`` the one wrapper left (``spark_io``) therefore only
translates a ``save`` call's save mode and ``partitionBy`` into the hidden options
:data:`SAVE_MODE_OPTION` / :data:`PARTITION_OPTION` and lets Spark call the data source;
the source does the rest. See docs/architecture.md ("Format serving").
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PARTITION_OPTION", "SAVE_MODE_OPTION", "SERVING_ENV", "SERVINGS",
           "SPARK_CATALOG_OPTION", "ZONE_OPTION", "apply_serving", "register_sources", "serving"]

from ._options import (
    PARTITION_OPTION,
    SAVE_MODE_OPTION,
    SERVING_ENV,
    SERVINGS,
    SPARK_CATALOG_OPTION,
    ZONE_OPTION,
)


def serving() -> str:
    """``patch`` or ``datasource`` from :data:`SERVING_ENV` (unset: ``patch``)."""
    value = os.environ.get(SERVING_ENV, "").strip().lower() or "patch"
    if value not in SERVINGS:
        raise ConfigError(f"{SERVING_ENV}={os.environ.get(SERVING_ENV)!r}: must be patch or "
                          "datasource")
    return value


def register_sources(spark: SparkSession, *, delta: bool, iceberg: bool) -> None:
    """Register this package's ``delta`` and/or ``iceberg`` data source in ``spark``."""
    if delta:
        from .delta import DeltaSource

        spark.dataSource.register(DeltaSource)
    if iceberg:
        from .iceberg import IcebergSource

        spark.dataSource.register(IcebergSource)
    # Let Spark hand filters to Python data sources (both readers prune files by them).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


#: Session setting remembering that :func:`apply_serving` registered this package's sources.
MARK = "spark.lakemark.formatServing"


def apply_serving(spark: SparkSession) -> bool:
    """Under ``LAKEMARK_FORMAT_SERVING=datasource``, register this package's ``delta`` and
    ``iceberg`` sources in ``spark`` (each only where the format's own jars are absent), once
    per session; True when they serve it. Under ``patch`` nothing changes (False)."""
    if serving() != "datasource":
        return False
    try:
        if str(spark.conf.get(MARK, "") or "") == "datasource":
            return True
    except Exception:  # a stopped session
        return False
    from ..tables import lakemark_iceberg, register

    register_sources(spark, delta=register(spark), iceberg=lakemark_iceberg(spark))
    spark.conf.set(MARK, "datasource")
    return True
