"""Clean-up of processed source files (``clean_source``): what to delete or archive, decided
without I/O.

A run whose file source asks for clean-up records, with its commit, one *clean-up entry* per
source: the mode (``delete`` or ``archive``), the archive folder, the source roots and the
exact files the run took (path, mtime, size). Only after the run's commit does anything touch
those files; an entry is marked ``done`` afterwards. An entry of a run that never committed is
never acted on, and a pending entry (a crash between commit and clean-up, or a failed clean-up)
is finished by a later run of the job.

Two pure functions hold the rules, so they can be property-tested:

* :func:`plan_cleanup` — given every recorded entry of a job (with whether its run committed),
  the work still to do: the pending entries of committed runs, oldest first, each file
  assigned to exactly one of them (a file two pending entries name is cleaned by the oldest).
* :func:`decide` — given a file as its run took it, what exists now at its path (and, when
  archiving, at its destination), the one action to take. A file whose size or mtime changed
  since it was planned is a new version that no run committed yet: it is kept.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import ConfigError
from .files import FileEntry

__all__ = ["CLEAN_MODES", "CleanEntry", "CleanTask", "Outcome", "Seen", "archive_destination",
           "check_clean_options", "decide", "parse_retention", "plan_cleanup",
           "relative_to_root"]

#: The values of ``clean_source`` / ``--clean-source``.
CLEAN_MODES = ("off", "delete", "archive")

#: What happened to one file (the keys of an entry's counts).
OUTCOMES = ("deleted", "archived", "gone", "changed", "conflict", "failed")


@dataclass(frozen=True)
class CleanEntry:
    """One recorded clean-up intent: the files one source of run ``run_id`` took."""

    run_id: str
    key: str  # the manifest key: "clean:<source ctx>"
    committed: bool  # the run succeeded with a commit of its state (the intent is committed)
    done: bool  # the clean-up finished (a "done" mark was recorded)
    mode: str  # delete | archive
    files: tuple[FileEntry, ...]
    roots: tuple[str, ...] = ()
    archive_to: str | None = None
    not_before_ms: int = 0  # the retention: not carried out before this time (epoch ms)


@dataclass(frozen=True)
class CleanTask:
    """The work left of one entry: its files not already assigned to an older pending entry
    (``duplicates``: those, which this entry leaves to the older one)."""

    entry: CleanEntry
    files: tuple[FileEntry, ...]
    duplicates: tuple[FileEntry, ...] = field(default=())


def plan_cleanup(entries: Iterable[CleanEntry], now_ms: int | None = None) -> list[CleanTask]:
    """The clean-up still to do at ``now_ms`` (None: whatever the time): one task per
    committed, not yet done entry whose retention has passed, in the order given (oldest run
    first). Entries of runs that did not commit are never in it; a file (path, mtime, size)
    named by several pending entries is in the oldest one's task only (an entry still in its
    retention holds its files back from younger ones too)."""
    tasks: list[CleanTask] = []
    taken: set[tuple[str, int, int]] = set()
    for entry in entries:
        if not entry.committed or entry.done or entry.mode not in ("delete", "archive"):
            continue
        if now_ms is not None and entry.not_before_ms > now_ms:
            taken.update((f.path, f.mtime, f.size) for f in entry.files)
            continue
        mine: list[FileEntry] = []
        dups: list[FileEntry] = []
        for f in entry.files:
            ident = (f.path, f.mtime, f.size)
            (dups if ident in taken else mine).append(f)
            taken.add(ident)
        tasks.append(CleanTask(entry, tuple(mine), tuple(dups)))
    return tasks


@dataclass(frozen=True)
class Seen:
    """What exists at a path now: its mtime (epoch ms) and size."""

    mtime: int
    size: int


#: Actions of :class:`Outcome`: remove the source, move it, only remove the source (its copy
#: at the destination is already complete), or leave it.
ACTIONS = ("delete", "move", "finish-move", "keep")


@dataclass(frozen=True)
class Outcome:
    """The action for one file and the count it goes to (``gone``/``changed``/``conflict``
    keep the file, or there is none to keep)."""

    action: str
    counted_as: str
    reason: str = ""


def decide(taken: FileEntry, now: Seen | None, mode: str, *, destination: Seen | None = None,
           same_at_destination: bool = False) -> Outcome:
    """The action for a file the committed run took as ``taken``.

    ``now`` is what is at its path now (None: nothing). When archiving, ``destination`` is
    what is at its archive path and ``same_at_destination`` whether that is a complete copy of
    this very file (an earlier move stopped between copy and delete).
    """
    if now is None:
        if mode == "archive" and destination is not None:
            return Outcome("keep", "gone", "already archived")
        return Outcome("keep", "gone", "no longer in the source")
    if now.size != taken.size or not _same_time(now.mtime, taken.mtime):
        return Outcome("keep", "changed",
                       f"changed since the run took it (size {taken.size} -> {now.size}, "
                       f"mtime {taken.mtime} -> {now.mtime}): a later run takes it")
    if mode == "delete":
        return Outcome("delete", "deleted")
    if destination is None:
        return Outcome("move", "archived")
    if same_at_destination:
        return Outcome("finish-move", "archived", "its copy was already at the destination")
    return Outcome("keep", "conflict", "another file is at the archive destination; "
                   "neither was changed")


def _same_time(now_ms: int, taken_ms: int) -> bool:
    return now_ms == taken_ms


def relative_to_root(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the most specific of ``roots`` that holds it ('/'-separated);
    a root that names the file itself gives its base name."""
    for root in sorted(roots, key=len, reverse=True):
        base = root.rstrip("/")
        if path == base:
            return posixpath.basename(path)
        if path.startswith(base + "/"):
            return path[len(base) + 1:]
    return posixpath.basename(path)


