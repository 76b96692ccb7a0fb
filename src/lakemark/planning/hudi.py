"""Pure planning of a Hudi copy-on-write table read as an incremental source.

A run takes the table's instants completed after the instant its bookmark holds, up to an
instant pinned when the run starts. This module decides, from the table's timeline (the file
names of ``.hoodie/``, parsed by :func:`parse_timeline_name`) and the metadata of the instants
in range (:func:`parse_commit_metadata`; no I/O here), what the run reads:

* **the pinned instant** (:func:`pin_instant`): the latest completed ``commit`` /
  ``replacecommit`` that is earlier than every instant still pending (requested or inflight).
  Hudi instant times are taken when a write *starts*, so a write that started earlier can
  complete later; a bookmark past it would skip its rows for ever. Pinning below the oldest
  pending write means every instant at or before the bookmark is final.
* **commits** that only insert (no update or delete counts in their write statistics) are
  read; a commit that updates or deletes rows, and an ``insert_overwrite`` / ``delete_partition``
  replacecommit, cannot be followed by a reader of appends: it is refused
  (:class:`HudiChangeError`, naming the instant and the option) or, with
  ``skipChangeCommits``, skipped whole (its inserts are not read either);
* **clustering** replacecommits (rows moved, unchanged), ``clean`` and ``savepoint`` instants
  change no rows and are ignored; a ``rollback`` of instants the source has not read (a failed
  write) is ignored, one of an instant at or before the bookmark is refused, as is a
  ``restore`` — unless it had completed before the bookmark's instant was pinned (the
  bookmark lists those), since then it cannot have undone what was read.

The rows to read are planned per file group (:class:`PlannedFile`): the base file the latest
taken commit wrote to the group, keeping only rows whose ``_hoodie_commit_time`` is one of the
taken commits that wrote the group (base files carry over older rows when Hudi merges inserts
into a small file). When a skipped commit rewrote the group within the range, each taken
commit's own base file is read instead, filtered to that commit, so updates it made do not
hide the rows the taken commit inserted. Where neither that nor a clustering in range can put
one taken commit's rows in another's file group, one filter — the range's taken commits —
serves every file (:attr:`InstantRange.range_filter`), so they are read in one scan.

The first run (no bookmark) reads the snapshot as of the pinned instant (the file slices come
from hudi-rs), unless ``startingInstant`` says where to begin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, SourceError

__all__ = ["DATA_ACTIONS", "HUDI_STATE_KIND", "CommitInfo", "HudiChangeError", "HudiOptions",
           "HudiState", "Instant", "InstantRange", "PlannedFile", "Timeline", "WriteStat",
           "first_range", "parse_commit_metadata", "parse_hudi_options", "parse_properties",
           "parse_timeline_name", "pin_instant", "plan_instants", "timeline_of"]

#: The state-element and manifest kind of a Hudi table source.
HUDI_STATE_KIND = "hudi-table"
#: The actions whose completed instants write data files of a copy-on-write table.
DATA_ACTIONS = ("commit", "replacecommit")
#: Actions that write data (pending ones block the pinned instant).
_WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit", "compaction", "logcompaction",
                  "clustering", "rollback", "restore")
#: Actions that undo completed instants.
_UNDO_ACTIONS = ("rollback", "restore")
_CHANGE_OPERATIONS = ("DELETE", "DELETE_PREPPED", "DELETE_PARTITION", "INSERT_OVERWRITE",
                      "INSERT_OVERWRITE_TABLE")
_INSTANT = re.compile(r"^(\d{14,17})\.([a-z_]+)(?:\.(requested|inflight))?$")
SKIP_CHANGES = "skipChangeCommits"
STARTING = "startingInstant"


# ------------------------------------------------------------------------------- options

@dataclass(frozen=True)
class HudiOptions:
    """The reader options of a Hudi table source."""

    skip_change_commits: bool = False
    starting_instant: str | None = None  # an instant time, "latest", or None (snapshot)

    def to_json(self) -> dict[str, Any]:
        return {SKIP_CHANGES: self.skip_change_commits, STARTING: self.starting_instant}


def parse_hudi_options(options: Mapping[str, Any] | None, table: str) -> HudiOptions:
    """The options of a Hudi ``read_table`` (names matched ignoring case); ConfigError naming
    an unknown option or a bad value."""
    skip = False
    starting: str | None = None
    for key, value in (options or {}).items():
        name = str(key).lower()
        text = str(value).strip()
        if name == SKIP_CHANGES.lower():
            if text.lower() not in ("true", "false"):
                raise ConfigError(f"option {key} must be true or false, not {value!r}")
            skip = text.lower() == "true"
        elif name == STARTING.lower():
            if text.lower() == "latest":
                starting = "latest"
            elif re.fullmatch(r"\d{14,17}", text):
                starting = text
            else:
                raise ConfigError(f"option {key} must be an instant time (yyyyMMddHHmmss"
                                  f"[SSS]) or 'latest', not {value!r}")
        else:
            raise ConfigError(f"option {key!r} is not supported for Hudi table {table}; "
                              f"supported: {SKIP_CHANGES}, {STARTING}")
    return HudiOptions(skip, starting)


_SEPARATOR = re.compile(r"(?<!\\)[=:]")
_ESCAPE = re.compile(r"\\(.)")


def parse_properties(text: str) -> dict[str, str]:
    """``hoodie.properties`` (Java properties: ``key=value`` lines, ``#`` comments, backslash
    escapes) as a dict."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        match = _SEPARATOR.search(line)
        key, value = (line[:match.start()], line[match.end():]) if match else (line, "")
        out[_ESCAPE.sub(r"\1", key.strip())] = _ESCAPE.sub(r"\1", value.strip())
    return out


