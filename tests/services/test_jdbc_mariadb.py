"""Incremental JDBC sources against the real MariaDB of the project's machines (127.0.0.1:3306,
root without a password, database ``test``), read through Spark's JDBC reader with the MariaDB
driver from Debian's ``libmariadb-java``. Each test works in a throw-away database."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import need_service

from lakemark import Job
from lakemark.errors import ConfigError
from lakemark.sources.jdbc import DRIVER_JARS
from lakemark.state.sqlite import SQLiteStore

pytestmark = [pytest.mark.spark, pytest.mark.services]

HOST = os.environ.get("LAKEMARK_TEST_MYSQLHOST", "127.0.0.1")
PORT = int(os.environ.get("LAKEMARK_TEST_MYSQLPORT", "3306"))
USER = os.environ.get("LAKEMARK_TEST_MYSQLUSER", "root")


class Maria:
    """A throw-away database on the MariaDB server, with a helper to run SQL."""

    def __init__(self) -> None:
        import pymysql

        self.db = f"lm_jdbc_{uuid.uuid4().hex[:10]}"
        self.conn = pymysql.connect(host=HOST, port=PORT, user=USER, autocommit=True,
                                    charset="utf8mb4", connect_timeout=5)
        self.sql(f"CREATE DATABASE `{self.db}` CHARACTER SET utf8mb4")
        self.sql(f"USE `{self.db}`")

    def sql(self, statement: str, params: Any = None) -> list[Any]:
        with self.conn.cursor() as cur:
            cur.execute(statement, params)
            return list(cur.fetchall()) if cur.description else []

    def url(self, scheme: str = "mariadb") -> str:
        return f"jdbc:{scheme}://{HOST}:{PORT}/{self.db}"

    def close(self) -> None:
        self.sql(f"DROP DATABASE `{self.db}`")
        self.conn.close()


@pytest.fixture
def maria() -> Iterator[Maria]:
    try:
        import pymysql
    except ImportError:
        need_service("pymysql is not installed (pip install -e '.[test]')")
        raise AssertionError("unreachable") from None
    if not Path(DRIVER_JARS["mariadb"][1]).is_file():
        need_service(f"the MariaDB JDBC driver {DRIVER_JARS['mariadb'][1]} is missing "
                     "(apt-get install libmariadb-java)")
    try:
        db = Maria()
    except pymysql.Error as exc:
        need_service(f"MariaDB is not reachable at {HOST}:{PORT} as {USER}: {exc}")
        raise AssertionError("unreachable") from exc
    yield db
    db.close()


def run(spark: Any, state: Path, maria: Maria, table: str, *, scheme: str = "mariadb",
        **kw: Any) -> tuple[list[tuple[Any, ...]], Job]:
    store = SQLiteStore(state)
    with Job("orders", state=store, spark=spark) as job:
        df = job.read_jdbc(maria.url(scheme), table, ctx="src", user=USER, **kw)
        rows = sorted(tuple(r) for r in df.collect())
    store.close()
    return rows, job


def test_auto_increment_primary_key_is_the_default_bookmark_key(  # type: ignore[no-untyped-def]
    spark, maria: Maria, tmp_path: Path
) -> None:
    maria.sql("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))")
    maria.sql("INSERT INTO orders (item) VALUES ('a'), ('b')")
    state = tmp_path / "state.db"
    rows, job = run(spark, state, maria, "orders")
    assert [r[1] for r in rows] == ["a", "b"]
    maria.sql("INSERT INTO orders (item) VALUES ('c')")
    # The MySQL spelling of the URL reaches the same driver and the same bookmark.
    rows, job2 = run(spark, state, maria, "orders", scheme="mysql")
    assert [r[1] for r in rows] == ["c"]
    rows, _ = run(spark, state, maria, "orders")
    assert rows == []
    store = SQLiteStore(state)
    plan = store.run_inputs(job.run_id)[0].plan
    assert plan["key_source"] == "primary key"
    assert store.run_inputs(job2.run_id)[0].plan["range"]["through"] == \
        store.get_bookmark("orders").state["src"]["last"]
    store.close()

    maria.sql("CREATE TABLE nokey (v INT)")
    other = tmp_path / "other.db"
    with pytest.raises(ConfigError, match="no primary key.*jobBookmarkKeys"):
        run(spark, other, maria, "nokey")
    store = SQLiteStore(other)
    assert store.get_bookmark("orders").version == 0  # bad input: no state change
    store.close()


def test_hostile_names_and_values_are_quoted_and_rendered_safely(  # type: ignore[no-untyped-def]
    spark, maria: Maria, tmp_path: Path
) -> None:
    maria.sql("CREATE TABLE sentinel (x INT)")
    table = "we`ird'; DROP TABLE sentinel;--"
    column = "k'ey`\" \\"
    qt = "`" + table.replace("`", "``") + "`"
    qc = "`" + column.replace("`", "``") + "`"
    maria.sql(f"CREATE TABLE {qt} ({qc} VARCHAR(64) COLLATE utf8mb4_bin, n INT)")
    # Backslashes matter here: MySQL string literals treat them as escapes by default.
    hostile = ["a'; DROP TABLE sentinel; --", "b\\'", "c\\", "d\\\\'x", "é東京🙂", "e\"x"]
    for i, v in enumerate(hostile):
        maria.sql(f"INSERT INTO {qt} VALUES (%s, %s)", (v, i))
    state = tmp_path / "state.db"
    rows, _ = run(spark, state, maria, qt, keys=[column])
    assert sorted(r[0] for r in rows) == sorted(hostile)
    later = ["f'||(SELECT 1)||'", "é東京🙂z", "ㅎ", "c\\z"]
    for v in later:
        maria.sql(f"INSERT INTO {qt} VALUES (%s, 0)", (v,))
    rows, _ = run(spark, state, maria, qt, keys=[column])
    ordered = [r[0] for r in maria.sql(f"SELECT {qc} FROM {qt} ORDER BY 1")]
    last = max(hostile, key=ordered.index)
    assert sorted(r[0] for r in rows) == sorted(ordered[ordered.index(last) + 1:])
    assert maria.sql("SELECT count(*) FROM sentinel") == [(0,)]


def test_datetime_key_with_parallel_hash_partitions(  # type: ignore[no-untyped-def]
    spark, maria: Maria, tmp_path: Path
) -> None:
    maria.sql("CREATE TABLE ev (id INT, at DATETIME(6))")
    values = ", ".join(f"({i}, TIMESTAMP '2024-01-01 00:00:00.123456' + INTERVAL {i} SECOND)"
                       for i in range(1, 31))
    maria.sql(f"INSERT INTO ev VALUES {values}")
    state = tmp_path / "state.db"
    store = SQLiteStore(state)
    with Job("ev", state=store, spark=spark) as job:
        df = job.read_jdbc(maria.url(), "ev", ctx="ev", user=USER, keys=["at"],
                           hashfield="id", hashpartitions=3, fetchsize=10)
        assert df.rdd.getNumPartitions() == 3
        assert sorted(r.id for r in df.collect()) == list(range(1, 31))
    maria.sql("INSERT INTO ev VALUES (31, TIMESTAMP '2024-01-01 00:00:31.123456'), "
              "(0, TIMESTAMP '2023-12-31 00:00:00')")
    with Job("ev", state=store, spark=spark) as job:
        df = job.read_jdbc(maria.url(), "ev", ctx="ev", user=USER, keys=["at"],
                           hashexpression="id * 7", hashpartitions=4)
        assert sorted(r.id for r in df.collect()) == [31]  # only new keys, as in Glue
    last = store.get_bookmark("ev").state["ev"]["last"]
    assert last == [{"type": "timestamp", "value": "2024-01-01T00:00:31.123456"}]
    store.close()


def test_updated_rows_mode(spark, maria: Maria, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    maria.sql("CREATE TABLE c (id INT PRIMARY KEY, v VARCHAR(8), updated_at DATETIME(6))")
    maria.sql("INSERT INTO c VALUES (1, 'a', '2024-01-01 10:00:00'), "
              "(2, 'b', '2024-01-01 10:00:00')")
    state = tmp_path / "state.db"
    kw = {"keys": ["updated_at", "id"], "mode": "updated"}
    rows, _ = run(spark, state, maria, "c", **kw)
    assert [r[:2] for r in rows] == [(1, "a"), (2, "b")]
    maria.sql("UPDATE c SET v = 'a2', updated_at = '2024-01-01 10:05:00' WHERE id = 1")
    maria.sql("INSERT INTO c VALUES (3, 'c', '2024-01-01 10:05:00')")
    rows, _ = run(spark, state, maria, "c", **kw)
    assert [r[:2] for r in rows] == [(1, "a2"), (3, "c")]
