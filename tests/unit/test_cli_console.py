"""`lakemark jobs list`, `files find`, and a mistyped job name in read-only commands."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.planning import FileEntry
from lakemark.state.sqlite import SQLiteStore


def filled(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A store with jobs ``orders`` (2 runs: a success, a failure) and ``clicks`` (1 run)."""
    store = SQLiteStore(tmp_path / "s.db")
    ids = {}
    for key, job, paths, fail in (("o1", "orders", ["/in/a.json", "/in/b.json"], None),
                                  ("o2", "orders", ["/in/c.json"], "broke"),
                                  ("c1", "clicks", ["/in/a.json"], None)):
        r = store.begin_run(job, "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
        store.record_plan(r.run_id, "src", {}, [FileEntry(path=p, mtime=1, size=100)
                                                for p in paths])
        if fail:
            store.fail_run(r.run_id, fail, update_bookmark=True)
        else:
            store.commit_run(r.run_id, {"src": {"high": 1}}, update_bookmark=True)
        ids[key] = r.run_id
    store.close()
    return f"sqlite:///{tmp_path}/s.db", ids


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_jobs_list_json_and_table(tmp_path: Path) -> None:
    url, ids = filled(tmp_path)
    code, out, _ = run("jobs", "list", "--state", url, "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert [j["job_name"] for j in doc] == ["clicks", "orders"]
    assert doc[1]["last_run"]["run_id"] == ids["o2"] and doc[1]["last_run"]["status"] == "FAILED"
    assert doc[1]["last_success_run_id"] == ids["o1"]
    code, out, _ = run("jobs", "list", "--state", url)
    assert code == 0 and ids["o2"] in out and "FAILED" in out and "v2" in out, out
    code, out, _ = run("jobs", "list", "--state", url, "--stale-after", "0")
    assert out.count("stale") == 3, out  # the column's name and both jobs


def test_files_find_names_the_runs_that_took_a_file(tmp_path: Path) -> None:
    url, ids = filled(tmp_path)
    code, out, _ = run("files", "find", "a.json", "--state", url, "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["total"] == 2
    assert [(t["job_name"], t["run_id"]) for t in doc["items"]] == [
        ("orders", ids["o1"]), ("clicks", ids["c1"])]
    code, out, _ = run("files", "find", "/in/*.json", "--job", "orders", "--state", url,
                       "--limit", "1")
    assert code == 0 and "/in/a.json" in out and "1 of 3 takes" in out, out
    code, out, _ = run("files", "find", "nothing-like-it", "--state", url)
    assert code == 0 and "No recorded run took" in out


def test_a_mistyped_job_is_an_error_suggesting_names(tmp_path: Path) -> None:
    url, _ = filled(tmp_path)
    for args in (("runs", "list", "ordrs"), ("bookmark", "show", "ordrs"),
                 ("schema", "show", "ordrs"), ("bookmark", "history", "ordrs"),
                 ("files", "find", "x", "--job", "ordrs")):
        code, out, err = run(*args, "--state", url)
        assert code == 1, (args, out)
        assert "no job 'ordrs'" in err and "did you mean 'orders'" in err, (args, err)
        assert "No runs recorded" not in out and "version 0" not in out
    code, out, err = run("runs", "list", "ordrs", "--state", url, "--json")
    assert code == 1 and json.loads(out)["kind"] == "UnknownJobError"
    code, out, _ = run("runs", "list", "orders", "--state", url)
    assert code == 0 and "FAILED" in out


def test_jobs_list_counts_the_files_set_aside(tmp_path: Path) -> None:
    from test_console_run_details import fill

    store = SQLiteStore(tmp_path / "q.db")
    fill(store, "events")
    store.close()
    url = f"sqlite:///{tmp_path}/q.db"
    code, out, _ = run("jobs", "list", "--state", url, "--json")
    assert code == 0 and json.loads(out)[0]["quarantined"] == 1, out
    code, out, _ = run("jobs", "list", "--state", url)
    assert code == 0 and "set aside" in out, out
    row = next(line for line in out.splitlines() if line.strip().startswith("events"))
    assert " 1 " in row and "v2" in row, row