def archive_destination(path: str, roots: Sequence[str], archive_to: str) -> str:
    """Where archiving puts ``path``: its path relative to its source root, under
    ``archive_to`` (``/src/a/b.json`` from root ``/src`` to ``/arch/a/b.json``)."""
    return archive_to.rstrip("/") + "/" + relative_to_root(path, roots)


def _inside(child: str, parent: str) -> bool:
    parent = parent.rstrip("/")
    return child == parent or child.startswith(parent + "/") or parent == ""


def check_clean_options(mode: str, archive_to: str | None, roots: Sequence[str], *,
                        mode_option: str = "clean_source",
                        archive_option: str = "archive_to") -> None:
    """ConfigError for a clean-up that cannot go: an unknown mode, an archive folder missing
    (or given without ``archive``), or one that overlaps a source root — files moved inside
    the source would be listed (and taken) again. ``roots`` and ``archive_to`` are canonical
    locations (absolute paths, or ``s3://bucket/prefix``); local and S3 do not mix."""
    if mode not in CLEAN_MODES:
        raise ConfigError(f"{mode_option} must be one of {', '.join(CLEAN_MODES)}, not {mode!r}")
    if mode != "archive":
        if archive_to is not None:
            raise ConfigError(f"{archive_option} goes with {mode_option} archive "
                              f"(got {mode_option} {mode})")
        return
    if not archive_to:
        raise ConfigError(f"{mode_option} archive needs {archive_option} (a folder or "
                          "s3:// prefix to move the processed files to)")
    for root in roots:
        if root.startswith("s3://") != archive_to.startswith("s3://"):
            raise ConfigError(f"{archive_option} {archive_to} and the source {root} must both "
                              "be local or both be on S3")
        if _inside(archive_to, root) or _inside(root, archive_to):
            raise ConfigError(f"{archive_option} {archive_to} overlaps the source {root}: the "
                              "archive must be outside the source (files moved inside it "
                              "would be listed again), and the source outside the archive")


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")
_UNITS = {unit: factor
          for names, factor in ((("", "s", "sec", "secs", "second", "seconds"), 1),
                                (("m", "min", "mins", "minute", "minutes"), 60),
                                (("h", "hour", "hours"), 3600),
                                (("d", "day", "days"), 86_400),
                                (("w", "week", "weeks"), 604_800))
          for unit in names}


def parse_retention(value: str | float | int | None, *,
                    option: str = "clean_source_retention") -> float:
    """Seconds from a retention: a number of seconds, or a number and a unit (``30m``,
    ``12 hours``, ``7d``, ``2 weeks``); None: none. ConfigError naming ``option`` otherwise."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not value >= 0:  # negative or NaN
            raise ConfigError(f"{option} must not be negative, got {value!r}")
        return float(value)
    match = _DURATION.match(str(value).lower())
    if match is None or match.group(2) not in _UNITS:
        raise ConfigError(f"{option} {value!r} is not a duration: give seconds or a number "
                          "with a unit s, m, h, d or w (e.g. 30m, 7d)")
    return float(match.group(1)) * _UNITS[match.group(2)]
