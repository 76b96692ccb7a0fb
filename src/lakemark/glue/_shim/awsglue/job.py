"""``awsglue.job`` served by lakemark."""

from lakemark.glue.job import Job

__all__ = ["Job"]