# ------------------------------------------------------------------------------ timeline

@dataclass(frozen=True, order=True)
class Instant:
    """One instant of the active timeline: time, action, and ``completed``/``requested``/
    ``inflight``."""

    time: str
    action: str
    state: str = "completed"


def parse_timeline_name(name: str) -> Instant | None:
    """The instant a file name of ``.hoodie/`` (table version 6 layout) stands for, or None
    for other files. ``<t>.inflight`` is an inflight ``commit``."""
    match = _INSTANT.match(name)
    if match is None:
        return None
    time, action, state = match.groups()
    if action == "inflight" and state is None:
        return Instant(time, "commit", "inflight")
    return Instant(time, action, state or "completed")


@dataclass(frozen=True)
class Timeline:
    """The active timeline: completed instants and the pending (not completed) ones."""

    completed: tuple[Instant, ...]
    pending: tuple[Instant, ...]

    def data_instants(self) -> list[Instant]:
        """The completed commits and replacecommits, oldest first."""
        return [i for i in self.completed if i.action in DATA_ACTIONS]


def timeline_of(names: Iterable[str]) -> Timeline:
    """The timeline of the file names of ``.hoodie/`` (sorted by time; an instant with a
    completed file is completed whatever else is there)."""
    states: dict[tuple[str, str], set[str]] = {}
    for name in names:
        instant = parse_timeline_name(name)
        if instant is not None:
            states.setdefault((instant.time, instant.action), set()).add(instant.state)
    completed = []
    pending = []
    for (time, action), seen in sorted(states.items()):
        if "completed" in seen:
            completed.append(Instant(time, action))
        else:
            pending.append(Instant(time, action, "inflight" if "inflight" in seen
                                   else "requested"))
    return Timeline(tuple(completed), tuple(pending))


def pin_instant(timeline: Timeline) -> tuple[str | None, Instant | None]:
    """The instant a run reads up to — the latest completed data instant earlier than every
    pending write — and the oldest pending write that held it back (None if none did)."""
    blocking = min((p for p in timeline.pending if p.action in _WRITE_ACTIONS), default=None)
    data = timeline.data_instants()
    allowed = [i.time for i in data if blocking is None or i.time < blocking.time]
    held = blocking if blocking is not None and any(i.time > blocking.time for i in data) \
        else None
    return (allowed[-1] if allowed else None), held


# ------------------------------------------------------------------------ commit metadata

@dataclass(frozen=True)
class WriteStat:
    """One base file a commit wrote: its file group, relative path and row counts."""

    file_id: str
    path: str
    size: int = 0
    inserts: int = 0
    updates: int = 0
    deletes: int = 0


@dataclass(frozen=True)
class CommitInfo:
    """What the planner needs of one completed instant in range: for ``commit`` and
    ``replacecommit`` its operation and files; for ``rollback`` the instants it rolled back."""

    instant: str
    action: str
    operation: str = ""
    writes: tuple[WriteStat, ...] = ()
    replaced: tuple[str, ...] = ()
    rolled_back: tuple[str, ...] = ()

    @property
    def changes_rows(self) -> bool:
        """Whether the instant updates, deletes or replaces rows (not a pure insert)."""
        if self.action == "replacecommit":
            return self.operation.upper() != "CLUSTER"
        return self.operation.upper() in _CHANGE_OPERATIONS or \
            any(w.updates or w.deletes for w in self.writes)


