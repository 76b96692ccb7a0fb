"""`lakemark state prune`: deletes old runs as the policy says, prints what it did, and
refuses bad input before changing or creating anything."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.planning import FileEntry
from lakemark.state.sqlite import SQLiteStore


def filled(tmp_path: Path, runs: int = 12) -> str:
    """A store with ``runs`` committed runs of job ``j`` (one input file each)."""
    store = SQLiteStore(tmp_path / "s.db")
    store.retention = None
    for n in range(runs):
        r = store.begin_run("j", "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
        store.record_plan(r.run_id, "src", {"kind": "files"}, [FileEntry(path=f"/d/{n}", mtime=n,
                                                                         size=1)])
        store.commit_run(r.run_id, {"src": {"high": n}}, update_bookmark=True)
    store.close()
    return f"sqlite:///{tmp_path}/s.db"


def prune(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["state", "prune", *args], env={"LAKEMARK_RETENTION": "on"})
    return result.exit_code, result.output


def test_prune_dry_run_counts_and_prune_deletes(tmp_path: Path) -> None:
    url = filled(tmp_path)
    code, out = prune("j", "--keep-days", "0", "--keep-runs", "4", "--dry-run", "--json",
                      "--state", url)
    assert code == 0, out
    doc = json.loads(out)
    assert doc["dry_run"] and doc["jobs"][0]["runs"] == 8 and doc["jobs"][0]["files"] == 8
    store = SQLiteStore(tmp_path / "s.db")
    assert len(store.list_runs("j")) == 12
    store.close()
    code, out = prune("--all", "--keep-days", "0", "--keep-runs", "4", "--state", url)
    assert code == 0 and "deleted" in out, out
    store = SQLiteStore(tmp_path / "s.db")
    assert [r.run for r in store.list_runs("j")] == [9, 10, 11, 12]
    store.close()


def test_the_default_policy_keeps_recent_runs(tmp_path: Path) -> None:
    url = filled(tmp_path)
    code, out = prune("j", "--json", "--state", url)
    assert code == 0 and json.loads(out)["jobs"][0]["runs"] == 0


def test_bad_input_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    url = filled(tmp_path)
    for args in (["--keep-runs", "-1", "j"], ["--keep-days", "-2", "j"], [],
                 ["j", "--all"], ["nope"]):
        code, out = prune(*args, "--keep-days", "0", "--state", url) if "--keep-days" not in args \
            else prune(*args, "--state", url)
        assert code == 1 and "error:" in out, (args, out)
    store = SQLiteStore(tmp_path / "s.db")
    assert len(store.list_runs("j")) == 12
    store.close()
    missing = tmp_path / "missing.db"
    code, out = prune("j", "--state", f"sqlite:///{missing}")
    assert code == 1 and not missing.exists()
