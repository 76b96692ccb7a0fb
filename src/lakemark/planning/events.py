"""The S3-events source's planner, pure: which objects a run takes from the events it reads.

The checkpoint (the state element of the source's ctx) is the events-table version read up to,
plus — when a bound cut a version's events in two — the position of the last event taken
(``[commit version, event time, key, record_id]``). Given the events after the checkpoint:

1. events at or before the cut position are dropped (a bound already took them);
2. per object, its last event (by S3's sequencer, then event time) decides: a created object
   passing the key filters is a candidate, a removed one is counted and not read. "Last" is
   over the object's whole history, not only the new events: a notification that arrives late
   (SQS does not keep order) with an older sequencer than one already decided is stale and
   changes nothing — it neither re-reads the object nor hides a newer creation. A *backfill
   event* (``ObjectCreated:LakemarkBackfill``, written by a backfill for an object that a
   listing found and no created event names, see :func:`backfill_events`) has no sequencer:
   against it, events are ordered by time (its time is the object's Last-Modified), and a
   created event with the same content (eTag, version id) is the same object — the late
   notification of an object the backfill already took — so it is stale too;
3. candidates are taken in the (commit version, event time, key) order of their last event, up
   to ``max_files`` / ``max_bytes`` (the first object is always taken, however large, so a run
   moves on);
4. when a bound cut the candidates, the checkpoint is the version before the last taken event
   plus that event's position; otherwise it is the table's current version.

A backfill therefore takes nothing on its own: it writes the notifications that were lost into
the events table, and the checkpoint takes them like any other event — once, in bounded runs,
replayed exactly on a retry — so later runs that keep the flag find them named and add nothing.

The I/O around it (reading the table's change feed, HEAD checks, the backfill listing) lives in
``lakemark.events.incremental``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import ConfigError
from .files import FileEntry

__all__ = [
    "STATE_KIND",
    "EventObjectPlan",
    "ObjectFilter",
    "Position",
    "BACKFILL_EVENT",
    "S3EventRecord",
    "Selection",
    "backfill_events",
    "latest_per_object",
    "position_of",
    "resume_point",
    "select_objects",
    "take_objects",
]

STATE_KIND = "s3-events"

Position = tuple[int, int, str, str]

#: Event name of the events a backfill writes for objects that no created event names.
BACKFILL_EVENT = "ObjectCreated:LakemarkBackfill"


@dataclass(frozen=True)
class S3EventRecord:
    """One S3 event: what happened to which object, and when."""

    bucket: str
    key: str
    event_name: str
    event_time_ms: int
    size: int | None
    etag: str | None
    version_id: str | None
    sequencer: str | None

    @property
    def created(self) -> bool:
        return self.event_name.startswith("ObjectCreated:")

    @property
    def removed(self) -> bool:
        return self.event_name.startswith("ObjectRemoved:")

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @property
    def record_id(self) -> str:
        """Stable identity of the event: equal for a redelivered copy, different otherwise."""
        parts = [self.bucket, self.key, self.event_name, self.sequencer or "",
                 str(self.event_time_ms), self.etag or "", self.version_id or ""]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]

    @property
    def backfilled(self) -> bool:
        """Written by a backfill listing, not by S3 (no sequencer; the time is Last-Modified)."""
        return self.event_name == BACKFILL_EVENT

    def order_key(self) -> tuple[str, int]:
        """Sort key of events of one object: sequencer first (padded), then event time."""
        return ((self.sequencer or "").rjust(32, "0"), self.event_time_ms)

    def same_content(self, other: S3EventRecord) -> bool:
        """Both created events name the same upload: equal version ids when both have one,
        else equal eTags (an unversioned re-upload of identical bytes cannot be told apart)."""
        if not (self.created and other.created):
            return False
        if self.version_id and other.version_id:
            return self.version_id == other.version_id
        return bool(self.etag) and _etag(self.etag) == _etag(other.etag)

    def newer_than(self, other: S3EventRecord) -> bool:
        """Whether this event of an object supersedes ``other`` (see the module doc, rule 2)."""
        if self.same_content(other) and (self.backfilled or other.backfilled):
            return False
        if self.backfilled or other.backfilled:
            if self.event_time_ms != other.event_time_ms:
                return self.event_time_ms > other.event_time_ms
            return not self.backfilled  # S3's own event wins a tie
        return self.order_key() >= other.order_key()

    def to_row(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id, "bucket": self.bucket, "key": self.key,
            "event_name": self.event_name, "event_time_ms": self.event_time_ms,
            "event_date": datetime.fromtimestamp(self.event_time_ms / 1000, UTC)
            .strftime("%Y-%m-%d"),
            "size": self.size, "etag": self.etag, "version_id": self.version_id,
            "sequencer": self.sequencer,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> S3EventRecord:
        return cls(row["bucket"], row["key"], row["event_name"], int(row["event_time_ms"]),
                   row.get("size"), row.get("etag"), row.get("version_id"), row.get("sequencer"))


def latest_per_object(records: Iterable[S3EventRecord]) -> dict[tuple[str, str], S3EventRecord]:
    """The last event of each (bucket, key), by sequencer then event time."""
    latest: dict[tuple[str, str], S3EventRecord] = {}
    for record in records:
        ident = (record.bucket, record.key)
        current = latest.get(ident)
        if current is None or record.newer_than(current):
            latest[ident] = record
    return latest


def _etag(value: str | None) -> str:
    return (value or "").strip().strip('"')


def backfill_events(bucket: str, listed: Iterable[tuple[str, int, int, str | None]],
                    known: Iterable[tuple[str, str, str | None]],
                    keep: ObjectFilter) -> list[S3EventRecord]:
    """The events a backfill writes: one per listed object ``(key, mtime_ms, size, etag)``
    that passes ``keep`` and that no created event in ``known`` (``(bucket, key, etag)``)
    names with the same eTag. A key named only with another eTag was uploaded again after its
    last notification (a new object), so it is backfilled too. An event's id is a digest of
    the object's key, time and eTag: two runs that backfill the same object write one event."""
    named = {(b, k, _etag(e)) for b, k, e in known}
    return [
        S3EventRecord(bucket, key, BACKFILL_EVENT, int(mtime), int(size), _etag(etag) or None,
                      None, None)
        for key, mtime, size, etag in listed
        if keep.keeps(key) and (bucket, key, _etag(etag)) not in named
        and (bucket, key, "") not in named  # an event without an eTag names the key only
    ]


