"""Iceberg's SQL forms through ``spark.sql`` without Iceberg's runtime (issue 32), as Iceberg's
Spark documentation writes them, on a catalog configured by ``spark.sql.catalog.local.*``
(a JDBC catalog on SQLite): ``SELECT`` of ``local.db.events``, ``VERSION AS OF <snapshot id>``
/ ``FOR SYSTEM_VERSION AS OF``, ``TIMESTAMP AS OF`` (the snapshot current at that time), and
the forms lakemark does not serve refused in one line."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark.errors import LakemarkError

pytestmark = pytest.mark.spark
PREFIX = "spark.sql.catalog.local"


@pytest.fixture
def catalog(spark: Any, tmp_path: Path) -> Iterator[SqlCatalog]:
    db, warehouse = tmp_path / "catalog.db", tmp_path / "warehouse"
    conf = {PREFIX: "org.apache.iceberg.spark.SparkCatalog", f"{PREFIX}.type": "jdbc",
            f"{PREFIX}.uri": f"jdbc:sqlite:{db}", f"{PREFIX}.warehouse": str(warehouse),
            "spark.sql.session.timeZone": "UTC"}
    before = spark.conf.get("spark.sql.session.timeZone")
    for key, value in conf.items():
        spark.conf.set(key, value)
    yield SqlCatalog("local", uri=f"sqlite:///{db}", warehouse=warehouse.as_uri())
    for key in conf:
        spark.conf.unset(key)
    spark.conf.set("spark.sql.session.timeZone", before)


def ids(frame: Any) -> list[int]:
    return sorted(r[0] for r in frame.collect())


def test_select_and_time_travel(spark: Any, catalog: SqlCatalog) -> None:
    spark.createDataFrame([(1, "a"), (2, "b")], "id long, d string").writeTo(
        "local.db.events").create()
    spark.createDataFrame([(3, "c")], "id long, d string").writeTo("local.db.events").append()
    first, second = catalog.load_table("db.events").snapshots()
    assert ids(spark.sql("SELECT id FROM local.db.events")) == [1, 2, 3]
    assert ids(spark.sql(f"SELECT id FROM local.db.events VERSION AS OF {first.snapshot_id}")
               ) == [1, 2]
    assert ids(spark.sql("SELECT e.id FROM local.db.events FOR SYSTEM_VERSION AS OF "
                         f"{second.snapshot_id} AS e WHERE e.d <> 'a'")) == [2, 3]
    at = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, dt.UTC)
    text = at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    assert ids(spark.sql(f"SELECT id FROM local.db.events TIMESTAMP AS OF '{text}'")) == [1, 2]
    with pytest.raises(LakemarkError, match="no snapshot at or before"):
        spark.sql("SELECT id FROM local.db.events TIMESTAMP AS OF '2000-01-01'")
    with pytest.raises(LakemarkError, match="has no snapshot 42"):
        spark.sql("SELECT id FROM local.db.events VERSION AS OF 42")
    # metadata tables, with the columns of Iceberg's documentation: find a snapshot id in SQL
    snaps = spark.sql("SELECT committed_at, snapshot_id, parent_id, operation, manifest_list, "
                      "summary FROM local.db.events.snapshots ORDER BY committed_at").collect()
    assert [(s.snapshot_id, s.parent_id, s.operation) for s in snaps] == [
        (first.snapshot_id, None, "append"), (second.snapshot_id, first.snapshot_id, "append")]
    assert dict(snaps[1].summary)["added-records"] == "1"
    history = spark.sql("SELECT made_current_at, snapshot_id, parent_id, is_current_ancestor "
                        "FROM local.db.events.history h WHERE h.is_current_ancestor").collect()
    assert sorted(h.snapshot_id for h in history) == sorted([first.snapshot_id,
                                                              second.snapshot_id])


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM local.db.events.bogus", "not an Iceberg metadata table"),
    ("SELECT * FROM local.db.events VERSION AS OF 'audit'", "branch or tag"),
    ("INSERT INTO local.db.events VALUES (9, 'z')", "writeTo"),
])
def test_unserved_forms_are_refused_in_one_line(spark: Any, catalog: SqlCatalog, sql: str,
                                                words: str) -> None:
    with pytest.raises(LakemarkError) as info:
        spark.sql(sql)
    assert words in str(info.value) and "\n" not in str(info.value)
