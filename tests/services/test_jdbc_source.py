"""Incremental JDBC sources against the real PostgreSQL, read through Spark's JDBC reader."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import PgSchema, jdbc_url, need_postgres

from lakemark import Job
from lakemark.errors import ConfigError
from lakemark.state.sqlite import SQLiteStore

pytestmark = [pytest.mark.spark, pytest.mark.services]

PASSWORD = "pw-Secret-4711"


class Pg(PgSchema):
    """A throw-away ``lm_jdbc_…`` schema in the test database."""

    def __init__(self, user: str) -> None:
        super().__init__(user, "lm_jdbc_")


@pytest.fixture
def pg() -> Iterator[Pg]:
    db = Pg(need_postgres())
    yield db
    db.close()


def run(spark: Any, state: Path, pg: Pg, table: str, *, ctx: str | None = "src",
        bookmark: str = "enable", **kw: Any) -> tuple[list[tuple[Any, ...]], Job]:
    store = SQLiteStore(state)
    with Job("emp", state=store, spark=spark, bookmark=bookmark) as job:
        df = job.read_jdbc(jdbc_url(), table, ctx=ctx, user=pg.user, password=PASSWORD, **kw)
        rows = sorted(tuple(r) for r in df.collect())
    store.close()
    return rows, job


def test_new_rows_only_by_bookmark_key_and_range_in_manifest(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".emp (empno numeric(5,0) PRIMARY KEY, ename text)')
    pg.sql(f'INSERT INTO "{s}".emp VALUES (7369, \'SMITH\'), (7499, \'ALLEN\'), (10, \'EARLY\')')
    state = tmp_path / "state.db"
    rows, job = run(spark, state, pg, f"{s}.emp", keys=["EMPNO"])
    assert [r[1] for r in rows] == ["EARLY", "SMITH", "ALLEN"]
    # Gaps are fine; a row behind the bookmark is not taken (Glue's rule: only new rows).
    pg.sql(f'INSERT INTO "{s}".emp VALUES (9000, \'KING\'), (7500, \'WARD\'), (5, \'LATE\')')
    rows2, job2 = run(spark, state, pg, f"{s}.emp", keys=["empno"])
    assert [r[1] for r in rows2] == ["WARD", "KING"]
    rows3, _ = run(spark, state, pg, f"{s}.emp", keys=["empno"])
    assert rows3 == []
    store = SQLiteStore(state)
    element = store.get_bookmark("emp").state["src"]
    assert element["kind"] == "jdbc" and element["keys"] == ["empno"]
    assert element["last"] == [{"type": "decimal", "value": "9000"}]
    plan = store.run_inputs(job2.run_id)[0].plan
    assert plan["range"]["after"] == [{"type": "decimal", "value": "7499"}]
    assert plan["range"]["through"] == [{"type": "decimal", "value": "9000"}]
    store.close()
    assert PASSWORD.encode() not in state.read_bytes()


def test_range_is_pinned_at_planning(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".t (id bigint, v text)')
    pg.sql(f"INSERT INTO \"{s}\".t SELECT g, 'a' FROM generate_series(1, 5) g")
    state = tmp_path / "state.db"
    store = SQLiteStore(state)
    with Job("pin", state=store, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{s}.t", ctx="t", user=pg.user, keys=["id"])
        # Rows committed while the run reads are outside its pinned range.
        pg.sql(f"INSERT INTO \"{s}\".t SELECT g, 'b' FROM generate_series(6, 8) g")
        assert sorted(r.id for r in df.collect()) == [1, 2, 3, 4, 5]
    with Job("pin", state=store, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{s}.t", ctx="t", user=pg.user, keys=["id"])
        assert sorted(r.id for r in df.collect()) == [6, 7, 8]
    store.close()


def test_composite_key_descending(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".d (a int, b text, v int)')
    pg.sql(f"INSERT INTO \"{s}\".d VALUES (5, 'x', 1), (5, 'a', 2), (9, 'z', 3)")
    state = tmp_path / "state.db"
    kw = {"keys": ["a", "b"], "order": "desc"}
    rows, _ = run(spark, state, pg, f"{s}.d", **kw)
    assert [r[2] for r in rows] == [2, 1, 3]
    # New rows have smaller composite keys; (5, '0') < (5, 'a'), (4, 'zz') < all.
    pg.sql(f"INSERT INTO \"{s}\".d VALUES (5, '0', 4), (4, 'zz', 5)")
    rows, _ = run(spark, state, pg, f"{s}.d", **kw)
    assert [r[2] for r in rows] == [5, 4]
    with pytest.raises(ConfigError, match="reset the ctx"):
        run(spark, state, pg, f"{s}.d", keys=["a", "b"])


def test_primary_key_default_only_when_sequential(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".seq (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)')
    pg.sql(f"INSERT INTO \"{s}\".seq (v) VALUES ('a'), ('b')")
    state = tmp_path / "state.db"
    rows, job = run(spark, state, pg, f"{s}.seq")
    assert [r[1] for r in rows] == ["a", "b"]
    pg.sql(f"INSERT INTO \"{s}\".seq (v) VALUES ('c')")
    rows, _ = run(spark, state, pg, f"{s}.seq")
    assert [r[1] for r in rows] == ["c"]
    store = SQLiteStore(state)
    assert store.run_inputs(job.run_id)[0].plan["key_source"] == "primary key"
    store.close()

    pg.sql(f'CREATE TABLE "{s}".nokey (v int)')
    other = tmp_path / "other.db"
    with pytest.raises(ConfigError, match="no primary key.*jobBookmarkKeys"):
        run(spark, other, pg, f"{s}.nokey")
    store = SQLiteStore(other)
    assert store.get_bookmark("emp").version == 0  # bad input: no state change
    store.close()


def test_an_unconfirmed_primary_key_is_used_with_a_warning(  # type: ignore[no-untyped-def]
    spark, pg: Pg, tmp_path: Path
) -> None:
    import logging

    class Collect(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.WARNING)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".codes (code text PRIMARY KEY, v int)')
    pg.sql(f"INSERT INTO \"{s}\".codes VALUES ('a', 1), ('b', 2)")
    state = tmp_path / "state.db"
    collect = Collect()
    logging.getLogger("lakemark").addHandler(collect)  # wherever the CLI routed its output
    try:
        rows, job = run(spark, state, pg, f"{s}.codes")
    finally:
        logging.getLogger("lakemark").removeHandler(collect)
    assert sorted(r[0] for r in rows) == ["a", "b"]
    assert any("not confirmed sequential" in m for m in collect.messages)
    pg.sql(f"INSERT INTO \"{s}\".codes VALUES ('c', 3)")
    rows, _ = run(spark, state, pg, f"{s}.codes")
    assert [r[0] for r in rows] == ["c"]
    store = SQLiteStore(state)
    assert store.run_inputs(job.run_id)[0].plan["key_source"].startswith("primary key")
    store.close()


def test_hostile_names_and_values_are_quoted_and_rendered_safely(  # type: ignore[no-untyped-def]
        spark, pg: Pg, tmp_path: Path) -> None:
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".sentinel (x int)')
    table = 'we"ird; DROP TABLE sentinel;--'
    column = "k'ey\" $lm0$"
    quoted_table = '"' + table.replace('"', '""') + '"'
    quoted_col = '"' + column.replace('"', '""') + '"'
    pg.sql(f'CREATE TABLE "{s}".{quoted_table} ({quoted_col} text, n int)')
    hostile = ["a'; DROP TABLE sentinel; --", "b\\'", "c$lm0$", "d$$", "é東京🙂", "e\"x"]
    for i, v in enumerate(hostile):
        pg.sql(f'INSERT INTO "{s}".{quoted_table} VALUES (%s, %s)', (v, i))
    state = tmp_path / "state.db"
    name = f'"{s}".{quoted_table}'
    rows, _ = run(spark, state, pg, name, keys=[column])
    assert sorted(r[0] for r in rows) == sorted(hostile)
    later = ["f'||(SELECT 1)||'", "é東京🙂z", "ㅎ"]
    for v in later:
        pg.sql(f'INSERT INTO "{s}".{quoted_table} VALUES (%s, 0)', (v,))
    rows, _ = run(spark, state, pg, name, keys=[column])
    collate = pg.sql(f'SELECT {quoted_col} FROM "{s}".{quoted_table} ORDER BY 1')
    ordered = [r[0] for r in collate]
    assert sorted(r[0] for r in rows) == sorted(v for v in ordered[ordered.index(max(
        hostile, key=ordered.index)) + 1:])
    assert pg.sql(f'SELECT count(*) FROM "{s}".sentinel') == [(0,)]


def test_timestamp_key_and_parallel_hash_partitions(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".ev (id int, at timestamp, atz timestamptz)')
    pg.sql(f"INSERT INTO \"{s}\".ev SELECT g, TIMESTAMP '2024-01-01 00:00:00.123456' + g * "
           f"INTERVAL '1 second', TIMESTAMPTZ '2024-01-01 00:00:00+02' + g * INTERVAL '1 ms' "
           "FROM generate_series(1, 40) g")
    state = tmp_path / "state.db"
    store = SQLiteStore(state)
    with Job("ev", state=store, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{s}.ev", ctx="ev", user=pg.user, keys=["at"],
                           hashfield="id", hashpartitions=3, fetchsize=10)
        assert df.rdd.getNumPartitions() == 3
        assert sorted(r.id for r in df.collect()) == list(range(1, 41))
    pg.sql(f"INSERT INTO \"{s}\".ev SELECT g, TIMESTAMP '2024-01-01 00:00:00.123456' + g * "
           f"INTERVAL '1 second', now() FROM generate_series(41, 45) g")
    with Job("ev", state=store, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{s}.ev", ctx="ev", user=pg.user, keys=["at"],
                           hashexpression="id * 7", hashpartitions=4)
        assert sorted(r.id for r in df.collect()) == [41, 42, 43, 44, 45]
    last = store.get_bookmark("ev").state["ev"]["last"]
    assert last == [{"type": "timestamp", "value": "2024-01-01T00:00:45.123456"}]
    # A zoned timestamp key keeps the exact instant.
    with Job("evz", state=store, spark=spark) as job:
        job.read_jdbc(jdbc_url(), f"{s}.ev", ctx="z", user=pg.user, keys=["atz", "id"]).count()
    with Job("evz", state=store, spark=spark) as job:
        assert job.read_jdbc(jdbc_url(), f"{s}.ev", ctx="z", user=pg.user,
                             keys=["atz", "id"]).count() == 0
    store.close()


def test_disable_and_untracked_read_everything(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".t (id int)')
    pg.sql(f'INSERT INTO "{s}".t VALUES (1), (2)')
    state = tmp_path / "state.db"
    for _ in range(2):
        rows, _job = run(spark, state, pg, f"{s}.t", keys=["id"], bookmark="disable")
        assert rows == [(1,), (2,)]
        rows, _job = run(spark, state, pg, f"{s}.t", ctx=None, keys=["id"])
        assert rows == [(1,), (2,)]
    store = SQLiteStore(state)
    assert dict(store.get_bookmark("emp").state) == {}
    store.close()


def test_bad_options_name_the_option(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".t (id int, blob bytea)')
    state = tmp_path / "state.db"
    with pytest.raises(ConfigError, match="'nope' is not in the table"):
        run(spark, state, pg, f"{s}.t", keys=["nope"])
    with pytest.raises(ConfigError, match="jobBookmarkKeys: column 'blob'"):
        run(spark, state, pg, f"{s}.t", keys=["blob"])
    with pytest.raises(ConfigError, match="jobBookmarkKeysSortOrder"):
        run(spark, state, pg, f"{s}.t", keys=["id"], order="up")
    with pytest.raises(ConfigError, match="hashpartitions"):
        run(spark, state, pg, f"{s}.t", keys=["id"], hashpartitions=0, hashfield="id")
    store = SQLiteStore(state)
    assert store.get_bookmark("emp").version == 0
    store.close()


def test_timestamp_values_round_trip_through_literals() -> None:
    from lakemark.sources.jdbc_sql import render_literal

    assert render_literal(dt.datetime(2024, 1, 2, 3, 4, 5, 6), "postgresql") == \
        "TIMESTAMP '2024-01-02 03:04:05.000006'"


def test_pause_replays_the_ranges_of_runs_from_to(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".t (id int)')
    state = tmp_path / "state.db"
    ids = []
    for batch in ([1, 2, 3], [4, 5], [6]):
        pg.sql(f'INSERT INTO "{s}".t SELECT unnest(%s::int[])', (batch,))
        _, job = run(spark, state, pg, f"{s}.t", keys=["id"])
        ids.append(job.run_id)
    store = SQLiteStore(state)
    with Job("emp", state=store, spark=spark, bookmark="pause", from_run_id=ids[0],
             to_run_id=ids[2]) as job:
        df = job.read_jdbc(jdbc_url(), f"{s}.t", ctx="src", user=pg.user, keys=["id"])
        assert sorted(r.id for r in df.collect()) == [4, 5, 6]
    assert store.get_bookmark("emp").run == 3  # pause leaves the bookmark as it was
    store.close()


def test_updated_rows_mode_retakes_rows_whose_cursor_moved(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".c (id int PRIMARY KEY, v text, updated_at timestamp)')
    pg.sql(f"INSERT INTO \"{s}\".c VALUES (1, 'a', TIMESTAMP '2024-01-01 10:00'), "
           f"(2, 'b', TIMESTAMP '2024-01-01 10:00')")
    state = tmp_path / "state.db"
    kw = {"keys": ["updated_at", "id"], "mode": "updated"}
    rows, _ = run(spark, state, pg, f"{s}.c", **kw)
    assert [r[:2] for r in rows] == [(1, "a"), (2, "b")]
    pg.sql(f"UPDATE \"{s}\".c SET v = 'a2', updated_at = TIMESTAMP '2024-01-01 10:05' WHERE id = 1")
    pg.sql(f"INSERT INTO \"{s}\".c VALUES (3, 'c', TIMESTAMP '2024-01-01 10:05')")
    rows, _ = run(spark, state, pg, f"{s}.c", **kw)
    assert [r[:2] for r in rows] == [(1, "a2"), (3, "c")]
    with pytest.raises(ConfigError, match="updated-rows mode needs"):
        run(spark, state, pg, f"{s}.c", mode="updated")


def test_a_retried_run_reads_the_same_range(spark, pg: Pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".t (id int)')
    pg.sql(f'INSERT INTO "{s}".t VALUES (1), (2)')
    state = tmp_path / "state.db"
    run(spark, state, pg, f"{s}.t", keys=["id"])
    pg.sql(f'INSERT INTO "{s}".t VALUES (3), (4)')
    store = SQLiteStore(state)
    with pytest.raises(RuntimeError, match="sink down"):
        with Job("emp", state=store, spark=spark) as job:
            df = job.read_jdbc(jdbc_url(), f"{s}.t", ctx="src", user=pg.user, keys=["id"])
            assert sorted(r.id for r in df.collect()) == [3, 4]
            raise RuntimeError("sink down")
    store.close()
    pg.sql(f'INSERT INTO "{s}".t VALUES (5)')
    rows, job = run(spark, state, pg, f"{s}.t", keys=["id"])
    assert rows == [(3,), (4,)] and job.run.attempt == 1
    rows, _ = run(spark, state, pg, f"{s}.t", keys=["id"])
    assert rows == [(5,)]
