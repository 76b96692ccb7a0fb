"""The console's query layer (lakemark.console.queries) on SQLite and PostgreSQL alike."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import store_of

from lakemark.console import StateQueries, UnknownJobError, nearest_names
from lakemark.errors import ConfigError
from lakemark.planning import FileEntry

HOST, PID = socket.gethostname(), os.getpid()


def _run(store: Any, job: str, files: list[tuple[str, int]], *, fail: str | None = None,
         rows: int | None = None) -> str:
    """One run of ``job`` taking ``files`` ((path, size)); FAILED with ``fail``."""
    r = store.begin_run(job, "enable", host=HOST, pid=PID, lease_timeout_s=60)
    entries = [FileEntry(mtime=1_700_000_000_000 + i, path=p, size=s)
               for i, (p, s) in enumerate(files)]
    store.record_plan(r.run_id, "src", {"source": "s3://b/in/"}, entries)
    if rows is not None:
        store.record_plan(r.run_id, "sink0", {"kind": "sink", "target": "/t", "rows": rows,
                                              "status": "committed"}, [])
    if fail:
        store.fail_run(r.run_id, fail, update_bookmark=True)
    else:
        store.commit_run(r.run_id, {"src": {"high": len(files)}}, update_bookmark=True)
    return str(r.run_id)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty store of each backend."""
    with store_of(request.param, tmp_path, "lm_console") as s:
        yield s


@pytest.fixture
def filled(store: Any) -> dict[str, Any]:
    """Two jobs: ``orders`` (a success, then a failure) and ``clicks`` (one success)."""
    ids = {
        "o1": _run(store, "orders", [("s3://b/in/2024/a.json", 10), ("s3://b/in/2024/b.json", 20)],
                   rows=7),
        "o2": _run(store, "orders", [("s3://b/in/2025/c.json", 5)],
                   fail="boom: password=hunter2 in s3://AKIAEXAMPLEKEY:sekrit@b/x"),
        "c1": _run(store, "clicks", [("s3://b/in/2024/a.json", 10), ("s3://c/x_y%z.csv", 1)]),
    }
    return ids


def test_jobs_have_their_last_run_and_totals(store: Any, filled: dict[str, Any]) -> None:
    jobs = {j["job_name"]: j for j in StateQueries(store).jobs()}
    assert list(jobs) == ["clicks", "orders"]
    orders = jobs["orders"]
    assert orders["last_run"]["run_id"] == filled["o2"]
    assert orders["last_run"]["status"] == "FAILED"
    assert (orders["last_run"]["files"], orders["last_run"]["bytes"]) == (1, 5)
    assert orders["last_success_run_id"] == filled["o1"]
    assert orders["bookmark_version"] == 2  # the commit, then the failure
    assert jobs["clicks"]["last_run"]["files"] == 2 and jobs["clicks"]["last_run"]["rows"] is None
    assert not orders["stale"]


def test_a_job_without_a_recent_success_is_stale(store: Any, filled: dict[str, Any]) -> None:
    later = StateQueries(store, stale_after_s=3600, now=time.time() + 7200)
    assert all(j["stale"] for j in later.jobs())
    assert not any(j["stale"] for j in StateQueries(store, stale_after_s=3600).jobs())


def test_runs_page_newest_first_with_rows_and_redacted_errors(store: Any,
                                                               filled: dict[str, Any]) -> None:
    q = StateQueries(store)
    page = q.runs("orders", limit=1)
    assert (page.total, len(page.items)) == (2, 1)
    assert page.items[0]["run_id"] == filled["o2"]
    assert "hunter2" not in page.items[0]["error"] and "sekrit" not in page.items[0]["error"]
    second = q.runs("orders", offset=1, limit=1).items[0]
    assert (second["run_id"], second["rows"], second["files"], second["bytes"]) == (
        filled["o1"], 7, 2, 30)
    assert second["duration_s"] is not None and second["duration_s"] >= 0


def test_run_detail_and_its_files_paged_and_searched(store: Any, filled: dict[str, Any]) -> None:
    q = StateQueries(store)
    run = q.run(filled["o1"])
    assert run is not None and run["status"] == "SUCCEEDED"
    assert {i["ctx"]: i["files"] for i in run["inputs"]} == {"sink0": 0, "src": 2}
    assert q.run("jr_nope") is None
    files = q.run_files(filled["o1"], limit=1)
    assert (files.total, [f["path"] for f in files.items]) == (2, ["s3://b/in/2024/a.json"])
    assert [f["path"] for f in q.run_files(filled["o1"], pattern="b.js").items] == [
        "s3://b/in/2024/b.json"]
    assert q.run_files(filled["o1"], pattern="B.JS").total == 0  # case-sensitive on both
    assert q.run_files(filled["o1"], pattern="s3://b/*/a.json").total == 1
    assert q.run_files(filled["o1"], pattern="*.json").total == 2
    assert q.run_files(filled["o1"], pattern="a.json*").total == 0  # a glob is the whole path


def test_which_run_took_a_file_across_jobs(store: Any, filled: dict[str, Any]) -> None:
    q = StateQueries(store)
    takes = q.find_files("2024/a.json")
    assert [(t["job_name"], t["run_id"]) for t in takes.items] == [
        ("orders", filled["o1"]), ("clicks", filled["c1"])]
    assert q.find_files("2024/a.json", job_name="clicks").total == 1
    # SQL wildcards in a pattern are plain characters
    assert [t["path"] for t in q.find_files("x_y%").items] == ["s3://c/x_y%z.csv"]
    assert q.find_files("*_y%z.csv").total == 1 and q.find_files("*x%y*").total == 0
    assert q.find_files("s3://?/in/2025/*").items[0]["status"] == "FAILED"
    with pytest.raises(ConfigError, match="empty file pattern"):
        q.find_files("")


def test_bookmark_history_names_the_run_that_made_each_version(store: Any,
                                                               filled: dict[str, Any]) -> None:
    hist = StateQueries(store).bookmark_history("orders")
    assert [v["version"] for v in hist.items] == [2, 1]
    assert hist.items[1]["made_by_run_id"] == filled["o1"] and hist.items[1]["ctxs"] == ["src"]


def test_an_unknown_job_suggests_the_nearest_names(store: Any, filled: dict[str, Any]) -> None:
    q = StateQueries(store)
    with pytest.raises(UnknownJobError, match=r"no job 'order' .*did you mean 'orders'"):
        q.runs("order")
    with pytest.raises(UnknownJobError, match="2 job"):
        q.bookmark_history("zzzzzz")
    assert nearest_names("clikcs", ["clicks", "orders"]) == ["clicks"]


def test_paging_arguments_are_checked(store: Any) -> None:
    with pytest.raises(ConfigError, match="limit"):
        StateQueries(store).run_files("jr_x", limit=0)
    with pytest.raises(ConfigError, match="offset"):
        StateQueries(store).run_files("jr_x", offset=-1)


def test_a_run_with_many_files_pages(store: Any) -> None:
    files = [(f"s3://big/part-{i:06d}.json", i) for i in range(3000)]
    rid = _run(store, "big", files)
    q = StateQueries(store)
    page = q.run_files(rid, offset=2500, limit=100)
    assert page.total == 3000 and page.items[0]["path"] == "s3://big/part-002500.json"
    assert q.run_files(rid, pattern="part-0029").total == 100
    assert q.jobs()[0]["last_run"]["files"] == 3000
