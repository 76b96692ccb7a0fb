"""The S3-events planner (``lakemark.planning.events``): which objects a run takes from the
events it reads, and where the next run resumes. Pure Python: no Delta table, no S3.

The property test plays a whole history: commits of created/removed events arrive in batches,
and after each batch runs with random ``max_files`` / ``max_bytes`` bounds take what they may,
resuming from the checkpoint the previous run committed; a final unbounded run drains the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.events import (
    BACKFILL_EVENT,
    STATE_KIND,
    ObjectFilter,
    Position,
    S3EventRecord,
    backfill_events,
    latest_per_object,
    resume_point,
    select_objects,
    take_objects,
)

SOURCE = "s3://events-table"


@dataclass
class Table:
    """An events table as the planner sees it: rows with their commit version."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    version: int | None = None
    clock: int = 0

    def commit(self, events: list[tuple[str, bool, int, int]]) -> None:
        """One commit; each event's ``happened`` orders it (sequencer and event time) apart
        from the commit it arrives in, as late SQS deliveries do."""
        self.version = 0 if self.version is None else self.version + 1
        for key, created, size, happened in events:
            self.clock += 1
            record = S3EventRecord("bk", key, "ObjectCreated:Put" if created else
                                   "ObjectRemoved:Delete", 1_000 + happened,
                                   size if created else None, None, None,
                                   f"{happened:04X}{self.clock:04X}")
            self.rows.append({**record.to_row(), "_commit_version": self.version})

    def after(self, version: int | None) -> list[dict[str, Any]]:
        return [r for r in self.rows if version is None or r["_commit_version"] > version]

    def earlier(self, version: int | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        touched = {(r["bucket"], r["key"]) for r in rows}
        return [r for r in self.rows if version is not None and r["_commit_version"] <= version
                and (r["bucket"], r["key"]) in touched]


def plan(table: Table, state: dict[str, Any] | None, *, max_files: int | None = None,
         max_bytes: int | None = None, keep: ObjectFilter | None = None
         ) -> tuple[Any, list[Position]]:
    """One run: its plan and the positions of the events it took."""
    keep = keep or ObjectFilter()
    after, cut = resume_point(state)
    rows = table.after(after)
    selection = select_objects(rows, cut, keep, table.earlier(after, rows))
    result = take_objects(SOURCE, table.version, selection.candidates, max_files=max_files,
                          max_bytes=max_bytes, removed=selection.removed,
                          stale=selection.stale)
    return result, [pos for pos, _ in selection.candidates[:len(result.files)]]


def records_of(table: Table, positions: list[Position]) -> list[tuple[Position, S3EventRecord]]:
    by_id = {r["record_id"]: r for r in table.rows}
    return [(p, S3EventRecord.from_row(by_id[p[3]])) for p in positions]


events = st.lists(st.tuples(st.sampled_from("abcde"), st.booleans(), st.integers(0, 100),
                            st.integers(0, 40)),
                  min_size=0, max_size=6)
bounds = st.tuples(st.none() | st.integers(1, 3), st.none() | st.integers(1, 150))


@settings(max_examples=300, deadline=None)
@given(batches=st.lists(st.tuples(st.lists(events, min_size=1, max_size=3),
                                  st.lists(bounds, min_size=0, max_size=3)),
                        min_size=1, max_size=5))
def test_every_live_object_is_taken_once_per_creation_in_order_within_bounds(
        batches: list[tuple[list[list[tuple[str, bool, int, int]]], list[tuple[Any, Any]]]]
) -> None:
    table = Table()
    state: dict[str, Any] | None = None
    taken: list[tuple[Position, str, S3EventRecord]] = []
    runs = [(commits, run_bounds) for commits, run_bounds in batches]
    runs[-1] = (runs[-1][0], [*runs[-1][1], (None, None)])  # a last run drains the rest
    for commits, run_bounds in runs:
        for commit in commits:
            table.commit(commit)
        for max_files, max_bytes in run_bounds:
            result, positions = plan(table, state, max_files=max_files, max_bytes=max_bytes)
            sizes = [f.size for f in result.files]
            if max_files is not None:
                assert len(sizes) <= max_files
            if max_bytes is not None and len(sizes) > 1:
                assert sum(sizes) <= max_bytes
            if result.pending:
                assert result.files, "a run with candidates always takes one (progress)"
            keys = [f.path.rsplit("/", 1)[1] for f in result.files]
            records = [r for _, r in records_of(table, positions)]
            taken.extend(zip(positions, keys, records, strict=True))
            state = result.next_state
            assert state["kind"] == STATE_KIND
    assert result.pending == 0
    # Never back, never twice: the taken events' positions only grow.
    assert [p for p, _, _ in taken] == sorted({p for p, _, _ in taken})
    # Never stale: each object is read again only for an event newer (by sequencer) than the
    # one it was read for.
    for key in {k for _, k, _ in taken}:
        order = [r.order_key() for _, k, r in taken if k == key]
        assert order == sorted(set(order)), key
    # No loss: an object whose last event (by sequencer) is a creation was read for it.
    last = latest_per_object(S3EventRecord.from_row(r) for r in table.rows)
    for (_, key), record in last.items():
        if record.created:
            assert [r.record_id for _, k, r in taken if k == key][-1] == record.record_id, key
        else:
            assert all(r.order_key() < record.order_key() for _, k, r in taken if k == key)


def test_a_bound_that_cuts_a_version_resumes_inside_it() -> None:
    table = Table()
    table.commit([("a", True, 10, 1), ("b", True, 10, 2), ("c", True, 10, 3)])
    first, _ = plan(table, None, max_files=2)
    assert [f.path for f in first.files] == ["s3://bk/a", "s3://bk/b"]
    assert first.pending == 1 and first.next_state["version"] == -1
    assert first.next_state["position"][0] == 0
    second, _ = plan(table, first.next_state)
    assert [f.path for f in second.files] == ["s3://bk/c"]
    assert second.next_state == {"kind": STATE_KIND, "source": SOURCE, "version": 0,
                                 "position": None}
    third, _ = plan(table, second.next_state)
    assert third.files == () and third.pending == 0


def test_a_created_then_removed_object_is_counted_not_read() -> None:
    table = Table()
    table.commit([("a", True, 1, 1), ("b", True, 1, 2)])
    table.commit([("a", False, 0, 3)])
    result, _ = plan(table, None)
    assert [f.path for f in result.files] == ["s3://bk/b"] and result.skipped_removed == 1


def test_the_key_filter_and_an_oversized_first_object() -> None:
    table = Table()
    table.commit([("a", True, 500, 1), ("skip-me", True, 1, 2), ("b", True, 1, 3)])
    keep = ObjectFilter(ignore_prefixes=("skip",))
    result, _ = plan(table, None, max_bytes=100, keep=keep)
    assert [f.path for f in result.files] == ["s3://bk/a"] and result.pending == 1


def test_a_late_stale_notification_neither_rereads_nor_hides_an_object() -> None:
    table = Table()
    table.commit([("a", True, 1, 5), ("b", True, 1, 6)])  # a was put again at time 5 ...
    first, _ = plan(table, None)
    assert [f.path for f in first.files] == ["s3://bk/a", "s3://bk/b"]
    table.commit([("a", True, 1, 2), ("b", False, 0, 3)])  # ... these happened before, late
    second, _ = plan(table, first.next_state)
    assert second.files == () and second.skipped_stale == 2 and second.skipped_removed == 0


def test_a_bound_between_an_objects_events_does_not_lose_it() -> None:
    """A creation taken-order before the cut whose stale removal arrives in a later version
    (the loss the planner had when it ordered objects by their last-arriving event)."""
    table = Table()
    table.commit([("a", True, 1, 9), ("x", True, 1, 10)])
    table.commit([("a", False, 0, 4)])  # older than a's creation, delivered late
    first, _ = plan(table, None, max_files=1)
    second, _ = plan(table, first.next_state)
    assert sorted(f.path for f in first.files + second.files) == ["s3://bk/a", "s3://bk/x"]


def test_resume_point_refuses_another_sources_state_and_restarts_from_a_version() -> None:
    with pytest.raises(ConfigError, match="'jdbc' source"):
        resume_point({"kind": "jdbc"})
    assert resume_point({"kind": STATE_KIND, "version": 7, "position": None}, 3) == (2, None)
    assert resume_point(None, 0) == (None, None)


class Bucket:
    """A bucket whose notifications may be lost or late, with an events table and a backfill,
    as a scheduled ``s3-incremental --backfill-prefix`` sees them."""

    def __init__(self) -> None:
        self.table = Table()
        self.objects: dict[str, tuple[int, int, str]] = {}  # key -> (mtime, size, etag)
        self.notices: list[S3EventRecord] = []
        self.sequence = 0

    def put(self, key: str, etag: str, mtime: int) -> S3EventRecord:
        """Upload; the notification is returned, not delivered (deliver it, or lose it)."""
        self.sequence += 1
        self.objects[key] = (mtime, 10, etag)
        return S3EventRecord("bk", key, "ObjectCreated:Put", mtime + 3, 10, etag, None,
                             f"{self.sequence:08X}")

    def deliver(self, *records: S3EventRecord) -> None:
        self.commit(list(records))

    def commit(self, records: list[S3EventRecord]) -> None:
        known = {r["record_id"] for r in self.table.rows}
        new = [r for r in records if r.record_id not in known]  # the MERGE on record_id
        if not new:
            return
        self.table.version = 0 if self.table.version is None else self.table.version + 1
        self.table.rows += [{**r.to_row(), "_commit_version": self.table.version} for r in new]

    def run(self, state: dict[str, Any] | None, backfill: bool = True) -> Any:
        if backfill:
            known = [(r["bucket"], r["key"], r["etag"]) for r in self.table.rows
                     if r["event_name"].startswith("ObjectCreated:")]
            listed = [(k, m, s, f'"{e}"') for k, (m, s, e) in sorted(self.objects.items())]
            self.commit(backfill_events("bk", listed, known, ObjectFilter()))
        result, _ = plan(self.table, state)
        return result


def test_a_backfilled_object_is_taken_once_whatever_later_runs_and_notifications_do() -> None:
    bucket = Bucket()
    bucket.deliver(bucket.put("seen", "e1", 100))
    lost_a = bucket.put("a", "ea", 110)  # these notifications are lost (for now)
    bucket.put("b", "eb", 120)
    taken: list[str] = []
    first = bucket.run(None)
    taken += [f.path for f in first.files]
    assert sorted(taken) == ["s3://bk/a", "s3://bk/b", "s3://bk/seen"]
    assert first.backfilled == 2
    state = first.next_state
    for _ in range(2):  # a schedule keeps the flag: nothing is taken again
        again = bucket.run(state)
        assert again.files == () and again.backfilled == 0
        state = again.next_state
    bucket.deliver(lost_a)  # the lost notification arrives after all, late
    late = bucket.run(state)
    assert late.files == () and late.skipped_stale == 1
    state = late.next_state
    # The same key uploaded again with new content is a new object: taken once, whether its
    # notification is lost (the backfill finds the new eTag) ...
    bucket.put("a", "ea2", 200)
    again = bucket.run(state)
    assert [f.path for f in again.files] == ["s3://bk/a"] and again.backfilled == 1
    state = again.next_state
    # ... or delivered (the backfill then finds it named and writes nothing).
    bucket.deliver(bucket.put("b", "eb2", 210))
    again = bucket.run(state)
    assert [f.path for f in again.files] == ["s3://bk/b"] and again.backfilled == 0
    assert bucket.run(again.next_state).files == ()


def test_a_backfill_event_and_a_notification_of_the_same_upload_in_one_run_take_it_once(
) -> None:
    bucket = Bucket()
    notice = bucket.put("a", "ea", 100)
    # The backfill wrote its event, then the run died before committing; the notification
    # arrived in between: the retry reads both, and takes the object once.
    bucket.run(None)
    bucket.deliver(notice)
    result = bucket.run(None)
    assert [f.path for f in result.files] == ["s3://bk/a"]


def test_backfill_events_compare_etags_not_keys_and_are_idempotent() -> None:
    listed = [("in/a", 100, 5, '"x"'), ("in/b", 100, 5, '"y"'), ("in/c", 100, 5, None),
              ("skip/d", 100, 5, '"z"')]
    known = [("bk", "in/a", "x"), ("bk", "in/b", "old"), ("bk", "in/c", None)]
    made = backfill_events("bk", listed, known, ObjectFilter(key_prefix="in/"))
    assert [(r.key, r.etag, r.event_name) for r in made] == [("in/b", "y", BACKFILL_EVENT)]
    again = backfill_events("bk", listed, known, ObjectFilter(key_prefix="in/"))
    assert [r.record_id for r in again] == [r.record_id for r in made]


def test_against_a_backfill_event_time_orders_and_the_same_content_is_not_newer() -> None:
    filled = S3EventRecord("bk", "a", BACKFILL_EVENT, 100, 1, "x", None, None)
    same = S3EventRecord("bk", "a", "ObjectCreated:Put", 90, 1, "x", None, "0001")
    older_upload = S3EventRecord("bk", "a", "ObjectCreated:Put", 50, 1, "w", None, "0001")
    removed_later = S3EventRecord("bk", "a", "ObjectRemoved:Delete", 150, None, None, None, "9")
    assert not same.newer_than(filled) and not filled.newer_than(same)
    assert not older_upload.newer_than(filled) and filled.newer_than(older_upload)
    assert removed_later.newer_than(filled)
