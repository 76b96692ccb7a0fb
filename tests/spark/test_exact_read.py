"""A run reads each file as planned, and a file taken before is retaken, skipped or taken
from where the last take ended (issue 31, finding 5).

The story of the issue: a file appended to between planning and reading. The change is made
at the run's ``mid-read`` fault point (``lakemark._fault``: the frame of the planned files
exists, nothing is written), deterministically, in-process.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark import Job
from lakemark.cli import cli
from lakemark.errors import ChangedDuringRun

pytestmark = pytest.mark.spark


def lines(first: int, n: int) -> str:
    return "".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(first, first + n))


class Lake:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.runner = CliRunner()
        old = time.time() - 3600
        self.log = self.src / "log.json"
        self.log.write_text(lines(0, 20))
        os.utime(self.log, (old, old))

    def cli(self, *args: str, code: int = 0) -> Result:
        result = self.runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    def ingest(self, *extra: str) -> dict[str, Any]:
        out = self.cli("ingest", "files", str(self.src), str(self.target), "--job", "j",
                       "--state", self.state, "--json", *extra)
        return dict(json.loads(out.stdout))

    def append(self, first: int, n: int) -> None:
        with self.log.open("a") as handle:
            handle.write(lines(first, n))

    def ids(self) -> list[int]:
        return sorted(DeltaTable(str(self.target)).to_pyarrow_table().column("id").to_pylist())


@pytest.fixture
def lake(tmp_path: Path, spark: Any) -> Lake:
    return Lake(tmp_path)


def at_point(monkeypatch: pytest.MonkeyPatch, point: str, action: Callable[[], None],
             times: int = 1) -> list[int]:
    """Run ``action`` the first ``times`` times the run reaches fault point ``point``."""
    from lakemark.run import file_sources as _job_files

    reached = [0]
    original = _job_files.fault_point

    def hook(name: str) -> None:
        original(name)
        if name == point:
            reached[0] += 1
            if reached[0] <= times:
                action()

    monkeypatch.setattr(_job_files, "fault_point", hook)
    return reached


def test_a_file_appended_between_plan_and_read_is_left_out_then_taken_whole(
        lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's story: 20 rows planned, 15 appended while the run reads. The run leaves
    the file out (and says so), writes the other file; the next run takes the file whole:
    35 rows of it, none twice, none lost."""
    other = lake.src / "other.json"
    other.write_text(lines(100, 5))
    os.utime(other, (time.time() - 3600,) * 2)
    at_point(monkeypatch, "mid-read", lambda: lake.append(20, 15))
    r1 = lake.ingest()
    assert (r1["status"], r1["files"], r1["rows"]) == ("SUCCEEDED", 1, 5)
    [changed] = r1["changed_during_run"]
    assert changed["path"] == str(lake.log) and changed["planned"]["size"] < changed["seen"]["size"]
    assert lake.ids() == list(range(100, 105))

    shown = json.loads(lake.cli("runs", "show", r1["run_id"], "--state", lake.state,
                                "--json").stdout)
    source = shown["sources"]["source"]
    assert [f["path"] for f in source["files"]] == [str(other)]
    assert source["changed_during_run"][0]["path"] == str(lake.log)
    text = lake.cli("runs", "show", r1["run_id"], "--state", lake.state).output
    assert "changed during the run, left out (1)" in text and "the next run takes it whole" in text

    monkeypatch.undo()
    r2 = lake.ingest()
    assert (r2["files"], r2["rows"], r2["taken_before"]) == (1, 35, [])
    assert lake.ids() == [*range(35), *range(100, 105)]  # 0 duplicated, 0 lost


