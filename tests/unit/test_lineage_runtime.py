"""Runtime lineage without Spark: off unless LAKEMARK_OPENLINEAGE is set, a bad value is a
configuration error, a JDBC source is named without its credentials, user callbacks still
run, and a failing transport never fails the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakemark import Job
from lakemark.errors import ConfigError
from lakemark.lineage.runtime import ENV, run_uuid

URL = "jdbc:postgresql://scott:tiger-pw@db.example:5432/hr?password=tiger-pw&ssl=true"


def jdbc_run(state: str, seen: list[str] | None = None) -> Job:
    job = Job("emp", state=state,
              on_event=(lambda e: seen.append(e.stage)) if seen is not None else None)
    with job:
        job.track_source("emp", {"kind": "jdbc", "source": "hr.emp", "url": URL,
                                 "dbtable": "hr.emp"}, [], {"kind": "jdbc", "last": 1})
    return job


def test_off_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    job = jdbc_run(f"sqlite:///{tmp_path / 's.db'}")
    assert job._observers == []  # no observer, no lineage output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_a_bad_value_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "kafka://broker:9092")
    with pytest.raises(ConfigError, match="neither file:PATH nor an http"):
        Job("x", state="sqlite:///:memory:")


def test_jdbc_input_without_credentials_and_user_callback_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "ol.jsonl"
    monkeypatch.setenv(ENV, f"file:{events}")
    seen: list[str] = []
    job = jdbc_run(f"sqlite:///{tmp_path / 's.db'}", seen)
    assert seen == ["started", "committed"]
    text = events.read_text()
    assert "tiger-pw" not in text and "scott:" not in text
    start, complete = [json.loads(line) for line in text.splitlines()]
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert complete["run"]["runId"] == run_uuid(job.run.run_id)
    assert [(i["namespace"], i["name"]) for i in complete["inputs"]] == \
        [("postgres://db.example:5432", "hr.hr.emp")]
    assert complete["outputs"] == []


def test_a_failing_transport_never_fails_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(ENV, f"file:{tmp_path / 'missing-dir' / 'ol.jsonl'}")
    job = jdbc_run(f"sqlite:///{tmp_path / 's.db'}")
    assert job.run.status == "SUCCEEDED"
    assert "OpenLineage event not emitted" in capsys.readouterr().err



def test_a_jdbc_sink_is_an_output_dataset_named_like_a_jdbc_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lakemark.state.manifest import SinkManifest

    events = tmp_path / "ol.jsonl"
    monkeypatch.setenv(ENV, f"file:{events}")
    with Job("load", state=f"sqlite:///{tmp_path / 's.db'}") as job:
        # what lakemark.run.jdbc_sink records for a committed JDBC sink (credentials removed)
        job.store.record_plan(job.run.run_id, "sink:out", SinkManifest(
            ctx="out", target="jdbc:postgresql://db.example:5432/hr#hr.emp", format="jdbc",
            mode="append", partition_by=[], status="committed",
            extra={"url": "jdbc:postgresql://db.example:5432/hr", "dbtable": "hr.emp"},
        ).to_json(), [])
    complete = json.loads(events.read_text().splitlines()[-1])
    assert [(o["namespace"], o["name"]) for o in complete["outputs"]] == \
        [("postgres://db.example:5432", "hr.hr.emp")]


def test_an_observer_taken_back_sees_no_later_job(tmp_path: Path) -> None:
    from lakemark import add_job_observer

    seen: list[str] = []
    take_back = add_job_observer(lambda job: (lambda e: seen.append(e.stage)))
    jdbc_run(f"sqlite:///{tmp_path / 'a.db'}")
    take_back()
    jdbc_run(f"sqlite:///{tmp_path / 'b.db'}")
    assert seen == ["started", "committed"]  # the second job was not followed
