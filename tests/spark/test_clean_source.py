"""Clean-up of processed source files (``clean_source`` / ``--clean-source``) on local disk:
delete and archive after the run's commit, a file changed since planning kept, a failed
clean-up retried, a crash between the commit and the clean-up finished by the next run, and
bad options refused before any state exists.

Runs that need no rows (the clean-up is the point) plan without reading, so they start no
Spark; the rest use the shared session, and one crash runs the real command in a process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from crash_support import KILLED, SRC, run_ingest
from lakemark import Job
from lakemark.cli import cli
from lakemark.cli._runs import run_details
from lakemark.state import open_store

pytestmark = pytest.mark.spark


def write(path: Path, first: int, n: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(first, first + n)))
    return path


def names(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def details(state: str, run_id: str) -> dict[str, Any]:
    store = open_store(state)
    try:
        return run_details(store, run_id)
    finally:
        store.close()


def ingest(src: Path, target: Path, state: str, *extra: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["ingest", "files", str(src), str(target), "--job", "j",
                                      "--state", state, "--json", *extra],
                                catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.output) if code == 0 else result.output


def test_delete_after_the_commit_is_recorded_in_the_run(tmp_path: Path, spark: Any) -> None:
    src, target, state = tmp_path / "in", tmp_path / "out", f"sqlite:///{tmp_path / 's.db'}"
    for i in range(3):
        write(src / f"f{i}.json", 10 * i)
    with Job("j", state=state, spark=spark) as job:
        df = job.read_files(str(src), format="json", ctx="source", clean_source="delete")
        job.write(df, str(target), ctx="target")
        assert names(src) == ["f0.json", "f1.json", "f2.json"]  # nothing before the commit
    assert names(src) == []
    assert sorted(DeltaTable(str(target)).to_pyarrow_table()["id"].to_pylist()) \
        == [0, 1, 10, 11, 20, 21]
    clean = details(state, job.run_id)["cleanups"]["source"]
    assert (clean["status"], clean["mode"], clean["files"]) == ("done", "delete", 3)
    assert clean["counts"] == {"deleted": 3, "archived": 0, "gone": 0, "changed": 0,
                               "conflict": 0, "failed": 0}
    assert sorted(Path(p).name for p in clean["deleted"]) == ["f0.json", "f1.json", "f2.json"]
    assert job.cleanups[0]["status"] == "done"


def test_a_file_changed_after_planning_is_kept_then_taken(tmp_path: Path) -> None:
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 's.db'}"
    write(src / "a.json", 0)
    changed = write(src / "b.json", 10)
    with Job("j", state=state) as job:  # plans and commits; the rows are not the point here
        job.plan_files(str(src), ctx="source", clean_source="delete")
        before = changed.stat().st_mtime_ns
        write(changed, 100, n=3)  # a writer replaces it after the run took its old version
        os.utime(changed, ns=(before + 2_000_000, before + 2_000_000))
    assert names(src) == ["b.json"]
    clean = details(state, job.run_id)["cleanups"]["source"]
    assert clean["counts"]["deleted"] == 1 and clean["counts"]["changed"] == 1
    assert clean["kept"][str(changed)].startswith("changed")
    with Job("j", state=state) as later:  # the new version is a new file: taken, then cleaned
        plan = later.plan_files(str(src), ctx="source", clean_source="delete")
        assert [f.path for f in plan.files] == [str(changed)]
    assert names(src) == []


def test_archive_keeps_relative_paths_and_never_overwrites(tmp_path: Path, spark: Any) -> None:
    src, target, state = tmp_path / "in", tmp_path / "out", f"sqlite:///{tmp_path / 's.db'}"
    arch = tmp_path / "archive"
    write(src / "a.json", 0)
    write(src / "2024" / "b.json", 10)
    write(arch / "a.json", 500, n=1)  # someone else's file at a.json's destination
    out = ingest(src, target, state, "--clean-source", "archive", "--archive-to", str(arch))
    assert out["rows"] == 4
    assert out["clean_up"]["counts"]["archived"] == 1
    assert out["clean_up"]["counts"]["conflict"] == 1
    assert names(src) == ["a.json"]  # kept: the destination was taken
    assert names(arch) == ["2024/b.json", "a.json"]
    assert json.loads((arch / "a.json").read_text()) == {"id": 500}  # not overwritten
    shown = CliRunner().invoke(cli, ["runs", "show", out["run_id"], "--state", state])
    assert f"moved {src / '2024' / 'b.json'} → {arch / '2024' / 'b.json'}" in shown.output
    assert f"kept {src / 'a.json'}: conflict" in shown.output


def test_a_failed_clean_up_is_reported_then_retried(tmp_path: Path) -> None:
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 's.db'}"
    arch = tmp_path / "archive"
    write(src / "a.json", 0)
    write(src / "sub" / "b.json", 10)
    arch.mkdir()
    (arch / "sub").write_text("a file where the archive needs a folder")
    with Job("j", state=state) as job:  # plans and commits; no rows needed here
        job.plan_files(str(src), ctx="source", clean_source="archive", archive_to=str(arch))
    assert job.run.status == "SUCCEEDED"  # the clean-up failing does not fail the run
    clean = details(state, job.run_id)["cleanups"]["source"]
    assert clean["status"] == "pending" and clean["counts"]["failed"] == 1
    assert list(clean["errors"]) == [str(src / "sub" / "b.json")]
    assert names(src) == ["sub/b.json"]
    (arch / "sub").unlink()
    with Job("j", state=state) as later:  # no new file: finishes the pending clean-up
        assert later.plan_files(str(src), ctx="source").files == ()
    assert names(src) == [] and names(arch) == ["a.json", "sub/b.json"]
    clean = details(state, job.run_id)["cleanups"]["source"]
    assert (clean["status"], clean["attempts"], clean["finished_by"]) == ("done", 2,
                                                                          later.run_id)
    assert clean["counts"]["archived"] == 2 and clean["counts"]["gone"] == 0  # both attempts
    assert sorted(Path(m["to"]).name for m in clean["moves"]) == ["a.json", "b.json"]


def test_retention_leaves_the_files_until_a_later_commit(tmp_path: Path) -> None:
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 's.db'}"
    write(src / "a.json", 0)
    with Job("j", state=state) as job:
        job.plan_files(str(src), ctx="source", clean_source="delete",
                       clean_source_retention="1h")
    assert names(src) == ["a.json"] and job.cleanups == []
    clean = details(state, job.run_id)["cleanups"]["source"]
    assert clean["status"] == "pending" and clean["retention_s"] == 3600
    with Job("j", state=state) as later:  # inside the hour: the file stays
        later.plan_files(str(src), ctx="source")
    assert names(src) == ["a.json"]
    # An hour later, as the entry sees it (the test moves its time rather than wait):
    store = open_store(state)
    store.record_after_commit(job.run_id, "clean:source", {**clean, "kind": "clean",
                                                          "not_before_ms": 0})
    store.close()
    with Job("j", state=state) as last:
        last.plan_files(str(src), ctx="source")
    assert names(src) == [] and last.cleanups[0]["counts"]["deleted"] == 1


@pytest.mark.long
def test_ingest_killed_between_commit_and_clean_up_the_next_run_finishes(tmp_path: Path) -> None:
    src, target, state = tmp_path / "in", tmp_path / "out", f"sqlite:///{tmp_path / 's.db'}"
    for i in range(3):
        write(src / f"f{i}.json", 10 * i)
    killed = run_ingest(str(src), str(target), job="j", state=state, fault="after-job-commit",
                        extra=["--clean-source", "delete"])
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    store = open_store(state)
    (run,) = store.list_runs("j")
    store.close()
    assert run.status == "SUCCEEDED" and len(names(src)) == 3  # committed, nothing cleaned
    assert details(state, run.run_id)["cleanups"]["source"]["status"] == "pending"
    write(src / "late.json", 90)  # arrives before the next run: not touched by the old intent
    out = ingest(src, target, state, "--clean-source", "off")
    assert out["files"] == 1
    assert names(src) == ["late.json"]  # the old intent finished, the new run cleans nothing
    (entry,) = out["clean_up"]["entries"]
    assert entry["run_id"] == run.run_id and entry["earlier_run"] and entry["status"] == "done"
    assert out["clean_up"]["counts"]["deleted"] == 3
    again = ingest(src, target, state)  # idempotent: nothing left to finish
    assert "clean_up" not in again and names(src) == ["late.json"]
    assert sorted(DeltaTable(str(target)).to_pyarrow_table()["id"].to_pylist()) \
        == [0, 1, 10, 11, 20, 21, 90, 91]


_PLAN_AND_COMMIT = """
import sys
from lakemark import Job
with Job("j", state=sys.argv[1]) as job:
    job.plan_files(sys.argv[2], ctx="source", clean_source="delete")
