"""Crash tests: `lakemark ingest files` in real subprocesses that SIGKILL themselves at named
points of the run (``LAKEMARK_FAULT``), then reruns without a manual step until one succeeds.

After every sequence the target holds each input row exactly once and the bookmark's state
matches what the target holds (the checks are ``tests/crash_support.py``, shared with the
randomised torture run ``bench/torture.py``). One chained sequence into a Delta table kills after
the sink commit, during the job commit, mid-write and during the job commit again, with new files
arriving between the attempts; the matrix kills at each named point in turn; a Parquet folder
target is killed at the points where its staging and commit records matter; an S3 source on
moto_server and a PostgreSQL state store are killed once each; an Iceberg table in a SQLite SQL
catalog is killed at each named point (read back with pyiceberg alone). A kill never leaves the
bookmark anything but its previous version, whole.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from crash_support import KILLED, check_exactly_once, run_ingest, target_ids
from pgtest import DATABASE as PG_DATABASE
from pgtest import HOST as PG_HOST
from pgtest import PORT as PG_PORT
from pgtest import need_postgres, state_url

from lakemark.sinks import committed_files
from lakemark._fault import FAULT_POINTS
from lakemark.state import open_store

pytestmark = pytest.mark.spark

JOB = "crash"


class Sequence:
    """A source folder (or S3 prefix), a target and a state store; runs of ingest files as
    processes."""

    def __init__(self, tmp: Path, *, state: str | None = None, s3: Any = None,
                 target_format: str = "delta") -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target: Path | str = tmp / "target"
        self.target_format = target_format
        self.extra: list[str] = []
        self.catalog: str | None = None
        if target_format == "iceberg":  # a table of a SQLite SQL catalog, new on the first run
            (tmp / "iceberg").mkdir()
            self.catalog = f"sqlite:///{tmp / 'iceberg' / 'catalog.db'}"
            self.target = "db.events"
            self.extra = ["--iceberg-catalog", self.catalog]
        self.state = state or f"sqlite:///{tmp / 'state.db'}"
        self.next_id = 0
        self.files: dict[str, list[int]] = {}  # file name → its row ids
        self.s3 = s3  # a moto_server: the source is then s3://crash/in
        self.source = str(self.src)
        if s3 is not None:
            s3.client("s3").create_bucket(Bucket="crash")
            self.source = "s3://crash/in"

    def arrive(self, n: int) -> None:
        path = self.src / f"f{len(self.files):04d}.json"
        ids = list(range(self.next_id, self.next_id + n))
        path.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
        if self.s3 is not None:
            self.s3.client("s3").put_object(Bucket="crash", Key=f"in/{path.name}",
                                            Body=path.read_bytes())
        self.files[path.name] = ids
        self.next_id += n

    def run(self, fault: str | None = None) -> subprocess.CompletedProcess[str]:
        return run_ingest(self.source, str(self.target), job=JOB, state=self.state, fault=fault,
                          target_format=self.target_format,
                          env=self.s3.env if self.s3 is not None else None, timeout=600,
                          extra=self.extra)

    def ids(self) -> list[int]:
        """The row ids a reader of the target sees now (pyiceberg for an Iceberg table)."""
        return sorted(target_ids(self.target, self.target_format, self.catalog))

    def bookmark(self) -> dict[str, Any]:
        """The job's current bookmark version, whole."""
        store = open_store(self.state)
        try:
            return dict(store.get_bookmark(JOB).to_json())
        finally:
            store.close()

    def killed(self, fault: str) -> None:
        """A run killed at ``fault``. Its bookmark state is still the one before, whole: the
        same run number and the same state of every element (the run that takes the lease over
        next records the failure, which bumps only the version and attempt)."""
        before = self.bookmark()
        out = self.run(fault)
        assert out.returncode == KILLED, (fault, out.returncode, out.stderr[-2000:])
        after = self.bookmark()
        assert (after["run"], after["state"]) == (before["run"], before["state"]), (
            f"killed at {fault}, the bookmark moved")

    def succeed(self) -> dict[str, Any]:
        out = self.run()
        assert out.returncode == 0, out.stderr[-2000:]
        return dict(json.loads(out.stdout))

    def check_exactly_once(self) -> None:
        """Every input row once in the target; the bookmark covers exactly the files whose rows
        the target holds (and, for a folder, only committed files are visible)."""
        found = check_exactly_once(self.target, self.target_format, state=self.state, job=JOB,
                                   files=self.files, all_taken=True,
                                   iceberg_catalog=self.catalog)
        assert found.ok, found.problems
        assert found.rows == self.next_id
        assert self.bookmark()["state"]["source"]["source"] == self.source