def test_job_api_fails_before_any_sink_commits_and_the_next_attempt_takes_it_whole(
        lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    at_point(monkeypatch, "mid-read", lambda: lake.append(20, 15))
    with pytest.raises(ChangedDuringRun) as caught:
        with Job("api", state=lake.state) as job:
            df = job.read_files(str(lake.src), format="json", ctx="src")
            job.write(df, str(lake.target), ctx="out")
    message = str(caught.value)
    assert "\n" not in message and str(lake.log) in message and "changed while" in message
    assert not (lake.target / "_delta_log").exists() or DeltaTable(
        str(lake.target)).to_pyarrow_table().num_rows == 0
    monkeypatch.undo()
    with Job("api", state=lake.state) as job:
        df = job.read_files(str(lake.src), format="json", ctx="src")
        job.write(df, str(lake.target), ctx="out")
        assert (job.run.run, job.run.attempt) == (1, 1)
    assert lake.ids() == list(range(35))


def test_a_file_that_keeps_changing_never_sticks_the_job(
        lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """Changed during attempt 1 (which fails) and again before attempt 2: attempt 2 defers it
    and commits the rest; the next run, with the file quiet, takes it whole."""
    other = lake.src / "other.json"
    other.write_text(lines(100, 5))
    os.utime(other, (time.time() - 3600,) * 2)
    counter = iter(range(20, 1000, 3))
    at_point(monkeypatch, "mid-read", lambda: lake.append(next(counter), 3), times=2)

    def attempt() -> None:
        with Job("busy", state=lake.state) as job:
            job.write(job.read_files(str(lake.src), format="json", ctx="src"),
                      str(lake.target), ctx="out")

    with pytest.raises(ChangedDuringRun):
        attempt()
    lake.append(next(counter), 3)  # still being written when attempt 2 plans
    attempt()  # the file is deferred: the run commits the other file
    assert lake.ids() == list(range(100, 105))
    monkeypatch.undo()
    attempt()
    ids = lake.ids()
    assert len(ids) == len(set(ids)) and set(range(100, 105)) < set(ids)
    assert [i for i in ids if i < 100] == list(range(max(i for i in ids if i < 100) + 1))


@pytest.mark.parametrize("policy,run2_rows,final,note", [
    ("retake", 35, [*range(20), *range(35)], "retaken whole"),
    ("skip", 0, list(range(20)), None),
    ("append", 15, list(range(35)), "appended tail from byte"),
])
def test_on_modified_policies(lake: Lake, policy: str, run2_rows: int, final: list[int],
                              note: str | None) -> None:
    r1 = lake.ingest("--on-modified", policy)
    assert r1["rows"] == 20
    size = lake.log.stat().st_size
    lake.append(20, 15)
    r2 = lake.ingest("--on-modified", policy)
    assert r2["rows"] == run2_rows
    assert lake.ids() == sorted(final)
    if policy == "skip":
        assert [s["path"] for s in r2["skipped_modified"]] == [str(lake.log)]
        assert r2["taken_before"] == []
    else:
        [before] = r2["taken_before"]
        assert (before["run"], before["run_id"]) == (1, r1["run_id"])
        assert before["offset"] == (size if policy == "append" else 0)
        text = lake.cli("runs", "show", r2["run_id"], "--state", lake.state).output
        assert f"taken before (run 1, {r1['run_id']})" in text and str(note) in text
    r3 = lake.ingest("--on-modified", policy)
    assert r3["files"] == 0 and lake.ids() == sorted(final)


def test_append_is_refused_for_a_columnar_format_by_name(lake: Lake) -> None:
    out = lake.cli("ingest", "files", str(lake.src), str(lake.target), "--job", "j",
                   "--state", lake.state, "--format", "parquet", "--on-modified", "append",
                   code=2)
    assert "--on-modified append" in out.output and "parquet" in out.output


def test_a_retry_after_the_sink_committed_replays_the_appended_tail(lake: Lake) -> None:
    """Run 2 takes the tail and dies after its Delta commit (SIGKILL at after-sink-commit):
    the retry replays the recorded input — the tail, not the whole file — and its write is
    skipped by the token. 35 rows, none twice."""
    import subprocess
    import sys

    from lakemark._fault import FAULT_ENV

    lake.ingest("--on-modified", "append")
    lake.append(20, 15)
    env = {**os.environ, FAULT_ENV: "after-sink-commit"}
    killed = subprocess.run(
        [sys.executable, "-m", "lakemark", "ingest", "files", str(lake.src), str(lake.target),
         "--job", "j", "--state", lake.state, "--on-modified", "append", "--master",
         "local[1]"], capture_output=True, text=True, timeout=600, env=env)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert lake.ids() == list(range(35))
    retry = lake.ingest("--on-modified", "append")
    assert (retry["attempt"], retry["skipped"]) == (1, True)
    shown = json.loads(lake.cli("runs", "show", retry["run_id"], "--state", lake.state,
                                "--json").stdout)
    [entry] = shown["sources"]["source"]["files"]
    assert (entry["path"], entry["offset"]) == (str(lake.log), len(lines(0, 20).encode()))
    assert shown["sinks"]["target"]["status"] == "skipped"
    assert lake.ids() == list(range(35))


def test_a_column_only_the_left_out_file_had_does_not_enter_the_tracked_schema(
        lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-read without the changed file decides the tracked schema afresh: a new column
    seen only in the left-out file waits for the run that takes that file."""
    lake.ingest()  # the schema: id, name
    other = lake.src / "other.json"
    other.write_text(lines(100, 5))
    with lake.log.open("a") as handle:
        handle.write(json.dumps({"id": 20, "name": "n20", "extra": "x"}) + "\n")
    at_point(monkeypatch, "mid-read", lambda: lake.append(21, 14))
    r2 = lake.ingest()
    assert (r2["files"], r2["rows"], len(r2["changed_during_run"])) == (1, 5, 1)

    def columns() -> set[str]:
        shown = json.loads(lake.cli("schema", "show", "j", "--state", lake.state,
                                    "--json").stdout)
        return {f["name"] for f in shown["schemas"]["source"]["fields"]}

    assert "extra" not in columns()
    monkeypatch.undo()
    r3 = lake.ingest()
    assert r3["rows"] == 35 and "extra" in columns()
    assert lake.ids() == sorted([*range(20), *range(35), *range(100, 105)])
