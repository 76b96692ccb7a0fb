"""Delta's SQL forms through ``spark.sql`` in a session without Delta's jars (issue 32), written
as Delta's documentation shows them: ``delta.`path``` tables, ``VERSION AS OF`` /
``TIMESTAMP AS OF`` (also on a table created by name), ``DESCRIBE HISTORY`` filtered by the
operation names Delta on Spark records, CTAS / RTAS with Delta's create/replace rules, and the
forms lakemark does not serve refused in one line. Commit times are set on the commit files."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark.errors import LakemarkError
from lakemark.tables import register

pytestmark = pytest.mark.spark
TIMES = [dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC) + dt.timedelta(hours=h) for h in range(3)]


@pytest.fixture(autouse=True)
def _utc(spark):  # type: ignore[no-untyped-def]
    assert register(spark)
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield
    spark.conf.set("spark.sql.session.timeZone", before)


@pytest.fixture
def events(tmp_path: Path) -> str:
    """Versions 0..2 of an events table (1, 2, 3 rows), committed at :data:`TIMES`."""
    path = tmp_path / "events"
    for version in range(3):
        write_deltalake(str(path), pa.table({"id": pa.array([version], pa.int64()),
                                             "kind": pa.array([f"k{version % 2}"])}),
                        mode="append")
    for version, when in enumerate(TIMES):
        log = path / "_delta_log" / f"{version:020d}.json"
        os.utime(log, (when.timestamp(), when.timestamp()))
    return str(path)


def ids(frame) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(r[0] for r in frame.collect())


def test_select_from_path_with_version_and_timestamp(spark, events: str) -> None:  # type: ignore[no-untyped-def]
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}`")) == [0, 1, 2]
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}` VERSION AS OF 1")) == [0, 1]
    # 10:30 falls between version 0 (10:00) and version 1 (11:00): version 0, as Delta reads
    assert ids(spark.sql(f"SELECT * FROM delta.`{events}` TIMESTAMP AS OF "
                         "'2024-05-01 10:30:00'")) == [0]
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}` FOR SYSTEM_TIME AS OF "
                         "timestamp'2024-05-01 11:00:00'")) == [0, 1]
    # a join of two versions of the same table (the audit query of Delta's docs)
    added = spark.sql(f"SELECT cur.id FROM delta.`{events}` cur LEFT ANTI JOIN "
                      f"delta.`{events}` VERSION AS OF 0 AS old ON cur.id = old.id")
    assert ids(added) == [1, 2]
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("__lakemark")]


def test_time_travel_refusals_are_deltas(spark, events: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LakemarkError, match=r"Available versions: \[0, 2\]"):
        spark.sql(f"SELECT * FROM delta.`{events}` VERSION AS OF 7").collect()
    with pytest.raises(LakemarkError, match="before the earliest version available"):
        spark.sql(f"SELECT * FROM delta.`{events}` TIMESTAMP AS OF '2020-01-01'").collect()


def test_describe_history_with_deltas_names(spark, events: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spark.range(2).write.format("delta").mode("append").save(events.replace("events", "w"))
    history = spark.sql(f"DESCRIBE HISTORY delta.`{events.replace('events', 'w')}`")
    assert [r.operation for r in history.collect()] == ["WRITE"]
    last = spark.sql(f"DESCRIBE HISTORY delta.`{events}` LIMIT 1").collect()
    assert [r.version for r in last] == [2]


def test_ctas_then_rtas_as_delta_records_them(spark, events: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    daily = str(tmp_path / "by_kind")
    spark.sql(f"CREATE TABLE delta.`{daily}` USING DELTA PARTITIONED BY (kind) AS "
              f"SELECT kind, count(*) AS n FROM delta.`{events}` VERSION AS OF 1 GROUP BY kind")
    table = DeltaTable(daily)
    assert table.metadata().partition_columns == ["kind"]
    assert sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["kind"]) == [
        {"kind": "k0", "n": 1}, {"kind": "k1", "n": 1}]
    # a second CREATE TABLE is refused and changes nothing; IF NOT EXISTS is a no-op
    with pytest.raises(LakemarkError, match="already exists"):
        spark.sql(f"CREATE TABLE delta.`{daily}` USING delta AS SELECT 1 AS n")
    spark.sql(f"CREATE TABLE IF NOT EXISTS delta.`{daily}` USING delta AS SELECT 1 AS n")
    assert DeltaTable(daily).version() == 0
    spark.sql(f"CREATE OR REPLACE TABLE delta.`{daily}` USING delta AS "
              f"SELECT kind FROM delta.`{events}` WHERE id = 2")
    assert DeltaTable(daily).to_pyarrow_table().to_pylist() == [{"kind": "k0"}]
    assert DeltaTable(daily).metadata().partition_columns == []
    spark.sql(f"REPLACE TABLE delta.`{daily}` USING delta AS SELECT 7 AS n")
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{daily}`").collect()
    assert [r.operation for r in rows] == ["REPLACE TABLE AS SELECT",
                                           "CREATE OR REPLACE TABLE AS SELECT",
                                           "CREATE TABLE AS SELECT"]
    assert rows[-1].operationParameters["partitionBy"] == '["kind"]'
    assert rows[-1].operationParameters["isManaged"] == "false"
    assert ids(spark.sql(f"SELECT n FROM delta.`{daily}`")) == [7]
    assert ids(spark.sql(f"SELECT count(*) FROM delta.`{daily}` VERSION AS OF 0")) == [2]


def test_replace_of_a_missing_table_is_refused(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "nothing"
    with pytest.raises(LakemarkError, match="does not exist; use CREATE OR REPLACE TABLE"):
        spark.sql(f"REPLACE TABLE delta.`{missing}` USING delta AS SELECT 1 AS id")
    assert not missing.exists()


def test_named_table_with_location(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    where = tmp_path / "customers"
    spark.sql(f"CREATE TABLE customers_sqlfid USING delta LOCATION '{where}' AS "
              "SELECT id, concat('c', id) AS name FROM range(3)")
    spark.sql(f"CREATE OR REPLACE TABLE customers_sqlfid USING delta LOCATION '{where}' AS "
              "SELECT id, concat('c', id) AS name FROM range(5)")
    assert ids(spark.sql("SELECT id FROM customers_sqlfid")) == [0, 1, 2, 3, 4]
    assert ids(spark.sql("SELECT id FROM customers_sqlfid VERSION AS OF 0")) == [0, 1, 2]
    ops = [r.operation for r in spark.sql("DESCRIBE HISTORY customers_sqlfid").collect()]
    assert ops == ["CREATE OR REPLACE TABLE AS SELECT", "CREATE TABLE AS SELECT"]


def test_unserved_forms_fail_in_one_line_with_no_change(spark, events: str) -> None:  # type: ignore[no-untyped-def]
    for sql, words in [
            (f"MERGE INTO delta.`{events}` t USING (SELECT 9 AS id) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT *", "DeltaTable.forPath"),
            (f"CREATE TABLE delta.`{events}_p` USING delta TBLPROPERTIES "
             "('delta.appendOnly' = 'true') AS SELECT 1 AS id", "TBLPROPERTIES")]:
        with pytest.raises(LakemarkError) as info:
            spark.sql(sql)
        assert words in str(info.value) and "\n" not in str(info.value)
    assert DeltaTable(events).version() == 2 and not Path(f"{events}_p").exists()


def test_delete_and_update_as_deltas_sql(spark, events: str) -> None:  # type: ignore[no-untyped-def]
    deleted = spark.sql(f"DELETE FROM delta.`{events}` WHERE id = 0").collect()
    assert [r.num_affected_rows for r in deleted] == [1]
    updated = spark.sql(f"UPDATE delta.`{events}` AS e SET e.kind = 'late', id = id + 10 "
                        "WHERE e.id >= 1").collect()
    assert [r.num_affected_rows for r in updated] == [2]
    assert sorted(DeltaTable(events).to_pyarrow_table().to_pylist(),
                  key=lambda r: r["id"]) == [{"id": 11, "kind": "late"},
                                             {"id": 12, "kind": "late"}]
    ops = [r.operation for r in spark.sql(f"DESCRIBE HISTORY delta.`{events}` LIMIT 2").collect()]
    assert ops == ["UPDATE", "DELETE"]
    none = spark.sql(f"DELETE FROM delta.`{events}` WHERE id = 99").collect()
    assert [r.num_affected_rows for r in none] == [0]
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}` VERSION AS OF 2")) == [0, 1, 2]


def test_insert_into_and_overwrite_as_spark_resolves_them(spark, events: str) -> None:  # type: ignore[no-untyped-def]
    spark.sql(f"INSERT INTO delta.`{events}` VALUES (5, 'k1'), (6, 'k0')")
    spark.sql(f"INSERT INTO delta.`{events}` (kind, id) SELECT 'k9', 7")  # a column list
    spark.sql(f"INSERT INTO delta.`{events}` (id) VALUES (8)")  # kind left out: null
    table = DeltaTable(events)
    got = sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert got[3:] == [{"id": 5, "kind": "k1"}, {"id": 6, "kind": "k0"},
                       {"id": 7, "kind": "k9"}, {"id": 8, "kind": None}]
    history = spark.sql(f"DESCRIBE HISTORY delta.`{events}` LIMIT 1").collect()[0]
    assert history.operation == "WRITE" and history.operationParameters["mode"] == "Append"
    spark.sql(f"INSERT INTO delta.`{events}` REPLACE WHERE kind = 'k9' SELECT 70 AS id, 'k9'")
    assert sorted(r["id"] for r in DeltaTable(events).to_pyarrow_table().to_pylist()) == [
        0, 1, 2, 5, 6, 8, 70]
    spark.sql(f"INSERT OVERWRITE delta.`{events}` SELECT id, kind FROM delta.`{events}` "
              "VERSION AS OF 0")
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}`")) == [0]
    with pytest.raises(LakemarkError, match="gives 1 column"):
        spark.sql(f"INSERT INTO delta.`{events}` SELECT 1")
    assert ids(spark.sql(f"SELECT id FROM delta.`{events}`")) == [0]
