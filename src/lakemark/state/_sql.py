"""What the SQL state stores share: the bookmark, run and lease logic over plain SQL.

The SQLite file (:mod:`lakemark.state.sqlite`) and the PostgreSQL schema
(:mod:`lakemark.state.postgres`) hold the same tables; each backend opens its connection, runs
its migrations and provides :meth:`SqlStore._tx` — one write transaction that serialises
writers (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory lock) — and ``_q``, a connection
for reads outside a transaction. Statements use ``?`` placeholders; the PostgreSQL backend
translates them for psycopg.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, UTC
from typing import Any

from ..errors import (CommitConflict, ConfigError, LeaseError, LeaseLost, StateError,
                      UnknownRunError)
from ..planning.files import FileEntry
from ..planning.modified import EarlierTake
from ..redaction import redact
from .._fault import fault_point
from ..planning.retention import RetentionPolicy
from ._retention import PRUNE_EVERY, PruneReport, _epoch, auto_policy, prune_job
from ._quarantine import QuarantineRecords
from ._timings import TimingRecords
from ._folder_commits import FolderCommitRecords
from ._schemas import PendingSchema, SchemaRecords
from .base import Bookmark, RunInputs, RunRecord

log = logging.getLogger("lakemark.state")

__all__ = ["SCHEMA_VERSION", "LockedReads", "OlderSchema", "SqlStore", "new_run_id"]

SCHEMA_VERSION = 7


class OlderSchema(StateError):
    """A store opened read-only has an older schema: it must be upgraded (by opening it for
    writing, which migrates it in place) before this lakemark can read it."""

#: What each schema version adds to a store written by the version before (ALTER statements;
#: new tables come from the ``CREATE TABLE IF NOT EXISTS`` schema itself).
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (  # lease generations (fencing)
        "ALTER TABLE leases ADD COLUMN generation BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN generation BIGINT",
    ),
    3: (),  # tracked source schemas: the source_schemas table (state/_schemas.py)
    4: (),  # set-aside input files: the quarantine table (state/_quarantine.py)
    5: (),  # stage timings of runs: the run_timings table (state/_timings.py)
    6: (  # every run that set a file aside: quarantine_history (state/_quarantine.py)
        "INSERT INTO quarantine_history (job_name, ctx, path, run_id, size, mtime, reason, "
        "set_aside_at) SELECT job_name, ctx, path, run_id, size, mtime, reason, updated_at "
        "FROM quarantine",
    ),
    7: (),  # commit records of folder sinks: the folder_commits table (state/_folder_commits.py)
}

#: How the error of a run whose lease was taken over starts.
_TAKEN_OVER = "lease taken over"

_RUN_COLUMNS = ("run_id, job_name, run, attempt, status, bookmark_option, started_at, ended_at, "
                "error, host, pid, generation")
_RUN_FIELDS = tuple(c.strip() for c in _RUN_COLUMNS.split(","))

#: The columns of a bookmark row (``jobs`` and ``bookmark_versions``), as Bookmark's fields.
_BOOKMARK_FIELDS = ("version", "run", "attempt", "run_id", "previous_run_id", "state",
                    "reason", "created_at")


def _bookmark_of(job_name: str, row: Sequence[Any]) -> Bookmark:
    """A bookmark from its row (the columns of :data:`_BOOKMARK_FIELDS`, by name)."""
    values = dict(zip(_BOOKMARK_FIELDS, row, strict=True))
    values["state"] = json.loads(values["state"])
    return Bookmark(job_name=job_name, **values)

#: Bookmark options whose successful runs move the bookmark (and so count for from/to replays).
_TRACKING_OPTIONS = ("enable", "mark-processed")


#: Plan entries that are display text (a source, a URL, a reason); credentials are removed from
#: them before the plan is stored. Other entries (states, ranges, tokens) are kept exactly, as
#: retries and replays compare them.
_DISPLAY_KEYS = ("source", "url", "error", "reason", "message", "query")


def _displayed(plan: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (redact(v) if k in _DISPLAY_KEYS and isinstance(v, str) else v)
            for k, v in plan.items()}


def _record_of(row: Sequence[Any]) -> RunRecord:
    """A run record from its row; an error stored by an older lakemark is redacted on read."""
    record = RunRecord(**dict(zip(_RUN_FIELDS, row, strict=True)))
    if record.error:
        record = replace(record, error=redact(record.error))
    return record


def new_run_id() -> str:
    """A fresh run id in Glue's shape: ``jr_`` and 32 hex digits."""
    return "jr_" + uuid.uuid4().hex


