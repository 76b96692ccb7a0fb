"""``awsglue.data_source`` served by lakemark."""

from lakemark.glue.context import DataSource

__all__ = ["DataSource"]
