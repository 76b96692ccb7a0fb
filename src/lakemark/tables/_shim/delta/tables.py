"""``delta.tables`` served by lakemark (see ``lakemark.tables._delta_api``)."""

from lakemark.tables._delta_api import DeltaTable
from lakemark.tables._delta_builders import DeltaOptimizeBuilder, DeltaTableBuilder
from lakemark.tables._delta_merge_api import DeltaMergeBuilder

__all__ = ["DeltaMergeBuilder", "DeltaOptimizeBuilder", "DeltaTable", "DeltaTableBuilder"]
