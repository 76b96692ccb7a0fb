"""Folder targets (parquet) are exactly-once too: a run stages its files under the hidden
``_lakemark_staging/`` and publishes them with a commit record under ``_lakemark_commits/``;
a retry of a run whose output was published skips instead of appending again, and a run killed
before publishing leaves nothing that readers see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads
import pytest

from lakemark import Job
from lakemark.sinks import committed_files
from lakemark._fault import FAULT_ENV, FAULT_WAIT_ENV
from lakemark.sinks._commit_log import FOLDER_COMMITS_ENV
from lakemark.sinks._location import is_hidden

pytestmark = pytest.mark.spark


class Folder:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "out"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.next_id = 0
        self.files = 0

    def arrive(self, n: int) -> None:
        (self.src / f"f{self.files:04d}.json").write_text(
            "".join(json.dumps({"id": i}) + "\n" for i in range(self.next_id, self.next_id + n)))
        self.next_id += n
        self.files += 1

    def run(self, fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_WAIT_ENV)}
        env[FOLDER_COMMITS_ENV] = "folder"  # these tests pin the old layout (opt-in)
        if fault:
            env[FAULT_ENV] = fault
        cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(self.src),
               str(self.target), "--job", "fold", "--state", self.state, "--json",
               "--target-format", "parquet", "--master", "local[1]"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)

    def killed(self, fault: str) -> None:
        out = self.run(fault)
        assert out.returncode == -9, (fault, out.returncode, out.stderr[-2000:])

    def succeed(self) -> dict[str, Any]:
        out = self.run()
        assert out.returncode == 0, out.stderr[-2000:]
        return dict(json.loads(out.stdout))

    def visible(self) -> list[str]:
        return sorted(p.relative_to(self.target).as_posix() for p in self.target.rglob("*")
                      if p.is_file() and not is_hidden(p.relative_to(self.target).as_posix()))

    def ids(self) -> list[int]:
        """What a pyarrow dataset reader sees (it skips ``_``/``.`` paths by default)."""
        if not self.target.exists():
            return []
        table = pads.dataset(str(self.target), format="parquet").to_table()
        return sorted(table.column("id").to_pylist()) if table.num_rows else []


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_retry_after_publish_does_not_duplicate_rows(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    f = Folder(tmp_path)
    f.arrive(3)
    f.killed("after-sink-commit")  # published and committed in the folder; the run is not
    assert f.ids() == [0, 1, 2]
    records = [p.name for p in (f.target / "_lakemark_commits").iterdir()]
    assert records == ["fold%2Ftarget-1.json"]
    f.arrive(2)  # arrives before the retry: the retry must replay, not widen
    retry = f.succeed()
    assert (retry["run"], retry["attempt"], retry["skipped"], retry["files"]) == (1, 1, True, 1)
    assert f.ids() == [0, 1, 2], "the retry appended the run again"
    nxt = f.succeed()
    assert (nxt["run"], nxt["skipped"], nxt["files"], nxt["rows"]) == (2, False, 1, 2)
    assert f.ids() == list(range(5))
    # Spark's reader sees the same rows: the hidden folders are not data.
    rows = spark.read.parquet(str(f.target)).collect()
    assert sorted(r["id"] for r in rows) == list(range(5))
    assert not (f.target / "_lakemark_staging").exists()


def test_kill_mid_write_leaves_no_visible_files(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    f = Folder(tmp_path)
    f.arrive(3)
    first = f.succeed()
    assert first["rows"] == 3
    before = f.visible()
    f.arrive(4)
    f.killed("mid-write")  # Spark wrote the run's files into staging; nothing published
    staged = [p for p in (f.target / "_lakemark_staging").rglob("*.parquet")]
    assert staged, "the kill came after Spark wrote the staged files"
    assert f.visible() == before
    assert f.ids() == [0, 1, 2]
    assert sorted(r["id"] for r in spark.read.parquet(str(f.target)).collect()) == [0, 1, 2]
    again = f.succeed()
    assert (again["run"], again["attempt"], again["skipped"], again["rows"]) == (2, 1, False, 4)
    assert f.ids() == list(range(7))
    assert not list((f.target / "_lakemark_commits").glob("*.pending"))
    assert not (f.target / "_lakemark_staging" ).exists() or not any(
        (f.target / "_lakemark_staging").rglob("*.parquet"))


def test_half_published_write_is_rolled_back_by_the_retry(tmp_path: Path, spark,  # type: ignore[no-untyped-def]
                                                           monkeypatch) -> None:
    """A write that died between its first rename and its commit record (its ``.pending``
    record lists the moved files): the next write of that token removes them first."""
    monkeypatch.setenv(FOLDER_COMMITS_ENV, "folder")  # the old layout (opt-in)
    target = tmp_path / "out"
    state = f"sqlite:///{tmp_path / 'state.db'}"
    df = spark.createDataFrame([(i,) for i in range(4)], "id long")
    commits = target / "_lakemark_commits"
    commits.mkdir(parents=True)
    stray = target / "part-00000-dead.parquet"
    df.limit(2).toPandas().to_parquet(stray)
    (commits / "j%2Fsink-1.pending").write_text(json.dumps(
        {"staging": "dead", "files": [stray.name]}))
    assert committed_files(str(target)) == []
    with Job("j", state=state, spark=spark) as job:
        result = job.write(df, str(target), format="parquet", ctx="sink")
    assert (result.rows, result.skipped) == (4, False)
    assert not stray.exists()
    assert sorted(pads.dataset(str(target), format="parquet").to_table()
                  .column("id").to_pylist()) == [0, 1, 2, 3]
    record = json.loads((commits / "j%2Fsink-1.json").read_text())
    assert record["lakemark.runId"] == job.run_id
    assert sorted(record["files"]) == sorted(
        p.name for p in target.iterdir() if p.is_file())
    assert committed_files(str(target)) == sorted(
        str(p) for p in target.iterdir() if p.is_file())
