"""The bookmark state store: what every backend keeps and the operations it offers.

A backend (SQLite now, PostgreSQL later) implements :class:`StateStore`. One behavioural test
suite runs against every backend. All methods are transactional: each either happens whole or
not at all, and a reader never sees half of a commit.

Model (per job):

* the **bookmark**: ``version`` (bumped by every change, failures included), ``run`` (number of
  the last successful run), ``attempt`` (failed attempts of the run now due), ``run_id`` (last
  successful run), ``previous_run_id`` and a map ``ctx -> state element`` (JSON objects);
* its **history**: every committed version, so rewind and audit are exact;
* **runs**: one record per attempt (``RUNNING`` → ``SUCCEEDED`` | ``FAILED``) with the bookmark
  option it ran under;
* the **manifest**: per run and ctx, the recorded plan (a JSON object) and every input file
  ``(path, mtime, size)`` by name, written *before* the data is read;
* **retention**: runs, their manifests and bookmark versions older than a window are pruned
  (``prune``, and automatically after commits), never what a retry, rewind or replay needs;
* a **lease** per job: one run at a time. Every acquisition (and every takeover) gets the
  next **generation** number of the job; every state change of a run (plan, heartbeat, commit,
  failure) checks in its own transaction that the run still holds the lease at its generation,
  so a stale holder — a run whose lease was taken over while it was still alive — changes
  nothing (fencing; LeaseLost).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..planning.files import FileEntry
from ..planning.modified import EarlierTake
from ..planning.retention import RetentionPolicy
from .manifest import Manifest, manifest_from_json

if TYPE_CHECKING:
    from ._retention import PruneReport
from ._quarantine import QuarantineEntry, SetAside
from ._schemas import PendingSchema, SourceSchema

__all__ = [
    "BOOKMARK_OPTIONS",
    "Bookmark",
    "RunRecord",
    "RunInputs",
    "StateStore",
]

#: How a run treats the bookmark (Glue's ``--job-bookmark-option`` without the prefix).
BOOKMARK_OPTIONS = ("enable", "disable", "pause")

RUN_STATUSES = ("RUNNING", "SUCCEEDED", "FAILED")


@dataclass(frozen=True)
class Bookmark:
    """One version of a job's bookmark."""

    job_name: str
    version: int = 0
    run: int = 0
    attempt: int = 0
    run_id: str | None = None
    previous_run_id: str | None = None
    state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reason: str | None = None  # what made this version (commit, failure, reset, rewind …)
    created_at: str | None = None  # ISO-8601 UTC

    def to_json(self) -> dict[str, Any]:
        return {
            "job_name": self.job_name,
            "version": self.version,
            "run": self.run,
            "attempt": self.attempt,
            "run_id": self.run_id,
            "previous_run_id": self.previous_run_id,
            "state": {k: dict(v) for k, v in self.state.items()},
            "reason": self.reason,
            "updated_at": self.created_at,
        }


@dataclass(frozen=True)
class RunRecord:
    """One attempt of one run of a job."""

    run_id: str
    job_name: str
    run: int  # the run number this attempt is for (bookmark.run + 1 at its start)
    attempt: int  # 0 for the first attempt of that run number
    status: str  # RUNNING | SUCCEEDED | FAILED
    bookmark_option: str  # enable | disable | pause | mark-processed
    started_at: str
    ended_at: str | None = None
    error: str | None = None
    host: str | None = None
    pid: int | None = None
    generation: int | None = None  # the lease generation it held (None: before schema 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "job_name": self.job_name,
            "run": self.run,
            "attempt": self.attempt,
            "status": self.status,
            "bookmark_option": self.bookmark_option,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "error": self.error,
            "generation": self.generation,
        }


@dataclass(frozen=True)
class RunInputs:
    """What one run recorded for one ctx: its plan and the files it planned to read."""

    ctx: str
    plan: Mapping[str, Any]  # the stored JSON (any manifest version)
    files: Sequence[FileEntry]

    @property
    def manifest(self) -> Manifest:
        """The plan as its typed record (a source's or a sink's)."""
        return manifest_from_json(self.plan)


