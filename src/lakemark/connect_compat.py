"""What lakemark's readers and writers call so one code path runs on a classic Spark session
and on a Spark Connect one (docs/connect.md): which kind a session is, its parallelism, an
empty frame, and the one-line refusal of a feature that needs the JVM in this process.

Kept apart from :mod:`lakemark.spark` (which builds sessions and installs lakemark's formats
into them), so sources and tables can use it without importing session set-up.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["default_parallelism", "empty_frame", "is_connect", "not_over_connect"]


def is_connect(session: object) -> bool:
    """True if ``session`` is a Spark Connect session (no JVM in this process)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """Spark's default parallelism: the context's in classic mode; over Spark Connect (no
    context in this process) ``spark.default.parallelism`` of the server, which ``lakemark
    server start`` sets, else this machine's CPU count."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    setting = spark.conf.get("spark.default.parallelism", None) or ""
    return int(setting) if setting.isdigit() and int(setting) > 0 else os.cpu_count() or 1


def not_over_connect(spark: object, feature: str) -> None:
    """UnsupportedError naming ``feature`` when ``spark`` is a Spark Connect session: the
    code path that calls this needs the JVM in this process (docs/connect.md lists them)."""
    if is_connect(spark):
        from .errors import UnsupportedError

        raise UnsupportedError(f"{feature} is not available over Spark Connect yet "
                               "(run it without --remote/SPARK_REMOTE)")


def empty_frame(spark: SparkSession, schema: StructType) -> DataFrame:
    """A DataFrame of no rows with ``schema``. Classic mode: over an RDD with no partitions
    (writing it starts no Python worker, which ``createDataFrame([])``'s empty Python RDD
    does); over Spark Connect ``createDataFrame([])`` is a local relation that starts none."""
    if is_connect(spark):
        return spark.createDataFrame([], schema)
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)
