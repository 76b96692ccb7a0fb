"""Retention in the state stores (SQLite in memory and on disk, PostgreSQL): `prune` and the
automatic policy delete old runs, manifests and bookmark versions, and never what a pending
retry, a rewind or a replay inside the window needs."""

from __future__ import annotations

from datetime import datetime, UTC
from typing import Any

import pytest
from test_state_store import begin, location, store, succeed  # noqa: F401 - fixtures

from lakemark.errors import ConfigError, UnknownRunError
from lakemark.planning import FileEntry
from lakemark.planning.retention import RetentionPolicy
from lakemark.state._retention import auto_policy

DAY = 86_400.0
T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


class SimulatedTime:
    """The time a store stamps on rows, moved by the test (retention is about age)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> str:
        return datetime.fromtimestamp(self.now, UTC).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")


def simulated(store: Any) -> SimulatedTime:
    t = SimulatedTime()
    store._stamp = t  # noqa: SLF001
    store.retention = None  # pruned by the test only
    return t


def run_with_files(store: Any, n: int, ok: bool = True) -> str:
    r = begin(store)
    store.record_plan(r.run_id, "src", {"kind": "files", "planned_files": 2},
                      [FileEntry(path=f"s3://b/{n}/{i}", mtime=n, size=1) for i in range(2)])
    if ok:
        store.commit_run(r.run_id, {"src": {"high": n}}, update_bookmark=True)
    else:
        store.fail_run(r.run_id, "boom", update_bookmark=True)
    return str(r.run_id)


def test_prune_keeps_the_window_and_what_retries_rewinds_and_replays_need(store) -> None:  # type: ignore[no-untyped-def]
    t = simulated(store)
    ids = []
    for day in range(10):
        t.now = T0 + day * DAY
        ids.append(run_with_files(store, day))
    t.now = T0 + 10 * DAY
    failed = run_with_files(store, 10, ok=False)  # run 11 is due: its retry needs this
    policy = RetentionPolicy(keep_days=30, keep_runs=3)
    now = T0 + 100 * DAY

    dry = store.prune("j", policy, dry_run=True, now=now)
    assert [(r.runs, r.files, r.plans, r.dry_run) for r in dry] == [(8, 16, 8, True)]
    assert len(store.list_runs("j")) == 11  # a dry run deletes nothing

    [report] = store.prune("j", policy, now=now)
    assert (report.runs, report.files, report.plans, report.kept_runs) == (8, 16, 8, 3)
    assert report.versions > 0
    kept = [r.run_id for r in store.list_runs("j")]
    # The last three runs (the window: the bookmark's run and previous run are among them).
    assert kept == [ids[8], ids[9], failed]
    with pytest.raises(UnknownRunError):
        store.run_inputs(ids[0])
    # The retry of run 11 still finds its failed attempt and what it planned.
    assert [i.ctx for i in store.run_inputs(failed)] == ["src"]
    assert len(store.run_inputs(failed)[0].files) == 2
    # A replay between runs of the window, and a rewind to one, still work.
    assert [r.run_id for r in store.runs_between("j", ids[8], ids[9])] == [ids[9]]
    assert store.rewind("j", ids[8]).state == {"src": {"high": 8}}
    assert store.get_bookmark("j").run == 10
    # Nothing is left to prune; the current bookmark version stays in the history.
    [again] = store.prune(None, policy, now=now)
    assert again.runs == 0
    assert store.history("j")[-1].version == store.get_bookmark("j").version


def test_a_rewound_bookmark_keeps_the_run_it_names(store) -> None:  # type: ignore[no-untyped-def]
    t = simulated(store)
    ids = []
    for day in range(6):
        t.now = T0 + day * DAY
        ids.append(run_with_files(store, day))
    store.rewind("j", ids[1])
    store.prune("j", RetentionPolicy(keep_days=0, keep_runs=1), now=T0 + 60 * DAY)
    kept = [r.run_id for r in store.list_runs("j")]
    # ids[0] stays too: the rewound bookmark names it as its previous run.
    assert kept == [ids[0], ids[1], ids[5]]
    assert store.rewind("j", ids[1]).state == {"src": {"high": 1}}


def test_prune_of_an_unknown_job_is_refused(store) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="no job 'nope'"):
        store.prune("nope", RetentionPolicy())


def test_the_automatic_policy_prunes_after_commits_and_can_be_off(store) -> None:  # type: ignore[no-untyped-def]
    store.retention = RetentionPolicy(keep_days=0, keep_runs=5)
    for _ in range(30):
        succeed(store, {"src": {"high": 1}})
    runs = store.list_runs("j")
    assert 5 <= len(runs) < 15 and runs[-1].run == 30
    store.retention = None
    for _ in range(20):
        succeed(store, {"src": {"high": 1}})
    assert len(store.list_runs("j")) == len(runs) + 20


def test_the_automatic_policy_comes_from_the_environment() -> None:
    assert auto_policy({}) == RetentionPolicy(30, 100)
    assert auto_policy({"LAKEMARK_RETENTION": "off"}) is None
    assert auto_policy({"LAKEMARK_KEEP_DAYS": "7", "LAKEMARK_KEEP_RUNS": "10"}) == \
        RetentionPolicy(7, 10)
    with pytest.raises(ConfigError, match="LAKEMARK_KEEP_RUNS='x'"):
        auto_policy({"LAKEMARK_KEEP_RUNS": "x"})
    with pytest.raises(ConfigError, match="LAKEMARK_RETENTION"):
        auto_policy({"LAKEMARK_RETENTION": "maybe"})
    with pytest.raises(ConfigError, match="keep-days"):
        auto_policy({"LAKEMARK_KEEP_DAYS": "-1"})


def test_a_bad_retention_setting_refuses_the_run_before_anything_is_recorded(
        store, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LAKEMARK_KEEP_DAYS", "soon")
    store._retention = False  # noqa: SLF001 - read the environment again
    with pytest.raises(ConfigError, match="LAKEMARK_KEEP_DAYS"):
        begin(store)
    assert store.list_runs("j") == []


def test_a_pending_retry_keeps_its_failed_attempts_outside_the_window(store) -> None:  # type: ignore[no-untyped-def]
    t = simulated(store)
    for day in range(3):
        t.now = T0 + day * DAY
        run_with_files(store, day)
    failed = run_with_files(store, 3, ok=False)
    for _ in range(3):  # runs that do not move the bookmark come after it
        r = begin(store, option="disable")
        store.commit_run(r.run_id, {}, update_bookmark=False)
    [report] = store.prune("j", RetentionPolicy(keep_days=0, keep_runs=1), now=T0 + 90 * DAY)
    kept = [r.run_id for r in store.list_runs("j")]
    assert failed in kept and len(kept) == 4  # the bookmark's run, its previous, failed, last
    assert report.runs == 3
    retry = begin(store)
    assert (retry.run, retry.attempt) == (4, 1)
    assert store.run_inputs(failed)[0].files