@runtime_checkable
class StateStore(Protocol):
    """Operations every state backend provides (see the module docstring for the model)."""

    url: str

    # -- bookmark -------------------------------------------------------------------------
    def get_bookmark(self, job_name: str) -> Bookmark:
        """The current bookmark (version 0 and no state for a job never seen)."""
        ...

    def history(self, job_name: str) -> list[Bookmark]:
        """Every version of the bookmark, oldest first."""
        ...

    def reset(self, job_name: str, ctx: str | None = None) -> Bookmark:
        """Forget the state of the whole job (or of one ctx); a new version.

        Raises LeaseError while a run of the job is in progress.
        """
        ...

    def rewind(self, job_name: str, run_id: str) -> Bookmark:
        """Make the state what it was right after the successful run ``run_id``; a new version.

        Raises UnknownRunError if ``run_id`` is not a successful run of ``job_name`` and
        LeaseError while a run is in progress. Run numbers stay monotonic.
        """
        ...

    def list_jobs(self) -> list[Bookmark]:
        """The current bookmark of every job the store knows, by name."""
        ...

    # -- runs -----------------------------------------------------------------------------
    def begin_run(
        self,
        job_name: str,
        bookmark_option: str,
        *,
        host: str,
        pid: int,
        lease_timeout_s: float,
        force: bool = False,
        held: Collection[str] | None = None,
    ) -> RunRecord:
        """Take the job's lease and record a RUNNING attempt with a fresh ``jr_…`` run id and
        the job's next lease generation.

        The run number is ``bookmark.run + 1`` and the attempt ``bookmark.attempt``. If another
        run holds the lease: take it over when its process is provably gone (same host, dead
        pid), when its lease expired (no heartbeat for ``lease_timeout_s``) or when ``force``;
        ``held`` (the run ids this very process still works on, when the caller knows them):
        a holder with this host and pid that is not among them is left over (its commit
        failed, and so did recording the failure) and is taken over too.
        The run taken over is recorded as FAILED first (a failed attempt). Otherwise raise
        LeaseError naming the holder's run id. Two concurrent callers: exactly one wins.
        """
        ...

    def heartbeat(self, run_id: str, *, what: str = "heartbeat") -> None:
        """Extend the lease of a RUNNING run; LeaseLost if it was taken over (a newer
        generation holds it), LeaseError if the run has ended. Either way nothing changes.
        ``what``: the step the error says was refused (a lease check before a step)."""
        ...

    def record_plan(
        self, run_id: str, ctx: str, plan: Mapping[str, Any], files: Sequence[FileEntry]
    ) -> None:
        """Record (replace) the plan and the input files of one ctx of a RUNNING run that
        still holds its lease (LeaseLost/LeaseError as for :meth:`heartbeat`)."""
        ...

    def commit_run(
        self, run_id: str, states: Mapping[str, Mapping[str, Any]], *, update_bookmark: bool,
        schemas: Mapping[str, PendingSchema] | None = None,
        retried: Mapping[str, Sequence[str]] | None = None,
    ) -> Bookmark:
        """End a run as SUCCEEDED, in one transaction with its state elements (and, when the
        bookmark moves, a new version of each tracked source schema in ``schemas``). The
        set-aside files the run took again (``retried``: ctx → paths) become ``retried``.

        With ``update_bookmark`` the given ctx states replace those in the bookmark (other
        ctxs keep theirs), ``run`` becomes the run's number, ``attempt`` 0, ``run_id`` this run,
        ``previous_run_id`` the former ``run_id``, and ``version`` goes up by one — a
        compare-and-swap against the version seen at ``begin_run`` (CommitConflict on a miss).
        Without it (disable, pause) the bookmark is untouched. The lease is released.
        LeaseLost (a CommitConflict) if the run's lease was taken over: nothing is committed.
        """
        ...

    def fail_run(self, run_id: str, error: str, *, update_bookmark: bool) -> Bookmark:
        """End a run as FAILED. With ``update_bookmark``, version and attempt go up by one.

        A run that already ended is left as it is; LeaseLost if it was taken over.
        """
        ...

    def get_run(self, run_id: str) -> RunRecord:
        """One run by id; UnknownRunError if there is none."""
        ...

    def list_runs(self, job_name: str) -> list[RunRecord]:
        """Every attempt of the job, oldest first."""
        ...

    def runs_between(self, job_name: str, from_run_id: str, to_run_id: str) -> list[RunRecord]:
        """The successful bookmark-moving runs after ``from_run_id`` up to ``to_run_id``.

        This is the input that Glue's ``job-bookmark-from``/``-to`` replays. UnknownRunError if
        either id is not such a run of the job; ConfigError if ``from`` ran after ``to``.
        """
        ...

    def run_inputs(self, run_id: str) -> list[RunInputs]:
        """What the run recorded per ctx (ordered by ctx); UnknownRunError if no such run."""
        ...

    def record_timings(self, run_id: str, timings: Mapping[str, float]) -> None:
        """Record the stage timings (seconds per stage) of a run that has ended
        (:mod:`lakemark.run.stage_timings`); UnknownRunError if no such run."""
        ...

    def run_timings(self, run_id: str) -> dict[str, float]:
        """The stage timings a run recorded, in run order (empty: none)."""
        ...

    def earlier_takes(self, job_name: str, ctx: str, paths: Sequence[str],
                      max_run: int) -> dict[str, EarlierTake]:
        """The last take of each of ``paths`` by a successful run numbered at most
        ``max_run`` of the job's source ``ctx`` (the planner's input for modified files;
        :mod:`._takes`)."""
        ...

    def prune(self, job_name: str | None, policy: RetentionPolicy, *, dry_run: bool = False,
              now: float | None = None) -> list[PruneReport]:
        """Delete old runs, their manifests and old bookmark versions of ``job_name`` (None:
        every job) as ``policy`` allows, never what a pending retry, a rewind or a replay
        inside the window needs (:mod:`lakemark.planning.retention`); ``dry_run`` only counts.
        """
    # -- work done after a commit (clean-up of processed files) ----------------------------
    def record_after_commit(self, run_id: str, ctx: str, plan: Mapping[str, Any]) -> None:
        """Replace the recorded plan of ``ctx`` of a run that SUCCEEDED (its files stay), for
        work done after its commit: the clean-up of processed files marks its outcome so.
        Needs no lease (that work is idempotent); StateError for another run or an unknown
        ctx."""
        ...

    def open_entries(self, job_name: str, ctx_prefix: str) -> list[tuple[RunRecord, RunInputs]]:
        """The manifest entries of ``job_name``'s SUCCEEDED runs whose ctx starts with
        ``ctx_prefix`` and whose plan's ``status`` is not ``done``, with their files, oldest
        run first: the clean-ups still to finish (an entry of a run that did not commit is
        never one)."""
        ...

    # -- tracked source schemas (state/_schemas.py) ----------------------------------------
    def get_source_schema(self, job_name: str, ctx: str) -> SourceSchema | None:
        """The current tracked schema of source ``ctx`` (None: never tracked, or reset)."""
        ...

    def source_schema_history(self, job_name: str, ctx: str | None = None) -> list[SourceSchema]:
        """Every version of the job's tracked schemas (of one ctx), by ctx then version."""
        ...

    def reset_source_schema(self, job_name: str, ctx: str | None = None) -> list[str]:
        """Forget the tracked schema of ``ctx`` (or all): the next run infers again."""
        ...

    # -- set-aside input files (state/_quarantine.py) -----------------------------------------
    def quarantine_files(self, run_id: str, job_name: str, ctx: str,
                         files: Iterable[tuple[str, int, int, str]]) -> None:
        """Set aside ``(path, size, mtime, reason)`` files of ``ctx`` found by a RUNNING run
        that holds its lease (status ``open``)."""
        ...

    def quarantined(self, job_name: str, *, ctx: str | None = None,
                    statuses: Sequence[str] = ("open", "retry"),
                    run_id: str | None = None) -> list[QuarantineEntry]:
        """The job's set-aside files with one of ``statuses``, by ctx and path."""
        ...

    def request_retry(self, job_name: str, paths: Sequence[str] = ()) -> list[QuarantineEntry]:
        """Mark set-aside files (all, or ``paths``) for the next run to take once."""
        ...

    def quarantine_history(self, job_name: str, *, run_id: str | None = None,
                           ctx: str | None = None) -> list[SetAside]:
        """Every time a run of the job set a file aside (one row per file and run)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
