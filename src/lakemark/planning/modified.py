"""What a run does with a file an earlier run already took and that has changed since.

Pure functions over plain data (no Spark, no I/O): the caller looks the earlier takes up in the
state store (by path, only for the paths :func:`~lakemark.planning.files.plan_files` would take)
and hands them in as :class:`EarlierTake` values.

A *modification* is a candidate file whose ``(mtime, size)`` differs from the one an earlier
successful run recorded for the same path. What happens to it is the source's policy:

* ``retake`` (the default, AWS Glue's documented behaviour: "if your input source data has been
  modified since your last job run, the files are reprocessed"): the whole file is taken again,
  and the run reports it as *taken before* (with the earlier run).
* ``skip`` (Auto Loader's ``allowOverwrites=false``): a modified file is not taken again; it is
  reported as skipped and counted as seen, so it is not looked at again until it changes again.
* ``append`` (json, csv, text): only the bytes past the size taken before are taken (the
  appended tail). A file that shrank or kept its size, or a compressed file (whose bytes cannot
  be cut), is not an append: it is retaken whole and reported as such.

A file that changed *while* a run read it is a different matter (``leave_out``): the run leaves
it out of its input and its bookmark, so the next run takes it as if it were new.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from .files import FileEntry, FilePlan

__all__ = [
    "LINE_FORMATS",
    "DEFAULT_MODIFIED",
    "MODIFIED_POLICIES",
    "EarlierTake",
    "PolicyOutcome",
    "apply_policy",
    "check_modified_policy",
    "leave_out",
]

MODIFIED_POLICIES: tuple[str, ...] = ("retake", "skip", "append")
DEFAULT_MODIFIED = "retake"
#: The line formats whose appended tail can be read on its own (``append`` applies only to
#: them: a columnar file cannot be cut at a byte offset, an XML document not at a line).
LINE_FORMATS = frozenset({"json", "csv", "text"})
#: File name endings of compressed files: their bytes cannot be cut, so no appended tail.
_COMPRESSED = (".gz", ".bz2", ".zst", ".lz4", ".br", ".snappy", ".deflate", ".zip", ".xz")


def check_modified_policy(value: object, *, format: str | None,
                          option: str = "modified") -> str:
    """``value`` as a policy name (lower case); ConfigError naming ``option`` when it is not
    one, or when ``append`` is asked of a columnar ``format``."""
    policy = value.strip().lower() if isinstance(value, str) else value
    if policy not in MODIFIED_POLICIES:
        raise ConfigError(f"option {option} must be one of {', '.join(MODIFIED_POLICIES)}, "
                          f"got {value!r}")
    fmt = (format or "").strip().lower()
    if policy == "append" and fmt and fmt not in LINE_FORMATS:
        raise ConfigError(f"option {option} append takes the appended tail of line formats "
                          f"(json, csv, text); a {fmt} file cannot be read from an "
                          f"offset: use retake or skip")
    assert isinstance(policy, str)
    return policy


@dataclass(frozen=True)
class EarlierTake:
    """The last take of a path by a successful earlier run: what it recorded (mtime, size: the
    byte the take reached) and which run it was."""

    path: str
    mtime: int
    size: int
    run_id: str
    run: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "mtime": self.mtime, "size": self.size,
                "run_id": self.run_id, "run": self.run}


@dataclass(frozen=True)
class PolicyOutcome:
    """The candidates after the policy: those still to take (a tail as an entry with an
    ``offset``), those skipped, and the earlier take of each retaken or tail-taken path."""

    kept: list[FileEntry]
    skipped: list[FileEntry]
    taken_before: dict[str, EarlierTake]


def _is_modification(entry: FileEntry, before: EarlierTake | None) -> bool:
    return before is not None and (before.mtime, before.size) != (entry.mtime, entry.size)


def apply_policy(candidates: Sequence[FileEntry], earlier: Mapping[str, EarlierTake],
                 policy: str) -> PolicyOutcome:
    """Apply ``policy`` to the ordered ``candidates`` given the ``earlier`` takes by path.

    Candidates that are not modifications (no earlier take, or the same mtime and size, as
    after a reset) pass unchanged and in order."""
    kept: list[FileEntry] = []
    skipped: list[FileEntry] = []
    taken_before: dict[str, EarlierTake] = {}
    for entry in candidates:
        before = earlier.get(entry.path)
        if before is None or not _is_modification(entry, before):
            kept.append(entry)
        elif policy == "skip":
            skipped.append(entry)
        elif (policy == "append" and 0 < before.size < entry.size
              and not entry.path.lower().endswith(_COMPRESSED)):
            kept.append(type(entry)(entry.mtime, entry.path, entry.size, before.size))
            taken_before[entry.path] = before
        else:
            kept.append(entry)
            taken_before[entry.path] = before
    return PolicyOutcome(kept, skipped, taken_before)


def leave_out(plan: FilePlan, paths: Iterable[str]) -> FilePlan:
    """``plan`` without the files at ``paths`` (they changed while the run read them): they
    leave the input and the band, so the next run sees them as not taken and takes them (whole,
    or their tail under ``append``) by their new mtime. The frontier stays: every other file up
    to it was taken."""
    gone = set(paths)
    if not gone:
        return plan
    files = tuple(e for e in plan.files if e.path not in gone)
    band = frozenset((p, m) for p, m in plan.next_state.band if p not in gone)
    return replace(plan, files=files, next_state=replace(plan.next_state, band=band),
                   taken_before={p: t for p, t in plan.taken_before.items() if p not in gone},
                   left_out=tuple(sorted(set(plan.left_out) | gone)))
