"""The console's Lineage page: the report of an export folder (scripts analysed, never run)
and of the OpenLineage events runs wrote (runtime lineage's file), with a summary table, the
same JSON as `lineage analyze`, and one-line errors for a wrong path or a damaged events file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lakemark import Job
from lakemark.console._lineage import LineageViews, jobs_from_events
from lakemark.console.app import create_app
from lakemark.errors import ConfigError
from lakemark.lineage.runtime import ENV
from lakemark.state import open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTILE = '</script><img src=x onerror=alert(1)>'


def export_folder(tmp_path: Path) -> Path:
    conn = tmp_path / "export" / "123456789012-us-east-1"
    shutil.copytree(FIXTURES / "catalog" / "123456789012-us-east-1" / "catalog",
                    conn / "catalog")
    (conn / "jobs" / "classic").mkdir(parents=True)
    shutil.copy(FIXTURES / "lineage" / "scripts" / "classic.py",
                conn / "jobs" / "classic" / "classic.py")
    return tmp_path / "export"


def column_event(job: str, when: str) -> dict:  # type: ignore[type-arg]
    """A COMPLETE event as OpenLineage's spec shapes it, with a columnLineage facet."""
    return {
        "eventType": "COMPLETE", "eventTime": when,
        "run": {"runId": "0190b2c4-0000-7000-8000-000000000001"},
        "job": {"namespace": "lakemark", "name": job},
        "inputs": [{"namespace": "file", "name": "/landing/orders",
                    "facets": {"schema": {"fields": [{"name": "id", "type": "bigint"}]}}}],
        "outputs": [{"namespace": "file", "name": "/lake/orders", "facets": {"columnLineage": {
            "fields": {"order_id": {"inputFields": [{
                "namespace": "file", "name": "/landing/orders", "field": "id",
                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}}}}}],
    }


def client(tmp_path: Path, lineage: LineageViews) -> TestClient:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    return TestClient(create_app(store, lineage=lineage))


def test_the_export_folder_is_shown_as_a_table_a_report_and_json(tmp_path: Path) -> None:
    c = client(tmp_path, LineageViews(str(export_folder(tmp_path))))
    page = c.get("/lineage")
    assert page.status_code == 200
    assert 'id="lineage-jobs"' in page.text and ">classic<" in page.text
    report = c.get("/lineage/report?view=scripts")
    assert report.status_code == 200 and "<script" in report.text
    data = c.get("/api/lineage").json()
    assert data == json.loads(json.dumps(data))  # plain JSON
    assert "classic" in json.dumps(data)
    assert c.get("/lineage?view=runs").status_code == 400  # no events file was given


def test_what_runs_reported_is_read_from_the_events_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "ol.jsonl"
    monkeypatch.setenv(ENV, f"file:{events}")
    with Job("emp", state=f"sqlite:///{tmp_path / 'run.db'}") as job:  # a real run's events
        job.track_source("emp", {"kind": "jdbc", "source": "hr.emp",
                                 "url": "jdbc:postgresql://u:pw-123456@db:5432/hr",
                                 "dbtable": "hr.emp"}, [], {"kind": "jdbc", "last": 1})
    monkeypatch.delenv(ENV)
    with events.open("a") as f:
        f.write(json.dumps(column_event("orders", "2026-01-01T00:00:00Z")) + "\n")
        f.write(json.dumps(column_event(HOSTILE, "2026-01-01T00:00:00Z")) + "\n")
        f.write('{"eventType": "COMPL')  # a run appending right now: skipped, not an error
    c = client(tmp_path, LineageViews(events=str(events)))
    page = c.get("/lineage")
    assert page.status_code == 200
    assert ">emp<" in page.text and ">orders<" in page.text
    assert HOSTILE not in page.text and "&lt;/script&gt;" in page.text
    assert HOSTILE not in c.get("/lineage/report").text  # names go in as escaped JSON
    assert "pw-123456" not in c.get("/api/lineage").text
    jobs = {j.job: j for j in jobs_from_events(
        json.loads(line) for line in events.read_text().splitlines()[:-1])}
    (out,) = jobs["orders"].outputs
    assert [(col, [(e.dataset.name, e.field) for e in edges]) for col, edges in out.columns] \
        == [("order_id", [("/landing/orders", "id")])]


def test_the_newest_complete_event_of_a_job_stands_for_it() -> None:
    old, new = column_event("orders", "2026-01-01T00:00:00Z"), column_event(
        "orders", "2026-02-01T00:00:00Z")
    new["outputs"][0]["name"] = "/lake/orders_v2"
    (job,) = jobs_from_events([new, old, {**old, "eventType": "START"}])
    assert [o.dataset.name for o in job.outputs] == ["/lake/orders_v2"]


def test_wrong_paths_and_damaged_events_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--lineage .*not a folder"):
        LineageViews(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="--lineage-events .*no such file"):
        LineageViews(events=str(tmp_path / "missing.jsonl"))
    events = tmp_path / "ol.jsonl"
    events.write_text("not json\n" + json.dumps(column_event("a", "t")) + "\n")
    answer = client(tmp_path, LineageViews(events=str(events))).get("/api/lineage")
    assert answer.status_code == 400
    assert answer.json()["error"].endswith("ol.jsonl:1: not an OpenLineage event (not JSON)")


def test_without_lineage_the_page_says_how_to_start_with_it(tmp_path: Path) -> None:
    page = client(tmp_path, LineageViews()).get("/lineage")
    assert page.status_code == 200 and 'id="lineage-none"' in page.text
    assert "--lineage-events FILE" in page.text


def test_ui_names_a_wrong_lineage_folder_before_serving(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from lakemark.cli import cli

    url = f"sqlite:///{tmp_path}/s.db"
    open_store(url).close()
    result = CliRunner().invoke(cli, ["ui", "--state", url, "--lineage", str(tmp_path / "nope")])
    assert result.exit_code == 1 and "--lineage" in result.stderr and "nope" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
