"""An Iceberg table whose warehouse is on S3, against a real moto_server process, in a Spark
session without the S3A connector.

The SQLite catalog lives in tmp_path, ``LAKEMARK_ICEBERG_WAREHOUSE`` is ``s3://lake/wh``: the
sink writes the Parquet files to S3 with pyarrow on the executors (the Delta sink's S3 path)
and pyiceberg commits them through its PyArrow FileIO on moto's endpoint. A run that fails
after its sink committed is retried without appending twice; an incremental source takes only
the next run's rows; ``spark.read.format("iceberg")`` reads the table, and writes an
identity-partitioned one; pyiceberg on its own reads back exactly the rows written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark import Job
from lakemark.catalog._iceberg import CATALOG_ENV, WAREHOUSE_ENV
from lakemark.errors import SinkError
from lakemark.sinks import write_target
from lakemark.sinks._iceberg import APP_ID_KEY, APP_VERSION_KEY
from lakemark.sinks._spark_writer import has_s3a

pytestmark = [pytest.mark.services, pytest.mark.spark]


class AfterCommit(Exception):
    """Raised by the first attempt after its write committed."""


def test_iceberg_table_on_an_s3_warehouse(spark: Any, s3: Any, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert not has_s3a(spark), "the test session must lack S3A (else Spark's own S3 I/O runs)"
    client = s3.client("s3")
    client.create_bucket(Bucket="lake")
    catalog = f"sqlite:///{tmp_path / 'catalog.db'}"
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))  # no user configuration
    monkeypatch.setenv(CATALOG_ENV, catalog)
    monkeypatch.setenv(WAREHOUSE_ENV, "s3://nowhere/wh")
    with pytest.raises(SinkError, match="bucket 'nowhere'"):  # before Spark computes anything
        write_target(spark, spark.createDataFrame([(1,)], "id long"), "db.lost",
                     format="iceberg")
    monkeypatch.setenv(WAREHOUSE_ENV, "s3://lake/wh")
    state = f"sqlite:///{tmp_path / 'state.db'}"
    source = tmp_path / "in"
    source.mkdir()

    def arrive(first: int, n: int) -> None:
        (source / f"f{first:03d}.json").write_text("".join(
            json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(first, first + n)))

    def run(fail_after_write: bool = False) -> Any:
        with Job("load", state=state) as job:
            df = job.read_files(str(source), format="json", ctx="src")
            result = job.write(df, "db.events", format="iceberg", ctx="events")
            if fail_after_write:
                raise AfterCommit()
            return result

    def read_new() -> list[int]:
        with Job("copy", state=state) as job:
            df = job.read_table("db.events", format="iceberg", ctx="events")
            return sorted(r.id for r in df.collect())

    arrive(0, 3)
    with pytest.raises(AfterCommit):
        run(fail_after_write=True)  # the sink committed, the run did not
    arrive(3, 2)  # arrives before the retry: the retry replays the failed attempt's input
    retry = run()
    assert (retry.skipped, retry.rows) == (True, 0)
    assert read_new() == [0, 1, 2]
    after = run()  # the next run takes the file that arrived meanwhile
    assert (after.skipped, after.rows) == (False, 2)
    assert read_new() == [3, 4]  # only the snapshot appended since the last read

    objects = [o["Key"] for o in client.list_objects_v2(Bucket="lake", Prefix="wh/")["Contents"]]
    data = [k for k in objects if k.startswith("wh/db.db/events/data/")]
    assert len(data) == 2 and all(k.endswith(".parquet") for k in data)
    assert any(k.startswith("wh/db.db/events/metadata/") for k in objects)
    assert not (tmp_path / "warehouse").exists()  # nothing written locally

    whole = spark.read.format("iceberg").load("db.events")
    assert sorted((r.id, r.name) for r in whole.collect()) == [
        (i, f"n{i}") for i in range(5)]

    days = spark.createDataFrame([(1, "2024-01-01"), (2, "2024-01-02"), (3, "2024-01-01")],
                                 "id long, d string")
    days.write.format("iceberg").mode("append").partitionBy("d").save("db.days")
    assert sorted(tuple(r) for r in spark.read.format("iceberg").load("db.days").collect()) \
        == [(1, "2024-01-01"), (2, "2024-01-02"), (3, "2024-01-01")]
    folders = {k.split("/")[4] for k in (o["Key"] for o in client.list_objects_v2(
        Bucket="lake", Prefix="wh/db.db/days/data/")["Contents"])}
    assert folders == {"d_part=2024-01-01", "d_part=2024-01-02"}

    alone = SqlCatalog("lakemark", uri=catalog, warehouse="s3://lake/wh",
                       **{"s3.endpoint": s3.endpoint, "s3.region": "us-east-1"})
    table = alone.load_table("db.events")
    assert table.location() == "s3://lake/wh/db.db/events"
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3, 4]
    tokens = [(s.summary[APP_ID_KEY], s.summary[APP_VERSION_KEY]) for s in table.snapshots()
              if s.summary is not None]
    assert tokens == [("load/events", "1"), ("load/events", "2")]
    days_table = alone.load_table("db.days")
    assert [f.name for f in days_table.spec().fields] == ["d"]
    assert sorted(days_table.scan(row_filter="d = '2024-01-01'").to_arrow()
                  .column("id").to_pylist()) == [1, 3]


def test_iceberg_upsert_and_time_partitions_on_an_s3_warehouse(
        spark: Any, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On an ``s3://`` warehouse: a merge by key (``merge_keys``; pyiceberg rewrites the
    matched files copy-on-write through its FileIO on S3) applied by a run that failed after
    its commit is not applied again by the retry; a ``days(ts)`` table is written per
    partition by pyarrow on the executors (folders ``ts_day=…``, partition values in the
    manifests, scans pruned by them)."""
    import datetime as dt

    from pyiceberg.transforms import DayTransform

    client = s3.client("s3")
    client.create_bucket(Bucket="cow")
    catalog = f"sqlite:///{tmp_path / 'catalog.db'}"
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.setenv(CATALOG_ENV, catalog)
    monkeypatch.setenv(WAREHOUSE_ENV, "s3://cow/wh")
    state = f"sqlite:///{tmp_path / 'state.db'}"
    schema = "id long, name string, op string"
    write_target(spark, spark.createDataFrame(
        [(1, "Ada", "I"), (2, "Bob", "I"), (3, "Cy", "I")], schema), "db.people",
        format="iceberg")
    changes = spark.createDataFrame([(2, "Robert", "U"), (3, None, "D"), (4, "Dee", "I")],
                                    schema)
    for attempt in range(2):
        with Job("upsert", state=state) as job:
            result = job.write(changes, "db.people", format="iceberg", ctx="people",
                               merge_keys=["id"], delete_when="op = 'D'")
            if attempt == 0:
                assert (result.skipped, result.rows) == (False, 3)
                job.fail("after its commit")  # the run fails; its sink committed
    assert result.skipped  # the retry found its token in the table
    alone = SqlCatalog("lakemark", uri=catalog, warehouse="s3://cow/wh",
                       **{"s3.endpoint": s3.endpoint, "s3.region": "us-east-1"})
    rows = alone.load_table("db.people").scan().to_arrow()
    assert sorted(zip(rows.column("id").to_pylist(), rows.column("name").to_pylist())) == [
        (1, "Ada"), (2, "Robert"), (4, "Dee")]

    def at(day: int) -> dt.datetime:
        return dt.datetime(2024, 6, day, 12, tzinfo=dt.UTC)

    events = spark.createDataFrame([(1, at(1)), (2, at(3)), (3, at(1))], "id long, ts timestamp")
    write_target(spark, events, "db.events", format="iceberg", partition_by=["days(ts)"])
    table = alone.load_table("db.events")
    assert isinstance(table.spec().fields[0].transform, DayTransform)
    june1 = (dt.date(2024, 6, 1) - dt.date(1970, 1, 1)).days
    by_file = {t.file.file_path: t.file.partition[0] for t in table.scan().plan_files()}
    assert set(by_file.values()) == {june1, june1 + 2}
    for path, day in by_file.items():
        assert f"/ts_day=2024-06-0{1 + day - june1}/" in path
    june3 = table.scan(row_filter="ts >= '2024-06-03T00:00:00+00:00'")
    assert {t.file.partition[0] for t in june3.plan_files()} == {june1 + 2}
    assert sorted(june3.to_arrow().column("id").to_pylist()) == [2]
    assert sorted(r.id for r in spark.read.format("iceberg").load("db.events").collect()) \
        == [1, 2, 3]
