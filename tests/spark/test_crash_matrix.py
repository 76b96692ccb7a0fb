"""Crash tests: `lakemark ingest files` in real subprocesses that SIGKILL themselves at named
points of the run (``LAKEMARK_FAULT``), then reruns without a manual step until one succeeds.

After every sequence the Delta target holds each input row exactly once and the bookmark's
state matches what the target holds. One chained sequence kills after the sink commit, then during
the job commit, then mid-write, with new files arriving between the attempts; the matrix kills at
each named point in turn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pgtest import DATABASE as PG_DATABASE
from pgtest import HOST as PG_HOST
from pgtest import PORT as PG_PORT
from pgtest import need_postgres, state_url

from lakemark.sinks._fault import FAULT_ENV, FAULT_POINTS
from lakemark.state import open_store

pytestmark = pytest.mark.spark


class Sequence:
    """A source folder, a Delta target and a state file; runs of ingest files as processes."""

    def __init__(self, tmp: Path, *, state: str | None = None, s3: Any = None) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = state or f"sqlite:///{tmp / 'state.db'}"
        self.next_id = 0
        self.files = 0
        self.names: list[str] = []
        self.s3 = s3  # a moto_server: the source is then s3://crash/in
        self.source = str(self.src)
        if s3 is not None:
            s3.client("s3").create_bucket(Bucket="crash")
            self.source = "s3://crash/in"

    def arrive(self, n: int) -> None:
        path = self.src / f"f{self.files:04d}.json"
        path.write_text("".join(json.dumps({"id": i}) + "\n"
                                for i in range(self.next_id, self.next_id + n)))
        if self.s3 is not None:
            self.s3.client("s3").put_object(Bucket="crash", Key=f"in/{path.name}",
                                            Body=path.read_bytes())
        self.names.append(path.name)
        self.next_id += n
        self.files += 1

    def run(self, fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
        if self.s3 is not None:
            env.update(self.s3.env)
        if fault:
            env[FAULT_ENV] = fault
        cmd = [sys.executable, "-m", "lakemark", "ingest", "files", self.source,
               str(self.target), "--job", "crash", "--state", self.state, "--json",
               "--master", "local[1]"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)

    def killed(self, fault: str) -> None:
        out = self.run(fault)
        assert out.returncode == -9, (fault, out.returncode, out.stderr[-2000:])

    def succeed(self) -> dict[str, Any]:
        out = self.run()
        assert out.returncode == 0, out.stderr[-2000:]
        return dict(json.loads(out.stdout))

    def check_exactly_once(self) -> None:
        """Every input row once in the table; the bookmark covers exactly the files whose rows
        the table holds."""
        ids = sorted(DeltaTable(str(self.target)).to_pyarrow_table().column("id").to_pylist())
        assert ids == list(range(self.next_id)), "lost or duplicated rows"
        store = open_store(self.state)
        try:
            bookmark = store.get_bookmark("crash")
            taken = {e.path for run in store.list_runs("crash") if run.status == "SUCCEEDED"
                     for i in store.run_inputs(run.run_id) if i.ctx == "source" for e in i.files}
        finally:
            store.close()
        assert bookmark.state["source"]["source"] == self.source
        assert {Path(p).name for p in taken} == set(self.names)


def test_chained_kills_then_reruns_write_every_row_once(tmp_path: Path) -> None:
    seq = Sequence(tmp_path)
    seq.arrive(3)
    seq.killed("after-sink-commit")  # the rows are in the table, the run is not committed
    seq.arrive(2)  # arrives before the retry: the retry must replay, not widen
    seq.killed("during-job-commit")  # the retry skipped its write, died inside the commit
    seq.arrive(4)
    first = seq.succeed()
    assert (first["run"], first["attempt"], first["skipped"]) == (1, 2, True)
    assert first["files"] == 1  # exactly the killed attempt's input
    seq.killed("mid-write")  # run 2 wrote files but never committed them
    last = seq.succeed()
    assert (last["run"], last["attempt"], last["skipped"]) == (2, 1, False)
    assert last["files"] == 2
    seq.check_exactly_once()


@pytest.mark.parametrize("fault", FAULT_POINTS)
def test_kill_at_each_point_then_rerun(tmp_path: Path, fault: str) -> None:
    seq = Sequence(tmp_path)
    seq.arrive(3)
    seq.killed(fault)
    seq.arrive(2)
    seq.succeed()
    seq.succeed()
    seq.check_exactly_once()


@pytest.mark.services
def test_s3_source_killed_after_the_sink_commit_then_rerun(tmp_path: Path, s3: Any) -> None:
    seq = Sequence(tmp_path, s3=s3)
    seq.arrive(3)
    seq.killed("after-sink-commit")
    seq.arrive(2)  # waits for the next run: the retry replays the killed attempt's object
    assert seq.succeed()["skipped"] is True
    assert seq.succeed()["files"] == 1
    seq.check_exactly_once()


@pytest.mark.services
def test_postgres_state_killed_during_the_commit_keeps_the_old_version(tmp_path: Path) -> None:
    import psycopg

    user = need_postgres()
    schema = f"lm_crash_{uuid.uuid4().hex[:10]}"
    seq = Sequence(tmp_path, state=state_url(user) + f"?schema={schema}")
    try:
        seq.arrive(3)
        seq.killed("during-job-commit")  # inside the store's commit transaction
        store = open_store(seq.state)
        try:
            bookmark = store.get_bookmark("crash")
            assert (bookmark.run, bookmark.state) == (0, {})  # the old version, whole
        finally:
            store.close()
        assert seq.succeed()["skipped"] is True  # the Delta commit had landed: replayed
        seq.arrive(2)
        seq.succeed()
        seq.check_exactly_once()
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DATABASE, user=user,
                             autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
