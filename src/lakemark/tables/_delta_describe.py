"""``DeltaTable.history()`` and ``detail()`` as Spark DataFrames with Delta's column names.

The values come from deltalake (the commits' ``commitInfo``, the snapshot's metadata,
protocol and file list); ``operation`` and ``operationParameters`` are shown as Delta on Spark
records them (:mod:`lakemark.planning.delta_history`); columns Delta fills from
Databricks-only context (``userId``, ``job``, ``notebook``, ``clusterId``) are null.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deltalake import DeltaTable as RsTable
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["HISTORY_DDL", "DETAIL_DDL", "history_frame", "detail_frame"]

HISTORY_DDL = (
    "version long, timestamp timestamp, userId string, userName string, operation string, "
    "operationParameters map<string,string>, "
    "job struct<jobId:string,jobName:string,jobRunId:string,runId:string,jobOwnerId:string,"
    "triggerType:string>, notebook struct<notebookId:string>, clusterId string, "
    "readVersion long, isolationLevel string, isBlindAppend boolean, "
    "operationMetrics map<string,string>, userMetadata string, engineInfo string")

DETAIL_DDL = (
    "format string, id string, name string, description string, location string, "
    "createdAt timestamp, lastModified timestamp, partitionColumns array<string>, "
    "clusteringColumns array<string>, numFiles long, sizeInBytes long, "
    "properties map<string,string>, minReaderVersion int, minWriterVersion int, "
    "tableFeatures array<string>")


def _when(millis: Any) -> dt.datetime | None:
    if millis is None:
        return None
    return dt.datetime.fromtimestamp(int(millis) / 1000, tz=dt.UTC)


def _text_map(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def history_frame(spark: SparkSession, table: RsTable, limit: int | None) -> DataFrame:
    """The commits of ``table``, newest first (at most ``limit``)."""
    if limit is not None and int(limit) < 1:
        from ..errors import ConfigError

        raise ConfigError(f"DeltaTable.history: limit must be positive, got {limit!r}")
    from ..planning.delta_history import spark_view

    rows = []
    for commit in table.history(None if limit is None else int(limit)):
        operation, parameters = spark_view(commit)
        rows.append((
            int(commit["version"]) if commit.get("version") is not None else None,
            _when(commit.get("timestamp")), None, None, operation,
            parameters, None, None, None,
            commit.get("readVersion"), commit.get("isolationLevel"),
            commit.get("isBlindAppend"), _text_map(commit.get("operationMetrics")),
            commit.get("userMetadata"), commit.get("engineInfo"),
        ))
    return spark.createDataFrame(rows, HISTORY_DDL)


def detail_frame(spark: SparkSession, table: RsTable, location: str) -> DataFrame:
    """One row describing ``table`` (``DESCRIBE DETAIL``)."""
    meta = table.metadata()
    protocol = table.protocol()
    files = table.get_add_actions(flatten=True)
    sizes: list[Any] = list(files.column("size_bytes").to_pylist()) if files.num_rows else []
    last = table.history(1)
    features = sorted({*(protocol.reader_features or ()), *(protocol.writer_features or ())})
    row: tuple[Any, ...] = (
        "delta", meta.id, meta.name, meta.description, location, _when(meta.created_time),
        _when(last[0].get("timestamp")) if last else None, list(meta.partition_columns), [],
        int(files.num_rows), int(sum(s or 0 for s in sizes)),
        {str(k): str(v) for k, v in (meta.configuration or {}).items()},
        int(protocol.min_reader_version), int(protocol.min_writer_version), features,
    )
    return spark.createDataFrame([row], DETAIL_DDL)
