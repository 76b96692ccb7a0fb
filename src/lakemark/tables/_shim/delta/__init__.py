"""``delta`` served by lakemark when delta-spark is not installed: ``delta.tables`` runs
Delta's Python API on deltalake with no jars (docs/upserts.md)."""

from typing import Any

__all__ = ["configure_spark_with_delta_pip"]


def configure_spark_with_delta_pip(spark_session_builder: Any,
                                   extra_packages: Any = None) -> Any:
    """delta-spark's helper adds Delta's jars to a session builder; lakemark needs none, so
    the builder is returned as it is (``lakemark.register(spark)`` serves ``format("delta")``)."""
    return spark_session_builder
