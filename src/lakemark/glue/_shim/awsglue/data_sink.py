"""``awsglue.data_sink`` served by lakemark."""

from lakemark.glue.context import DataSink

__all__ = ["DataSink"]
