"""The Hudi instant planner: every inserted row is read exactly once, run after run.

Pure Python: a model of a copy-on-write table (file groups, base-file slices and the
``.hoodie/`` names a writer leaves) stands in for the table; no hudi-rs, no Spark.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError, SourceError
from lakemark.planning.hudi import (
    CommitInfo,
    HudiChangeError,
    HudiState,
    Instant,
    PlannedFile,
    WriteStat,
    first_range,
    parse_commit_metadata,
    parse_hudi_options,
    parse_timeline_name,
    pin_instant,
    plan_instants,
    timeline_of,
)

T = "/lake/events"
Row = tuple[int, str]  # (id, _hoodie_commit_time)


@dataclass
class Model:
    """A copy-on-write table as the planner sees it, and the rows each base file holds."""

    clock: int = 0
    next_id: int = 0
    names: set[str] = field(default_factory=set)
    groups: dict[str, list[Row]] = field(default_factory=dict)
    slices: dict[str, list[Row]] = field(default_factory=dict)
    infos: dict[str, CommitInfo] = field(default_factory=dict)
    pending: list[tuple[str, int]] = field(default_factory=list)
    inserted: dict[str, list[Row]] = field(default_factory=dict)

    def instant(self) -> str:
        self.clock += 1
        return str(20260101000000000 + self.clock * 1000)

    def _complete(self, time: str, action: str, info: CommitInfo | None) -> None:
        self.names |= {f"{time}.{action}.requested", f"{time}.{action}"}
        if info is not None:
            self.infos[time] = info

    def _write(self, time: str, file_id: str, rows: list[Row], *, inserts: int = 0,
               updates: int = 0, deletes: int = 0) -> WriteStat:
        path = f"p/{file_id}_0-1-1_{time}.parquet"
        self.groups[file_id] = rows
        self.slices[path] = list(rows)
        return WriteStat(file_id, path, 10, inserts, updates, deletes)

    def _new_rows(self, time: str, count: int) -> list[Row]:
        rows = [(self.next_id + i, time) for i in range(count)]
        self.next_id += count
        self.inserted[time] = rows
        return rows

    def insert(self, count: int, merge: bool) -> None:
        time = self.instant()
        rows = self._new_rows(time, count)
        target = next(iter(self.groups), None) if merge else None
        file_id = target or f"fg{time}"
        stat = self._write(time, file_id, self.groups.get(file_id, []) + rows, inserts=count)
        self._complete(time, "commit", CommitInfo(time, "commit", "INSERT", (stat,)))

    def start(self, count: int) -> None:
        time = self.instant()
        self.names |= {f"{time}.commit.requested", f"{time}.inflight"}
        self.pending.append((time, count))

    def finish(self, index: int) -> None:
        if not self.pending:
            return
        time, count = self.pending.pop(index % len(self.pending))
        rows = self._new_rows(time, count)
        stat = self._write(time, f"fg{time}", rows, inserts=count)
        self._complete(time, "commit", CommitInfo(time, "commit", "UPSERT", (stat,)))

    def roll_back(self, index: int) -> None:
        if not self.pending:
            return
        undone, _ = self.pending.pop(index % len(self.pending))
        self.names -= {f"{undone}.commit.requested", f"{undone}.inflight"}
        time = self.instant()
        self._complete(time, "rollback", CommitInfo(time, "rollback", rolled_back=(undone,)))

    def update(self, delete: bool) -> None:
        live = [(g, r) for g, rows in self.groups.items() for r in rows]
        if not live:
            return
        group, (key, _) = live[0]
        time = self.instant()
        rows = [r for r in self.groups[group] if r[0] != key] if delete else \
            [(k, time if k == key else c) for k, c in self.groups[group]]
        stat = self._write(time, group, rows, updates=0 if delete else 1,
                           deletes=1 if delete else 0)
        self._complete(time, "commit", CommitInfo(time, "commit",
                                                  "DELETE" if delete else "UPSERT", (stat,)))

    def cluster(self) -> None:
        if not self.groups:
            return
        time = self.instant()
        old = list(self.groups)
        rows = [r for g in old for r in self.groups.pop(g)]
        stat = self._write(time, f"fg{time}", rows, inserts=len(rows))
        self._complete(time, "replacecommit", CommitInfo(time, "replacecommit", "CLUSTER",
                                                         (stat,), tuple(old)))

    def clean(self) -> None:
        time = self.instant()
        self._complete(time, "clean", None)

    def read(self, files: tuple[PlannedFile, ...],
             one: tuple[str, ...] | None = None) -> list[Row]:
        """The rows the planned files hold, kept per file, or by ``one`` filter for all."""
        return [r for f in files for r in self.slices[f.path]
                if r[1] in (f.commits if one is None else one)]


OPS = st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 3), st.booleans()),
    st.tuples(st.just("start"), st.integers(1, 3), st.just(False)),
    st.tuples(st.just("finish"), st.integers(0, 5), st.just(False)),
    st.tuples(st.just("rollback"), st.integers(0, 5), st.just(False)),
    st.tuples(st.just("update"), st.just(0), st.booleans()),
    st.tuples(st.just("cluster"), st.just(0), st.just(False)),
    st.tuples(st.just("clean"), st.just(0), st.just(False)),
    st.tuples(st.just("run"), st.just(0), st.just(False)),
)


def _plan(model: Model, state: HudiState, skip: bool):  # type: ignore[no-untyped-def]
    timeline = timeline_of(model.names)
    pinned, _ = pin_instant(timeline)
    after = state.instant
    details = {t: i for t, i in model.infos.items()
               if (after is None or t > after) and pinned is not None and t <= pinned}
    return plan_instants(T, timeline, after, pinned, details, bookmark=after,
                         known=state.known, skip_change_commits=skip)


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(OPS, max_size=30), skip=st.booleans())
# a skipped update rewrites a group between two inserts into it; a clustering moves rows of a
# commit in range into a group a later insert writes
@example(ops=[("insert", 2, False), ("update", 0, False), ("insert", 1, True), ("run", 0, False)],
         skip=True)
@example(ops=[("insert", 2, False), ("cluster", 0, False), ("insert", 1, True)], skip=False)
def test_every_inserted_row_is_read_once(ops: list[tuple[str, int, bool]], skip: bool) -> None:
    model = Model()
    state = HudiState(T)
    read: list[Row] = []
    skipped: set[str] = set()
    changes = False
    for op, number, flag in ops + [("drain", 0, False)]:
        if op == "insert":
            model.insert(number, flag)
        elif op == "start":
            model.start(number)
        elif op == "finish":
            model.finish(number)
        elif op == "rollback":
            model.roll_back(number)
        elif op == "update":
            model.update(flag)
            changes = changes or bool(model.groups)
        elif op == "cluster":
            model.cluster()
        elif op == "clean":
            model.clean()
        if op not in ("run", "drain"):
            continue
        if op == "drain":
            while model.pending:
                model.finish(0)
        try:
            rng = _plan(model, state, skip)
        except HudiChangeError as exc:
            assert not skip and changes and T in str(exc) and "skipChangeCommits" in str(exc)
            return
        assert state.instant is None or rng.through is None or rng.through >= state.instant
        read += model.read(rng.files, rng.range_filter)
        skipped |= set(rng.skipped)
        state = rng.next_state
    assert not model.pending
    expected = [r for time, rows in model.inserted.items() if time not in skipped
                for r in rows]
    assert Counter(read) == Counter(expected)
    assert len(set(read)) == len(read)


# --------------------------------------------------------------------------- timeline

def test_timeline_names() -> None:
    assert parse_timeline_name("20260101000000000.commit") == \
        Instant("20260101000000000", "commit")
    assert parse_timeline_name("20260101000000000.inflight") == \
        Instant("20260101000000000", "commit", "inflight")
    assert parse_timeline_name("20260101000000000.replacecommit.requested") == \
        Instant("20260101000000000", "replacecommit", "requested")
    assert parse_timeline_name("hoodie.properties") is None
    assert parse_timeline_name("archived") is None
    timeline = timeline_of(["1.commit", "20260101000000001.commit.requested",
                            "20260101000000001.inflight", "20260101000000001.commit",
                            "20260101000000002.commit.requested",
                            "20260101000000003.commit.requested",
                            "20260101000000003.inflight", "20260101000000003.commit",
                            "20260101000000004.clean"])
    assert [i.time[-1] for i in timeline.completed] == ["1", "3", "4"]
    assert timeline.pending == (Instant("20260101000000002", "commit", "requested"),)
    pinned, held = pin_instant(timeline)
    assert pinned == "20260101000000001" and held == timeline.pending[0]
    assert pin_instant(timeline_of([])) == (None, None)


def test_commit_metadata_and_options() -> None:
    text = ('{"partitionToWriteStats": {"day=1": [{"fileId": "f-0", "path": "day=1/f.parquet",'
            ' "numInserts": 2, "numUpdateWrites": 1, "numDeletes": 0, '
            '"fileSizeInBytes": 99}]}, "operationType": "UPSERT"}')
    info = parse_commit_metadata("20260101000000001", "commit", text)
    assert info.writes == (WriteStat("f-0", "day=1/f.parquet", 99, 2, 1, 0),)
    assert info.changes_rows
    with pytest.raises(SourceError, match="20260101000000009 .commit.: its metadata is not"):
        parse_commit_metadata("20260101000000009", "commit", "\x00avro")
    assert parse_hudi_options({"SKIPCHANGECOMMITS": "true"}, T).skip_change_commits
    assert parse_hudi_options({"startingInstant": "20260101000000"}, T).starting_instant \
        == "20260101000000"
    with pytest.raises(ConfigError, match="option 'readChangeFeed' is not supported for Hudi "
                                          "table /lake/events"):
        parse_hudi_options({"readChangeFeed": "true"}, T)
    with pytest.raises(ConfigError, match="startingInstant must be an instant time"):
        parse_hudi_options({"startingInstant": "yesterday"}, T)
    with pytest.raises(ConfigError, match="skipChangeCommits must be true or false"):
        parse_hudi_options({"skipChangeCommits": "maybe"}, T)
    assert first_range("20260101000000005", None) == (None, True)
    assert first_range("20260101000000005", "latest") == ("20260101000000005", False)
    assert first_range("20260101000000005", "2026") == ("2026", False)


# ------------------------------------------------------------------------- refusals

def _table(*ops: str) -> Model:
    model = Model()
    for op in ops:
        {"insert": lambda: model.insert(1, False), "merge": lambda: model.insert(1, True),
         "update": lambda: model.update(False), "delete": lambda: model.update(True),
         "cluster": model.cluster, "clean": model.clean}[op]()
    return model


def test_change_commits_are_refused_by_name_or_skipped_whole() -> None:
    model = _table("insert", "update", "merge")
    update = sorted(model.infos)[1]
    with pytest.raises(HudiChangeError) as caught:
        _plan(model, HudiState(T), skip=False)
    assert str(caught.value) == (
        f"Hudi table {T}: instant {update} (upsert) updates, deletes or replaces rows, and a "
        "Hudi table source takes inserts only: set skipChangeCommits=true to skip such "
        "instants (their rows are then not read)")
    rng = _plan(model, HudiState(T), skip=True)
    assert rng.skipped == (update,)
    # The group was rewritten by the skipped update: each taken slice is read on its own.
    assert [f.commits for f in rng.files] == [(t,) for t in rng.take]
    assert sorted(model.read(rng.files)) == [(0, rng.take[0]), (1, rng.take[1])]


def test_clustering_and_cleans_are_ignored() -> None:
    model = _table("insert", "cluster", "clean", "merge")
    first, cluster, merge = sorted(model.infos)  # the clean has no metadata here
    rng = _plan(model, HudiState(T), skip=False)
    assert set(rng.ignored) >= {cluster} and rng.take == (first, merge)
    # the merged insert landed in the clustered group, whose rows keep their commit times
    assert sorted(model.read(rng.files)) == [(0, first), (1, merge)]


def test_bookmark_gone_restore_and_rollbacks() -> None:
    model = _table("insert", "insert")
    first, second = sorted(model.infos)
    timeline = timeline_of(model.names)
    with pytest.raises(SourceError, match=r"instant 20250101000000000, where the last run "
                                          r"stopped, is no longer on the active timeline "
                                          r"\(archived since\)"):
        plan_instants(T, timeline, "20250101000000000", second, {},
                      bookmark="20250101000000000")
    with pytest.raises(SourceError, match=r"is no longer on the timeline \(rolled back"):
        plan_instants(T, timeline, first + "1", second, {}, bookmark=first + "1")
    rollback = str(int(second) + 1000)
    names = model.names | {f"{rollback}.rollback"}
    info = {second: model.infos[second],
            rollback: CommitInfo(rollback, "rollback", rolled_back=(first,))}
    with pytest.raises(HudiChangeError, match=f"instant {rollback} .rollback. rolled back "
                                              f"{first}, whose rows earlier runs may have"):
        plan_instants(T, timeline_of(names), first, rollback, info, bookmark=first)
    with pytest.raises(HudiChangeError, match=f"instant {rollback} .rollback. rolled back "
                                              "instants it does not name"):
        plan_instants(T, timeline_of(names), first, rollback, {second: model.infos[second]})
    # A rollback that had completed when the bookmark was pinned undid nothing it read.
    seen = plan_instants(T, timeline_of(names), first, rollback, info, bookmark=first,
                         known=(rollback,))
    assert seen.take == (second,) and seen.ignored == (rollback,) and seen.known == ()
    pinned_before = plan_instants(T, timeline_of(names), None, second, model.infos)
    assert pinned_before.next_state.known == (rollback,)
    restore = timeline_of(model.names | {f"{rollback}.restore"})
    with pytest.raises(HudiChangeError, match=f"instant {rollback} .restore. restored"):
        plan_instants(T, restore, first, rollback, {second: model.infos[second]})
    mor = timeline_of(model.names | {f"{rollback}.deltacommit"})
    with pytest.raises(SourceError, match="deltacommit, which only merge-on-read tables"):
        plan_instants(T, mor, first, rollback, {second: model.infos[second]})


def test_snapshot_latest_and_nothing_new() -> None:
    files = (PlannedFile("p/a.parquet", 5, "20260101000001000"),)
    model = _table("insert")
    (only,) = model.infos
    timeline = timeline_of(model.names)
    rng = plan_instants(T, timeline, None, only, {}, full=True, snapshot_files=files)
    assert rng.full and rng.files == files and rng.next_state == HudiState(T, only)
    assert rng.to_json()["mode"] == "snapshot"
    empty = plan_instants(T, timeline, only, only, {}, bookmark=only)
    assert empty.empty and empty.next_state.instant == only
    assert plan_instants(T, timeline_of([]), None, None, {}).next_state.instant is None
    with pytest.raises(ConfigError, match="ctx 'c' holds state of a 'files' source"):
        HudiState.from_json({"source": "/x"}, T, "c")
