"""A job's lease while it runs (issue 17): the background heartbeat, fencing of a run whose
lease was taken over, and a failed commit that must not lock the process out of its job.

No Spark: a job that starts and commits needs none. The state stores run on a fake clock, so
"the lease would have expired" is a clock step, not a wait; the heartbeat thread is waited for
by counting its beats (a condition, never a sleep for luck).
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import need_postgres, state_url

from lakemark import Job
from lakemark.errors import LeaseError, LeaseLost
from lakemark.planning import FileEntry
from lakemark.state.sqlite import SQLiteStore

HOST = socket.gethostname()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Opens stores (each its own connection) on one location of each backend."""
    opened: list[Any] = []
    schema = f"lm_lease_{uuid.uuid4().hex[:10]}"

    def open_(clock: Clock) -> Any:
        if request.param == "postgres":
            from lakemark.state.postgres import PostgresStore

            store: Any = PostgresStore(state_url(need_postgres()) + f"?schema={schema}",
                                       clock=clock)
        else:
            store = SQLiteStore(tmp_path / "state.db", clock=clock)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        try:
            store.close()
        except Exception:  # noqa: BLE001 - closed by the job already
            pass
    if request.param == "postgres":
        import psycopg

        from pgtest import DATABASE, HOST as PGHOST, PORT

        with psycopg.connect(host=PGHOST, port=PORT, dbname=DATABASE, user=need_postgres(),
                             autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _wait_for(condition: Callable[[], bool]) -> None:
    """Poll until the heartbeat thread has done something (a condition, not a duration)."""
    while not condition():
        time.sleep(0.002)


def _beats_after(job: Job, n: int) -> None:
    hb = job._heartbeat  # noqa: SLF001
    assert hb is not None
    start = hb.beats
    _wait_for(lambda: hb.beats >= start + n or hb.lost is not None)
    assert hb.lost is None, hb.lost


def test_heartbeat_keeps_a_long_run_s_lease(open_store) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    job = Job("long", state=open_store(clock), lease_timeout_s=60, heartbeat_interval_s=0.01)
    other = open_store(clock)
    with job:
        for _ in range(3):  # three times the timeout in all: the beats keep the lease
            clock.now += 50
            _beats_after(job, 2)  # at least one whole beat after the clock moved
            with pytest.raises(LeaseError, match="already running"):
                other.begin_run("long", "enable", host="elsewhere", pid=1, lease_timeout_s=60)
    assert other.get_run(job.run_id).status == "SUCCEEDED"


def test_without_heartbeats_the_same_run_is_taken_over(open_store) -> None:  # type: ignore[no-untyped-def]
    """The control of the test above: with no heartbeat the lease expires and is taken."""
    clock = Clock()
    job = Job("long", state=open_store(clock), lease_timeout_s=60, heartbeat_interval_s=0)
    other = open_store(clock)
    job.start()
    clock.now += 61
    taker = other.begin_run("long", "enable", host="elsewhere", pid=1, lease_timeout_s=60)
    with pytest.raises(LeaseLost, match=f"taken over by run {taker.run_id} at generation 2"):
        job.commit()
    assert other.get_run(job.run_id).status == "FAILED"


def test_a_heartbeat_that_finds_the_lease_taken_over_stops_the_commit(open_store) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    job = Job("j", state=open_store(clock), lease_timeout_s=60, heartbeat_interval_s=0.01)
    other = open_store(clock)
    job.start()
    job.track_source("src", {"kind": "test"}, [FileEntry(1, "a", 1)], {"high": 1})
    taker = other.begin_run("j", "enable", host="elsewhere", pid=1, lease_timeout_s=60,
                            force=True)
    hb = job._heartbeat  # noqa: SLF001
    assert hb is not None
    _wait_for(lambda: hb.lost is not None)
    assert isinstance(hb.lost, LeaseLost)
    with pytest.raises(LeaseLost) as info:
        job.commit()
    assert f"taken over by run {taker.run_id} at generation 2" in str(info.value)
    assert hb._thread is not None and not hb._thread.is_alive()  # noqa: SLF001
    # Nothing of the stale run reached the bookmark; the taker commits as usual.
    assert dict(other.get_bookmark("j").state) == {}
    b = other.commit_run(taker.run_id, {"src": {"high": 2}}, update_bookmark=True)
    assert dict(b.state) == {"src": {"high": 2}}


def test_a_failed_commit_ends_the_run_and_releases_the_lease(open_store) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = open_store(clock)
    job = Job("j", state=store, lease_timeout_s=3600)
    job.start()
    # A state element the store cannot serialise: the commit raises inside its transaction.
    job.track_source("src", {"kind": "test"}, [], {"bad": object()})
    with pytest.raises(TypeError):
        job.commit()
    failed = store.get_run(job.run_id)
    assert failed.status == "FAILED" and (failed.error or "").startswith("commit failed: TypeError")
    assert job._heartbeat is None  # noqa: SLF001 - stopped
    # The same process runs the job again at once: no --force, no waiting for the lease.
    with Job("j", state=store, lease_timeout_s=3600) as again:
        assert (again.run.run, again.run.attempt) == (1, 1)


def test_a_lease_this_process_left_behind_is_taken_over_by_its_next_run(open_store) -> None:  # type: ignore[no-untyped-def]
    """If even recording the failed commit failed, the run stays RUNNING with this host and
    pid; the process's next run of the job takes it over (it holds no such run any more),
    while a run that a live job of this process holds is still refused."""
    import os

    clock = Clock()
    store = open_store(clock)
    left = store.begin_run("j", "enable", host=HOST, pid=os.getpid(), lease_timeout_s=3600)
    with pytest.raises(LeaseError):
        store.begin_run("j", "enable", host=HOST, pid=os.getpid(), lease_timeout_s=3600,
                        held={left.run_id})
    with Job("j", state=store) as job:
        assert job.run.attempt == 1
        with pytest.raises(LeaseError, match="already running"):
            Job("j", state=store).start()  # held by the live job above
    assert "no longer works on it" in (store.get_run(left.run_id).error or "")


def test_heartbeats_and_run_writes_share_one_connection_safely(open_store) -> None:  # type: ignore[no-untyped-def]
    """The heartbeat thread writes through the run's own store connection while the run
    records plans and reads: every statement is serialised, none is lost or fails."""
    clock = Clock()
    store = open_store(clock)
    job = Job("busy", state=store, heartbeat_interval_s=0.0005)
    with job:
        for i in range(150):
            job.track_source(f"s{i}", {"kind": "test", "i": i}, [FileEntry(i, f"f{i}", i)],
                             {"high": i})
            assert store.get_run(job.run_id).status == "RUNNING"
        _beats_after(job, 3)
    inputs = store.run_inputs(job.run_id)
    assert [i.plan["i"] for i in inputs] == sorted(range(150), key=lambda i: f"s{i}")
    assert store.get_bookmark("busy").state["s149"] == {"high": 149}


def test_an_abandoned_job_stops_renewing_its_lease(open_store) -> None:  # type: ignore[no-untyped-def]
    import gc

    clock = Clock()
    store = open_store(clock)
    job = Job("j", state=store, lease_timeout_s=60, heartbeat_interval_s=0.01)
    job.start()
    run_id = job.run_id
    hb = job._heartbeat  # noqa: SLF001
    assert hb is not None and hb._thread is not None  # noqa: SLF001
    del job
    gc.collect()
    hb._thread.join()  # noqa: SLF001 - ends by itself once the job is gone
    clock.now += 61
    taker = store.begin_run("j", "enable", host="elsewhere", pid=1, lease_timeout_s=60)
    assert "no heartbeat" in (store.get_run(run_id).error or "")
    assert taker.generation == 2
