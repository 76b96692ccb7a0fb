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
