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


# -- files changed after an earlier take: the policy (planning/modified.py) -------------------

from lakemark.planning import (  # noqa: E402 - grouped with the tests that use them
    EarlierTake,
    candidate_paths,
    check_modified_policy,
    leave_out,
)


def _taken(plan, run: int, earlier: dict) -> None:  # type: ignore[no-untyped-def]
    """What the state store would record for ``plan``'s files (the last take per path)."""
    for e in plan.files:
        earlier[e.path] = EarlierTake(e.path, e.mtime, e.size, f"r{run}", run)


def _modified_story(policy: str):  # type: ignore[no-untyped-def]
    """log.json taken with 20 bytes in run 1, then appended to (35 bytes) before run 2."""
    options = FileOptions(modified=policy)
    earlier: dict[str, EarlierTake] = {}
    run1 = plan_files(None, [f("log.json", 10, 20)], now_ms=100, options=options)
    _taken(run1, 1, earlier)
    listing = [f("log.json", 150, 35), f("new.json", 140, 5)]
    wanted = candidate_paths(run1.next_state, listing, 200, options)
    assert sorted(wanted) == ["log.json", "new.json"]
    found = {p: earlier[p] for p in wanted if p in earlier}
    return plan_files(run1.next_state, listing, now_ms=200, options=options, earlier=found)


def test_retake_takes_a_modified_file_whole_and_says_which_run_took_it_before() -> None:
    run2 = _modified_story("retake")
    assert names(run2) == ["new.json", "log.json"]
    assert [e.offset for e in run2.files] == [0, 0]
    assert run2.taken_before["log.json"].run_id == "r1"
    assert "new.json" not in run2.taken_before
    assert run2.total_bytes == 40


def test_skip_passes_a_modified_file_over_and_does_not_look_at_it_again() -> None:
    run2 = _modified_story("skip")
    assert names(run2) == ["new.json"]
    assert [e.path for e in run2.skipped] == ["log.json"]
    # The skipped version is seen: the next run does not even consider it.
    again = candidate_paths(run2.next_state, [f("log.json", 150, 35)], 300,
                            FileOptions(modified="skip"))
    assert again == []


def test_append_takes_only_the_tail_past_the_size_taken_before() -> None:
    run2 = _modified_story("append")
    tail = next(e for e in run2.files if e.path == "log.json")
    assert (tail.offset, tail.size, tail.read_bytes) == (20, 35, 15)
    assert tail.to_json()["offset"] == 20
    assert run2.total_bytes == 15 + 5


@pytest.mark.parametrize("path,size", [("log.json", 10), ("log.json", 20), ("log.json.gz", 35)])
def test_append_retakes_whole_what_is_not_an_append(path: str, size: int) -> None:
    """A file that shrank or kept its size, or a compressed one: retaken whole, reported."""
    options = FileOptions(modified="append")
    earlier = {path: EarlierTake(path, 10, 20, "r1", 1)}
    plan = plan_files(FileState(high=100), [f(path, 150, size)], now_ms=200, options=options,
                      earlier=earlier)
    assert [(e.path, e.offset) for e in plan.files] == [(path, 0)]
    assert plan.taken_before[path].run == 1


def test_an_unchanged_file_after_a_reset_is_not_a_modification() -> None:
    """After a reset the same version is listed again: taken, not reported as a retake."""
    earlier = {"a": EarlierTake("a", 10, 5, "r1", 1)}
    for policy in ("retake", "skip", "append"):
        plan = plan_files(None, [f("a", 10, 5)], now_ms=100,
                          options=FileOptions(modified=policy), earlier=earlier)
        assert names(plan) == ["a"] and plan.taken_before == {} and plan.skipped == ()


def test_policy_names_are_checked_and_append_is_refused_for_columnar_formats() -> None:
    assert check_modified_policy(" Append ", format="json") == "append"
    with pytest.raises(ConfigError, match="option modified must be one of retake, skip, "
                                          "append, got 'again'"):
        FileOptions(modified="again")
    for fmt in ("parquet", "orc", "avro", "xml"):
        with pytest.raises(ConfigError, match=f"--on-modified append .*a {fmt} file"):
            check_modified_policy("append", format=fmt, option="--on-modified")


def test_leave_out_drops_the_file_from_the_input_and_the_band_and_the_next_run_takes_it() -> None:
    listing = [f("a", 10, 5), f("b", 20, 7)]
    plan = plan_files(None, listing, now_ms=100)
    kept = leave_out(plan, ["b"])
    assert names(kept) == ["a"] and kept.left_out == ("b",)
    assert ("b", 20) not in kept.next_state.band
    # b changed during the run (same millisecond as its old version, as S3's second-precision
    # Last-Modified can make it): the next run takes it all the same.
    nxt = plan_files(kept.next_state, [f("a", 10, 5), f("b", 20, 9)], now_ms=200)
    assert names(nxt) == ["b"]


