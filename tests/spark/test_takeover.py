"""Lease takeovers while the first run is alive (issue 17): run A (a ``lakemark ingest files``
process) is held at a barrier (``LAKEMARK_FAULT_WAIT``) while run B, in this process, takes its
lease over with ``force`` on the same run number. New files arrive between A's plan and B's.

Whatever the interleaving, the target must end up holding every row of the files the bookmark
covers exactly once (``tests/crash_support.py``): the stale holder A is refused every state
change, and B never commits a bookmark over input its sink did not write.

The interleavings, each driven by barriers only:

* ``mid-write``: A has written its data files but not committed them; B plans (A's sink has not
  committed, so B replans and takes the newer files too), A's sink commit lands, then B writes:
  B's write is skipped by the run's token, and B must fail instead of committing a bookmark
  over files it never wrote (the silent-loss race). A folder sink whose commit records are in
  the state store fences A's publish itself (the record is marked committed in a transaction
  that checks A's lease): A publishes nothing, and B writes both files and commits;
* ``after-sink-commit``: A's sink committed; B replays A's exact input, its write is skipped,
  it commits; A's next state change is refused;
* ``before-job-commit``: A wrote everything and is about to commit the bookmark; B takes over
  and commits A's input; A's commit is refused;
* ``during-job-commit``: A is inside its state-commit transaction; the takeover waits for it,
  finds A ended and is an ordinary next run.

Delta and a Parquet folder target, SQLite and PostgreSQL stores; the store-level fencing
(every state change a compare-and-swap on the lease generation) is in
tests/unit/test_state_store.py, the heartbeat in tests/unit/test_job_lease.py.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from crash_support import check_exactly_once, start_held
from pgtest import need_postgres, state_url

from lakemark import Job
from lakemark.errors import StateError
from lakemark.state import open_store

pytestmark = pytest.mark.spark

JOB = "takeover"


class Race:
    """A source folder, a target and a state store; run A as a held process, B in-process."""

    def __init__(self, tmp: Path, spark, *, target_format: str = "delta",  # type: ignore[no-untyped-def]
                 state: str | None = None) -> None:
        self.tmp = tmp
        self.spark = spark
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "target"
        self.target_format = target_format
        self.state = state or f"sqlite:///{tmp / 'state.db'}"
        self.files: dict[str, list[int]] = {}
        self.next_id = 0

    def arrive(self, n: int) -> None:
        path = self.src / f"f{len(self.files):04d}.json"
        ids = list(range(self.next_id, self.next_id + n))
        path.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
        self.files[path.name] = ids
        self.next_id += n

    def start_held(self, point: str) -> tuple[subprocess.Popen[str], Path]:
        """Run A: ``ingest files`` in a process that stops at ``point`` until its gate opens;
        returns once it stands there."""
        gate = self.tmp / f"gate-{point}-{len(self.files)}"
        proc, reached = start_held(str(self.src), str(self.target), job=JOB, state=self.state,
                                   point=point, gate=gate, target_format=self.target_format)
        if not reached:
            _, err = proc.communicate()
            raise AssertionError(f"run A ended before reaching {point}: {err[-3000:]}")
        return proc, gate

    @staticmethod
    def release(proc: subprocess.Popen[str], gate: Path) -> tuple[int, str]:
        gate.touch()
        _, err = proc.communicate(timeout=600)
        return proc.returncode, err

    def job(self, *, force: bool = False) -> Job:
        return Job(JOB, state=self.state, spark=self.spark, force=force)

    def plan(self, job: Job):  # type: ignore[no-untyped-def]
        """What ``ingest files`` reads: the source folder as JSON lines, ctx ``source``."""
        return job.read_files(str(self.src), format="json", ctx="source")

    def write(self, job: Job, df) -> None:  # type: ignore[no-untyped-def]
        if job.plans["source"].files:
            job.write(df, str(self.target), format=self.target_format, ctx="target")

    def run_to_end(self) -> None:
        """One more run, start to commit, in this process."""
        with self.job() as job:
            self.write(job, self.plan(job))

    def check(self) -> None:
        found = check_exactly_once(self.target, self.target_format, state=self.state, job=JOB,
                                   files=self.files, all_taken=True)
        assert found.ok, found.problems
        assert found.rows == self.next_id

    def runs(self) -> list:  # type: ignore[type-arg]
        store = open_store(self.state)
        try:
            return store.list_runs(JOB)
        finally:
            store.close()


@pytest.fixture
def pg_state() -> Iterator[str]:
    import uuid

    import psycopg

    from pgtest import DATABASE, HOST, PORT

    user = need_postgres()
    schema = f"lm_takeover_{uuid.uuid4().hex[:10]}"
    yield state_url(user) + f"?schema={schema}"
    with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user,
                         autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _takeover_mid_write(race: Race) -> None:
    race.arrive(3)
    proc, gate = race.start_held("mid-write")  # A planned f0000 and staged its data files
    race.arrive(2)  # f0001 arrives after A's plan
    with pytest.raises(StateError, match="other input"), race.job(force=True) as b:
        # B takes A's lease over: same run number, same token.
        df = race.plan(b)
        assert len(b.plans["source"].files) == 2  # A's sink has not committed: B replans
        code, err = race.release(proc, gate)  # A's sink commit lands, then A is refused
        assert code == 1, err[-3000:]
        assert "taken over" in err, err[-3000:]
        race.write(b, df)  # skipped by the run's token, which A's commit recorded
        # Reaching the end of the block would commit a bookmark over files never written.
    runs = race.runs()
    assert [r.status for r in runs] == ["FAILED", "FAILED"]
    race.run_to_end()  # replays A's input exactly (its write is skipped), commits it
    race.run_to_end()  # takes f0001
    race.check()


def test_takeover_mid_write_delta_never_loses_rows(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    _takeover_mid_write(Race(tmp_path, spark))


def test_takeover_mid_write_parquet_folder_postgres(tmp_path: Path, spark,  # type: ignore[no-untyped-def]
                                                    pg_state: str) -> None:
    race = Race(tmp_path, spark, target_format="parquet", state=pg_state)
    race.arrive(3)
    proc, gate = race.start_held("mid-write")  # A planned f0000 and staged its data files
    race.arrive(2)  # f0001 arrives after A's plan
    with race.job(force=True) as b:
        df = race.plan(b)
        assert len(b.plans["source"].files) == 2  # A's sink has not committed: B replans
        code, err = race.release(proc, gate)  # A's publish is refused: its lease is gone
        assert code == 1, err[-3000:]
        assert "taken over" in err, err[-3000:]
        race.write(b, df)  # A published nothing, so B writes both files itself
    assert [r.status for r in race.runs()] == ["FAILED", "SUCCEEDED"]
    race.run_to_end()  # nothing new
    race.check()


@pytest.mark.parametrize("point,target_format,store", [
    ("after-sink-commit", "delta", "postgres"),
    ("before-job-commit", "parquet", "sqlite"),
])
def test_takeover_after_the_sink_committed_replays_and_fences_the_stale_run(
        tmp_path: Path, spark, request: pytest.FixtureRequest,  # type: ignore[no-untyped-def]
        point: str, target_format: str, store: str) -> None:
    state = request.getfixturevalue("pg_state") if store == "postgres" else None
    race = Race(tmp_path, spark, target_format=target_format, state=state)
    race.arrive(3)
    proc, gate = race.start_held(point)  # A's sink commit has landed
    race.arrive(2)
    with race.job(force=True) as b:
        race.write(b, race.plan(b))
        # A's sink committed: B replays A's exact input and its write is skipped.
        assert len(b.plans["source"].files) == 1
        assert b.results[-1].skipped
    code, err = race.release(proc, gate)
    assert code == 1, err[-3000:]
    flat = " ".join(err.split())  # the CLI wraps its message to the terminal width
    assert f"was taken over by run {b.run_id} at generation 2" in flat, err[-3000:]
    assert [r.status for r in race.runs()] == ["FAILED", "SUCCEEDED"]
    race.run_to_end()
    race.check()


def test_a_takeover_cannot_split_the_state_commit(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """A held inside its state-commit transaction: the forced takeover waits for the
    transaction, finds A ended, and is an ordinary next run (run 2, the newer file)."""
    import threading

    race = Race(tmp_path, spark, target_format="parquet")
    race.arrive(3)
    proc, gate = race.start_held("during-job-commit")
    race.arrive(2)
    b = race.job(force=True)
    starter = threading.Thread(target=b.start)
    starter.start()  # blocks on the store's write lock, held by A's transaction
    code, err = race.release(proc, gate)
    starter.join()
    assert code == 0, err[-3000:]
    assert (b.run.run, b.run.generation) == (2, 2)
    race.write(b, race.plan(b))
    assert [e.path.rsplit("/", 1)[-1] for e in b.plans["source"].files] == ["f0001.json"]
    b.commit()
    assert [(r.status, r.error) for r in race.runs()] == [("SUCCEEDED", None)] * 2
    race.check()


def test_takeover_at_each_point_before_the_sink_commit_while_the_holder_waits(
        tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """The crash matrix with takeovers instead of kills: A is held at each point before its
    sink commit, B takes over and runs to its end (taking the newer file too), then A goes on
    and is refused at its next state change; at ``mid-write`` its Delta commit, which comes
    first, is skipped by the token B recorded. Every row once after each step."""
    race = Race(tmp_path, spark)
    for point in ("after-plan", "after-plan-recorded", "mid-read", "mid-write"):
        race.arrive(2)
        proc, gate = race.start_held(point)
        race.arrive(1)
        with race.job(force=True) as b:
            race.write(b, race.plan(b))
            assert len(b.plans["source"].files) == 1 + 1  # A's file and the newer one
        code, err = race.release(proc, gate)
        assert code == 1, (point, err[-3000:])
        # One error line, and it says what happened: the lease was taken over (by whom), and
        # nothing the stale run did was committed — never "was the state database replaced?".
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, (point, err[-3000:])
        flat = " ".join(err.split())
        assert f"was taken over by run {b.run_id}" in flat, (point, err[-3000:])
        assert "nothing it did was committed" in flat and "replaced" not in flat, (point, flat)
        race.check()
    assert [r.status for r in race.runs()] == ["FAILED", "SUCCEEDED"] * 4