@dataclass(frozen=True)
class ObjectFilter:
    """Which objects to ingest: key prefix, suffix, a regular expression, ignored prefixes."""

    key_prefix: str = ""
    key_suffix: str = ""
    key_regex: str | None = None
    ignore_prefixes: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.key_regex is not None:
            try:
                re.compile(self.key_regex)
            except re.error as exc:
                raise ConfigError(f"--key-regex {self.key_regex!r} is not a valid regular "
                                  f"expression: {exc}") from None

    def keeps(self, key: str) -> bool:
        if self.key_prefix and not key.startswith(self.key_prefix):
            return False
        if self.key_suffix and not key.endswith(self.key_suffix):
            return False
        if any(key.startswith(p) for p in self.ignore_prefixes if p):
            return False
        if self.key_regex is not None and re.search(self.key_regex, key) is None:
            return False
        return True


@dataclass(frozen=True)
class EventObjectPlan:
    """Objects this run takes, and the checkpoint to commit if it succeeds."""

    files: tuple[FileEntry, ...]
    next_state: dict[str, Any]
    table_version: int | None
    pending: int
    skipped_removed: int
    skipped_missing: int
    backfilled: int
    skipped_stale: int = 0


@dataclass(frozen=True)
class Selection:
    """The candidates of a run in take order; how many objects were last seen removed, and
    how many had only stale (out-of-order, already superseded) new events."""

    candidates: tuple[tuple[Position, S3EventRecord], ...]
    removed: int
    stale: int = 0


