"""Set-aside input files in the SQL state stores: the ``quarantine`` table.

A file a run could not read (damaged, truncated, a broken link, a record over the size limit,
a file the reader failed on) is set aside rather than allowed to stick the job: one row per
job, ``transformation_ctx`` and path holds its size and mtime as the run saw them, the reason,
the run that set it aside and its status:

* ``open``: set aside; runs skip this version of the file (same size and mtime) on their own;
* ``retry``: ``lakemark quarantine retry`` asked for it; the next run of the job takes it;
* ``retried``: a run took it again and committed (``retried_by``), in the commit's transaction.

A file that fails again while retried goes back to ``open`` with the new reason and run. Rows
are written as soon as a run finds the file (so a failed attempt's retry skips it too).

``quarantine`` holds each file's current state; ``quarantine_history`` keeps one row per file
and run that set it aside (size, mtime, reason, when; schema version 6, filled from
``quarantine`` on upgrade), so a file set aside again by a later run does not erase what the
earlier run set aside: ``runs show`` of the earlier run still lists it, and an earlier run that
set a file aside never counts as having taken it (``_takes.py``).

SQL is parameterised (``?`` placeholders; the PostgreSQL store translates them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

from ..errors import ConfigError
from ..redaction import redact

__all__ = ["QUARANTINE_STATUSES", "QuarantineEntry", "QuarantineRecords", "SetAside"]

#: Every status a row can have, in the order a file goes through them.
QUARANTINE_STATUSES = ("open", "retry", "retried")

_COLUMNS = ("job_name, ctx, path, size, mtime, reason, run_id, status, retried_by, "
            "updated_at")


@dataclass(frozen=True)
class QuarantineEntry:
    """One set-aside file (see the module doc for ``status``)."""

    job_name: str
    ctx: str
    path: str
    size: int
    mtime: int
    reason: str
    run_id: str
    status: str
    retried_by: str | None
    updated_at: str

    def to_json(self) -> dict[str, Any]:
        return {"job_name": self.job_name, "ctx": self.ctx, "path": self.path,
                "size": self.size, "mtime": self.mtime, "reason": self.reason,
                "run_id": self.run_id, "status": self.status, "retried_by": self.retried_by,
                "updated_at": self.updated_at}


@dataclass(frozen=True)
class SetAside:
    """One run's setting aside of one file (a ``quarantine_history`` row)."""

    ctx: str
    path: str
    run_id: str
    size: int
    mtime: int
    reason: str
    set_aside_at: str

    def to_json(self) -> dict[str, Any]:
        return {"ctx": self.ctx, "path": self.path, "run_id": self.run_id, "size": self.size,
                "mtime": self.mtime, "reason": self.reason, "set_aside_at": self.set_aside_at}


_HISTORY = "ctx, path, run_id, size, mtime, reason, set_aside_at"