# One source's life: files appear and grow between runs; some runs see a file change while
# they read it (it is left out). The store remembers the last take of each path.
_EVENTS = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(0, 5), st.integers(1, 9)), max_size=4),  # (file, grow)
        st.sets(st.integers(0, 5), max_size=2),  # files that change while the run reads them
        st.integers(1, 3),                       # bounded_files (3: effectively unbounded)
    ),
    min_size=1, max_size=8,
)


def _simulate(policy: str, events, max_band_ms: int):  # type: ignore[no-untyped-def]
    sizes: dict[str, int] = {}
    mtimes: dict[str, int] = {}
    earlier: dict[str, EarlierTake] = {}
    reads: dict[str, list[tuple[int, int]]] = {}   # path -> byte ranges taken
    versions_taken: dict[str, list[int]] = {}      # path -> sizes of the versions taken
    state = None
    clock = 1_000
    for run, (writes, changing, bound) in enumerate(events, start=1):
        for index, grow in writes:
            clock += 1
            path = f"p{index}"
            sizes[path] = sizes.get(path, 0) + grow
            mtimes[path] = clock
        clock += 1
        listing = [f(p, mtimes[p], sizes[p]) for p in sizes]
        options = FileOptions(max_band_ms=max_band_ms, modified=policy,
                              bounded_files=None if bound == 3 else bound)
        wanted = candidate_paths(state, listing, clock, options)
        plan = plan_files(state, listing, clock, options,
                          earlier={p: earlier[p] for p in wanted if p in earlier})
        assert set(plan.taken_before) <= {e.path for e in plan.files}
        for path, before in plan.taken_before.items():
            assert before == earlier[path]
        gone = [e.path for e in plan.files if int(e.path[1:]) in changing]
        plan = leave_out(plan, gone)
        for path in gone:  # the change lands during the run, after the listing
            clock += 1
            sizes[path] += 1
            mtimes[path] = clock
        for e in plan.files:
            reads.setdefault(e.path, []).append((e.offset, e.size))
            versions_taken.setdefault(e.path, []).append(e.size)
        _taken(plan, run, earlier)
        state = plan.next_state
        clock += 1
    # Settle: runs with no more writes until nothing is left.
    for run in range(len(events) + 1, len(events) + 40):
        clock += 1
        listing = [f(p, mtimes[p], sizes[p]) for p in sizes]
        options = FileOptions(max_band_ms=max_band_ms, modified=policy)
        wanted = candidate_paths(state, listing, clock, options)
        plan = plan_files(state, listing, clock, options,
                          earlier={p: earlier[p] for p in wanted if p in earlier})
        for e in plan.files:
            reads.setdefault(e.path, []).append((e.offset, e.size))
            versions_taken.setdefault(e.path, []).append(e.size)
        _taken(plan, run, earlier)
        state = plan.next_state
        if not plan.files:
            break
    return sizes, reads, versions_taken


@settings(max_examples=200, deadline=None)
@given(events=_EVENTS, max_band_ms=st.sampled_from([10_000, 900_000]))
def test_append_reads_every_byte_of_every_file_exactly_once(events, max_band_ms) -> None:
    """Files only grow: under ``append`` the ranges taken of a file tile it, no byte twice,
    none missed, whatever was left out because it changed during a run."""
    sizes, reads, _ = _simulate("append", events, max_band_ms)
    assert set(reads) == set(sizes)
    for path, ranges in reads.items():
        position = 0
        for start, end in ranges:
            assert start == position, (path, ranges)
            position = end
        assert position == sizes[path]


@settings(max_examples=200, deadline=None)
@given(events=_EVENTS, max_band_ms=st.sampled_from([10_000, 900_000]))
def test_retake_ends_with_every_file_taken_whole_at_its_last_version(events, max_band_ms) -> None:
    sizes, reads, versions = _simulate("retake", events, max_band_ms)
    assert set(reads) == set(sizes)
    for path, ranges in reads.items():
        assert all(start == 0 for start, _ in ranges)  # always whole
        assert versions[path][-1] == sizes[path]       # the last version is taken
        assert len(set(versions[path])) == len(versions[path])  # no version twice


@settings(max_examples=200, deadline=None)
@given(events=_EVENTS, max_band_ms=st.sampled_from([10_000, 900_000]))
def test_skip_takes_each_file_once_whole(events, max_band_ms) -> None:
    """A file left out because it changed while read was not taken: it is still taken once."""
    sizes, reads, _ = _simulate("skip", events, max_band_ms)
    assert set(reads) == set(sizes)
    for ranges in reads.values():
        assert len(ranges) == 1 and ranges[0][0] == 0
