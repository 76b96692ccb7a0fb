"""The ``delta`` Python data source: reads of a snapshot and writes with one commit per write.

Reads are lakemark's existing Delta data source (:class:`lakemark.tables._delta_source.
DeltaDataSource`): the driver loads the snapshot (``versionAsOf`` / ``timestampAsOf`` with
:mod:`lakemark.planning.delta_time_travel`'s semantics), prunes files by the filters Spark
pushes (partition values, min/max statistics), and the Python workers read the files with
pyarrow.

Writes (:class:`DeltaTableWriter`): the driver checks everything before a task runs — save
mode (the script's, from :data:`~lakemark.datasources.SAVE_MODE_OPTION`: ``errorifexists``
refuses an existing table, ``ignore`` then writes nothing), ``txnAppId``/``txnVersion`` (a
version the table already recorded writes nothing, whatever the mode), schema against the
table (``mergeSchema`` adds new columns first, as lakemark's sink does; ``overwriteSchema``
with ``overwrite`` replaces schema and partitioning), ``partitionBy`` (from
:data:`~lakemark.datasources.PARTITION_OPTION`: a new table's partition columns; an existing
table's must match). Each task writes its rows straight to their final names with the sink's
Arrow writer and returns the file list; the driver's ``commit`` adds them all in one Delta
commit (the sink's conflict handling), ``abort`` deletes them. ``replaceWhere`` and the options
lakemark's Delta writer refuses are refused here by name.
"""

from __future__ import annotations

from ..tables._delta_source import DeltaDataSource
from ..tables._delta_write import DeltaWriter

__all__ = ["DeltaSource", "DeltaTableWriter"]

#: The one Delta writer (:mod:`lakemark.tables._delta_write`), under the name this module gave it.
DeltaTableWriter = DeltaWriter


class DeltaSource(DeltaDataSource):  # type: ignore[misc]
    """``format("delta")``: lakemark's Delta reader and writer (:mod:`lakemark.tables`)."""