class _Rows:
    """The rows of one read, fetched whole while the store's lock was held."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Any:
        return iter(self._rows)


class LockedReads:
    """Reads outside a transaction on a connection the store shares between threads (a run's
    heartbeat thread writes through it too): each statement runs and is fetched whole under
    the store's lock, so it never interleaves with another thread's transaction."""

    def __init__(self, conn: Any, lock: threading.RLock,
                 fault: Callable[[Exception, str], StateError | None] | None = None) -> None:
        self._conn = conn
        self._lock = lock
        self._fault = fault

    def execute(self, query: Any, params: Sequence[Any] = ()) -> _Rows:
        """Run one statement and fetch its rows; a driver error the store's ``fault``
        translates (a full disk, a lost connection, …) is raised as that StateError."""
        with self._lock:
            try:
                cur = self._conn.execute(query, params)
                rows = cur.fetchall() if cur.description is not None else []
            except Exception as exc:
                fault = self._fault(exc, "a read") if self._fault is not None else None
                if fault is None:
                    raise
                raise fault from exc
            return _Rows(rows, cur.rowcount)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SqlStore(SchemaRecords, QuarantineRecords, TimingRecords, FolderCommitRecords):
    """A :class:`~lakemark.state.base.StateStore` over the shared tables (see the module doc)."""

    url: str
    _clock: Callable[[], float]
    _q: Any  # reads outside a transaction (a LockedReads)
    #: Held by every transaction and read: one connection, used by a run's thread and its
    #: heartbeat thread.
    _lock: threading.RLock

    @property
    def _where(self) -> str:
        """The store as messages name it."""
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[Any]:
        """One write transaction holding the store's write lock."""
        raise NotImplementedError

    def _stamp(self) -> str:
        """The time recorded on rows (ISO-8601 UTC); a benchmark may simulate it."""
        return _now_iso()

    #: The automatic retention policy (None: off); read from the environment on first use.
    _retention: RetentionPolicy | None | bool = False

    @property
    def retention(self) -> RetentionPolicy | None:
        """The policy pruned after commits (``LAKEMARK_RETENTION``/``_KEEP_DAYS``/``_KEEP_RUNS``
        unless set on the store; None: automatic pruning is off)."""
        if self._retention is False:
            self._retention = auto_policy()
        assert self._retention is not True
        return self._retention

    @retention.setter
    def retention(self, policy: RetentionPolicy | None) -> None:
        self._retention = policy

    def _create_tables(self, db: Any, schema: str) -> None:
        """Create what is missing of ``schema`` (statements separated by ``;``), bring a store
        of an older schema version up to date (:data:`_MIGRATIONS`) and record the schema
        version; StateError for a store written by a newer lakemark."""
        for statement in schema.split(";"):
            if statement.strip():
                db.execute(statement)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                       (str(SCHEMA_VERSION),))
        elif int(row[0]) > SCHEMA_VERSION:
            raise StateError(
                f"{self._where} has schema version {row[0]}, newer than this lakemark "
                f"understands ({SCHEMA_VERSION}); upgrade lakemark"
            )
        elif int(row[0]) < SCHEMA_VERSION:
            for version in range(int(row[0]) + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS.get(version, ()):
                    db.execute(statement)
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                       (str(SCHEMA_VERSION),))

    # -- bookmark -------------------------------------------------------------------------
    def _bookmark(self, db: Any, job_name: str) -> Bookmark:
        row = db.execute(
            "SELECT version, run, attempt, run_id, previous_run_id, state_json, reason, updated_at "
            "FROM jobs WHERE job_name = ?",
            (job_name,),
        ).fetchone()
        if row is None:
            return Bookmark(job_name=job_name)
        return _bookmark_of(job_name, row)

    def _save(self, db: Any, b: Bookmark, made_by: str | None) -> Bookmark:
        """Store ``b`` as the job's current bookmark and as a row of its history."""
        state_json = json.dumps({k: dict(v) for k, v in b.state.items()}, sort_keys=True)
        now = self._stamp()
        db.execute(
            "INSERT INTO jobs (job_name, version, run, attempt, run_id, previous_run_id, "
            "state_json, reason, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (job_name) DO UPDATE SET version = excluded.version, "
            "run = excluded.run, attempt = excluded.attempt, run_id = excluded.run_id, "
            "previous_run_id = excluded.previous_run_id, state_json = excluded.state_json, "
            "reason = excluded.reason, updated_at = excluded.updated_at",
            (b.job_name, b.version, b.run, b.attempt, b.run_id, b.previous_run_id, state_json,
             b.reason, now),
        )
        db.execute(
            "INSERT INTO bookmark_versions (job_name, version, run, attempt, run_id, "
            "previous_run_id, state_json, reason, made_by_run_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (b.job_name, b.version, b.run, b.attempt, b.run_id, b.previous_run_id, state_json,
             b.reason, made_by, now),
        )
        return replace(b, created_at=now)

    def get_bookmark(self, job_name: str) -> Bookmark:
        return self._bookmark(self._q, job_name)

    def list_jobs(self) -> list[Bookmark]:
        """The current bookmark of every job the store knows, by name."""
        names = [r[0] for r in self._q.execute("SELECT job_name FROM jobs ORDER BY job_name")]
        return [self._bookmark(self._q, n) for n in names]

    def history(self, job_name: str) -> list[Bookmark]:
        rows = self._q.execute(
            "SELECT version, run, attempt, run_id, previous_run_id, state_json, reason, created_at "
            "FROM bookmark_versions WHERE job_name = ? ORDER BY version",
            (job_name,),
        ).fetchall()
        return [_bookmark_of(job_name, r) for r in rows]

    def _refuse_while_running(self, db: Any, job_name: str, what: str) -> None:
        holder = self._live_holder(db, job_name)
        if holder is not None:
            raise LeaseError(
                f"cannot {what} job {job_name!r} while run {holder} is in progress",
                job_name=job_name, holder_run_id=holder,
            )

    def _live_holder(self, db: Any, job_name: str) -> str | None:
        row = db.execute(
            "SELECT l.run_id FROM leases l JOIN runs r ON r.run_id = l.run_id "
            "WHERE l.job_name = ? AND r.status = 'RUNNING'",
            (job_name,),
        ).fetchone()
        return None if row is None else str(row[0])

    def reset(self, job_name: str, ctx: str | None = None) -> Bookmark:
        with self._tx() as db:
            self._refuse_while_running(db, job_name, "reset")
            b = self._bookmark(db, job_name)
            if ctx is None:
                state: dict[str, Any] = {}
                reason = "reset"
            else:
                if ctx not in b.state:
                    known = ", ".join(sorted(b.state)) or "none"
                    raise ConfigError(
                        f"job {job_name!r} has no state for transformation_ctx {ctx!r} "
                        f"(it has: {known})"
                    )
                state = {k: v for k, v in b.state.items() if k != ctx}
                reason = f"reset ctx {ctx}"
            return self._save(db, Bookmark(job_name, b.version + 1, b.run, 0, b.run_id,
                                           b.previous_run_id, state, reason), None)

    def rewind(self, job_name: str, run_id: str) -> Bookmark:
        with self._tx() as db:
            self._refuse_while_running(db, job_name, "rewind")
            row = db.execute(
                "SELECT state_json, previous_run_id FROM bookmark_versions "
                "WHERE job_name = ? AND made_by_run_id = ? AND reason = 'commit'",
                (job_name, run_id),
            ).fetchone()
            if row is None:
                raise UnknownRunError(
                    f"{run_id} is not a successful run of job {job_name!r} that moved its "
                    "bookmark (or it was pruned by `state prune`); `lakemark runs list` shows "
                    "the runs"
                )
            b = self._bookmark(db, job_name)
            return self._save(db, Bookmark(job_name, b.version + 1, b.run, 0, run_id, row[1],
                                           json.loads(row[0]), f"rewind to {run_id}"), None)

    # -- runs -----------------------------------------------------------------------------
    def _record(self, db: Any, run_id: str) -> RunRecord:
        row = db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?",
                         (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(f"no run {run_id!r} in {self._where}")
        return _record_of(row)

    def _end_run(self, db: Any, run_id: str, status: str, error: str | None) -> None:
        # The error text comes from anywhere (a driver's message, a user script): it is
        # stored only after credentials are removed.
        db.execute(
            "UPDATE runs SET status = ?, ended_at = ?, error = ? WHERE run_id = ?",
            (status, self._stamp(), redact(error) if error else error, run_id),
        )
        db.execute("DELETE FROM leases WHERE run_id = ?", (run_id,))

    def _record_failure(self, db: Any, record: RunRecord, error: str,
                        update_bookmark: bool) -> Bookmark:
        self._end_run(db, record.run_id, "FAILED", error)
        b = self._bookmark(db, record.job_name)
        if not update_bookmark:
            return b
        return self._save(db, Bookmark(record.job_name, b.version + 1, b.run, b.attempt + 1,
                                       b.run_id, b.previous_run_id, b.state,
                                       f"failure of {record.run_id}"), record.run_id)

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
        self.retention  # noqa: B018 - a bad LAKEMARK_RETENTION/_KEEP_* fails before any change
        with self._tx() as db:
            lease = db.execute(
                "SELECT l.run_id, l.host, l.pid, l.heartbeat_at FROM leases l "
                "WHERE l.job_name = ?",
                (job_name,),
            ).fetchone()
            run_id = new_run_id()
            generation = self._next_generation(db, job_name)
            if lease is not None:
                holder_id, holder_host, holder_pid, beat = lease
                holder = self._record(db, holder_id)
                if holder.status == "RUNNING":
                    why = self._takeover_reason(holder_host, holder_pid, beat, host, pid,
                                                lease_timeout_s, force)
                    if why is None and held is not None and holder_id not in held \
                            and (holder_host, holder_pid) == (host, pid):
                        why = f"its process {pid} on {host} no longer works on it"
                    if why is None:
                        raise LeaseError(
                            f"job {job_name!r} is already running as {holder_id} (host "
                            f"{holder_host}, pid {holder_pid}); wait for it, or use --force if "
                            "you know it is gone",
                            job_name=job_name, holder_run_id=holder_id,
                        )
                    self._record_failure(
                        db, holder,
                        f"{_TAKEN_OVER} by {run_id} at generation {generation}: {why}",
                        holder.bookmark_option in _TRACKING_OPTIONS,
                    )
                db.execute("DELETE FROM leases WHERE job_name = ?", (job_name,))
            b = self._bookmark(db, job_name)
            db.execute(
                "INSERT INTO runs (run_id, job_name, run, attempt, status, bookmark_option, "
                "base_version, started_at, host, pid, generation) "
                "VALUES (?, ?, ?, ?, 'RUNNING', ?, ?, ?, ?, ?, ?)",
                (run_id, job_name, b.run + 1, b.attempt, bookmark_option, b.version, self._stamp(),
                 host, pid, generation),
            )
            db.execute(
                "INSERT INTO leases (job_name, run_id, host, pid, heartbeat_at, generation) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (job_name, run_id, host, pid, self._clock(), generation),
            )
            return self._record(db, run_id)

    def _next_generation(self, db: Any, job_name: str) -> int:
        """The job's next lease generation (1, 2, …; one per acquisition or takeover)."""
        row = db.execute("SELECT generation FROM lease_generations WHERE job_name = ?",
                         (job_name,)).fetchone()
        generation = (int(row[0]) if row is not None else 0) + 1
        db.execute(
            "INSERT INTO lease_generations (job_name, generation) VALUES (?, ?) "
            "ON CONFLICT (job_name) DO UPDATE SET generation = excluded.generation",
            (job_name, generation),
        )
        return generation

    def _takeover_reason(self, holder_host: str | None, holder_pid: int | None, beat: float,
                         host: str, pid: int, timeout_s: float, force: bool) -> str | None:
        if force:
            return "forced"
        if holder_host == host and holder_pid is not None and holder_pid != pid \
                and not _pid_alive(holder_pid):
            return f"its process {holder_pid} on {host} is gone"
        if self._clock() - beat > timeout_s:
            return f"no heartbeat for more than {timeout_s:g} s"
        return None

    def _fenced(self, db: Any, run_id: str, what: str) -> RunRecord:
        """Fencing, first statement of every state change of a run: extend its lease by a
        compare-and-swap on its generation; LeaseLost (taken over) or LeaseError (ended)
        when the run no longer holds it, before anything is changed."""
        record = self._record(db, run_id)
        if record.status == "RUNNING":
            moved = db.execute(
                "UPDATE leases SET heartbeat_at = ? "
                "WHERE job_name = ? AND run_id = ? AND generation = ?",
                (self._clock(), record.job_name, run_id, record.generation or 0),
            ).rowcount
            if moved == 1:
                return record
        raise self._not_holding(db, record, what)

    def _not_holding(self, db: Any, record: RunRecord, what: str) -> LeaseError:
        """Why ``record`` may not change the state: taken over (LeaseLost) or ended."""
        if record.status != "RUNNING" and (record.error or "").startswith(_TAKEN_OVER):
            row = db.execute(
                "SELECT run_id, generation, host, pid, started_at FROM runs "
                "WHERE job_name = ? AND generation > ? ORDER BY generation LIMIT 1",
                (record.job_name, record.generation or 0),
            ).fetchone()
            taker, taker_gen = (str(row[0]), int(row[1])) if row is not None else ("?", -1)
            known = [f"host {row[2]}, pid {row[3]}", f"at {row[4]}"] if row is not None else []
            _, sep, why = (record.error or "").partition(": ")
            if sep and why:
                known.append(f"because {why}")
            return LeaseLost(
                f"lease of job {record.job_name!r} was taken over by run {taker} at generation "
                f"{taker_gen} (run {record.run_id} held generation {record.generation}): its "
                f"{what} was refused and nothing it did was committed"
                + (f"; taken over by {', '.join(known)}" if known else ""),
                job_name=record.job_name, holder_run_id=taker,
                generation=record.generation or 0, holder_generation=taker_gen,
            )
        return LeaseError(
            f"run {record.run_id} of job {record.job_name!r} is no longer running "
            f"({record.status}" + (f": {record.error}" if record.error else "") + f"); its "
            f"{what} was refused",
            job_name=record.job_name, holder_run_id=self._live_holder(db, record.job_name) or "",
        )

    def heartbeat(self, run_id: str, *, what: str = "heartbeat") -> None:
        with self._tx() as db:
            self._fenced(db, run_id, what)

    def record_plan(
        self, run_id: str, ctx: str, plan: Mapping[str, Any], files: Sequence[FileEntry]
    ) -> None:
        with self._tx() as db:
            self._fenced(db, run_id, "plan record")
            db.execute("DELETE FROM run_files WHERE run_id = ? AND ctx = ?", (run_id, ctx))
            db.execute(
                "INSERT INTO run_plans (run_id, ctx, plan_json) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, ctx) DO UPDATE SET plan_json = excluded.plan_json",
                (run_id, ctx, json.dumps(_displayed(plan), sort_keys=True)),
            )
            db.executemany(
                "INSERT INTO run_files (run_id, ctx, path, mtime, size) VALUES (?, ?, ?, ?, ?)",
                ((run_id, ctx, f.path, f.mtime, f.size) for f in files),
            )

    def commit_run(
        self, run_id: str, states: Mapping[str, Mapping[str, Any]], *, update_bookmark: bool,
        schemas: Mapping[str, PendingSchema] | None = None,
        retried: Mapping[str, Sequence[str]] | None = None,
    ) -> Bookmark:
        with self._tx() as db:
            try:
                record = self._fenced(db, run_id, "commit")
            except LeaseLost:
                raise
            except LeaseError as exc:
                raise CommitConflict(f"cannot commit: {exc}") from exc
            seq, base = db.execute("SELECT seq, base_version FROM runs WHERE run_id = ?",
                                   (run_id,)).fetchone()
            b = self._bookmark(db, record.job_name)
            if update_bookmark and b.version != base:
                raise CommitConflict(
                    f"the bookmark of job {record.job_name!r} changed during run {run_id} "
                    f"(version {base} → {b.version}); nothing was committed"
                )
            self._end_run(db, run_id, "SUCCEEDED", None)
            if retried:
                self._mark_retried(db, record.job_name, run_id, retried)
            fault_point("during-job-commit")  # crash tests: half a transaction, never visible
            saved = b
            if update_bookmark:
                if schemas:
                    self._save_source_schemas(db, record.job_name, run_id, schemas)
                state = {k: dict(v) for k, v in b.state.items()}
                state.update({k: dict(v) for k, v in states.items()})
                saved = self._save(db, Bookmark(record.job_name, b.version + 1, record.run, 0,
                                                run_id, b.run_id, state, "commit"), run_id)
        if int(seq) % PRUNE_EVERY == 0:
            self._auto_prune(record)
        return saved

    def _auto_prune(self, record: RunRecord) -> None:
        """The automatic retention, after every PRUNE_EVERY-th successful commit of the store
        (by run sequence); a failure is logged, never raised (the commit stands)."""
        policy = self.retention
        if policy is None:
            return
        try:
            with self._tx() as db:
                report = prune_job(db, record.job_name, policy, _epoch(self._stamp()))
        except Exception as exc:  # noqa: BLE001 - the run committed; pruning waits for the next
            log.warning("automatic prune of job %r failed (%s); the next commit retries",
                        record.job_name, exc)
            return
        if report.runs or report.versions:
            log.info("pruned %d run(s) and %d bookmark version(s) of job %r",
                     report.runs, report.versions, record.job_name)

    def prune(self, job_name: str | None, policy: RetentionPolicy, *, dry_run: bool = False,
              now: float | None = None) -> list[PruneReport]:
        """Delete the runs, manifests and bookmark versions of ``job_name`` (None: every job)
        that ``policy`` lets go, never what a pending retry, a rewind or a replay inside the
        window needs (:mod:`lakemark.planning.retention`). One transaction per job; with
        ``dry_run`` only count. ConfigError for a job the store does not know."""
        when = time.time() if now is None else now
        if job_name is None:
            names = [str(r[0]) for r in self._q.execute(
                "SELECT job_name FROM jobs UNION SELECT DISTINCT job_name FROM runs "
                "ORDER BY 1")]
        else:
            if self._q.execute("SELECT 1 FROM jobs WHERE job_name = ? UNION "
                               "SELECT 1 FROM runs WHERE job_name = ?",
                               (job_name, job_name)).fetchone() is None:
                raise ConfigError(f"no job {job_name!r} in {self._where}; `lakemark bookmark "
                                  "show` lists the jobs")
            names = [job_name]
        reports = []
        for name in names:
            with self._tx() as db:
                reports.append(prune_job(db, name, policy, when, dry_run=dry_run))
        return reports

    def fail_run(self, run_id: str, error: str, *, update_bookmark: bool) -> Bookmark:
        with self._tx() as db:
            record = self._record(db, run_id)
            try:
                self._fenced(db, run_id, "failure record")
            except LeaseLost:
                raise
            except LeaseError:  # it ended already: leave it as it is
                return self._bookmark(db, record.job_name)
            return self._record_failure(db, record, error, update_bookmark)

    def get_run(self, run_id: str) -> RunRecord:
        return self._record(self._q, run_id)

    def list_runs(self, job_name: str) -> list[RunRecord]:
        rows = self._q.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE job_name = ? ORDER BY seq", (job_name,),
        ).fetchall()
        return [_record_of(r) for r in rows]

    def runs_between(self, job_name: str, from_run_id: str, to_run_id: str) -> list[RunRecord]:
        """The successful bookmark-moving runs after ``from_run_id`` up to ``to_run_id``."""
        seqs = {}
        for which, rid in (("job-bookmark-from", from_run_id), ("job-bookmark-to", to_run_id)):
            row = self._q.execute(
                "SELECT seq FROM runs WHERE run_id = ? AND job_name = ? AND status = 'SUCCEEDED' "
                f"AND bookmark_option IN ({','.join('?' * len(_TRACKING_OPTIONS))})",
                (rid, job_name, *_TRACKING_OPTIONS),
            ).fetchone()
            if row is None:
                raise UnknownRunError(
                    f"{which} {rid!r} is not a successful bookmarked run of job {job_name!r} "
                    "(or it was pruned by `state prune`); `lakemark runs list` shows the runs"
                )
            seqs[which] = row[0]
        if seqs["job-bookmark-from"] > seqs["job-bookmark-to"]:
            raise ConfigError(
                f"job-bookmark-from {from_run_id} ran after job-bookmark-to {to_run_id}; "
                "give the earlier run first"
            )
        rows = self._q.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE job_name = ? AND status = 'SUCCEEDED' "
            f"AND bookmark_option IN ({','.join('?' * len(_TRACKING_OPTIONS))}) "
            "AND seq > ? AND seq <= ? ORDER BY seq",
            (job_name, *_TRACKING_OPTIONS, seqs["job-bookmark-from"], seqs["job-bookmark-to"]),
        ).fetchall()
        return [_record_of(r) for r in rows]

    # -- work done after a commit (clean-up of processed files) --------------------------------
    def record_after_commit(self, run_id: str, ctx: str, plan: Mapping[str, Any]) -> None:
        """Replace the plan of ``ctx`` of a run that SUCCEEDED (its files stay): the outcome of
        work done after the commit, outside the lease; StateError for any other run or ctx."""
        with self._tx() as db:
            record = self._record(db, run_id)
            if record.status != "SUCCEEDED":
                raise StateError(f"run {run_id} is {record.status}: only a run that succeeded "
                                 "records work done after its commit")
            found = db.execute("SELECT 1 FROM run_plans WHERE run_id = ? AND ctx = ?",
                               (run_id, ctx)).fetchone()
            if found is None:
                raise StateError(f"run {run_id} recorded nothing for {ctx!r}")
            db.execute("UPDATE run_plans SET plan_json = ? WHERE run_id = ? AND ctx = ?",
                       (json.dumps(_displayed(plan), sort_keys=True), run_id, ctx))

    def open_entries(self, job_name: str, ctx_prefix: str) -> list[tuple[RunRecord, RunInputs]]:
        """The manifest entries of the job's SUCCEEDED runs whose ctx starts with
        ``ctx_prefix`` and whose plan's ``status`` is not ``done``, with their runs and files,
        oldest run first."""
        rows = self._q.execute(
            "SELECT r.run_id, p.ctx, p.plan_json FROM run_plans p JOIN runs r "
            "ON r.run_id = p.run_id WHERE r.job_name = ? AND r.status = 'SUCCEEDED' "
            "AND p.ctx LIKE ? ORDER BY r.seq, p.ctx",
            (job_name, ctx_prefix.replace("%", "_") + "%"),  # "_" matches itself too
        ).fetchall()
        out = []
        for run_id, ctx, plan_json in rows:
            if not str(ctx).startswith(ctx_prefix):
                continue
            plan = json.loads(plan_json)
            if plan.get("status") == "done":
                continue
            files = [FileEntry(mtime=r[0], path=r[1], size=r[2]) for r in self._q.execute(
                "SELECT mtime, path, size FROM run_files WHERE run_id = ? AND ctx = ? "
                "ORDER BY mtime, path", (run_id, ctx))]
            out.append((self._record(self._q, run_id), RunInputs(ctx=ctx, plan=plan,
                                                                 files=files)))
        return out

    def earlier_takes(self, job_name: str, ctx: str, paths: Sequence[str],
                      max_run: int) -> dict[str, EarlierTake]:
        from ._takes import earlier_takes

        return earlier_takes(self._q, job_name, ctx, paths, max_run)

    def run_inputs(self, run_id: str) -> list[RunInputs]:
        self._record(self._q, run_id)
        plans = self._q.execute(
            "SELECT ctx, plan_json FROM run_plans WHERE run_id = ? ORDER BY ctx", (run_id,)
        ).fetchall()
        out = []
        for ctx, plan_json in plans:
            files = [
                FileEntry(mtime=r[0], path=r[1], size=r[2])
                for r in self._q.execute(
                    "SELECT mtime, path, size FROM run_files WHERE run_id = ? AND ctx = ? "
                    "ORDER BY mtime, path",
                    (run_id, ctx),
                )
            ]
            out.append(RunInputs(ctx=ctx, plan=json.loads(plan_json), files=files))
        return out
