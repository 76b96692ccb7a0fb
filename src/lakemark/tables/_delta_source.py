"""``format("delta")`` with no Delta jars: a PySpark Python data source named ``delta``.

Spark calls :class:`DeltaDataSource` for ``spark.read.format("delta").load(path)`` (also
``spark.read.load(path, format="delta")``) and ``df.write.format("delta").save(path)``. Its
planning methods run in a Python worker the JVM starts; the snapshot they load (file list,
schema, version) is plain data that travels with the reader to the executors.

Reader options: ``versionAsOf``, ``timestampAsOf``. Writer: see :mod:`._delta_write`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from ._delta_read import FileTask, plan_tasks, prune, read_files
from ._delta_snapshot import Snapshot, load_snapshot

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.datasource import DataSourceWriter, Filter
    from pyspark.sql.types import StructType

__all__ = ["DeltaDataSource", "FS_OPTION", "READER_OPTION"]

#: Reader option choosing the read path: ``auto`` (default: Spark's Parquet reader on the file
#: list where the JVM can open the files, else this data source), ``parquet`` (the same) or
#: ``datasource`` (always this data source).
READER_OPTION = "lakemark.reader"

#: Hidden option: the driver's S3 endpoint settings (JSON), set by lakemark's reader/writer
#: hooks, because the JVM-started Python workers that plan the scan may not see the driver
#: process's ``AWS_ENDPOINT_URL``.
FS_OPTION = "lakemark.fsConfig"


def _path(options: Any) -> str:
    path = options.get("path") or ""
    if not path:
        from ..errors import ConfigError

        raise ConfigError("format 'delta' needs a path: .load(path) / .save(path)")
    return str(path)


def apply_fs_option(options: Any) -> None:
    """Put the driver's endpoint settings (:data:`FS_OPTION`) into this worker's environment,
    so deltalake, boto3 and pyarrow here reach the same S3 the driver does."""
    raw = options.get(FS_OPTION)
    if not raw:
        return
    for key, value in json.loads(raw).items():
        if value:
            os.environ[str(key)] = str(value)


class _Task(InputPartition):  # type: ignore[misc]
    def __init__(self, task: FileTask) -> None:
        super().__init__(task.value)
        self.task = task


class DeltaReader(DataSourceReader):  # type: ignore[misc]
    """Reads one snapshot: tasks of files, pruned by the filters Spark pushes."""

    def __init__(self, snapshot: Snapshot, schema: StructType) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.snapshot = snapshot
        self.arrow_schema: pa.Schema = to_arrow_schema(schema, timezone="UTC")
        self.filters: list[Any] = []

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Keep every filter for pruning files, and hand every one back: Spark still checks
        the rows (pruning is by whole files)."""
        self.filters = list(filters)
        yield from filters

    def partitions(self) -> Sequence[InputPartition]:
        files = prune(self.snapshot.files, self.filters, self.snapshot.partition_columns)
        return [_Task(t) for t in plan_tasks(files, os.cpu_count() or 2)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        task = partition.task if isinstance(partition, _Task) else None
        if task is None:
            return iter(())
        return read_files(self.snapshot, task, self.arrow_schema)


class DeltaDataSource(DataSource):  # type: ignore[misc]
    """The ``delta`` format: reads snapshots, writes with one commit per write."""

    @classmethod
    def name(cls) -> str:
        return "delta"

    def _snapshot(self) -> Snapshot:
        cached: Snapshot | None = getattr(self, "_cached", None)
        if cached is None:
            apply_fs_option(self.options)
            cached = load_snapshot(_path(self.options), dict(self.options))
            self._cached = cached
        return cached

    def schema(self) -> StructType:
        schema: StructType = self._snapshot().spark_schema()
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        return DeltaReader(self._snapshot(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from ._delta_write import DeltaWriter

        apply_fs_option(self.options)
        return DeltaWriter(_path(self.options), dict(self.options), schema, overwrite)
