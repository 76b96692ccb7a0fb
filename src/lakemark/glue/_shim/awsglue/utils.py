"""``awsglue.utils`` served by lakemark."""

from lakemark.glue.options import GlueArgumentError, getResolvedOptions

__all__ = ["GlueArgumentError", "getResolvedOptions"]