def _row(row: Sequence[Any]) -> QuarantineEntry:
    return QuarantineEntry(str(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]),
                           str(row[5]), str(row[6]), str(row[7]),
                           None if row[8] is None else str(row[8]), str(row[9]))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class QuarantineRecords:
    """The quarantine operations of :class:`~lakemark.state._sql.SqlStore` (a mixin: it uses
    the store's ``_q`` reads, ``_tx`` transactions and ``_fenced`` lease check)."""

    _q: Any
    _tx: Any  # provided by SqlStore
    _fenced: Any

    def quarantine_files(self, run_id: str, job_name: str, ctx: str,
                         files: Iterable[tuple[str, int, int, str]]) -> None:
        """Set aside ``(path, size, mtime, reason)`` files of source ``ctx`` found by run
        ``run_id`` (which must hold the job's lease): status ``open``, replacing what an
        earlier run recorded for the same path."""
        with self._tx() as db:
            self._fenced(db, run_id, "quarantine")
            now = _now()
            for path, size, mtime, reason in files:
                db.execute(
                    f"INSERT INTO quarantine ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (job_name, ctx, path) DO UPDATE SET size = excluded.size, "
                    "mtime = excluded.mtime, reason = excluded.reason, "
                    "run_id = excluded.run_id, status = excluded.status, retried_by = NULL, "
                    "updated_at = excluded.updated_at",
                    (job_name, ctx, path, int(size), int(mtime), redact(reason)[:2000], run_id,
                     "open", None, now))
                db.execute(
                    f"INSERT INTO quarantine_history (job_name, {_HISTORY}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_name, ctx, path, run_id) "
                    "DO UPDATE SET size = excluded.size, mtime = excluded.mtime, "
                    "reason = excluded.reason, set_aside_at = excluded.set_aside_at",
                    (job_name, ctx, path, run_id, int(size), int(mtime), redact(reason)[:2000],
                     now))

    def quarantine_history(self, job_name: str, *, run_id: str | None = None,
                           ctx: str | None = None) -> list[SetAside]:
        """Every time a run of the job set a file aside (of one run; of one ctx), oldest
        first by path: what ``runs show`` and ``quarantine list`` report of earlier runs."""
        where, params = ["h.job_name = ?"], [job_name]
        for column, value in (("run_id", run_id), ("ctx", ctx)):
            if value is not None:
                where.append(f"h.{column} = ?")
                params.append(value)
        columns = ", ".join(f"h.{c.strip()}" for c in _HISTORY.split(","))
        # In the order of the runs (their seq): two runs may share a millisecond.
        rows = self._q.execute(
            f"SELECT {columns} FROM quarantine_history h LEFT JOIN runs r "
            f"ON r.run_id = h.run_id WHERE {' AND '.join(where)} "
            "ORDER BY h.ctx, h.path, r.seq, h.set_aside_at, h.run_id", tuple(params)).fetchall()
        return [SetAside(str(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]), str(r[5]),
                         str(r[6])) for r in rows]

    def quarantined(self, job_name: str, *, ctx: str | None = None,
                    statuses: Sequence[str] = ("open", "retry"),
                    run_id: str | None = None) -> list[QuarantineEntry]:
        """The job's set-aside files with one of ``statuses`` (of one ctx; set aside by one
        run), by ctx and path."""
        where = ["job_name = ?"]
        params: list[Any] = [job_name]
        if ctx is not None:
            where.append("ctx = ?")
            params.append(ctx)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        where.append(f"status IN ({', '.join('?' for _ in statuses)})")
        params.extend(statuses)
        rows = self._q.execute(f"SELECT {_COLUMNS} FROM quarantine WHERE {' AND '.join(where)} "
                               "ORDER BY ctx, path", tuple(params)).fetchall()
        return [_row(r) for r in rows]

    def request_retry(self, job_name: str, paths: Sequence[str] = ()) -> list[QuarantineEntry]:
        """Mark set-aside files (all open ones of the job, or those of ``paths``) for the next
        run to take, once; ConfigError naming a path that is not set aside, or when there is
        nothing to retry. Returns the rows now marked."""
        with self._tx() as db:
            rows = [_row(r) for r in db.execute(
                f"SELECT {_COLUMNS} FROM quarantine WHERE job_name = ? AND status IN "
                "('open', 'retry') ORDER BY ctx, path", (job_name,)).fetchall()]
            if paths:
                known = {r.path for r in rows}
                missing = [p for p in paths if p not in known]
                if missing:
                    raise ConfigError(f"job {job_name!r} has no set-aside file {missing[0]!r} "
                                      "(see `lakemark quarantine list`)")
                rows = [r for r in rows if r.path in set(paths)]
            if not rows:
                raise ConfigError(f"job {job_name!r} has no set-aside files to retry")
            for r in rows:
                db.execute("UPDATE quarantine SET status = 'retry', updated_at = ? "
                           "WHERE job_name = ? AND ctx = ? AND path = ?",
                           (_now(), job_name, r.ctx, r.path))
        return [QuarantineEntry(**{**r.__dict__, "status": "retry"}) for r in rows]

    def _mark_retried(self, db: Any, job_name: str, run_id: str,
                      retried: Mapping[str, Sequence[str]]) -> None:
        """Inside a run's commit transaction: the set-aside files the run took again are done
        (marked for retry, or changed since and read; never one this run set aside itself)."""
        now = _now()
        for ctx, paths in retried.items():
            for path in paths:
                db.execute("UPDATE quarantine SET status = 'retried', retried_by = ?, "
                           "updated_at = ? WHERE job_name = ? AND ctx = ? AND path = ? "
                           "AND status IN ('open', 'retry') AND run_id <> ?",
                           (run_id, now, job_name, ctx, path, run_id))
