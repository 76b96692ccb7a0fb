"""Behaviour of every state-store backend (run against each one the project has)."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import need_postgres, state_url

from lakemark.errors import CommitConflict, ConfigError, LeaseError, StateError, UnknownRunError
from lakemark.planning import FileEntry
from lakemark.state import open_store
from lakemark.state.sqlite import SCHEMA_VERSION, SQLiteStore

HOST = socket.gethostname()
PID = os.getpid()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Location:
    """Where one backend keeps a store: ``open()`` opens (another) store on it."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.schema = f"lm_state_{uuid.uuid4().hex[:12]}"
        if kind == "postgres":
            self.url = state_url(need_postgres()) + f"?schema={self.schema}"
        else:
            self.url = "sqlite:///:memory:" if kind == "memory" else f"sqlite:///{tmp_path}/state.db"

    def open(self, clock: Callable[[], float] | None = None) -> Any:
        kw = {"clock": clock} if clock else {}
        if self.kind == "postgres":
            from lakemark.state.postgres import PostgresStore

            return PostgresStore(self.url, **kw)
        return SQLiteStore(self.url.removeprefix("sqlite:///"), **kw)

    def set_schema_version(self, version: int) -> None:
        s = self.open()
        s._db.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'"  # noqa: SLF001
                      .replace("%s", "?" if self.kind != "postgres" else "%s"), (str(version),))
        s.close()

    def drop(self) -> None:
        if self.kind == "postgres":
            import psycopg

            from pgtest import DATABASE, HOST, PORT

            with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=need_postgres(),
                                 autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


def _location(kind: str, tmp_path: Path) -> Iterator[Location]:
    loc = Location(kind, tmp_path)
    yield loc
    loc.drop()


