"""Retention of run manifests: which old runs and bookmark versions a prune may delete.

Pure Python (no I/O): the state store reads the rows, asks :func:`decide` and deletes what it
returns. Why a row may go, and why it must stay:

* the **window** is kept whole: the last ``keep_runs`` runs of the job *and* every run that
  started within ``keep_days`` — and, so that a replay ``--from X --to Y`` between two runs of
  the window finds every run in between, every run after the oldest of those (by ``seq``, the
  order runs were recorded). A run is deleted only when it is *both* older than ``keep_days``
  and not among the last ``keep_runs``;
* runs still **needed** stay whatever their age: a RUNNING run (its lease), the attempts of the
  run number now due (``run > bookmark.run`` with a bookmark-moving option: a retry replays or
  fences against their recorded input), and the runs the current bookmark names
  (``run_id``, ``previous_run_id``: what a rewind or a ``--from`` most likely targets);
* a **bookmark version** stays when it is the current one, was made by a kept run (so
  ``bookmark rewind`` to any kept successful run finds its state), was created within
  ``keep_days``, or is at least the version the window's oldest run started from (the history
  inside the window is kept whole).

The job's current bookmark (its planning state, which has its own compaction) is never a
candidate: it lives in another table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = [
    "DEFAULT_KEEP_DAYS",
    "DEFAULT_KEEP_RUNS",
    "TRACKING_OPTIONS",
    "CurrentBookmark",
    "PruneDecision",
    "RetentionPolicy",
    "RunRow",
    "VersionRow",
    "decide",
    "needed_runs",
]

#: The automatic policy's defaults: a month of history, and at least the last 100 runs.
DEFAULT_KEEP_DAYS = 30.0
DEFAULT_KEEP_RUNS = 100

#: Bookmark options whose successful runs move the bookmark (their attempts can be retried).
TRACKING_OPTIONS = ("enable", "mark-processed")

_DAY_S = 86_400.0


@dataclass(frozen=True)
class RetentionPolicy:
    """Keep runs younger than ``keep_days`` and at least the last ``keep_runs`` of each job."""

    keep_days: float = DEFAULT_KEEP_DAYS
    keep_runs: int = DEFAULT_KEEP_RUNS

    def __post_init__(self) -> None:
        if not (self.keep_days >= 0):  # also refuses NaN
            raise ConfigError(f"keep-days must be a number >= 0, not {self.keep_days!r}")
        if isinstance(self.keep_runs, bool) or not isinstance(self.keep_runs, int) \
                or self.keep_runs < 0:
            raise ConfigError(f"keep-runs must be an integer >= 0, not {self.keep_runs!r}")


@dataclass(frozen=True)
class RunRow:
    """What the decision needs of one run (one attempt) of the job."""

    seq: int  # the order the store recorded runs in
    run_id: str
    run: int
    status: str  # RUNNING | SUCCEEDED | FAILED
    bookmark_option: str
    started_at: float  # seconds since the epoch
    base_version: int  # the bookmark version the run started from


@dataclass(frozen=True)
class VersionRow:
    """What the decision needs of one bookmark version."""

    version: int
    made_by_run_id: str | None
    created_at: float  # seconds since the epoch


@dataclass(frozen=True)
class CurrentBookmark:
    """The job's current bookmark (never deleted; it names what must stay)."""

    version: int
    run: int
    run_id: str | None = None
    previous_run_id: str | None = None


@dataclass(frozen=True)
class PruneDecision:
    """The run ids and bookmark versions that may be deleted, oldest first."""

    runs: tuple[str, ...] = ()
    versions: tuple[int, ...] = ()
    window_start_seq: int | None = None  # the oldest run of the kept window (None: empty)


def needed_runs(runs: Iterable[RunRow], current: CurrentBookmark) -> set[str]:
    """The run ids that stay whatever their age (see the module docstring)."""
    named = {current.run_id, current.previous_run_id} - {None}
    return {
        r.run_id for r in runs
        if r.status == "RUNNING" or r.run_id in named
        or (r.run > current.run and r.bookmark_option in TRACKING_OPTIONS)
    }


def decide(runs: Sequence[RunRow], versions: Sequence[VersionRow], current: CurrentBookmark,
           policy: RetentionPolicy, now: float) -> PruneDecision:
    """What a prune of one job may delete under ``policy`` at time ``now`` (epoch seconds).

    ``runs`` and ``versions`` may be any subset of the job's rows that holds every row older
    than the rows left out (a store passes only the candidates beyond the last ``keep_runs``
    and a policy with ``keep_runs=0``); rows not passed are never deleted.
    """
    ordered = sorted(runs, key=lambda r: r.seq)
    cutoff = now - policy.keep_days * _DAY_S
    in_window = [r.seq for r in ordered if r.started_at >= cutoff]
    if policy.keep_runs:
        in_window += [r.seq for r in ordered[-policy.keep_runs:]]
    start = min(in_window) if in_window else None
    needed = needed_runs(ordered, current)
    gone = [r for r in ordered
            if (start is None or r.seq < start) and r.run_id not in needed]
    gone_ids = {r.run_id for r in gone}
    kept_ids = {r.run_id for r in ordered} - gone_ids
    floor = min((r.base_version for r in ordered if r.seq == start), default=None)
    drop_versions = sorted(
        v.version for v in versions
        if v.version != current.version
        and v.created_at < cutoff
        and (floor is None or v.version < floor)
        and (v.made_by_run_id is None or v.made_by_run_id not in kept_ids)
        and v.made_by_run_id not in needed
    )
    return PruneDecision(runs=tuple(r.run_id for r in gone), versions=tuple(drop_versions),
                         window_start_seq=start)