def parse_commit_metadata(instant: str, action: str, text: str) -> CommitInfo:
    """The :class:`CommitInfo` of a ``commit``/``replacecommit`` from its JSON metadata."""
    try:
        body = json.loads(text) if text.strip() else {}
    except ValueError:
        raise SourceError(f"Hudi instant {instant} ({action}): its metadata is not JSON "
                          "(written by a Hudi version this reader does not know)") from None
    writes = []
    for stats in (body.get("partitionToWriteStats") or {}).values():
        for stat in stats or []:
            path = str(stat.get("path") or "")
            if not path:
                continue
            writes.append(WriteStat(
                file_id=str(stat.get("fileId") or ""), path=path,
                size=int(stat.get("fileSizeInBytes") or stat.get("totalWriteBytes") or 0),
                inserts=int(stat.get("numInserts") or 0),
                updates=int(stat.get("numUpdateWrites") or 0),
                deletes=int(stat.get("numDeletes") or 0)))
    replaced = tuple(sorted(str(f) for ids in (body.get("partitionToReplaceFileIds") or {})
                            .values() for f in ids or []))
    return CommitInfo(instant, action, str(body.get("operationType") or ""), tuple(writes),
                      replaced)


# ------------------------------------------------------------------------------ the plan

@dataclass(frozen=True)
class HudiState:
    """A bookmark of a Hudi source: the last instant taken (None: nothing yet), and the
    rollback/restore instants later than it that had already completed when it was pinned
    (they undid nothing the source read)."""

    source: str
    instant: str | None = None
    known: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": HUDI_STATE_KIND, "source": self.source, "instant": self.instant,
                "known_undo": list(self.known)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], table: str, ctx: str) -> HudiState:
        kind = data.get("kind")
        if kind != HUDI_STATE_KIND:
            raise ConfigError(f"transformation_ctx {ctx!r} holds state of a "
                              f"{kind or 'files'!r} source, not a Hudi table source; use "
                              "another ctx or reset it")
        found = data.get("instant")
        return cls(str(data.get("source") or table), None if found is None else str(found),
                   tuple(str(k) for k in data.get("known_undo") or ()))


@dataclass(frozen=True)
class PlannedFile:
    """A base file the run reads (path relative to the table), keeping only rows whose
    ``_hoodie_commit_time`` is in ``commits`` (empty: every row, for a snapshot)."""

    path: str
    size: int
    instant: str
    commits: tuple[str, ...] = ()


@dataclass(frozen=True)
class InstantRange:
    """A run's instants: after ``after`` (exclusive) through ``through`` (inclusive).

    ``full``: the snapshot as of ``through`` is read (first run; files given by the caller).
    ``take``: the insert commits read; ``skipped``: change commits passed over by option;
    ``ignored``: instants that change no rows (clustering, clean, savepoint, rollbacks of
    unread writes). ``known``: the rollback/restore instants later than ``through`` that had
    completed when the run planned.
    """

    table: str
    after: str | None
    through: str | None
    full: bool = False
    take: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    files: tuple[PlannedFile, ...] = field(default=(), compare=False)
    one_filter: bool = False

    @property
    def range_filter(self) -> tuple[str, ...] | None:
        """The commits every planned file may be filtered by at once (``take``), when that is
        exact: no clustering in range moved rows of taken commits into another file group, and
        no file group is read slice by slice. None: filter each file by its own
        ``PlannedFile.commits``."""
        return self.take if self.one_filter and not self.full else None

    @property
    def empty(self) -> bool:
        return not self.files

    @property
    def next_state(self) -> HudiState:
        return HudiState(self.table, self.through if self.through is not None else self.after,
                         self.known)

    def to_json(self) -> dict[str, Any]:
        return {"after": self.after, "through": self.through,
                "mode": "snapshot" if self.full else "instants", "take": list(self.take),
                "skipped": list(self.skipped), "ignored": list(self.ignored),
                "known_undo": list(self.known)}


class HudiChangeError(SourceError):
    """An instant in a Hudi source's range changes rows a reader of inserts cannot follow."""


def first_range(pinned: str | None, starting: str | None) -> tuple[str | None, bool]:
    """``(after, full)`` of a first run (no bookmark) with option ``startingInstant``
    ``starting``: the snapshot at ``pinned`` (None), nothing (``latest``: later runs take what
    comes after ``pinned``), or the instants after ``starting``."""
    if starting is None:
        return None, True
    if starting == "latest":
        return pinned, False
    return starting, False