@pytest.fixture(params=["memory", "file", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Every test using this runs against each backend (SQLite in memory and on disk, and
    PostgreSQL)."""
    for loc in _location(request.param, tmp_path):
        clock = Clock()
        s = loc.open(clock)
        s.clock = clock
        yield s
        s.close()


@pytest.fixture(params=["file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Location]:
    """A persistent location of each backend (for reopening and concurrent stores)."""
    yield from _location(request.param, tmp_path)


def begin(store, job="j", option="enable", **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("host", HOST)
    kw.setdefault("pid", PID)
    kw.setdefault("lease_timeout_s", 60)
    return store.begin_run(job, option, **kw)


def succeed(store, state, job="j", option="enable"):  # type: ignore[no-untyped-def]
    r = begin(store, job, option)
    return r, store.commit_run(r.run_id, state, update_bookmark=option in ("enable",))


def test_new_job_has_empty_bookmark(store) -> None:  # type: ignore[no-untyped-def]
    b = store.get_bookmark("never")
    assert (b.version, b.run, b.attempt, b.run_id, dict(b.state)) == (0, 0, 0, None, {})
    assert store.history("never") == []


def test_successful_runs_count_run_and_version(store) -> None:  # type: ignore[no-untyped-def]
    r1, b1 = succeed(store, {"src": {"high": 1}})
    assert r1.run_id.startswith("jr_") and len(r1.run_id) == 35
    assert (r1.run, r1.attempt) == (1, 0)
    assert (b1.version, b1.run, b1.attempt, b1.run_id, b1.previous_run_id) == (1, 1, 0, r1.run_id,
                                                                               None)
    r2, b2 = succeed(store, {"other": {"high": 2}})
    assert (b2.version, b2.run, b2.previous_run_id) == (2, 2, r1.run_id)
    # A ctx not written by a run keeps its state.
    assert dict(b2.state) == {"src": {"high": 1}, "other": {"high": 2}}
    assert [h.version for h in store.history("j")] == [1, 2]
    assert store.get_run(r2.run_id).status == "SUCCEEDED"


def test_failure_bumps_version_and_attempt_not_run(store) -> None:  # type: ignore[no-untyped-def]
    succeed(store, {"src": {"high": 1}})
    r = begin(store)
    assert (r.run, r.attempt) == (2, 0)
    b = store.fail_run(r.run_id, "boom", update_bookmark=True)
    assert (b.version, b.run, b.attempt) == (2, 1, 1)
    assert dict(b.state) == {"src": {"high": 1}}
    r2 = begin(store)
    assert (r2.run, r2.attempt) == (2, 1)
    b2 = store.commit_run(r2.run_id, {"src": {"high": 5}}, update_bookmark=True)
    assert (b2.version, b2.run, b2.attempt) == (3, 2, 0)
    assert store.get_run(r.run_id).error == "boom"


def test_disable_and_pause_leave_bookmark_untouched(store) -> None:  # type: ignore[no-untyped-def]
    _, b1 = succeed(store, {"src": {"high": 1}})
    for option in ("disable", "pause"):
        r = begin(store, option=option)
        b = store.commit_run(r.run_id, {"src": {"high": 99}}, update_bookmark=False)
        assert b == store.get_bookmark("j")
        assert (b.version, dict(b.state)) == (1, {"src": {"high": 1}})
        r = begin(store, option=option)
        store.fail_run(r.run_id, "x", update_bookmark=False)
        assert store.get_bookmark("j").version == 1


def test_lease_refuses_a_second_live_run(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store)
    with pytest.raises(LeaseError) as info:
        begin(store, pid=PID)
    assert info.value.holder_run_id == r.run_id
    assert r.run_id in str(info.value)
    with pytest.raises(LeaseError):
        store.reset("j")
    # The first run is unharmed and commits.
    store.commit_run(r.run_id, {}, update_bookmark=True)
    begin(store)


def test_lease_taken_over_from_dead_process(store) -> None:  # type: ignore[no-untyped-def]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    r = begin(store, pid=int(dead.stdout))
    r2 = begin(store)
    old = store.get_run(r.run_id)
    assert old.status == "FAILED" and "gone" in (old.error or "")
    b = store.get_bookmark("j")
    assert (b.version, b.attempt) == (1, 1)
    assert (r2.run, r2.attempt) == (1, 1)


def test_lease_not_taken_from_live_process_on_another_host(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store, host="elsewhere", pid=1)
    with pytest.raises(LeaseError):
        begin(store)
    store.clock.now += 61
    r2 = begin(store)
    assert "heartbeat" in (store.get_run(r.run_id).error or "")
    with pytest.raises(CommitConflict):
        store.commit_run(r.run_id, {}, update_bookmark=True)
    store.commit_run(r2.run_id, {}, update_bookmark=True)


def test_heartbeat_keeps_the_lease(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store, host="elsewhere", pid=1)
    store.clock.now += 50
    store.heartbeat(r.run_id)
    store.clock.now += 50
    with pytest.raises(LeaseError):
        begin(store)


def test_force_takes_over(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store)
    r2 = begin(store, force=True)
    assert store.get_run(r.run_id).status == "FAILED"
    with pytest.raises(LeaseError):
        store.record_plan(r.run_id, "src", {}, [])
    store.commit_run(r2.run_id, {}, update_bookmark=True)


def test_concurrent_begin_exactly_one_wins(location: Location) -> None:
    location.open().close()
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def attempt() -> None:
        s = location.open()
        barrier.wait()
        try:
            s.begin_run("j", "enable", host=HOST, pid=PID, lease_timeout_s=60)
            outcomes.append("won")
        except LeaseError:
            outcomes.append("lease")
        finally:
            s.close()

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["lease"] * 7 + ["won"]


def _open_fresh_at(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        SQLiteStore(path).close()
        results.put("ok")
    except Exception as exc:  # reported to the test, which names it
        results.put(repr(exc))


def test_processes_opening_a_new_sqlite_file_together_all_succeed(tmp_path: Path) -> None:
    # Switching a fresh file to WAL does not wait on SQLite's busy handler; a process that met
    # another one's switch used to fail at once with "database is locked".
    ctx = multiprocessing.get_context("fork")
    for round_ in range(8):
        path = str(tmp_path / f"state{round_}.db")
        barrier, results = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_open_fresh_at, args=(path, barrier, results))
                 for _ in range(8)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert outcomes == ["ok"] * 8, outcomes


def test_manifest_round_trip(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store)
    files = [FileEntry(2, "/d/b", 20), FileEntry(1, "/d/a", 10)]
    store.record_plan(r.run_id, "src", {"planned_files": 2}, files)
    store.record_plan(r.run_id, "src", {"planned_files": 2, "again": True}, files)
    inputs = store.run_inputs(r.run_id)
    assert [i.ctx for i in inputs] == ["src"]
    assert inputs[0].plan == {"planned_files": 2, "again": True}
    assert [(f.path, f.mtime, f.size) for f in inputs[0].files] == [("/d/a", 1, 10), ("/d/b", 2,
                                                                                      20)]
    with pytest.raises(UnknownRunError):
        store.run_inputs("jr_nope")


def test_reset_whole_job_and_one_ctx(store) -> None:  # type: ignore[no-untyped-def]
    r1, _ = succeed(store, {"a": {"high": 1}, "b": {"high": 2}})
    b = store.reset("j", "a")
    assert (b.version, dict(b.state)) == (2, {"b": {"high": 2}})
    with pytest.raises(ConfigError, match="'a'"):
        store.reset("j", "a")
    b = store.reset("j")
    assert (b.version, b.run, dict(b.state)) == (3, 1, {})
    r2 = begin(store)
    assert r2.run == 2  # run numbers never go back


def test_rewind_restores_state_of_that_run(store) -> None:  # type: ignore[no-untyped-def]
    r1, _ = succeed(store, {"src": {"high": 1}})
    r2, _ = succeed(store, {"src": {"high": 2}})
    b = store.rewind("j", r1.run_id)
    assert (b.version, b.run, b.run_id, dict(b.state)) == (3, 2, r1.run_id, {"src": {"high": 1}})
    assert b.reason == f"rewind to {r1.run_id}"
    with pytest.raises(UnknownRunError):
        store.rewind("j", "jr_unknown")
    r3 = begin(store)
    assert r3.run == 3
    with pytest.raises(LeaseError):
        store.rewind("j", r2.run_id)


def test_runs_between(store) -> None:  # type: ignore[no-untyped-def]
    r1, _ = succeed(store, {"src": {"high": 1}})
    succeed(store, {}, option="disable")
    r2, _ = succeed(store, {"src": {"high": 2}})
    f = begin(store)
    store.fail_run(f.run_id, "x", update_bookmark=True)
    r3, _ = succeed(store, {"src": {"high": 3}})
    assert [r.run_id for r in store.runs_between("j", r1.run_id, r3.run_id)] == [r2.run_id,
                                                                                 r3.run_id]
    assert store.runs_between("j", r2.run_id, r2.run_id) == []
    with pytest.raises(ConfigError):
        store.runs_between("j", r3.run_id, r1.run_id)
    with pytest.raises(UnknownRunError, match="job-bookmark-from"):
        store.runs_between("j", f.run_id, r3.run_id)
    assert [j.job_name for j in store.list_jobs()] == ["j"]


def test_commit_conflict_when_bookmark_moved(store) -> None:  # type: ignore[no-untyped-def]
    r = begin(store)
    # Simulate another writer moving the bookmark behind the lease's back.
    store._db.execute("UPDATE jobs SET version = version + 5")  # noqa: SLF001
    store._db.execute(  # noqa: SLF001
        "INSERT INTO jobs (job_name, version, run, attempt, state_json, updated_at) "
        "VALUES ('j', 5, 0, 0, '{}', 'now') ON CONFLICT DO NOTHING"
    )
    with pytest.raises(CommitConflict, match="changed"):
        store.commit_run(r.run_id, {"src": {}}, update_bookmark=True)
    assert store.get_run(r.run_id).status == "RUNNING"


def test_open_store_urls(tmp_path: Path) -> None:
    s = open_store(f"sqlite:///{tmp_path}/sub/dir/state.db")
    assert (tmp_path / "sub/dir/state.db").exists()
    s.close()
    with pytest.raises(ConfigError, match="unknown scheme"):
        open_store("mongo://x")
    with pytest.raises(ConfigError, match="sqlite:///"):
        open_store("sqlite://")


def test_state_survives_reopen(location: Location) -> None:
    s = location.open()
    r, _ = succeed(s, {"src": {"high": 7}})
    s.close()
    s = location.open()
    assert dict(s.get_bookmark("j").state) == {"src": {"high": 7}}
    assert s.get_run(r.run_id).status == "SUCCEEDED"
    s.close()


def test_not_a_database_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, this is not sqlite" * 100)
    with pytest.raises(StateError, match="notes.txt"):
        SQLiteStore(bad)
    assert bad.read_text().startswith("hello")


def test_newer_schema_is_refused(location: Location) -> None:
    location.open().close()
    location.set_schema_version(SCHEMA_VERSION + 1)
    with pytest.raises(StateError, match="newer"):
        location.open()


def test_postgres_urls_and_password_never_shown() -> None:
    user = need_postgres()
    schema = f"lm_state_{uuid.uuid4().hex[:12]}"
    loc = Location("postgres", Path("."))
    loc.schema = schema
    url = state_url(user).replace(f"{user}@", f"{user}:Sekr1t-pw@") + f"?schema={schema}"
    s = open_store(url)
    try:
        assert "Sekr1t" not in s.url and s.url.startswith("postgresql://")
        succeed(s, {"src": {"high": 1}})
    finally:
        s.close()
        loc.drop()
    with pytest.raises(ConfigError, match="schema"):
        open_store(state_url(user) + "?schema=bad;name")
    with pytest.raises(StateError) as info:
        open_store("postgresql://nobody:Sekr1t-pw@127.0.0.1:1/test")
    assert "Sekr1t" not in str(info.value)


# -- fencing: lease generations ---------------------------------------------------------------
def test_every_acquisition_and_takeover_gets_the_next_generation(store) -> None:  # type: ignore[no-untyped-def]
    r1, _ = succeed(store, {"src": {"high": 1}})
    r2 = begin(store)
    r3 = begin(store, force=True)
    assert (r1.generation, r2.generation, r3.generation) == (1, 2, 3)
    assert begin(store, job="other").generation == 1  # per job
    assert store.get_run(r2.run_id).error.startswith(
        f"lease taken over by {r3.run_id} at generation 3")


@pytest.mark.parametrize("how", ["force", "expiry"])
def test_stale_holder_is_refused_every_state_change(store, how: str) -> None:  # type: ignore[no-untyped-def]
    from lakemark.errors import LeaseLost

    succeed(store, {"src": {"high": 1}})
    stale = begin(store, host="elsewhere", pid=1)
    store.record_plan(stale.run_id, "src", {"kind": "files"}, [FileEntry(1, "a", 1)])
    if how == "expiry":
        store.clock.now += 61
    taker = begin(store, force=how == "force")
    before = (store.get_bookmark("j"), store.get_run(stale.run_id), store.run_inputs(stale.run_id))
    calls = {
        "heartbeat": lambda: store.heartbeat(stale.run_id),
        "plan record": lambda: store.record_plan(stale.run_id, "src", {"kind": "x"},
                                                 [FileEntry(2, "b", 2)]),
        "commit": lambda: store.commit_run(stale.run_id, {"src": {"high": 9}},
                                           update_bookmark=True),
        "failure record": lambda: store.fail_run(stale.run_id, "late", update_bookmark=True),
    }
    for what, call in calls.items():
        with pytest.raises(LeaseLost) as info:
            call()
        assert str(info.value).startswith(
            f"lease of job 'j' was taken over by run {taker.run_id} at generation 3 "
            f"(run {stale.run_id} held generation 2): its {what} was refused"), info.value
        assert (info.value.generation, info.value.holder_generation) == (2, 3)
        assert info.value.holder_run_id == taker.run_id
        assert isinstance(info.value, CommitConflict) and isinstance(info.value, LeaseError)
    # Nothing changed: the bookmark, the stale run's record and manifest, the taker's lease.
    assert (store.get_bookmark("j"), store.get_run(stale.run_id),
            store.run_inputs(stale.run_id)) == before
    store.heartbeat(taker.run_id)
    b = store.commit_run(taker.run_id, {"src": {"high": 2}}, update_bookmark=True)
    assert (b.run, dict(b.state)) == (2, {"src": {"high": 2}})


def test_an_ended_run_is_refused_but_not_as_taken_over(store) -> None:  # type: ignore[no-untyped-def]
    from lakemark.errors import LeaseLost

    r, _ = succeed(store, {"src": {"high": 1}})
    with pytest.raises(LeaseError, match="no longer running") as info:
        store.heartbeat(r.run_id)
    assert not isinstance(info.value, LeaseLost)
    # Failing a run that already ended leaves it as it is.
    store.fail_run(r.run_id, "late", update_bookmark=True)
    assert store.get_run(r.run_id).status == "SUCCEEDED"


def test_a_takeover_waits_for_a_commit_transaction_in_progress(
        location: Location, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A takeover cannot split a state commit: it waits for the commit's transaction (held at
    the ``during-job-commit`` barrier) and then finds the run ended, so it is no takeover."""
    from lakemark._fault import FAULT_WAIT_ENV

    a_store, b_store = location.open(), location.open()
    a = begin(a_store, host="elsewhere", pid=1)
    gate = tmp_path / "gate"
    monkeypatch.setenv(FAULT_WAIT_ENV, f"during-job-commit={gate}")
    outcome: dict[str, Any] = {}

    def commit() -> None:
        outcome["a"] = a_store.commit_run(a.run_id, {"src": {"high": 1}}, update_bookmark=True)

    def take_over() -> None:
        outcome["b"] = begin(b_store, force=True)

    committer = threading.Thread(target=commit)
    committer.start()
    while not Path(f"{gate}.reached").exists():  # a barrier: A is inside its transaction
        assert committer.is_alive(), "the commit ended before its barrier"
        committer.join(0.05)
    taker = threading.Thread(target=take_over)
    taker.start()
    gate.touch()
    committer.join()
    taker.join()
    try:
        assert a_store.get_run(a.run_id).status == "SUCCEEDED"
        assert a_store.get_run(a.run_id).error is None
        assert (outcome["a"].run, outcome["b"].run, outcome["b"].generation) == (1, 2, 2)
    finally:
        a_store.close()
        b_store.close()


_V1_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (seq {SEQ}, run_id TEXT NOT NULL UNIQUE, job_name TEXT NOT NULL,
    run INTEGER NOT NULL, attempt INTEGER NOT NULL, status TEXT NOT NULL,
    bookmark_option TEXT NOT NULL, base_version INTEGER NOT NULL, started_at TEXT NOT NULL,
    ended_at TEXT, error TEXT, host TEXT, pid INTEGER);
CREATE TABLE leases (job_name TEXT PRIMARY KEY, run_id TEXT NOT NULL, host TEXT, pid INTEGER,
    heartbeat_at DOUBLE PRECISION NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO runs (run_id, job_name, run, attempt, status, bookmark_option, base_version,
    started_at, host, pid) VALUES ('jr_old', 'j', 1, 0, 'RUNNING', 'enable', 0, 'then',
    'elsewhere', 1);
INSERT INTO leases VALUES ('j', 'jr_old', 'elsewhere', 1, 1000000.0)
"""


def _write_v1(location: Location) -> None:
    if location.kind == "postgres":
        import psycopg

        from pgtest import DATABASE, HOST, PORT

        with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=need_postgres(),
                             autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{location.schema}"')
            conn.execute(f'SET search_path TO "{location.schema}"')
            for statement in _V1_TABLES.replace(
                    "{SEQ}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY").split(";"):
                conn.execute(statement)
    else:
        import sqlite3

        conn = sqlite3.connect(location.url.removeprefix("sqlite:///"))
        conn.executescript(_V1_TABLES.replace("DOUBLE PRECISION", "REAL").replace(
            "{SEQ}", "INTEGER PRIMARY KEY AUTOINCREMENT"))
        conn.commit()
        conn.close()


def test_a_state_store_of_schema_1_opens_and_gains_generations(location: Location) -> None:
    """A store written before lease generations opens: the columns are added, a run that was
    in progress keeps its lease (generation 0) and the next acquisition gets generation 1."""
    _write_v1(location)
    clock = Clock()
    s = location.open(clock)
    try:
        old = s.get_run("jr_old")
        assert (old.status, old.generation) == ("RUNNING", None)
        s.heartbeat("jr_old")
        s.commit_run("jr_old", {"src": {"high": 1}}, update_bookmark=True)
        r = begin(s)
        assert (r.run, r.generation) == (2, 1)
        assert s._q.execute("SELECT value FROM meta WHERE key = 'schema_version'"  # noqa: SLF001
                            ).fetchone()[0] == str(SCHEMA_VERSION)
    finally:
        s.close()
    location.open().close()  # and opens again, migrated


def test_a_state_store_of_schema_1_can_be_looked_at_read_only(location: Location) -> None:
    """`runs list` / `bookmark show` right after an upgrade of lakemark: the older store is
    migrated in place (as any run would) and then read; its runs are all there."""
    from lakemark.state import open_store

    _write_v1(location)
    store = open_store(location.url, read_only=True)
    try:
        assert [r.run_id for r in store.list_runs("j")] == ["jr_old"]
    finally:
        store.close()


# -- tracked source schemas (issue 23) -------------------------------------------------------
def test_a_tracked_schema_commits_with_the_run_and_keeps_its_history(store) -> None:  # type: ignore[no-untyped-def]
    from lakemark.state import PendingSchema

    assert store.get_source_schema("j", "src") is None
    r1 = begin(store)
    fields = [{"name": "code", "type": "long"}]
    store.commit_run(r1.run_id, {"src": {"high": 1}}, update_bookmark=True,
                     schemas={"src": PendingSchema(fields, [{"column": "code", "change": "added",
                                                             "type": "long"}])})
    assert store.get_source_schema("j", "src").fields == fields
    r2 = begin(store)  # a failed run changes nothing
    store.fail_run(r2.run_id, "boom", update_bookmark=True)
    assert store.get_source_schema("j", "src").version == 1
    r3 = begin(store)
    wider = fields + [{"name": "extra", "type": "string"}]
    store.commit_run(r3.run_id, {}, update_bookmark=True, schemas={"src": PendingSchema(
        wider, [{"column": "extra", "change": "added", "type": "string"}], "evolved")})
    current = store.get_source_schema("j", "src")
    assert (current.version, current.fields, current.run_id) == (2, wider, r3.run_id)
    history = store.source_schema_history("j")
    assert [(h.version, h.run_id, h.reason) for h in history] == [
        (1, r1.run_id, "inferred"), (2, r3.run_id, "evolved")]
    assert store.reset_source_schema("j") == ["src"]
    assert store.get_source_schema("j", "src") is None
    assert store.source_schema_history("j", "src")[-1].reason == "reset"
    with pytest.raises(ConfigError, match="no tracked schema"):
        store.reset_source_schema("j", "src")


def test_a_schema_is_not_committed_by_a_run_that_keeps_the_bookmark(store) -> None:  # type: ignore[no-untyped-def]
    from lakemark.state import PendingSchema

    r = begin(store, option="pause")
    store.commit_run(r.run_id, {}, update_bookmark=False,
                     schemas={"src": PendingSchema([{"name": "a", "type": "long"}], [])})
    assert store.get_source_schema("j", "src") is None


def test_schema_reset_is_refused_while_a_run_holds_the_lease(store) -> None:  # type: ignore[no-untyped-def]
    from lakemark.state import PendingSchema

    r = begin(store)
    store.commit_run(r.run_id, {}, update_bookmark=True,
                     schemas={"src": PendingSchema([{"name": "a", "type": "long"}], [])})
    begin(store)
    with pytest.raises(LeaseError):
        store.reset_source_schema("j")
    assert store.get_source_schema("j", "src") is not None


def test_entries_marked_after_the_commit(store) -> None:  # type: ignore[no-untyped-def]
    """The clean-up's store side: open entries by ctx prefix (of runs that succeeded, oldest
    first, with their files), a mark recorded only on a run that succeeded."""
    files = [FileEntry(1, "/s/a", 3), FileEntry(2, "/s/b", 4)]
    first = begin(store)
    store.record_plan(first.run_id, "clean:src", {"kind": "clean", "status": "pending"}, files)
    store.record_plan(first.run_id, "src", {"kind": "files"}, files)
    with pytest.raises(StateError, match="only a run that succeeded"):
        store.record_after_commit(first.run_id, "clean:src", {"status": "done"})
    store.commit_run(first.run_id, {}, update_bookmark=True)
    failed = begin(store)
    store.record_plan(failed.run_id, "clean:src", {"kind": "clean", "status": "pending"}, [])
    store.fail_run(failed.run_id, "boom", update_bookmark=True)
    found = store.open_entries("j", "clean:")
    assert [(r.run_id, r.status, i.ctx) for r, i in found] == [
        (first.run_id, "SUCCEEDED", "clean:src")]  # never the entry of the failed run
    assert [f.path for f in found[0][1].files] == ["/s/a", "/s/b"]
    with pytest.raises(StateError, match="recorded nothing"):
        store.record_after_commit(first.run_id, "clean:other", {"status": "done"})
    store.record_after_commit(first.run_id, "clean:src", {"kind": "clean", "status": "done"})
    assert store.open_entries("j", "clean:") == []
    (inputs,) = [i for i in store.run_inputs(first.run_id) if i.ctx == "clean:src"]
    assert inputs.plan["status"] == "done" and len(inputs.files) == 2


def test_earlier_takes_are_the_last_successful_take_by_path(store) -> None:  # type: ignore[no-untyped-def]
    """The lookup behind the policy for modified files (state/_takes.py): per path, the last
    take by a SUCCEEDED bookmark-moving run of the job's ctx, at or before a run number."""
    r1 = begin(store)
    store.record_plan(r1.run_id, "src", {}, [FileEntry(1, "/d/a", 10), FileEntry(1, "/d/b", 5)])
    store.commit_run(r1.run_id, {"src": {}}, update_bookmark=True)
    r2 = begin(store)
    store.record_plan(r2.run_id, "src", {}, [FileEntry(7, "/d/a", 30)])
    store.record_plan(r2.run_id, "other", {}, [FileEntry(8, "/d/b", 99)])
    store.commit_run(r2.run_id, {"src": {}}, update_bookmark=True)
    failed = begin(store)  # a failed attempt's files were never taken
    store.record_plan(failed.run_id, "src", {}, [FileEntry(9, "/d/b", 50)])
    store.fail_run(failed.run_id, "boom", update_bookmark=True)
    paused = begin(store, option="pause")  # a run that does not move the bookmark neither
    store.record_plan(paused.run_id, "src", {}, [FileEntry(9, "/d/a", 70)])
    store.commit_run(paused.run_id, {}, update_bookmark=False)

    found = store.earlier_takes("j", "src", ["/d/a", "/d/b", "/d/new", "/d/a"], 10)
    assert {p: (t.mtime, t.size, t.run_id, t.run) for p, t in found.items()} == {
        "/d/a": (7, 30, r2.run_id, 2), "/d/b": (1, 5, r1.run_id, 1)}
    # As of run 1 (after a rewind to it): run 2's take does not count.
    assert store.earlier_takes("j", "src", ["/d/a"], 1)["/d/a"].run_id == r1.run_id
    assert store.earlier_takes("other-job", "src", ["/d/a"], 10) == {}
    many = [f"/d/{i}" for i in range(1200)]  # more paths than one query takes
    assert store.earlier_takes("j", "src", [*many, "/d/b"], 10)["/d/b"].size == 5
