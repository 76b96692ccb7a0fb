"""The default serving of ``format("delta")`` and ``format("iceberg")`` (issue 33): Delta writes
through lakemark's Python data source, Delta reads with Spark's Parquet reader on the
snapshot's files, Iceberg through the wrapper; ``LAKEMARK_FORMAT_SERVING=patch`` (or
``delta.write:patch``) is the way back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from lakemark.datasources import SERVING_ENV

pytestmark = pytest.mark.spark


def _write_plans(spark: Any, write: Any) -> str:
    """The physical plans of the SQL executions ``write()`` ran: those with a higher id than
    the newest before it (the store keeps only the last spark.sql.ui.retainedExecutions, so
    positions and counts stop growing in a long test session; ids do not)."""
    store = spark._jsparkSession.sharedState().statusStore()
    runs = store.executionsList()
    before = runs.apply(runs.size() - 1).executionId() if runs.size() else -1
    write()
    runs = store.executionsList()
    plans: list[str] = []
    i = runs.size() - 1
    while i >= 0 and runs.apply(i).executionId() > before:
        plans.append(str(runs.apply(i).physicalPlanDescription()))
        i -= 1
    return "\n".join(reversed(plans))


def _read_plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_delta_writes_go_through_the_data_source_by_default(spark: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.delenv(SERVING_ENV, raising=False)
    path = str(tmp_path / "events")
    rows = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id long, p string")
    plans = _write_plans(spark, lambda: rows.write.format("delta").partitionBy("p").save(path))
    assert "AppendData delta" in plans and "InsertIntoHadoopFsRelation" not in plans
    assert DeltaTable(path).metadata().partition_columns == ["p"]
    # Spark's save modes and partitionBy as before (the wrapper hands them to the source)
    with pytest.raises(Exception, match="already exists"):
        rows.write.format("delta").save(path)
    rows.write.format("delta").mode("ignore").save(path)
    assert DeltaTable(path).version() == 0

    read = spark.read.format("delta").load(path)  # Delta reads: Spark's Parquet reader
    assert "FileScan parquet" in _read_plan(read) and "(Python)" not in _read_plan(read)
    assert sorted((r.id, r.p) for r in read.collect()) == [(1, "a"), (2, "b"), (3, "a")]


def test_a_delta_write_option_the_data_source_does_not_take_goes_to_the_sink(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the sink hands such options to Spark's writer, as before the data source was the default
    monkeypatch.delenv(SERVING_ENV, raising=False)
    path = str(tmp_path / "events")
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, p string")
    plans = _write_plans(spark, lambda: rows.write.format("delta").option("optimizeWrite", "true")
                         .partitionBy("p").save(path))
    assert "InsertIntoHadoopFsRelation" in plans and "AppendData delta" not in plans
    assert sorted(r.id for r in spark.read.format("delta").load(path).collect()) == [1, 2]


@pytest.mark.parametrize("setting", ["patch", "delta.write:patch"])
def test_patch_is_the_way_back_for_delta_writes(spark: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                setting: str) -> None:
    monkeypatch.setenv(SERVING_ENV, setting)
    path = str(tmp_path / "events")
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, p string")
    plans = _write_plans(spark, lambda: rows.write.format("delta").partitionBy("p").save(path))
    assert "InsertIntoHadoopFsRelation" in plans and "AppendData delta" not in plans
    assert sorted(r.id for r in spark.read.format("delta").load(path).collect()) == [1, 2]


def test_iceberg_stays_on_the_wrapper_by_default(spark: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SERVING_ENV, raising=False)
    monkeypatch.setenv("LAKEMARK_ICEBERG_CATALOG", f"sqlite:///{tmp_path}/catalog.db")
    monkeypatch.setenv("LAKEMARK_ICEBERG_WAREHOUSE", str(tmp_path / "warehouse"))
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, s string")
    plans = _write_plans(spark, lambda: rows.write.format("iceberg").mode("append")
                         .save("db.serving_default"))
    assert "AppendData iceberg" not in plans
    read = spark.read.format("iceberg").load("db.serving_default")
    assert "BatchScan iceberg" not in _read_plan(read)
    assert sorted(r.id for r in read.collect()) == [1, 2]


def test_an_iceberg_data_source_read_is_of_the_snapshot_resolved_at_load(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # schema() and reader() run in two Python workers: the second reads what the first
    # resolved (one catalog round trip), as the wrapper's file list is fixed at load
    monkeypatch.setenv(SERVING_ENV, "iceberg:datasource")
    monkeypatch.setenv("LAKEMARK_ICEBERG_CATALOG", f"sqlite:///{tmp_path}/catalog.db")
    monkeypatch.setenv("LAKEMARK_ICEBERG_WAREHOUSE", str(tmp_path / "warehouse"))
    spark.createDataFrame([(1,), (2,)], "id long").write.format("iceberg").save("db.pinned")
    read = spark.read.format("iceberg").load("db.pinned")
    assert "BatchScan iceberg" in _read_plan(read)
    spark.createDataFrame([(3,)], "id long").write.format("iceberg").mode("append") \
        .save("db.pinned")
    assert sorted(r.id for r in read.collect()) == [1, 2]
    assert spark.read.format("iceberg").load("db.pinned").count() == 3
