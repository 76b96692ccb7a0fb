"""Glue facade ``format="delta"`` sources in-process (issue 20): ``from_catalog`` on Delta tables
registered as Spark's ``saveAsTable`` and the crawler's symlink tables do it, catalog sinks to a
Delta table, options, and a bookmarked Delta source refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark import Job
from lakemark.catalog import open_catalog
from lakemark.errors import ConfigError, UnsupportedError
from lakemark.glue import GlueContext


def _catalog(tmp: Path, *tables: dict[str, Any]) -> Any:
    folder = tmp / "catalog"
    (folder / "tables").mkdir(parents=True)
    (folder / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "lake"}]}))
    (folder / "tables" / "lake.json").write_text(json.dumps({"TableList": [
        {**t, "DatabaseName": "lake"} for t in tables]}))
    return open_catalog(str(folder))


def _save_as_table_entry(name: str, location: Path) -> dict[str, Any]:
    """What Spark with Delta's jars records in a Hive/Glue catalog for ``saveAsTable``."""
    return {
        "Name": name, "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "col", "Type": "array<string>"}],
            "Location": f"{location}-__PLACEHOLDER__",
            "InputFormat": "org.apache.hadoop.mapred.SequenceFileInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"serialization.format": "1", "path": str(location)}},
        },
        "PartitionKeys": [],
        "Parameters": {"spark.sql.sources.provider": "delta", "EXTERNAL": "TRUE",
                       "spark.sql.partitionProvider": "catalog"},
    }


def _symlink_entry(name: str, location: Path) -> dict[str, Any]:
    """A Glue Delta crawler's symlink-manifest table (``CreateNativeDeltaTable`` off)."""
    return {
        "Name": name, "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "a", "Type": "bigint"}],
            "Location": f"{location}/_symlink_format_manifest/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
        },
        "PartitionKeys": [{"Name": "p", "Type": "string"}],
        "Parameters": {"classification": "parquet", "EXTERNAL": "TRUE"},
    }


def _table(path: Path) -> None:
    write_deltalake(str(path), pa.table({"a": pa.array([1, 2, 3], pa.int64()),
                                         "p": ["x", "y", "x"]}), partition_by=["p"])
    write_deltalake(str(path), pa.table({"a": pa.array([4], pa.int64()), "p": ["y"]}),
                    mode="append")


def _ids(df: Any) -> list[int]:
    return sorted(r["a"] for r in df.collect())


def test_from_catalog_on_delta_tables_and_catalog_sink(spark, tmp_path):  # type: ignore[no-untyped-def]
    orders, events = tmp_path / "orders", tmp_path / "events"
    _table(orders)
    _table(events)
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _save_as_table_entry("orders", orders),
                             _symlink_entry("events", events))
    frame = glue.create_dynamic_frame.from_catalog(database="lake", table_name="orders")
    assert _ids(frame.toDF()) == [1, 2, 3, 4]
    df = glue.create_data_frame.from_catalog(database="lake", table_name="events",
                                             push_down_predicate="p = 'y'")
    assert _ids(df) == [2, 4]
    old = glue.create_data_frame.from_catalog(database="lake", table_name="events",
                                              additional_options={"versionAsOf": 0})
    assert _ids(old) == [1, 2, 3]
    new = spark.createDataFrame([(5, "z")], "a long, p string")
    glue.write_data_frame.from_catalog(frame=new, database="lake", table_name="orders")
    table = DeltaTable(str(orders))
    assert table.version() == 2 and table.metadata().partition_columns == ["p"]
    assert _ids(glue.create_data_frame.from_catalog(database="lake", table_name="orders")) == [
        1, 2, 3, 4, 5]


def test_from_options_delta_forms_and_errors(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "t"
    _table(path)
    glue = GlueContext(spark.sparkContext)
    df = glue.create_data_frame.from_options(connection_type="s3", format="delta",
                                             connection_options={"path": str(path) + "/"})
    assert _ids(df) == [1, 2, 3, 4]
    frame = glue.create_dynamic_frame.from_options(
        connection_type="s3", format="delta", connection_options={"paths": [str(path)]},
        format_options={"versionAsOf": "0"})
    assert _ids(frame.toDF()) == [1, 2, 3]
    with pytest.raises(ConfigError, match="exactly one table path"):
        glue.create_data_frame.from_options(connection_type="s3", format="delta",
                                            connection_options={"paths": ["a", "b"]})
    with pytest.raises(UnsupportedError, match="option 'rowTag'"):
        glue.create_data_frame.from_options(connection_type="s3", format="delta",
                                            connection_options={"path": str(path)},
                                            format_options={"rowTag": "x"})


def test_a_bookmarked_delta_source_reads_through_the_bookmark(spark, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from lakemark.glue.job import Job as GlueJob

    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 's.db'}")
    path = tmp_path / "t"
    _table(path)
    glue = GlueContext(spark.sparkContext)
    job = GlueJob(glue)
    job.init("dglue-bookmarked", {"job_bookmark_option": "job-bookmark-enable"})
    try:
        core = glue.active_job()
        assert isinstance(core, Job) and core.tracking
        # a ctx under bookmarks goes through the job's table source (the whole table at first)
        assert _ids(glue.create_data_frame.from_options(
            connection_type="s3", format="delta", connection_options={"path": str(path)},
            transformation_ctx="orders")) == [1, 2, 3, 4]
        # time travel and a bookmark cannot go together: refused by name
        with pytest.raises(UnsupportedError, match="transformation_ctx 'orders_v0'"):
            glue.create_data_frame.from_options(connection_type="s3", format="delta",
                                                connection_options={"path": str(path)},
                                                format_options={"versionAsOf": "0"},
                                                transformation_ctx="orders_v0")
        # without a ctx the whole table is read, as Glue does
        assert _ids(glue.create_data_frame.from_options(
            connection_type="s3", format="delta", connection_options={"path": str(path)})) == [
            1, 2, 3, 4]
    finally:
        job.commit()
