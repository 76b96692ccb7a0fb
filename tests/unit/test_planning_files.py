"""The file planner: Glue's MaxBand semantics made exact, bounded runs, and the band cap.

Pure Python: no JVM, no I/O.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning import (
    FileEntry,
    FileOptions,
    FileState,
    ListingOptions,
    plan_everything,
    plan_files,
    resume_after,
)

MIN = 60_000


def f(path: str, mtime: int, size: int = 1) -> FileEntry:
    return FileEntry(mtime=mtime, path=path, size=size)


def names(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.path for e in plan.files]


def test_seed_example_late_arrivals_inside_the_band_are_taken_once() -> None:
    """Glue's F3'/F4'/F5' example: listing inconsistency at T1 is healed at T2."""
    dt = 15 * MIN
    t0, t1 = 0, 100 * MIN
    t2 = t1 + 60 * MIN
    first = [
        f("F1", t0),  # at T0: not after the (empty) window's low? first run takes everything
        f("F2", t1 - 40 * MIN),
        f("F3", t1 - 12 * MIN),
        f("F4", t1 - 8 * MIN),
        f("F5", t1 - 2 * MIN),
    ]
    run1 = plan_files(None, first, now_ms=t1, options=FileOptions(max_band_ms=dt))
    assert names(run1) == ["F1", "F2", "F3", "F4", "F5"]
    assert run1.next_state.high == t1
    # F3, F4 and F5 lie inside (T1 - dt, T1]: they are remembered by path.
    assert {p for p, _ in run1.next_state.band} == {"F3", "F4", "F5"}

    # At T2 the listing also shows F3', F4', F5' (modified at or before T1, visible only now).
    second = first + [
        f("F3'", t1 - 11 * MIN),
        f("F4'", t1 - 7 * MIN),
        f("F5'", t1 - 1 * MIN),
        f("F7", t1 + 10 * MIN),
        f("F8", t2 - dt),  # T2 - dt inclusive: the consistent range
        f("F9", t2 - dt + 1),
        f("F10", t2 - 1 * MIN),
    ]
    run2 = plan_files(run1.next_state, second, now_ms=t2, options=FileOptions(max_band_ms=dt))
    assert names(run2) == ["F3'", "F4'", "F5'", "F7", "F8", "F9", "F10"]
    # The new files of the inconsistent range are saved in the filter for the next run.
    assert {p for p, _ in run2.next_state.band} == {"F9", "F10"}
    assert run2.next_state.low == t1 and run2.next_state.high == t2

    # A third run with nothing new takes nothing.
    run3 = plan_files(run2.next_state, second, now_ms=t2 + MIN, options=FileOptions(max_band_ms=dt))
    assert names(run3) == []


def test_files_later_than_the_listing_wait_for_the_next_run() -> None:
    run1 = plan_files(None, [f("a", 10), f("b", 30)], now_ms=20)
    assert names(run1) == ["a"]
    run2 = plan_files(run1.next_state, [f("a", 10), f("b", 30)], now_ms=40)
    assert names(run2) == ["b"]


def test_a_file_modified_in_place_is_processed_again() -> None:
    run1 = plan_files(None, [f("a", 10)], now_ms=20)
    run2 = plan_files(run1.next_state, [f("a", 25)], now_ms=30)
    assert names(run2) == ["a"]
    # Even a rewrite that keeps an old mtime inside the band is seen (path+mtime differ).
    run3 = plan_files(run2.next_state, [f("a", 22)], now_ms=40)
    assert names(run3) == ["a"]


def test_late_file_older_than_the_band_is_passed_over_as_documented() -> None:
    opts = FileOptions(max_band_ms=5)
    run1 = plan_files(None, [f("a", 10)], now_ms=100, options=opts)
    run2 = plan_files(run1.next_state, [f("a", 10), f("late", 50)], now_ms=200, options=opts)
    assert names(run2) == []


def test_five_thousand_files_with_one_mtime_take_exactly_five_bounded_runs() -> None:
    listing = [f(f"s3://b/in/part-{i:05d}.json", 1_700_000_000_000) for i in range(5000)]
    opts = FileOptions(bounded_files=1000)
    state = None
    seen: list[str] = []
    runs = 0
    now = 1_700_000_100_000
    while True:
        plan = plan_files(state, listing, now_ms=now, options=opts)
        if not plan.files:
            break
        runs += 1
        seen.extend(names(plan))
        state = plan.next_state
        now += 1000
    assert runs == 5
    assert sorted(seen) == sorted(e.path for e in listing)
    assert len(seen) == len(set(seen))


def test_bounded_size_cuts_by_bytes_but_always_makes_progress() -> None:
    listing = [f("a", 1, 60), f("b", 2, 60), f("c", 3, 200), f("d", 4, 10)]
    opts = FileOptions(bounded_size=100)
    p1 = plan_files(None, listing, now_ms=10, options=opts)
    assert names(p1) == ["a"] and p1.pending == 3
    p2 = plan_files(p1.next_state, listing, now_ms=10, options=opts)
    assert names(p2) == ["b"]
    p3 = plan_files(p2.next_state, listing, now_ms=10, options=opts)
    assert names(p3) == ["c"]  # larger than the bound on its own: still taken
    p4 = plan_files(p3.next_state, listing, now_ms=10, options=opts)
    assert names(p4) == ["d"] and p4.pending == 0


def test_max_band_zero_with_bounded_cut_on_equal_mtimes_keeps_every_file() -> None:
    listing = [f(f"p{i}", 7) for i in range(10)]
    opts = FileOptions(max_band_ms=0, bounded_files=3)
    state, seen = None, []
    for _ in range(10):
        plan = plan_files(state, listing, now_ms=100, options=opts)
        seen += names(plan)
        state = plan.next_state
    assert seen == [f"p{i}" for i in range(10)]


def test_band_cap_bounds_state_without_losing_listed_files() -> None:
    listing = [f(f"p{i:04d}", 1000 + i % 3) for i in range(3000)]
    opts = FileOptions(max_files_in_band=100, bounded_files=700)
    state, seen = None, []
    for _ in range(10):
        plan = plan_files(state, listing, now_ms=2000, options=opts)
        seen += names(plan)
        state = plan.next_state
        assert len(state.band) <= 100
    assert sorted(seen) == sorted(e.path for e in listing)
    assert len(seen) == len(set(seen))


def test_state_round_trips_through_json() -> None:
    plan = plan_files(None, [f("a", 10), f("b", 11)], now_ms=12,
                      options=FileOptions(bounded_files=1))
    again = FileState.from_json(plan.next_state.to_json())
    assert again == plan.next_state


def test_disable_plans_everything() -> None:
    assert names(plan_everything([f("b", 2), f("a", 1)])) == ["a", "b"]


@pytest.mark.parametrize(
    "kwargs, option",
    [
        ({"max_band_ms": -1}, "maxBand"),
        ({"bounded_files": 0}, "boundedFiles"),
        ({"bounded_size": -5}, "boundedSize"),
        ({"max_files_in_band": "10"}, "maxFilesInBand"),
        ({"bounded_files": 1, "bounded_size": 1}, "boundedFiles"),
    ],
)
def test_invalid_options_name_the_option(kwargs: dict, option: str) -> None:
    with pytest.raises(ConfigError, match=option):
        FileOptions(**kwargs)


# --------------------------------------------------------------------------------------------
# Property: any arrival order, mtimes, band sizes and bounds.


@dataclass(frozen=True)
class Arrival:
    path: str
    mtime: int
    visible_at: int  # when the file first appears in a listing
    size: int


arrivals = st.lists(
    st.builds(
        lambda i, m, delay, size: Arrival(f"f{i:03d}", m, m + delay, size),
        st.integers(0, 999),
        st.integers(0, 200),
        st.integers(0, 60),
        st.integers(1, 50),
    ),
    max_size=60,
    unique_by=lambda a: a.path,
)


@settings(max_examples=300, deadline=None)
@given(
    arrivals=arrivals,
    band=st.integers(0, 80),
    bounded=st.one_of(st.none(), st.integers(1, 7)),
    bounded_size=st.one_of(st.none(), st.integers(1, 120)),
    cap=st.one_of(st.none(), st.integers(1, 6)),
    step=st.integers(1, 40),
)
def test_every_file_is_taken_at_most_once_and_only_too_late_ones_are_missed(
    arrivals: list[Arrival],
    band: int,
    bounded: int | None,
    bounded_size: int | None,
    cap: int | None,
    step: int,
) -> None:
    opts = FileOptions(
        max_band_ms=band,
        bounded_files=bounded,
        bounded_size=None if bounded else bounded_size,
        max_files_in_band=cap,
    )
    state: FileState | None = None
    taken: list[str] = []
    highs: list[int] = []
    first_seen: dict[str, FileState | None] = {}  # the state before the run that first listed it
    now = 0
    # Keep running until everything visible has been offered and the planner is idle.
    horizon = max((a.visible_at for a in arrivals), default=0) + 300
    while now <= horizon + 50 * (len(arrivals) + 1):
        listing = [FileEntry(a.mtime, a.path, a.size) for a in arrivals if a.visible_at <= now]
        for e in listing:
            first_seen.setdefault(e.path, state)
        plan = plan_files(state, listing, now_ms=now, options=opts)
        assert list(plan.files) == sorted(plan.files)
        taken += [e.path for e in plan.files]
        state = plan.next_state
        highs.append(state.high if state.high is not None else -1)
        if now > horizon and not plan.files and plan.pending == 0:
            break
        now += step
    assert len(taken) == len(set(taken)), "a file was processed twice"
    assert highs == sorted(highs), "the high watermark went backwards"
    missed = {a.path for a in arrivals} - set(taken)
    for a in arrivals:
        if a.path in missed:
            # The only way to be passed over: when the file was first listed, its key was
            # already at or below the state's floor — the MaxBand window's lower edge
            # (high - maxBand) or the floor that maxFilesInBand raised.
            before = first_seen[a.path]
            assert before is not None and below_floor((a.mtime, a.path), before, band), (
                f"{a} was missed although it was listed above the floor ({before})"
            )


def below_floor(key: tuple[int, str], state: FileState, band: int) -> bool:
    """Whether ``key`` is at or below the state's floor (a bound ``(ms, None)`` covers all of
    that millisecond; ``(ms, path)`` the keys up to that path)."""
    assert state.high is not None
    bounds: list[tuple[int, str | None]] = [(state.high - band, None)]
    if state.floor is not None:
        bounds.append(state.floor)
    return any(key[0] < ms or (key[0] == ms and (path is None or key[1] <= path))
               for ms, path in bounds)


@settings(max_examples=300, deadline=None)
@given(
    arrivals=arrivals,
    band=st.integers(0, 80),
    bounded=st.one_of(st.none(), st.integers(1, 7)),
    step=st.integers(1, 40),
    runs=st.integers(1, 12),
)
def test_listing_only_after_the_resume_key_plans_what_a_full_listing_plans(
    arrivals: list[Arrival], band: int, bounded: int | None, step: int, runs: int
) -> None:
    # The contract of incremental listing: keys grow in the order files appear.
    arrivals = [dataclasses.replace(a, path=f"k{i:03d}") for i, a in enumerate(
        sorted(arrivals, key=lambda a: (a.visible_at, a.path)))]
    # Every run that lists only the paths after the previous run's resume key plans exactly
    # what a run over the full listing would (same files, same waiting count, same state).
    opts = FileOptions(max_band_ms=band, bounded_files=bounded)
    state: FileState | None = None
    resume: str | None = None
    now = 0
    for _ in range(runs):
        listing = [FileEntry(a.mtime, a.path, a.size) for a in arrivals if a.visible_at <= now]
        partial_listing = [e for e in listing if resume is None or e.path > resume]
        full = plan_files(state, listing, now_ms=now, options=opts)
        plan = plan_files(state, partial_listing, now_ms=now, options=opts)
        assert (plan.files, plan.pending, plan.next_state) == \
            (full.files, full.pending, full.next_state)
        new_resume = resume_after(state, partial_listing, plan, now, opts, resume)
        assert resume is None or (new_resume is not None and new_resume >= resume)
        resume = new_resume
        state = plan.next_state
        now += step


def test_listing_options_start_after_and_count_runs_to_the_full_listing() -> None:
    opts = ListingOptions(incremental=True, full_listing_every=3)
    assert opts.start_after(None, "s3://b/p") is None  # no key yet: full listing
    element = opts.next_element(None, {"s3://b/p": "s3://b/p/k1"}, full=True)
    assert element == {"after": {"s3://b/p": "s3://b/p/k1"}, "since_full": 0}
    assert opts.start_after({"listing": element}, "s3://b/p") == "s3://b/p/k1"
    assert opts.start_after({"listing": element}, "s3://b/other") is None
    element = opts.next_element({"listing": element}, {"s3://b/p": "s3://b/p/k2"}, full=False)
    assert element["since_full"] == 1
    assert opts.start_after({"listing": {**element, "since_full": 2}}, "s3://b/p") is None
    assert ListingOptions().start_after({"listing": element}, "s3://b/p") is None
    assert ListingOptions().next_element(None, {}, full=True) is None
    with pytest.raises(ConfigError, match="fullListingEvery"):
        ListingOptions(incremental=True, full_listing_every=0)
