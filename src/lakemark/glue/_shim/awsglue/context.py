"""``awsglue.context`` served by lakemark."""

from lakemark.glue.context import GlueContext

__all__ = ["GlueContext"]
