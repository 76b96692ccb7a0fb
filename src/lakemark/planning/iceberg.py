"""Which snapshots of an Iceberg table a run takes: pure planning, no catalog, no I/O.

An incremental Iceberg source reads, per run, the data files *appended* by the snapshots after
the one its bookmark ends at, up to and including the snapshot pinned when the run started
(``main``'s current snapshot, or the one a retried attempt recorded). The walk follows parent
pointers from the pinned snapshot back to the bookmarked one, so snapshots of other branches or
rolled-back history are never taken.

What each snapshot in the range means for the run (its ``operation``):

* ``append`` — its added data files are read;
* ``replace`` — files rewritten with the same rows (compaction): nothing to read, ignored;
* ``overwrite`` / ``delete`` — rows changed or removed: an append-only reader cannot follow
  them, so the run fails naming the snapshot, unless the source is told to skip such snapshots
  (``streaming-skip-overwrite-snapshots`` / ``streaming-skip-delete-snapshots``, Iceberg's own
  option names; ``skipChangeCommits`` skips both, as for the Delta source). A skipped snapshot
  is passed over entirely: the rows it added are not read either.

The first run of a source (no bookmark) takes the whole table as of the pinned snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SourceError

__all__ = ["ICEBERG_STATE_KIND", "SKIP_DELETE", "SKIP_OVERWRITE", "SKIP_CHANGES",
           "IcebergState", "SnapshotInfo", "SnapshotRange", "plan_snapshots", "skip_options"]

ICEBERG_STATE_KIND = "iceberg"
SKIP_OVERWRITE = "streaming-skip-overwrite-snapshots"
SKIP_DELETE = "streaming-skip-delete-snapshots"
SKIP_CHANGES = "skipChangeCommits"


@dataclass(frozen=True)
class SnapshotInfo:
    """What the planner needs of one snapshot (from the table's metadata)."""

    snapshot_id: int
    parent_id: int | None
    operation: str  # append | replace | overwrite | delete
    timestamp_ms: int = 0


@dataclass(frozen=True)
class IcebergState:
    """A bookmark of an Iceberg source: the last snapshot taken (None: nothing yet)."""

    table: str
    snapshot_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": ICEBERG_STATE_KIND, "table": self.table, "snapshot_id": self.snapshot_id}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], table: str) -> IcebergState:
        kind = data.get("kind")
        if kind != ICEBERG_STATE_KIND:
            raise SourceError(f"the bookmark of Iceberg table {table} holds state of a {kind!r} "
                              "source; use another ctx or reset it")
        found = data.get("snapshot_id")
        return cls(str(data.get("table") or table), None if found is None else int(found))


@dataclass(frozen=True)
class SnapshotRange:
    """A run's snapshots: after ``after`` (exclusive) through ``through`` (inclusive).

    ``full``: the whole table as of ``through`` is read (first run); otherwise the data files
    added by ``take`` (oldest first). ``skipped``: overwrite/delete snapshots passed over by
    option; ``ignored``: replace snapshots (no rows changed).
    """

    table: str
    after: int | None
    through: int | None
    full: bool
    take: tuple[int, ...] = ()
    skipped: tuple[int, ...] = ()
    ignored: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return self.through is None or (not self.full and not self.take)

    @property
    def next_state(self) -> IcebergState:
        return IcebergState(self.table, self.through if self.through is not None else self.after)

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "after": self.after, "through": self.through,
                "full": self.full, "take": list(self.take), "skipped": list(self.skipped),
                "ignored": list(self.ignored)}


def skip_options(options: Mapping[str, str]) -> tuple[bool, bool]:
    """``(skip overwrite snapshots, skip delete snapshots)`` from a source's options."""
    def flag(name: str) -> bool:
        value = next((v for k, v in options.items() if k.lower() == name.lower()), "false")
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise SourceError(f"option {name} must be true or false, not {value!r}")
        return text == "true"

    both = flag(SKIP_CHANGES)
    return both or flag(SKIP_OVERWRITE), both or flag(SKIP_DELETE)


def plan_snapshots(table: str, snapshots: Sequence[SnapshotInfo], previous: int | None,
                   pinned: int | None, *, skip_overwrite: bool = False,
                   skip_delete: bool = False) -> SnapshotRange:
    """The range of snapshots after ``previous`` through ``pinned`` (see the module docstring).

    ``snapshots`` are the table's snapshots (any order). SourceError, naming the table and
    the snapshot, when ``pinned`` is unknown, when ``previous`` is not an ancestor of
    ``pinned`` (the table was rolled back, or its snapshots expired, since the last run), or
    when an overwrite/delete snapshot is in the range and not skipped.
    """
    by_id = {s.snapshot_id: s for s in snapshots}
    if pinned is None:
        if previous is not None:
            raise SourceError(f"Iceberg table {table} has no current snapshot, but the last run "
                              f"read up to snapshot {previous}: was the table replaced? Reset "
                              "the source's bookmark to read it from the start")
        return SnapshotRange(table, None, None, full=previous is None)
    if pinned not in by_id:
        raise SourceError(f"Iceberg table {table} has no snapshot {pinned} (expired?)")
    if previous is None:
        return SnapshotRange(table, None, pinned, full=True)
    chain: list[SnapshotInfo] = []
    current: int | None = pinned
    while current != previous:
        snapshot = by_id.get(current) if current is not None else None
        if snapshot is None:
            raise SourceError(
                f"Iceberg table {table}: snapshot {previous}, where the last run stopped, is not "
                f"an ancestor of the current snapshot {pinned} (the table was rolled back or "
                "its snapshots expired); reset the source's bookmark to read the table again")
        chain.append(snapshot)
        current = snapshot.parent_id
    take: list[int] = []
    skipped: list[int] = []
    ignored: list[int] = []
    for snapshot in reversed(chain):  # oldest first
        operation = snapshot.operation.lower()
        if operation == "append":
            take.append(snapshot.snapshot_id)
        elif operation == "replace":
            ignored.append(snapshot.snapshot_id)
        elif (operation == "overwrite" and skip_overwrite) or \
                (operation == "delete" and skip_delete):
            skipped.append(snapshot.snapshot_id)
        else:
            option = {"overwrite": SKIP_OVERWRITE, "delete": SKIP_DELETE}.get(operation,
                                                                              SKIP_CHANGES)
            raise SourceError(
                f"Iceberg table {table}: snapshot {snapshot.snapshot_id} ({operation}) changes "
                "or removes rows, which an incremental read of appends cannot follow; set "
                f"option {option}=true (or {SKIP_CHANGES}=true) to skip such snapshots "
                "(their rows are then not read)")
    return SnapshotRange(table, previous, pinned, full=False, take=tuple(take),
                         skipped=tuple(skipped), ignored=tuple(ignored))