@pytest.mark.long
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
    committed = seq.bookmark()  # run 1's version
    seq.arrive(1)
    seq.killed("during-job-commit")  # run 2 replanned (nothing of it committed), wrote, died
    bookmark = seq.bookmark()  # inside the commit: run 1's state, whole, not a mix
    assert (bookmark["run"], bookmark["state"]) == (1, committed["state"])
    last = seq.succeed()
    assert (last["run"], last["skipped"]) == (2, True)  # replays the dead attempt's input
    assert last["files"] == 3
    seq.check_exactly_once()


#: The points the default run kills at; the rest run with ``-m long``.
_CORE_POINTS = ("mid-write", "after-sink-commit")


@pytest.mark.parametrize("fault", [
    p if p in _CORE_POINTS else pytest.param(p, marks=pytest.mark.long) for p in FAULT_POINTS])
def test_kill_at_each_point_then_rerun(tmp_path: Path, fault: str) -> None:
    seq = Sequence(tmp_path)
    seq.arrive(3)
    seq.killed(fault)
    seq.arrive(2)
    seq.succeed()
    seq.succeed()
    seq.check_exactly_once()


@pytest.mark.long
def test_parquet_folder_target_killed_mid_write_after_publish_and_in_the_commit(
        tmp_path: Path) -> None:
    seq = Sequence(tmp_path, target_format="parquet")
    seq.arrive(3)
    seq.killed("mid-write")  # the run's files are in staging only: a reader sees nothing
    assert target_ids(seq.target, "parquet") == []
    assert committed_files(str(seq.target), seq.state) == []
    # staged beside the target, not in it (issue 32): the killed write left nothing there
    assert [p for p in Path(seq.target).rglob("*") if p.is_file()] == []
    assert list(Path(f"{seq.target}__lakemark_staging").rglob("*.parquet"))
    seq.arrive(2)
    seq.killed("after-sink-commit")  # the retry replanned, published and recorded its commit
    assert sorted(target_ids(seq.target, "parquet")) == list(range(5))
    seq.arrive(4)  # waits: the next attempt must replay the published input, not widen it
    seq.killed("during-job-commit")  # that attempt skipped its write and died in the commit
    first = seq.succeed()
    assert (first["run"], first["skipped"], first["files"]) == (1, True, 2)
    last = seq.succeed()
    assert (last["run"], last["skipped"], last["files"]) == (2, False, 1)
    seq.check_exactly_once()
    # The output folder holds only data files: commit records live in the state store and
    # staging beside it is gone (issue 32; Spark's _SUCCESS marker is not published).
    target = Path(seq.target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == sorted(
        Path(f).relative_to(target).as_posix() for f in committed_files(str(target), seq.state))
    assert all(p.suffix == ".parquet" for p in target.rglob("*"))
    # The check catches what it must: a data file no commit record names (here a copy).
    first_file = Path(committed_files(str(seq.target), seq.state)[0])
    shutil.copy(first_file, first_file.with_name("part-stray.parquet"))
    found = check_exactly_once(seq.target, "parquet", state=seq.state, job=JOB,
                               files=seq.files, all_taken=True)
    assert found.duplicated > 0 and not found.ok
    assert any("named by no commit record" in p for p in found.problems), found.problems


@pytest.mark.services
@pytest.mark.long
def test_s3_source_killed_after_the_sink_commit_then_rerun(tmp_path: Path, s3: Any) -> None:
    seq = Sequence(tmp_path, s3=s3)
    seq.arrive(3)
    seq.killed("after-sink-commit")
    seq.arrive(2)  # waits for the next run: the retry replays the killed attempt's object
    assert seq.succeed()["skipped"] is True
    assert seq.succeed()["files"] == 1
    seq.check_exactly_once()


@pytest.mark.services
@pytest.mark.long
def test_postgres_state_killed_during_the_commit_keeps_the_old_version(tmp_path: Path) -> None:
    import psycopg

    user = need_postgres()
    schema = f"lm_crash_{uuid.uuid4().hex[:10]}"
    seq = Sequence(tmp_path, state=state_url(user) + f"?schema={schema}")
    try:
        seq.arrive(3)
        assert seq.succeed()["run"] == 1
        committed = seq.bookmark()
        seq.arrive(2)
        seq.killed("during-job-commit")  # run 2, inside the store's commit transaction
        bookmark = seq.bookmark()  # run 1's version, whole: not a mix of runs 1 and 2
        assert (bookmark["run"], bookmark["state"]) == (1, committed["state"])
        assert bookmark["state"]["source"] == committed["state"]["source"] != {}
        retry = seq.succeed()  # the Delta commit had landed: replayed, skipped
        assert (retry["run"], retry["skipped"], retry["files"]) == (2, True, 1)
        seq.check_exactly_once()
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DATABASE, user=user,
                             autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


#: The points at which an Iceberg write's snapshot (rows and token) is already committed.
_ICEBERG_COMMITTED = ("after-sink-commit", "before-job-commit", "during-job-commit")


# All long: a whole-process kill sequence costs ~40 s, and the default suite already holds the
# Iceberg sink's retry-after-commit (tests/spark/test_iceberg_sink.py) and the Delta matrix.
@pytest.mark.long
@pytest.mark.parametrize("fault", FAULT_POINTS)
def test_iceberg_target_killed_at_each_point_then_rerun(tmp_path: Path, fault: str) -> None:
    """The first write to a new table of a SQLite SQL catalog (created and given its snapshot
    in one catalog commit) killed at ``fault``; the reruns leave every row once, as pyiceberg
    reads the table."""
    seq = Sequence(tmp_path, target_format="iceberg")
    seq.arrive(3)
    seq.killed(fault)
    committed = fault in _ICEBERG_COMMITTED
    assert seq.ids() == ([0, 1, 2] if committed else []), fault  # data files alone show nothing
    seq.arrive(2)  # waits if the killed attempt's snapshot landed: the retry replays its input
    retry = seq.succeed()
    assert (retry["run"], retry["skipped"]) == (1, committed)
    if committed:
        assert retry["files"] == 1
    seq.succeed()
    seq.check_exactly_once()


@pytest.mark.long
def test_iceberg_existing_table_chained_kills_then_reruns(tmp_path: Path) -> None:
    """Appends to an existing Iceberg table: killed mid-write, after the sink commit and inside
    the job commit, with new files arriving between the attempts."""
    seq = Sequence(tmp_path, target_format="iceberg")
    seq.arrive(3)
    assert seq.succeed()["run"] == 1
    seq.arrive(2)
    seq.killed("mid-write")  # run 2's files are in the warehouse, no snapshot lists them
    assert seq.ids() == [0, 1, 2]
    seq.arrive(1)
    seq.killed("after-sink-commit")  # the retry replanned (both files) and committed
    assert seq.ids() == list(range(6))
    seq.arrive(4)
    seq.killed("during-job-commit")  # the next attempt skipped its write, died in the commit
    first = seq.succeed()
    assert (first["run"], first["skipped"], first["files"]) == (2, True, 2)
    last = seq.succeed()
    assert (last["run"], last["skipped"], last["files"]) == (3, False, 1)
    seq.check_exactly_once()
    # The check catches what it must: a data file committed twice (here by pyiceberg).
    from pyiceberg.catalog.sql import SqlCatalog

    assert seq.catalog is not None
    catalog = SqlCatalog("lakemark", uri=seq.catalog,
                         warehouse=(tmp_path / "iceberg" / "warehouse").as_uri())
    table = catalog.load_table("db.events")
    first_file = next(iter(table.scan().plan_files())).file.file_path
    table.add_files([first_file], check_duplicate_files=False)
    found = check_exactly_once(seq.target, "iceberg", state=seq.state, job=JOB,
                               files=seq.files, all_taken=True, iceberg_catalog=seq.catalog)
    assert found.duplicated > 0 and not found.ok
