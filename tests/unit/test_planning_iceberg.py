"""The Iceberg snapshot planner: every appended snapshot is taken exactly once, run after run.

Pure Python: no catalog, no Spark.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import SourceError
from lakemark.planning.iceberg import (
    SKIP_CHANGES,
    SKIP_DELETE,
    IcebergState,
    SnapshotInfo,
    plan_snapshots,
    skip_options,
)

T = "db.events"


def chain(operations: list[str], first_id: int = 100) -> list[SnapshotInfo]:
    out: list[SnapshotInfo] = []
    for i, op in enumerate(operations):
        out.append(SnapshotInfo(first_id + i, out[-1].snapshot_id if out else None, op))
    return out


@settings(max_examples=150, deadline=None)
@given(operations=st.lists(st.sampled_from(["append", "append", "replace", "overwrite",
                                            "delete"]), min_size=1, max_size=25),
       cuts=st.lists(st.integers(0, 24), max_size=6),
       skip=st.booleans(), shuffle=st.randoms())
def test_runs_take_every_append_once_in_order(operations: list[str], cuts: list[int],
                                              skip: bool, shuffle: object) -> None:
    snapshots = chain(operations)
    listed = list(snapshots)
    shuffle.shuffle(listed)  # type: ignore[attr-defined]
    ids = [s.snapshot_id for s in snapshots]
    # A first run at a pinned snapshot, then runs pinned at later snapshots.
    pins = sorted({min(c, len(ids) - 1) for c in cuts} | {len(ids) - 1})
    state = IcebergState(T)
    taken: list[int] = []
    first_pin = pins[0]
    for pin in pins:
        try:
            rng = plan_snapshots(T, listed, state.snapshot_id, ids[pin], skip_overwrite=skip,
                                 skip_delete=skip)
        except SourceError as exc:
            between = operations[ids.index(state.snapshot_id) + 1:pin + 1]
            assert not skip and {"overwrite", "delete"} & set(between)
            assert "db.events" in str(exc) and "streaming-skip-" in str(exc)
            return
        if rng.full:
            assert state.snapshot_id is None and rng.through == ids[pin]
        else:
            taken.extend(rng.take)
            assert set(rng.take) | set(rng.skipped) | set(rng.ignored) == \
                set(ids[ids.index(rng.after) + 1:pin + 1])
        assert rng.to_json()["through"] == ids[pin]
        state = rng.next_state
    later = [i for i, op in zip(ids[first_pin + 1:], operations[first_pin + 1:]) if op == "append"]
    assert taken == later  # each append after the first run once, oldest first


def test_first_run_reads_the_table_and_an_empty_table_plans_nothing() -> None:
    snapshots = chain(["append", "overwrite", "append"])
    rng = plan_snapshots(T, snapshots, None, 102)
    assert (rng.full, rng.through, rng.empty) == (True, 102, False)
    empty = plan_snapshots(T, [], None, None)
    assert empty.empty and empty.next_state.snapshot_id is None
    same = plan_snapshots(T, snapshots, 102, 102)
    assert same.empty and same.next_state.snapshot_id == 102


def test_history_that_lost_the_bookmarked_snapshot_is_refused() -> None:
    snapshots = chain(["append", "append"]) + [SnapshotInfo(500, 100, "append")]
    with pytest.raises(SourceError, match="101.*not an ancestor of the current snapshot 500"):
        plan_snapshots(T, snapshots, 101, 500)
    with pytest.raises(SourceError, match="no snapshot 7"):
        plan_snapshots(T, snapshots, 100, 7)


def test_skip_options() -> None:
    assert skip_options({}) == (False, False)
    assert skip_options({SKIP_CHANGES: "true"}) == (True, True)
    assert skip_options({SKIP_DELETE.upper(): "TRUE"}) == (False, True)
    with pytest.raises(SourceError, match=SKIP_DELETE):
        skip_options({SKIP_DELETE: "yes"})
    with pytest.raises(SourceError, match="'files'"):
        IcebergState.from_json({"kind": "files"}, T)