def position_of(row: Mapping[str, Any]) -> Position:
    """Total order of events: commit version, then event time, key and record id."""
    return (int(row["_commit_version"]), int(row["event_time_ms"]), str(row["key"]),
            str(row["record_id"]))


def resume_point(previous: Mapping[str, Any] | None,
                 from_version: int | None = None) -> tuple[int | None, Position | None]:
    """``(version read up to, cut position)`` to resume from: ``from_version`` restarts at
    that table version; else the previous checkpoint; else the beginning."""
    if from_version is not None:
        return (from_version - 1 if from_version > 0 else None), None
    if not previous:
        return None, None
    if previous.get("kind") != STATE_KIND:
        raise ConfigError(f"the ctx holds state of a {previous.get('kind')!r} source, not "
                          "an S3 events source; use another ctx or reset it")
    cut = previous.get("position")
    return previous.get("version"), (tuple(cut) if cut else None)  # type: ignore[return-value]


def select_objects(rows: Iterable[Mapping[str, Any]], cut: Position | None,
                   keep: ObjectFilter, earlier: Iterable[Mapping[str, Any]] = ()) -> Selection:
    """Rules 1 and 2 of the module documentation.

    ``rows`` are the events-table rows of the versions after the checkpoint's (each with
    ``_commit_version`` and the columns of :meth:`S3EventRecord.to_row`); ``earlier`` holds
    rows of earlier versions for the objects ``rows`` touch. An object is decided by its last
    event over both: when that event is not new (at or before the checkpoint), the new events
    are stale — S3 notifications arrive out of order — and the object was decided before."""
    new: list[Mapping[str, Any]] = []
    seen: list[Mapping[str, Any]] = list(earlier)
    for row in rows:
        (new if cut is None or position_of(row) > cut else seen).append(row)
    latest = latest_per_object(S3EventRecord.from_row(r) for r in new)
    where = {(r["bucket"], r["key"]): position_of(r) for r in new
             if latest[(r["bucket"], r["key"])].record_id == r["record_id"]}
    decided = latest_per_object(S3EventRecord.from_row(r) for r in seen
                                if (r["bucket"], r["key"]) in latest)
    candidates: list[tuple[Position, S3EventRecord]] = []
    removed = stale = 0
    for ident, record in latest.items():
        before = decided.get(ident)
        if before is not None and not record.newer_than(before):
            stale += 1
        elif record.removed:
            removed += 1
        elif record.created and keep.keeps(record.key):
            candidates.append((where[ident], record))
    candidates.sort(key=lambda c: c[0])
    return Selection(tuple(candidates), removed, stale)


def take_objects(source: str, current_version: int | None,
                 candidates: Sequence[tuple[Position, S3EventRecord]],
                 *, max_files: int | None = None,
                 max_bytes: int | None = None, removed: int = 0, missing: int = 0,
                 stale: int = 0) -> EventObjectPlan:
    """Rules 3 and 4 of the module documentation: the run's objects and its checkpoint."""
    taken: list[FileEntry] = []
    backfilled = 0
    total = 0
    last: Position | None = None
    cut_short = False
    for pos, record in candidates:
        size = record.size or 0
        if (max_files is not None and len(taken) >= max_files) or (
                max_bytes is not None and taken and total + size > max_bytes):
            cut_short = True
            break
        taken.append(FileEntry(record.event_time_ms, record.uri, size))
        backfilled += record.backfilled
        total += size
        last = pos
    pending = len(candidates) - len(taken)
    if cut_short and last is not None:
        state: dict[str, Any] = {"kind": STATE_KIND, "source": source, "version": last[0] - 1,
                                 "position": list(last)}
    else:
        state = {"kind": STATE_KIND, "source": source, "version": current_version,
                 "position": None}
    return EventObjectPlan(tuple(taken), state, current_version, pending, removed, missing,
                           backfilled, stale)