"""


@pytest.mark.parametrize(("fault", "left", "deleted"), [("after-job-commit", 3, 3),
                                                          ("mid-clean-up", 2, 2)])
def test_killed_after_the_commit_the_next_run_finishes_the_clean_up(
        tmp_path: Path, fault: str, left: int, deleted: int) -> None:
    """A run that plans and commits (no rows: no Spark, so a process is cheap), SIGKILLed by
    the fault hook after its commit or after its first file; the next run finishes."""
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 's.db'}"
    for i in range(3):
        write(src / f"f{i}.json", 10 * i)
    env = {**os.environ, "PYTHONPATH": str(SRC), "LAKEMARK_FAULT": fault}
    killed = subprocess.run([sys.executable, "-c", _PLAN_AND_COMMIT, state, str(src)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    store = open_store(state)
    (run,) = store.list_runs("j")
    store.close()
    assert run.status == "SUCCEEDED" and len(names(src)) == left
    assert details(state, run.run_id)["cleanups"]["source"]["status"] == "pending"
    write(src / "late.json", 90)  # not taken by the killed run: no intent covers it
    with Job("j", state=state) as job:
        assert len(job.plan_files(str(src), ctx="source").files) == 1
    assert names(src) == ["late.json"]
    (report,) = job.cleanups
    assert (report["run_id"], report["status"], report["finished_by"]) \
        == (run.run_id, "done", job.run_id)
    assert report["counts"]["deleted"] == deleted and report["counts"]["gone"] == 3 - deleted
    with Job("j", state=state) as again:  # idempotent: nothing left to do
        again.plan_files(str(src), ctx="source")
    assert again.cleanups == [] and names(src) == ["late.json"]


def test_killed_inside_the_commit_nothing_is_cleaned_until_a_run_commits(
        tmp_path: Path) -> None:
    """Killed inside the store's commit transaction: the intent was recorded but the run never
    committed, so nothing of it is ever cleaned, not even after the next run's commit; that
    run takes the files again (they are still to be processed)."""
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 's.db'}"
    for i in range(2):
        write(src / f"f{i}.json", 10 * i)
    env = {**os.environ, "PYTHONPATH": str(SRC), "LAKEMARK_FAULT": "during-job-commit"}
    killed = subprocess.run([sys.executable, "-c", _PLAN_AND_COMMIT, state, str(src)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    with Job("j", state=state) as job:  # takes the dead run's lease over, without clean-up
        assert len(job.plan_files(str(src), ctx="source").files) == 2
    assert names(src) == ["f0.json", "f1.json"] and job.cleanups == []
    store = open_store(state)
    dead, _ = store.list_runs("j")
    store.close()
    assert dead.status == "FAILED"
    assert details(state, dead.run_id)["cleanups"]["source"]["status"] == "pending"  # never done


@pytest.mark.parametrize(("args", "message"), [
    (["--clean-source", "archive"], "--clean-source archive needs --archive-to"),
    (["--clean-source", "archive", "--archive-to", "{src}/old"], "--archive-to .* overlaps"),
    (["--clean-source", "archive", "--archive-to", "s3://b/x"], "both be local"),
    (["--clean-source", "delete", "--archive-to", "{tmp}/a"], "goes with --clean-source arch"),
    (["--clean-source", "delete", "--bookmark", "pause"], "bookmark paused"),
    (["--clean-source", "move"], "Invalid value for '--clean-source'"),
    (["--clean-source-retention", "7d"], "--clean-source-retention goes with --clean-source"),
    (["--clean-source", "delete", "--clean-source-retention", "soon"], "not a duration"),
])
def test_bad_options_are_refused_before_any_state(tmp_path: Path, args: list[str],
                                                  message: str) -> None:
    import re

    src = tmp_path / "in"
    write(src / "a.json", 0)
    args = [a.format(src=src, tmp=tmp_path) for a in args]
    output = ingest(src, tmp_path / "out", f"sqlite:///{tmp_path / 's.db'}", *args, code=2)
    assert re.search(message, " ".join(output.split())), output
    assert not (tmp_path / "s.db").exists() and names(src) == ["a.json"]
