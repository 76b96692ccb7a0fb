"""``format("delta")`` and ``format("iceberg")`` served through Spark's Python Data Source API.

Two ways serve these format names in a session without Delta's or Iceberg's jars, chosen per
format and direction by the environment variable :data:`SERVING_ENV`
(``LAKEMARK_FORMAT_SERVING``): ``patch`` or ``datasource`` for everything, or a list of
``NAME:SERVING`` with ``NAME`` a format (``delta``, ``iceberg``) or one direction of it
(``delta.read``, ``iceberg.write``, …), e.g. ``delta:patch`` or ``iceberg.read:datasource``.
What it does not name takes its default (:data:`SERVING_DEFAULTS`): ``datasource`` for Delta
writes, ``patch`` for the rest (the numbers: bench/README.md sections 10 and 10b).

* ``datasource``: the Python data sources of this package, registered on the session with
  ``spark.dataSource.register``, serve the name (:mod:`.delta`, :mod:`.iceberg`): reads plan
  the snapshot's files on the driver and read them with pyarrow in Spark's Python workers,
  writes have their tasks write Parquet files and commit them once, in the driver-side
  ``commit``;
* ``patch`` (the way back): :mod:`lakemark.spark_io` wraps PySpark's ``DataFrameReader`` /
  ``DataFrameWriter`` and hands ``format("delta"|"iceberg")`` to :mod:`lakemark.tables`
  (Spark's own Parquet reader on the snapshot's files where the JVM can open them, else the
  data source; the sinks for writes).

Spark's Python data source writer takes only the ``append`` and ``overwrite`` save modes and no
``partitionBy``. Under ``datasource`` the one wrapper left (``spark_io``) therefore only
translates a ``save`` call's save mode and ``partitionBy`` into the hidden options
:data:`SAVE_MODE_OPTION` / :data:`PARTITION_OPTION` and lets Spark call the data source;
the source does the rest. See docs/architecture.md ("Format serving").
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PARTITION_OPTION", "SAVE_MODE_OPTION", "SERVING_DEFAULTS", "SERVING_ENV",
           "SERVINGS", "SPARK_CATALOG_OPTION", "ZONE_OPTION", "apply_serving",
           "register_sources", "serving"]

from ._options import (
    FORMATS,
    PARTITION_OPTION,
    SAVE_MODE_OPTION,
    SERVING_DEFAULTS,
    SERVING_ENV,
    SERVINGS,
    SPARK_CATALOG_OPTION,
    ZONE_OPTION,
    serving_choice,
)


def serving(fmt: str | None = None, op: str | None = None) -> str:
    """``patch`` or ``datasource``: what :data:`SERVING_ENV` says for ``op`` (``read`` or
    ``write``) of ``fmt`` (``delta`` or ``iceberg``) — its ``fmt.op``, else its ``fmt``, else
    its one value for everything —, else the default (:data:`SERVING_DEFAULTS`, else
    ``patch``). Without a format: the variable's one value for everything, else ``patch``.
    A bad value is one ConfigError naming the variable."""
    choice = serving_choice(os.environ.get(SERVING_ENV, ""))
    if fmt is None:
        return choice.get("*", "patch")
    names = [f"{fmt.lower()}.{op.lower()}"] if op else []
    names.append(fmt.lower())
    for name in names:
        if name in choice:
            return choice[name]
    if "*" in choice:
        return choice["*"]
    return next((SERVING_DEFAULTS[n] for n in names if n in SERVING_DEFAULTS), "patch")


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


#: Session setting naming the formats whose source :func:`apply_serving` registered.
MARK = "spark.lakemark.formatServing"


def apply_serving(spark: SparkSession, fmt: str, op: str) -> bool:
    """Whether this package's data source serves ``op`` (``read``/``write``) of ``fmt``
    (``delta``/``iceberg``) in ``spark``: its serving (:func:`serving`) is ``datasource`` and
    the format's own jars are absent. The source is registered on the first such call in a
    session; under ``patch`` nothing changes (False)."""
    if fmt not in FORMATS or serving(fmt, op) != "datasource":
        return False
    try:
        done = str(spark.conf.get(MARK, "") or "").split(",")
    except Exception:  # a stopped session
        return False
    if fmt in done:
        return True
    from ..tables import lakemark_iceberg, register

    if not (register(spark) if fmt == "delta" else lakemark_iceberg(spark)):
        return False  # the format's own jars serve it
    register_sources(spark, delta=fmt == "delta", iceberg=fmt == "iceberg")
    spark.conf.set(MARK, ",".join([d for d in done if d] + [fmt]))
    return True
