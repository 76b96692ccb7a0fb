"""Which files a run of a file source takes, and the bookmark state it leaves behind.

Pure functions over plain data: no Spark, no I/O, no clock. The caller lists the source, reads the
clock once (`now_ms`, the listing start) and hands both in, so the same inputs always give the same
plan and the rules can be property-tested.

The rules are AWS Glue's job-bookmark rules for S3 sources, made exact:

* Files are ordered by the key ``(mtime, path)``, never by mtime alone.
* The state keeps a *frontier* ``C = (high, high_path)``: every file whose key is at or before it
  has been seen. ``high_path`` is ``None`` when the whole millisecond ``high`` was taken (the usual
  case: ``high`` is the listing time of the last unbounded run, Glue's "T1").
* Inside the MaxBand window ``(high - maxBand, high]`` the state remembers each processed file as
  ``(path, mtime)`` (the *band*). A file that shows up later with a key inside the window and is
  not in the band is a late arrival and is taken (Glue's F3'/F4'/F5'); a file modified in place
  gets a new mtime, hence a new key, and is taken again.
* Files at or below the window's lower edge and not yet seen are assumed processed (the
  documented MaxBand trade-off): that is the only way a file can be passed over.
* A bounded run (``boundedFiles`` / ``boundedSize``) takes a prefix of the ordered candidates and
  moves the frontier to the key of the last file taken, so files sharing one mtime are split across
  runs without skipping any.
* ``maxFilesInBand`` caps the band: the oldest entries leave it and raise the state's *floor* (keys
  at or below the floor count as processed). The floor never passes a file that is still waiting,
  so the cap narrows late-arrival detection but never loses or defers a listed file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ..errors import ConfigError
from .modified import DEFAULT_MODIFIED, EarlierTake, apply_policy, check_modified_policy

__all__ = [
    "DEFAULT_MAX_BAND_MS",
    "FileEntry",
    "FileOptions",
    "FilePlan",
    "FileState",
    "plan_files",
    "plan_everything",
    "resume_after",
    "ListingOptions",
    "DEFAULT_FULL_LISTING_EVERY",
    "candidate_paths",
    "partition_probe",
]

DEFAULT_MAX_BAND_MS = 900_000
DEFAULT_FULL_LISTING_EVERY = 24

#: The (mtime, path) order as a C-level sort key (faster than comparing entries).
_ORDER = attrgetter("mtime", "path")

# A bound on the (mtime, path) order. ``path=None`` stands for "every path at this mtime".
Bound = tuple[int, str | None]


class FileEntry:
    """One listed file: modification time in epoch milliseconds, full path or URI, size in bytes.

    Entries are ordered and compared by ``(mtime, path)``; ``size`` is carried along. A plain
    slotted class rather than a dataclass: listings hold millions of these and the planner's
    time budget is a fraction of the listing's.

    ``offset``: the first byte a run reads (0: the whole file). A planned entry with an offset
    is the appended tail ``[offset, size)`` of a file an earlier run took up to ``offset``
    (policy ``append``, :mod:`.modified`); a read never goes past ``size``.
    """

    __slots__ = ("mtime", "offset", "path", "size")

    def __init__(self, mtime: int, path: str, size: int = 0, offset: int = 0) -> None:
        self.mtime = mtime
        self.path = path
        self.size = size
        self.offset = offset

    @property
    def key(self) -> tuple[int, str]:
        return (self.mtime, self.path)

    def __repr__(self) -> str:
        tail = f", offset={self.offset!r}" if self.offset else ""
        return f"FileEntry(mtime={self.mtime!r}, path={self.path!r}, size={self.size!r}{tail})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileEntry):
            return NotImplemented
        return self.mtime == other.mtime and self.path == other.path

    def __hash__(self) -> int:
        return hash((self.mtime, self.path))

    def __lt__(self, other: FileEntry) -> bool:
        return (self.mtime, self.path) < (other.mtime, other.path)

    def __le__(self, other: FileEntry) -> bool:
        return (self.mtime, self.path) <= (other.mtime, other.path)

    def __gt__(self, other: FileEntry) -> bool:
        return (self.mtime, self.path) > (other.mtime, other.path)

    def __ge__(self, other: FileEntry) -> bool:
        return (self.mtime, self.path) >= (other.mtime, other.path)

    @property
    def read_bytes(self) -> int:
        """How many bytes a run reads of this entry (the tail only, for an offset)."""
        return max(self.size - self.offset, 0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "mtime": self.mtime, "size": self.size}
        if self.offset:
            out["offset"] = self.offset
        return out


@dataclass(frozen=True)
class FileOptions:
    """Selection options of a file source (Glue's connection options, validated)."""

    max_band_ms: int = DEFAULT_MAX_BAND_MS
    max_files_in_band: int | None = None
    bounded_files: int | None = None
    bounded_size: int | None = None
    #: What a run does with a file taken before that changed since (:mod:`.modified`).
    modified: str = DEFAULT_MODIFIED

    def __post_init__(self) -> None:
        check_modified_policy(self.modified, format=None)
        _non_negative("maxBand", self.max_band_ms)
        for name, value in (
            ("maxFilesInBand", self.max_files_in_band),
            ("boundedFiles", self.bounded_files),
            ("boundedSize", self.bounded_size),
        ):
            if value is not None:
                _non_negative(name, value)
                if value == 0:
                    raise ConfigError(f"option {name} must be at least 1, got 0")
        if self.bounded_files is not None and self.bounded_size is not None:
            raise ConfigError("options boundedFiles and boundedSize cannot be used together")


@dataclass(frozen=True)
class ListingOptions:
    """How an S3 file source is listed: in full every run (the default), or incrementally —
    only the keys after the last one the bookmark covers (``StartAfter``), with a full listing
    every ``full_listing_every`` runs and whenever the state holds no start key."""

    incremental: bool = False
    full_listing_every: int = DEFAULT_FULL_LISTING_EVERY

    def __post_init__(self) -> None:
        _non_negative("fullListingEvery", self.full_listing_every)
        if self.full_listing_every == 0:
            raise ConfigError("option fullListingEvery must be at least 1, got 0")

    def start_after(self, element: Mapping[str, Any] | None, root: str) -> str | None:
        """The key after which this run lists ``root``, or None for a full listing."""
        listing = (element or {}).get("listing") or {}
        after = (listing.get("after") or {}).get(root)
        if not self.incremental or not after:
            return None
        if int(listing.get("since_full", 0)) + 1 >= self.full_listing_every:
            return None  # time for the periodic full listing
        return str(after)

    def next_element(self, element: Mapping[str, Any] | None, after: Mapping[str, str | None],
                     full: bool) -> dict[str, Any] | None:
        """The ``listing`` entry the state element commits (None when not incremental)."""
        if not self.incremental:
            return None
        since = 0 if full else int(((element or {}).get("listing") or {}).get("since_full", 0)) + 1
        return {"after": {r: k for r, k in after.items() if k}, "since_full": since}


def _non_negative(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"option {name} must be a whole number, got {value!r}")
    if value < 0:
        raise ConfigError(f"option {name} must not be negative, got {value}")


@dataclass(frozen=True)
class FileState:
    """The bookmark state element of one file source (one ``transformation_ctx``)."""

    high: int | None = None
    high_path: str | None = None
    low: int | None = None
    floor: tuple[int, str] | None = None
    band: frozenset[tuple[str, int]] = frozenset()

    @property
    def frontier(self) -> Bound | None:
        return None if self.high is None else (self.high, self.high_path)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "files",
            "low": self.low,
            "high": self.high,
            "high_path": self.high_path,
            "floor": list(self.floor) if self.floor else None,
            "band": sorted([[p, m] for p, m in self.band], key=lambda e: (e[1], e[0])),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> FileState:
        if not data:
            return cls()
        floor = data.get("floor")
        return cls(
            high=data.get("high"),
            high_path=data.get("high_path"),
            low=data.get("low"),
            floor=(int(floor[0]), str(floor[1])) if floor else None,
            band=frozenset((str(p), int(m)) for p, m in data.get("band", [])),
        )


@dataclass(frozen=True)
class FilePlan:
    """The exact input of one run and the state element to commit after it."""

    files: tuple[FileEntry, ...]
    next_state: FileState
    pending: int = 0  # candidates left for later runs by a bounded cut
    #: Files of ``files`` that an earlier run took (retaken whole, or their tail), by path.
    taken_before: Mapping[str, EarlierTake] = field(default_factory=dict)
    #: Modified files the policy ``skip`` passed over (seen, not taken).
    skipped: tuple[FileEntry, ...] = ()
    #: Paths left out after planning because they changed while the run read them.
    left_out: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(f.read_bytes for f in self.files)


def _le(key: tuple[int, str], bound: Bound) -> bool:
    """Is ``key`` at or before ``bound`` in (mtime, path) order?"""
    mtime, path = bound
    if key[0] != mtime:
        return key[0] < mtime
    return path is None or key[1] <= path


def _max_bound(a: Bound, b: Bound) -> Bound:
    if a[0] != b[0]:
        return a if a[0] > b[0] else b
    if a[1] is None or b[1] is None:
        return (a[0], None)
    return a if a[1] >= b[1] else b


def _floor_bound(state: FileState, max_band_ms: int) -> Bound | None:
    """Keys at or before this bound count as processed (band edge or truncation floor)."""
    if state.high is None:
        return None
    window: Bound = (state.high - max_band_ms, None)
    return _max_bound(window, state.floor) if state.floor else window


def _is_candidate(entry: FileEntry, state: FileState, floor: Bound | None) -> bool:
    frontier = state.frontier
    if frontier is None or entry.mtime > frontier[0] or not _le(entry.key, frontier):
        return True
    if floor is not None and _le(entry.key, floor):
        return False
    return (entry.path, entry.mtime) not in state.band


def _cut(candidates: list[FileEntry], options: FileOptions) -> int:
    """How many of the ordered candidates a bounded run takes (at least one if any)."""
    if options.bounded_files is not None:
        return min(len(candidates), options.bounded_files)
    if options.bounded_size is not None:
        total = 0
        for i, entry in enumerate(candidates):
            total += entry.read_bytes
            if total > options.bounded_size and i > 0:
                return i
        return len(candidates)
    return len(candidates)


def plan_files(
    state: FileState | None,
    listing: Iterable[FileEntry],
    now_ms: int,
    options: FileOptions = FileOptions(),
    earlier: Mapping[str, EarlierTake] | None = None,
) -> FilePlan:
    """Plan one incremental run: the files to take, in order, and the next state element.

    ``now_ms`` is when the listing started; files modified after it wait for a later run.
    ``earlier``: the last take by an earlier successful run of each path that
    :func:`candidate_paths` names (the caller looks them up); a candidate whose mtime or size
    differs from its earlier take is a modification, handled by ``options.modified``
    (:mod:`.modified`). None or empty: every candidate is new.
    """
    candidates = _candidates(state, listing, now_ms, options)
    outcome = apply_policy(candidates, earlier or {}, options.modified)
    return _plan_from(state or FileState(), outcome.kept, now_ms, options,
                      skipped=outcome.skipped, taken_before=outcome.taken_before)


def candidate_paths(state: FileState | None, listing: Iterable[FileEntry], now_ms: int,
                    options: FileOptions = FileOptions()) -> list[str]:
    """The paths :func:`plan_files` would consider taking (before a bounded cut and before
    the policy for modified files): the only ones whose earlier takes it needs."""
    return [e.path for e in _candidates(state, listing, now_ms, options)]


def _candidates(state: FileState | None, listing: Iterable[FileEntry], now_ms: int,
                options: FileOptions) -> list[FileEntry]:
    """The listed files not yet seen, in (mtime, path) order."""
    state = state or FileState()
    floor = _floor_bound(state, options.max_band_ms)
    if state.frontier is None or floor is None:
        chosen = [e for e in listing if e.mtime <= now_ms and _is_candidate(e, state, floor)]
    else:
        # Fast paths by mtime alone; the exact (mtime, path) test only near the two bounds.
        above, below = state.frontier[0], floor[0]
        chosen = [
            e for e in listing
            if e.mtime <= now_ms
            and (e.mtime > above or (e.mtime >= below and _is_candidate(e, state, floor)))
        ]
    return sorted(chosen, key=_ORDER)


def _plan_from(state: FileState, candidates: list[FileEntry], now_ms: int,
               options: FileOptions, *, skipped: list[FileEntry],
               taken_before: Mapping[str, EarlierTake]) -> FilePlan:
    """The plan of the ordered ``candidates`` (after the policy): the bounded cut, the new
    frontier and band. Skipped files at or before the frontier join the band (seen)."""
    n = _cut(candidates, options)
    taken, rest = candidates[:n], candidates[n:]

    reached: Bound = taken[-1].key if rest else (now_ms, None)
    frontier = reached if state.frontier is None else _max_bound(state.frontier, reached)
    high = frontier[0]

    window: Bound = (high - options.max_band_ms, None)
    old_floor = state.floor if state.floor and not _le(state.floor, window) else None
    lower = _max_bound(window, old_floor) if old_floor else window
    kept = {
        (p, m)
        for p, m in state.band
        if not _le((m, p), lower) and _le((m, p), frontier)
    }
    kept.update((e.path, e.mtime) for e in taken if not _le(e.key, lower))
    kept.update((e.path, e.mtime) for e in skipped
                if not _le(e.key, lower) and _le(e.key, frontier))

    new_floor = old_floor
    cap = options.max_files_in_band
    if cap is not None and len(kept) > cap:
        ordered = sorted(kept, key=lambda pm: (pm[1], pm[0]))
        first_waiting = rest[0].key if rest else None
        dropped: list[tuple[str, int]] = []
        for p, m in ordered[: len(ordered) - cap]:
            if first_waiting is not None and (m, p) >= first_waiting:
                break
            dropped.append((p, m))
        if dropped:
            last_p, last_m = dropped[-1]
            new_floor = (last_m, last_p)
            kept.difference_update(dropped)

    next_state = FileState(
        high=high,
        high_path=frontier[1],
        low=state.high,
        floor=new_floor,
        band=frozenset(kept),
    )
    return FilePlan(files=tuple(taken), next_state=next_state, pending=len(rest),
                    taken_before={e.path: taken_before[e.path] for e in taken
                                  if e.path in taken_before},
                    skipped=tuple(skipped))


def plan_everything(listing: Iterable[FileEntry], now_ms: int | None = None) -> FilePlan:
    """Plan a run with bookmarks disabled: every listed file, and no state to keep."""
    files = tuple(sorted((e for e in listing if now_ms is None or e.mtime <= now_ms), key=_ORDER))
    return FilePlan(files=files, next_state=FileState())


def resume_after(
    state: FileState | None,
    listing: Iterable[FileEntry],
    plan: FilePlan,
    now_ms: int,
    options: FileOptions = FileOptions(),
    previous: str | None = None,
) -> str | None:
    """Where the next incremental (``StartAfter``) listing of a source may start.

    The greatest listed path at or below which no file waits for a later run — every listed
    file up to it was taken by ``plan`` or counted as processed by ``state`` — so a listing of
    only the paths after it sees every file still waiting. Never below ``previous`` (the paths
    at or below it were not listed); ``previous`` when it cannot advance. Paths are compared as
    strings, which for the URIs of one bucket is S3's key order.
    """
    before = state or FileState()
    floor = _floor_bound(before, options.max_band_ms)
    taken = {e.path for e in plan.files}
    greatest: str | None = None
    first_waiting: str | None = None
    paths: list[str] = []
    for e in listing:
        paths.append(e.path)
        if greatest is None or e.path > greatest:
            greatest = e.path
        if e.path not in taken and (e.mtime > now_ms or _is_candidate(e, before, floor)):
            if first_waiting is None or e.path < first_waiting:
                first_waiting = e.path
    if first_waiting is None:
        best = greatest
    else:
        below = [p for p in paths if p < first_waiting]
        best = max(below) if below else None
    if best is None or (previous is not None and best < previous):
        return previous
    return best


def partition_probe(files: Sequence[FileEntry], root: str) -> list[FileEntry]:
    """One of ``files`` whose read shows the partition columns: the first in a ``key=value``
    folder under ``root`` (a file beside such folders, at the root, shows none), else the
    first file."""
    base = root.rstrip("/") + "/"
    for entry in files:
        relative = entry.path[len(base):] if entry.path.startswith(base) else ""
        if "=" in relative.rpartition("/")[0]:
            return [entry]
    return list(files[:1])
