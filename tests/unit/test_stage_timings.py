"""Stage timings of a run (lakemark._stage_timings, state/_timings.py): the stage clock driven
by a fake clock, the run_timings table on SQLite and PostgreSQL (and its upgrade path), what a
Job records, and where they show (`runs show`, the console's run API and page)."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pgtest import store_of
from starlette.testclient import TestClient

from lakemark import Job
from lakemark._stage_timings import StageClock
from lakemark.cli import cli
from lakemark.console import StateQueries
from lakemark.console.app import create_app
from lakemark.errors import UnknownRunError
from lakemark.state import open_store
from lakemark.state.sqlite import SCHEMA_VERSION


class FakeClock:
    """A clock that reads what the test set."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _drive(marks: list[tuple[str, float]]) -> dict[str, float]:
    clock = FakeClock()
    stages = StageClock(clock)
    for event, at in marks:
        clock.now = at
        stages.mark(event)
    return stages.durations()


def test_each_stage_ends_at_its_last_event() -> None:
    assert _drive([("started", 100), ("listed", 101), ("planned", 102), ("listed", 103),
                   ("planned", 104.5), ("read", 105), ("read", 106), ("written", 110),
                   ("written", 112.25), ("committed", 112.5)]) == {
        "plan": 4.5, "read": 1.5, "write": 6.25, "commit": 0.25}


def test_a_missing_stage_folds_into_the_next_and_order_is_kept() -> None:
    # nothing read or written: planning then the commit
    assert _drive([("started", 0), ("planned", 2), ("committed", 3)]) == {
        "plan": 2, "commit": 1}
    # a source planned after the last read: read counts zero, not negative
    assert _drive([("started", 0), ("read", 1), ("planned", 2), ("written", 5),
                   ("failed", 6)]) == {"plan": 2, "read": 0, "write": 3, "commit": 1}
    # a second "started" does not move the start
    assert _drive([("started", 0), ("started", 5), ("ended", 7)]) == {"commit": 7}
    assert _drive([("planned", 1)]) == {}


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with store_of(request.param, tmp_path, "lm_timings") as s:
        yield s


def test_the_store_keeps_timings_per_run(store: Any) -> None:
    r = store.begin_run("j", "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
    store.commit_run(r.run_id, {}, update_bookmark=True)
    assert store.run_timings(r.run_id) == {}
    store.record_timings(r.run_id, {"plan": 1.5, "read": 0.25, "write": 3, "commit": 0.125})
    assert list(store.run_timings(r.run_id).items()) == [
        ("plan", 1.5), ("read", 0.25), ("write", 3.0), ("commit", 0.125)]
    store.record_timings(r.run_id, {"commit": 2})  # replaced, not added to
    assert store.run_timings(r.run_id) == {"commit": 2.0}
    with pytest.raises(UnknownRunError, match="jr_nope"):
        store.record_timings("jr_nope", {"plan": 1})
    assert store.run_timings("jr_nope") == {}


def test_a_store_without_the_table_gains_it_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    open_store(f"sqlite:///{path}").close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE run_timings")
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    reader = open_store(f"sqlite:///{path}", read_only=True)  # upgrades, then reads
    assert reader.run_timings("jr_x") == {}
    reader.close()
    assert sqlite3.connect(path).execute(
        "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION)  # the current version (6 since quarantine_history)


def test_a_job_records_its_stages_when_it_ends(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text('{"x": 1}\n')
    url = f"sqlite:///{tmp_path}/state.db"
    with Job("j", state=url) as job:
        job.plan_files(str(tmp_path / "in"), ctx="src")
        run_id = job.run_id
    with pytest.raises(RuntimeError), Job("j", state=url) as failing:
        failing_id = failing.run_id
        raise RuntimeError("boom")
    store = open_store(url, read_only=True)
    ok = store.run_timings(run_id)
    assert list(ok) == ["plan", "commit"] and all(v >= 0 for v in ok.values())
    assert list(store.run_timings(failing_id)) == ["commit"]
    store.close()


def test_runs_show_and_the_console_give_the_timings(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/state.db"
    store = open_store(url)
    r = store.begin_run("j", "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
    store.commit_run(r.run_id, {}, update_bookmark=True)
    store.record_timings(r.run_id, {"plan": 1.5, "write": 30.25, "commit": 0.125})
    shown = CliRunner().invoke(cli, ["runs", "show", r.run_id, "--state", url, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["timings"] == {"plan": 1.5, "write": 30.25, "commit": 0.125}
    text = CliRunner().invoke(cli, ["runs", "show", r.run_id, "--state", url])
    assert "stages: plan 1.500 s, write 30.250 s, commit 0.125 s" in text.output
    assert StateQueries(store).run(r.run_id)["timings"]["write"] == 30.25  # type: ignore[index]
    client = TestClient(create_app(store))
    assert client.get(f"/api/run?id={r.run_id}").json()["timings"]["plan"] == 1.5
    page = client.get(f"/run?id={r.run_id}").text
    assert "plan 1.500 s · write 30.250 s · commit 0.125 s" in page
    store.close()


def test_pruning_a_run_deletes_its_timings(tmp_path: Path) -> None:
    from lakemark.planning.retention import RetentionPolicy

    store = open_store(f"sqlite:///{tmp_path}/state.db")
    ids = []
    for _ in range(4):
        r = store.begin_run("j", "enable", host=socket.gethostname(), pid=1,
                            lease_timeout_s=60)
        store.commit_run(r.run_id, {}, update_bookmark=True)
        store.record_timings(r.run_id, {"commit": 1})
        ids.append(r.run_id)
    store.prune("j", RetentionPolicy(keep_days=0, keep_runs=1), now=4_000_000_000)
    kept = {r.run_id for r in store.list_runs("j")}
    assert ids[0] not in kept and ids[-1] in kept
    assert {i: store.run_timings(i) for i in ids} == {
        i: ({"commit": 1.0} if i in kept else {}) for i in ids}
    assert store._q.execute(  # noqa: SLF001
        "SELECT COUNT(*) FROM run_timings").fetchone()[0] == len(kept)
    store.close()


def test_a_store_that_cannot_take_the_timings_costs_only_them(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from lakemark._stage_timings import save_timings

    store = open_store(f"sqlite:///{tmp_path}/state.db")
    r = store.begin_run("j", "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
    store.commit_run(r.run_id, {}, update_bookmark=True)
    store.close()  # gone after the commit
    clock = FakeClock()
    stages = StageClock(clock)
    stages.mark("started")
    clock.now += 2
    stages.mark("committed")
    save_timings(store, r.run_id, stages)  # does not raise
    assert f"run {r.run_id}: its stage timings could not be recorded" in caplog.text
    reopened = open_store(f"sqlite:///{tmp_path}/state.db", read_only=True)
    assert reopened.get_run(r.run_id).status == "SUCCEEDED"
    assert reopened.run_timings(r.run_id) == {}
    reopened.close()
