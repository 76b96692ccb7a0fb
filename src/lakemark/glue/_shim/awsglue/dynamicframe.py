"""``awsglue.dynamicframe`` served by lakemark."""

from lakemark.glue.context import DynamicFrameReader, DynamicFrameWriter
from lakemark.glue.dynamicframe import DynamicFrame, DynamicFrameCollection, ResolveOption

__all__ = ["DynamicFrame", "DynamicFrameCollection", "DynamicFrameReader", "DynamicFrameWriter",
           "ResolveOption"]
