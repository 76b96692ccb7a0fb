"""Retention decisions (pure): a prune never deletes a row a retry, a rewind or a replay inside
the window needs, and deletes only rows outside the window."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.retention import (CurrentBookmark, RetentionPolicy, RunRow, VersionRow,
                                         decide)

DAY = 86_400.0
NOW = 1_000 * DAY
TRACKING = ("enable", "mark-processed")


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[RunRow], list[VersionRow], CurrentBookmark]:
    """Any rows a store may hold: runs in record order with roughly increasing start times
    (clock skew allowed), bookmark versions made by them or by resets, and a current bookmark
    that names any of them (a rewind makes it name an old one)."""
    n = draw(st.integers(0, 25))
    runs = []
    base = 0  # runs are serialised by the lease: each starts from a version >= the last's
    t = NOW - draw(st.floats(0, 90)) * DAY
    for seq in range(1, n + 1):
        t += draw(st.floats(-0.5, 3)) * DAY  # skew: a later run may have an earlier stamp
        runs.append(RunRow(
            seq=seq,
            run_id=f"jr_{seq}", run=draw(st.integers(0, 30)),
            status=draw(st.sampled_from(["RUNNING", "SUCCEEDED", "FAILED"])),
            bookmark_option=draw(st.sampled_from(["enable", "disable", "pause",
                                                  "mark-processed"])),
            started_at=min(t, NOW), base_version=base))
        base += draw(st.integers(0, 3))
    ids = [r.run_id for r in runs]
    versions = [VersionRow(version=v, made_by_run_id=draw(st.sampled_from([None, *ids])),
                           created_at=NOW - draw(st.floats(0, 120)) * DAY)
                for v in range(1, draw(st.integers(0, 40)) + 1)]
    named = st.sampled_from([None, *ids])
    current = CurrentBookmark(version=draw(st.integers(0, 60)), run=draw(st.integers(0, 30)),
                              run_id=draw(named), previous_run_id=draw(named))
    return runs, versions, current


policies = st.builds(RetentionPolicy, keep_days=st.floats(0, 60), keep_runs=st.integers(0, 15))


@settings(max_examples=150, deadline=None)
@given(history=histories(), policy=policies)
def test_a_prune_never_deletes_a_needed_row(
        history: tuple[list[RunRow], list[VersionRow], CurrentBookmark],
        policy: RetentionPolicy) -> None:
    runs, versions, current = history
    decision = decide(runs, versions, current, policy, NOW)
    gone = set(decision.runs)
    kept = [r for r in runs if r.run_id not in gone]
    cutoff = NOW - policy.keep_days * DAY
    last = runs[-policy.keep_runs:] if policy.keep_runs else []
    for r in runs:
        if r.run_id in gone:
            # Only outside the window: older than keep_days and not among the last keep_runs.
            assert r.started_at < cutoff and r not in last
            # Never what a retry (the run now due, or one still running) or the bookmark needs.
            assert r.status != "RUNNING"
            assert not (r.run > current.run and r.bookmark_option in TRACKING)
            assert r.run_id not in (current.run_id, current.previous_run_id)
    # The window is whole: after its oldest run nothing is deleted, so a replay --from/--to
    # between two runs of the window finds every run in between.
    window = [r for r in runs if r.started_at >= cutoff] + last
    if window:
        first = min(r.seq for r in window)
        assert all(r.seq < first for r in runs if r.run_id in gone)
        assert decision.window_start_seq == first
    gone_versions = set(decision.versions)
    kept_ids = {r.run_id for r in kept}
    for v in versions:
        if v.version in gone_versions:
            assert v.version != current.version
            assert v.created_at < cutoff
            # A rewind to a kept run finds the version its commit made.
            assert v.made_by_run_id not in kept_ids or v.made_by_run_id is None
    assert len(gone) == len(decision.runs) and len(gone_versions) == len(decision.versions)


@settings(max_examples=100, deadline=None)
@given(history=histories(), policy=policies)
def test_deciding_on_the_rows_before_the_window_deletes_the_same(
        history: tuple[list[RunRow], list[VersionRow], CurrentBookmark],
        policy: RetentionPolicy) -> None:
    """The store reads only the runs before the window's oldest run (the first of the last
    keep_runs, or the first that started within keep_days) and the versions before the one
    that run started from, and asks with keep_runs=0: it deletes what a decision over every
    row deletes."""
    runs, versions, current = history
    # Versions as a store has them: one made by a run is newer than the run's base version.
    by_id = {r.run_id: r for r in runs}
    versions = [v for v in versions if v.made_by_run_id is None
                or v.version > by_id[v.made_by_run_id].base_version]
    whole = decide(runs, versions, current, policy, NOW)
    cutoff = NOW - policy.keep_days * DAY
    starts = [r.seq for r in runs if r.started_at >= cutoff]
    if policy.keep_runs:
        if len(runs) < policy.keep_runs:
            assert whole.runs == ()
            return
        starts.append(runs[-policy.keep_runs].seq)
    first = min(starts, default=None)
    head = [r for r in runs if first is None or r.seq < first]
    floor = next((r.base_version for r in runs if r.seq == first), None)
    older = [v for v in versions if floor is None or v.version < floor]
    part = decide(head, older, current, RetentionPolicy(policy.keep_days, 0), NOW)
    assert part.runs == whole.runs
    assert part.versions == whole.versions


def test_policy_refuses_bad_values() -> None:
    for bad in ({"keep_days": -1}, {"keep_days": math.nan}, {"keep_runs": -2},
                {"keep_runs": 1.5}, {"keep_runs": True}):
        with pytest.raises(ConfigError, match="keep-"):
            RetentionPolicy(**bad)  # type: ignore[arg-type]


def test_a_job_within_its_window_keeps_everything() -> None:
    runs = [RunRow(i, f"jr_{i}", i, "SUCCEEDED", "enable", NOW - i, i - 1) for i in range(1, 6)]
    assert decide(runs, [], CurrentBookmark(5, 5, "jr_5"), RetentionPolicy(), NOW).runs == ()
