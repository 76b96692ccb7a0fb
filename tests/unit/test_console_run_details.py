"""The console's run details (set-aside and retaken files, files changed during a run, taken
before, skipped), the set-aside count per job and the Schema page — query layer on SQLite and
PostgreSQL, API and pages over SQLite (Starlette's TestClient)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import store_of
from starlette.testclient import TestClient

from lakemark.console import StateQueries, UnknownJobError
from lakemark.console.app import create_app
from lakemark.planning import FileEntry
from lakemark.state import open_store
from lakemark.state._schemas import PendingSchema

HOST = socket.gethostname()
SECRET = "s3cr3t-Pa55"
NAME = 'ord/ers <b>"x"</b>'  # a slash and markup in a job name


def _begin(store: Any, job: str) -> Any:
    return store.begin_run(job, "enable", host=HOST, pid=1, lease_timeout_s=60)


def fill(store: Any, job: str = NAME) -> dict[str, str]:
    """Run 1 of ``job`` sets a file aside and tracks a schema; run 2 retakes the set-aside file,
    retakes a modified one, skips another, leaves one that changed out, and adds a column."""
    r1 = _begin(store, job)
    store.record_plan(r1.run_id, "src", {"source": "/in"},
                      [FileEntry(path="/in/a.json", mtime=1, size=10)])
    store.quarantine_files(r1.run_id, job, "src", [
        ("/in/bad.json", 5, 2, f"truncated gzip (https://u:{SECRET}@h/x)"),
        ("/in/bad2.json", 6, 3, "broken link")])
    store.commit_run(r1.run_id, {"src": {"high": 1}}, update_bookmark=True, schemas={
        "src": PendingSchema([{"name": "id", "type": "long"}], [], "inferred")})
    store.request_retry(job, ["/in/bad.json"])
    r2 = _begin(store, job)
    store.record_plan(r2.run_id, "src", {
        "source": "/in",
        "taken_before": [{"path": "/in/a.json", "run": 1, "run_id": r1.run_id, "mtime": 1,
                          "size": 10}],
        "skipped_modified": [{"path": "/in/s.json", "mtime": 4, "size": 4}],
        "changed_during_run": [{"path": "/in/c.json", "planned": {"mtime": 5, "size": 5},
                                "seen": None, "when": "during the read"}],
    }, [FileEntry(path="/in/a.json", mtime=9, size=12),
        FileEntry(path="/in/bad.json", mtime=2, size=5)])
    store.commit_run(r2.run_id, {"src": {"high": 2}}, update_bookmark=True,
                     retried={"src": ["/in/bad.json"]}, schemas={"src": PendingSchema(
                         [{"name": "id", "type": "long"}, {"name": "code", "type": "string"}],
                         [{"column": "code", "change": "added", "type": "string"}],
                         "new columns")})
    store.record_timings(r2.run_id, {"plan": 1.25, "read": 0.5, "write": 42.0, "commit": 0.25})
    return {"r1": r1.run_id, "r2": r2.run_id}


def fill_both(store: Any) -> dict[str, str]:
    """:func:`fill`, and a job ``clicks`` with one run and nothing set aside or tracked."""
    other = _begin(store, "clicks")
    store.commit_run(other.run_id, {}, update_bookmark=True)
    return {**fill(store), "clicks": other.run_id}


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with store_of(request.param, tmp_path, "lm_console_rd") as s:
        yield s


def test_a_run_lists_its_set_aside_retaken_and_changed_files(store: Any) -> None:
    ids = fill_both(store)
    q = StateQueries(store)
    first = q.run(ids["r1"])
    assert first is not None
    assert [(e["path"], e["status"]) for e in first["quarantined"]] == [
        ("/in/bad.json", "retried"), ("/in/bad2.json", "open")]
    assert first["quarantined"][0]["retried_by"] == ids["r2"]
    assert SECRET not in str(first) and "truncated gzip" in first["quarantined"][0]["reason"]
    assert first["retried"] == [] and first["taken_before"] == []
    second = q.run(ids["r2"])
    assert second is not None
    assert [e["path"] for e in second["retried"]] == ["/in/bad.json"]
    assert second["quarantined"] == []
    assert [(e["ctx"], e["path"], e["run_id"]) for e in second["taken_before"]] == [
        ("src", "/in/a.json", ids["r1"])]
    assert [e["path"] for e in second["skipped_modified"]] == ["/in/s.json"]
    assert [(e["path"], e["when"]) for e in second["changed_during_run"]] == [
        ("/in/c.json", "during the read")]


def test_jobs_count_the_files_still_set_aside(store: Any) -> None:
    fill_both(store)
    jobs = {j["job_name"]: j for j in StateQueries(store).jobs()}
    assert jobs[NAME]["quarantined"] == 1  # bad2 is open; bad was taken again
    assert jobs["clicks"]["quarantined"] == 0


def test_schema_history_says_what_changed_and_which_run(store: Any) -> None:
    ids = fill_both(store)
    q = StateQueries(store)
    (src,) = q.schema_history(NAME)
    assert src["ctx"] == "src"
    assert [(v["version"], v["run_id"], v["columns"]) for v in src["versions"]] == [
        (2, ids["r2"], 2), (1, ids["r1"], 1)]
    assert src["versions"][0]["changes"] == [{"column": "code", "change": "added",
                                              "type": "string"}]
    assert q.schema_history("clicks") == []
    with pytest.raises(UnknownJobError, match="did you mean"):
        q.schema_history("clickz")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    s = open_store(f"sqlite:///{tmp_path}/s.db")
    ids = fill_both(s)
    yield TestClient(create_app(s)), ids
    s.close()


def test_the_api_gives_the_same_data(client: tuple[TestClient, dict[str, str]]) -> None:
    http, ids = client
    run = http.get("/api/run", params={"id": ids["r2"]}).json()
    assert [e["path"] for e in run["retried"]] == ["/in/bad.json"]
    assert [e["path"] for e in run["changed_during_run"]] == ["/in/c.json"]
    jobs = {j["job_name"]: j for j in http.get("/api/jobs").json()}
    assert jobs[NAME]["quarantined"] == 1
    schema = http.get("/api/schema", params={"job": NAME}).json()
    assert schema[0]["versions"][0]["run_id"] == ids["r2"]
    missing = http.get("/api/schema", params={"job": "nope"})
    assert missing.status_code == 404 and missing.json()["kind"] == "UnknownJobError"


def test_the_pages_show_them_with_every_name_escaped(
        client: tuple[TestClient, dict[str, str]]) -> None:
    http, ids = client
    first = http.get("/run", params={"id": ids["r1"]}).text
    assert "set aside" in first and "/in/bad2.json" in first and "broken link" in first
    assert SECRET not in first
    second = http.get("/run", params={"id": ids["r2"]}).text
    assert "taken again" in second and "retaken whole" in second
    assert "modified since an earlier take: skipped" in second
    assert "changed during the read: left out" in second
    jobs = http.get("/").text
    assert "set aside</th>" in jobs
    job = http.get("/job", params={"name": NAME}).text
    link = "/jobs/ord%2Fers%20%3Cb%3E%22x%22%3C%2Fb%3E/schema"
    assert f'href="{link}"' in job
    schema = http.get(link)
    assert schema.status_code == 200
    assert "<b>" not in schema.text and "ord/ers &lt;b&gt;" in schema.text
    assert "added <span class=\"mono\">code</span> string" in schema.text
    assert ids["r2"] in schema.text
    assert http.get("/jobs/clickz/schema").status_code == 404
    assert "no tracked schema" in http.get("/jobs/clicks/schema").text


def test_a_run_shows_its_attempt_chain_and_the_schema_version_it_read_with(store: Any) -> None:
    ids = fill(store)
    failed = _begin(store, "retried")
    store.fail_run(failed.run_id, "the write failed", update_bookmark=False)
    again = _begin(store, "retried")
    store.commit_run(again.run_id, {}, update_bookmark=True)
    q = StateQueries(store)
    run = q.run(again.run_id)
    assert run is not None
    assert [(a["attempt"], a["status"]) for a in run["attempts"]] == [
        (failed.attempt, "FAILED"), (again.attempt, "SUCCEEDED")]
    assert run["attempts"][0]["error"] == "the write failed"
    first, second = q.run(ids["r1"]), q.run(ids["r2"])
    assert first is not None and second is not None
    assert first["schemas"] == [{"ctx": "src", "version": 1, "changed_by_this_run": True}]
    assert second["schemas"] == [{"ctx": "src", "version": 2, "changed_by_this_run": True}]


def test_a_job_lists_its_sources_and_sinks_with_bookmark_and_token(store: Any) -> None:
    r = _begin(store, "orders")
    store.record_plan(r.run_id, "src", {"kind": "files", "source": f"s3://k:{SECRET}@b/in"},
                      [FileEntry(path="/in/a.json", mtime=1, size=10)])
    store.record_plan(r.run_id, "out", {"kind": "sink", "target": "/lake/orders",
                                        "format": "delta", "status": "committed",
                                        "token": {"app_id": "orders-app", "version": 7},
                                        "table_version": 3}, [])
    store.commit_run(r.run_id, {"src": {"kind": "files", "high": 5, "band": [["/in/a", 1]] * 9}},
                     update_bookmark=True)
    io = {i["ctx"]: i for i in StateQueries(store).job_io("orders")}
    assert io["out"]["token"] == {"app_id": "orders-app", "version": 7}
    assert (io["out"]["kind"], io["out"]["table_version"]) == ("sink", 3)
    assert io["src"]["bookmark"]["high"] == 5
    assert io["src"]["bookmark"]["band"] == "9 entries"
    assert SECRET not in json.dumps(io)
    with pytest.raises(UnknownJobError, match="orderz"):
        StateQueries(store).job_io("orderz")


def test_the_job_and_run_pages_show_io_and_attempts(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    ids = fill(store)
    client = TestClient(create_app(store))
    job = client.get("/job", params={"name": NAME})
    assert job.status_code == 200 and 'id="io"' in job.text
    run = client.get("/run", params={"id": ids["r2"]})
    assert 'id="attempts"' in run.text and "(this one)" in run.text
    assert 'id="schemas"' in run.text and "made by this run" in run.text
    assert client.get("/api/io", params={"job": NAME}).json()[0]["ctx"] == "src"


def test_rows_per_sink_are_given_per_run_and_drawn_on_the_job_page(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    for n in (1, 2):
        r = _begin(store, "orders")
        for ctx, rows in (("to_lake", 10 * n), ("to_pg", n)):
            store.record_plan(r.run_id, ctx, {"kind": "sink", "target": f"/{ctx}",
                                              "status": "committed", "rows": rows}, [])
        store.commit_run(r.run_id, {}, update_bookmark=True)
    runs = StateQueries(store).runs("orders").items
    assert [(r["rows"], r["sink_rows"]) for r in runs] == [
        (22, {"to_lake": 20, "to_pg": 2}), (11, {"to_lake": 10, "to_pg": 1})]
    page = TestClient(create_app(store)).get("/job", params={"name": "orders"})
    assert 'id="chart-rows"' in page.text
    assert '"sinks": {"to_lake": [10, 20], "to_pg": [1, 2]}' in page.text
