"""``LAKEMARK_FORMAT_SERVING=datasource``: ``format("delta")`` and ``format("iceberg")`` served
by lakemark's Python data sources (lakemark.datasources), in the shapes Glue and Delta/Iceberg
users write them: a partitioned daily load, an idempotent retried write, time travel, schema
changes, Spark's save modes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pyiceberg.catalog.sql import SqlCatalog

from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.datasources import SERVING_ENV
from lakemark.errors import ConfigError, SinkError, UnsupportedError

pytestmark = pytest.mark.spark


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _events(spark: Any, rows: list[tuple[int, str, str]]) -> Any:
    return spark.createDataFrame(rows, "event_id long, user string, event_date string")


def test_delta_write_and_read_go_through_the_data_source(spark: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SERVING_ENV, "datasource")
    path = str(tmp_path / "events")
    day1 = _events(spark, [(1, "ann", "2024-05-01"), (2, "bob", "2024-05-01"),
                           (3, "cid", "2024-05-02")])
    day1.write.format("delta").partitionBy("event_date").save(path)  # default: errorifexists
    table = DeltaTable(path)
    assert table.version() == 0 and table.metadata().partition_columns == ["event_date"]

    read = spark.read.format("delta").load(path)
    assert "BatchScan delta" in _plan(read) and "(Python)" in _plan(read)
    assert sorted(r.event_id for r in read.collect()) == [1, 2, 3]
    assert [r.event_id for r in read.where("event_date = '2024-05-02'").collect()] == [3]

    # a Glue job retried after a failure: the same txnAppId/txnVersion writes nothing
    day2 = _events(spark, [(4, "dan", "2024-05-03")])
    for _attempt in range(2):
        day2.write.format("delta").mode("append").option("txnAppId", "daily-load") \
            .option("txnVersion", 2).save(path)
    assert DeltaTable(path).version() == 1  # one commit for the write, none for the retry
    assert spark.read.format("delta").load(path).count() == 4

    with pytest.raises(SinkError, match="already exists"):
        day2.write.format("delta").save(path)
    day2.write.format("delta").mode("ignore").save(path)
    assert DeltaTable(path).version() == 1

    assert spark.read.format("delta").option("versionAsOf", 0).load(path).count() == 3

    wider = spark.createDataFrame([(5, "eve", "2024-05-03", "web")],
                                  "event_id long, user string, event_date string, channel string")
    with pytest.raises(SinkError, match="mergeSchema"):
        wider.write.format("delta").mode("append").save(path)
    wider.write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    got = {r.event_id: r.channel for r in spark.read.format("delta").load(path).collect()}
    assert got == {1: None, 2: None, 3: None, 4: None, 5: "web"}

    narrow = spark.createDataFrame([(9, "x")], "event_id long, note string")
    narrow.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
    after = spark.read.format("delta").load(path)
    assert after.columns == ["event_id", "note"] and after.count() == 1
    assert DeltaTable(path).metadata().partition_columns == []


def test_delta_option_it_cannot_honour_is_refused_by_name(spark: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SERVING_ENV, "datasource")
    path = str(tmp_path / "t")
    df = spark.createDataFrame([(1, "a")], "id long, d string")
    df.write.format("delta").save(path)
    with pytest.raises(UnsupportedError, match="dataChange"):
        df.write.format("delta").mode("overwrite").option("dataChange", "false").save(path)
    assert DeltaTable(path).version() == 0
    # replaceWhere is honoured: the driver checks and plans it (it needs Spark), the data
    # source commits it (here over a data column: the rows it does not select are kept)
    spark.createDataFrame([(2, "b")], "id long, d string").write.format("delta") \
        .mode("append").save(path)
    spark.createDataFrame([(3, "a")], "id long, d string").write.format("delta") \
        .mode("overwrite").option("replaceWhere", "d = 'a'").save(path)
    assert sorted(DeltaTable(path).to_pyarrow_table().column("id").to_pylist()) == [2, 3]
    assert "d = 'a'" in json.dumps(DeltaTable(path).history(1)[0])


def test_iceberg_write_and_read_go_through_the_data_source(spark: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SERVING_ENV, "datasource")
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    catalog = SqlCatalog("lakemark", uri=uri, warehouse=(tmp_path / "warehouse").as_uri())
    orders = spark.createDataFrame([(1, "ann", 10.0), (2, "bob", 20.0)],
                                   "order_id long, customer string, amount double")
    orders.write.format("iceberg").save("sales.orders")  # a new table: errorifexists is fine
    first = catalog.load_table("sales.orders").current_snapshot()

    more = spark.createDataFrame([(3, "cid", 5.0)], "order_id long, customer string, amount double")
    for _attempt in range(2):  # a retried job: the second write records nothing
        more.write.format("iceberg").mode("append").option("txnAppId", "orders-job") \
            .option("txnVersion", "7").save("sales.orders")
    table = catalog.load_table("sales.orders")
    assert len(table.metadata.snapshots) == 2  # one snapshot per write

    read = spark.read.format("iceberg").load("sales.orders")
    assert "BatchScan iceberg" in _plan(read)
    assert sorted(r.order_id for r in read.collect()) == [1, 2, 3]
    assert [r.order_id for r in read.where("amount > 15").collect()] == [2]
    old = spark.read.format("iceberg").option("snapshot-id", first.snapshot_id).load("sales.orders")
    assert sorted(r.order_id for r in old.collect()) == [1, 2]
    as_of = spark.read.format("iceberg").option("as-of-timestamp", first.timestamp_ms) \
        .load("sales.orders")
    assert as_of.count() == 2

    with pytest.raises(ConfigError, match="already exists"):
        more.write.format("iceberg").save("sales.orders")
    more.write.format("iceberg").mode("ignore").save("sales.orders")
    assert len(catalog.load_table("sales.orders").metadata.snapshots) == 2

    wider = spark.createDataFrame([(4, "dan", 1.0, "EUR")],
                                  "order_id long, customer string, amount double, currency string")
    wider.write.format("iceberg").mode("append").option("mergeSchema", "true").save("sales.orders")
    got = {r.order_id: r.currency for r in spark.read.format("iceberg").load("sales.orders")
           .collect()}
    assert got == {1: None, 2: None, 3: None, 4: "EUR"}

    wider.write.format("iceberg").mode("overwrite").save("sales.orders")
    assert [r.order_id for r in spark.read.format("iceberg").load("sales.orders").collect()] == [4]

    orders.write.format("iceberg").partitionBy("customer").save("sales.by_customer")
    by_customer = catalog.load_table("sales.by_customer")
    assert [f.name for f in by_customer.spec().fields] == ["customer"]
    assert sorted(by_customer.scan(row_filter="customer == 'bob'").to_arrow()
                  .column("order_id").to_pylist()) == [2]
    more.write.format("iceberg").mode("append").save("sales.by_customer")  # keeps its spec
    assert spark.read.format("iceberg").load("sales.by_customer").count() == 3
    # a transform: each task computes the day of each row with pyarrow, one file per day
    stamped = spark.createDataFrame([(1, "2024-05-01 10:00:00"), (2, "2024-05-02 23:00:00")],
                                    "id long, ts string") \
        .selectExpr("id", "cast(ts as timestamp) ts")
    stamped.write.format("iceberg").partitionBy("days(ts)").save("sales.by_day")
    by_day = catalog.load_table("sales.by_day")
    assert [str(f.transform) for f in by_day.spec().fields] == ["day"]
    assert len({tuple(t.file.partition) for t in by_day.scan().plan_files()}) == 2
    assert sorted(r.id for r in spark.read.format("iceberg").load("sales.by_day")
                  .collect()) == [1, 2]
    with pytest.raises(UnsupportedError, match="bucket"):
        stamped.write.format("iceberg").partitionBy("bucket(4, id)").save("sales.by_bucket")
    assert not catalog.table_exists("sales.by_bucket")