def plan_instants(table: str, timeline: Timeline, after: str | None, pinned: str | None,
                  details: Mapping[str, CommitInfo], *, full: bool = False,
                  bookmark: str | None = None, known: Sequence[str] = (),
                  skip_change_commits: bool = False,
                  snapshot_files: Sequence[PlannedFile] = ()) -> InstantRange:
    """The range of a run that reads the instants after ``after`` up to ``pinned`` — or with
    ``full`` the snapshot as of ``pinned``, whose base files are ``snapshot_files`` (see the
    module docstring).

    ``details`` holds the metadata of every completed instant in the range (by instant
    time); ``bookmark`` is the instant the source's bookmark holds, checked to be still on the
    timeline; ``known``, the bookmark's rollback/restore instants that had completed before
    it was pinned (ignored: they cannot have undone what was read). SourceError naming the
    table and instant when the bookmark's instant is gone, or when an instant in range
    cannot be followed.
    """

    def later_undos(through: str | None) -> tuple[str, ...]:
        return tuple(i.time for i in timeline.completed if i.action in _UNDO_ACTIONS
                     and (through is None or i.time > through))

    if full:
        return InstantRange(table, None, pinned, full=True, known=later_undos(pinned),
                            files=tuple(snapshot_files) if pinned is not None else ())
    if bookmark is not None:
        data = timeline.data_instants()
        if bookmark not in {i.time for i in data}:
            if not data or bookmark < data[0].time:
                raise SourceError(
                    f"Hudi table {table}: instant {bookmark}, where the last run stopped, is no "
                    "longer on the active timeline (archived since): the instants after it "
                    "cannot be read; reset the ctx to read the table again")
            raise SourceError(
                f"Hudi table {table}: instant {bookmark}, where the last run stopped, is no "
                "longer on the timeline (rolled back or restored since): rows the last runs "
                "read were removed; reset the ctx to read the table again")
    if pinned is None or (after is not None and after >= pinned):
        through = after if after is not None else pinned
        return InstantRange(table, after, through, known=later_undos(through))
    in_range = [i for i in timeline.completed if (after is None or i.time > after)
                and i.time <= pinned]
    take: list[CommitInfo] = []
    skipped: list[CommitInfo] = []
    ignored: list[str] = []
    clustered = False
    for instant in in_range:
        info = details.get(instant.time)
        if instant.action in _UNDO_ACTIONS and instant.time in known:
            ignored.append(instant.time)  # completed before the last run planned
            continue
        if instant.action == "restore":
            raise HudiChangeError(
                f"Hudi table {table}: instant {instant.time} (restore) restored the table to an "
                "earlier instant, removing rows; reset the ctx to read the table again")
        if instant.action == "rollback":
            undone = info.rolled_back if info is not None else ()
            read = [t for t in undone if after is not None and t <= after]
            if info is None or read:
                what = ", ".join(read) if read else "instants it does not name"
                raise HudiChangeError(
                    f"Hudi table {table}: instant {instant.time} (rollback) rolled back {what}, "
                    "whose rows earlier runs may have read; reset the ctx to read the table "
                    "again")
            ignored.append(instant.time)
            continue
        if instant.action not in DATA_ACTIONS:
            if instant.action in ("deltacommit", "compaction", "logcompaction"):
                raise SourceError(f"Hudi table {table}: instant {instant.time} is a "
                                  f"{instant.action}, which only merge-on-read tables have")
            ignored.append(instant.time)  # clean, savepoint, indexing, ...
            continue
        if info is None:
            raise SourceError(f"Hudi table {table}: no metadata for instant {instant.time}")
        if not info.changes_rows:
            if info.action == "replacecommit":
                ignored.append(instant.time)  # clustering: the same rows, moved
                clustered = True
            else:
                take.append(info)
            continue
        if skip_change_commits:
            skipped.append(info)
            continue
        what = info.operation.lower() or info.action
        raise HudiChangeError(
            f"Hudi table {table}: instant {instant.time} ({what}) updates, deletes or "
            "replaces rows, and a Hudi table source takes inserts only: set "
            f"{SKIP_CHANGES}=true to skip such instants (their rows are then not read)")
    rewritten = {w.file_id for c in skipped for w in c.writes} & \
        {w.file_id for c in take for w in c.writes}
    return InstantRange(table, after, pinned, take=tuple(c.instant for c in take),
                        skipped=tuple(c.instant for c in skipped), ignored=tuple(ignored),
                        known=later_undos(pinned), files=tuple(_files(take, skipped)),
                        one_filter=not clustered and not rewritten)


def _files(take: Sequence[CommitInfo], skipped: Sequence[CommitInfo]) -> list[PlannedFile]:
    """Per file group: the latest taken slice filtered to the taken commits that wrote the
    group — or, where a skipped commit rewrote the group, each taken slice on its own."""
    rewritten = {w.file_id for c in skipped for w in c.writes}
    groups: dict[str, list[tuple[CommitInfo, WriteStat]]] = {}
    for commit in take:
        for write in commit.writes:
            groups.setdefault(write.file_id, []).append((commit, write))
    out: list[PlannedFile] = []
    for file_id, writes in groups.items():
        if file_id in rewritten:
            out += [PlannedFile(w.path, w.size, c.instant, (c.instant,)) for c, w in writes]
            continue
        last_commit, last = writes[-1]
        commits = tuple(sorted({c.instant for c, _ in writes}))
        out.append(PlannedFile(last.path, last.size, last_commit.instant, commits))
    return sorted(out, key=lambda f: (f.instant, f.path))
