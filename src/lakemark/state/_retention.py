"""Pruning old run manifests from an SQL state store (SQLite or PostgreSQL).

The decision is pure (:mod:`lakemark.planning.retention`); this module reads the candidate rows
of one job inside the store's write transaction, asks for the decision and deletes it with
parameterised statements, so a run that starts or commits meanwhile is serialised with the
prune and never loses what it needs.

The automatic policy (applied after a successful commit, every :data:`PRUNE_EVERY` runs of a
job) is configured by the environment:

* ``LAKEMARK_RETENTION=off`` turns it off (``on``, the default, keeps it);
* ``LAKEMARK_KEEP_DAYS`` (default 30) and ``LAKEMARK_KEEP_RUNS`` (default 100).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

from ..errors import ConfigError
from ..planning.retention import (CurrentBookmark, PruneDecision, RetentionPolicy, RunRow,
                                  VersionRow, decide)
from ._folder_commits import prune_folder_commits

__all__ = ["PRUNE_EVERY", "PruneReport", "auto_policy", "prune_job"]

#: The automatic prune runs when a committed run's number is a multiple of this (it costs a
#: read of the job's runs beyond the last ``keep_runs``; every 10th commit keeps that cheap).
PRUNE_EVERY = 10

#: Rows per ``IN (…)`` list of a delete (well under SQLite's and libpq's parameter limits).
_CHUNK = 500


@dataclass(frozen=True)
class PruneReport:
    """What a prune of one job deleted (or, with ``dry_run``, would delete)."""

    job_name: str
    runs: int
    files: int
    plans: int
    versions: int
    dry_run: bool
    kept_runs: int
    #: Commit records of folder sinks the pruned runs made (``folder_commits``; the latest
    #: committed version of each target and app id always stays).
    folder_commits: int = 0
    #: The pruned runs' rows of ``quarantine_history`` (files they set aside).
    quarantine_history: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"job_name": self.job_name, "runs": self.runs, "files": self.files,
                "plans": self.plans, "versions": self.versions, "dry_run": self.dry_run,
                "kept_runs": self.kept_runs, "folder_commits": self.folder_commits,
                "quarantine_history": self.quarantine_history}


def auto_policy(env: Mapping[str, str] | None = None) -> RetentionPolicy | None:
    """The automatic policy the environment asks for, or None when it is off.

    ConfigError naming the variable for a value that is not understood.
    """
    env = os.environ if env is None else env
    switch = env.get("LAKEMARK_RETENTION", "on").strip().lower()
    if switch in ("off", "0", "false", "no"):
        return None
    if switch not in ("on", "1", "true", "yes", ""):
        raise ConfigError(f"LAKEMARK_RETENTION={switch!r}: use on or off")
    values: dict[str, Any] = {}
    for name, key, cast in (("LAKEMARK_KEEP_DAYS", "keep_days", float),
                            ("LAKEMARK_KEEP_RUNS", "keep_runs", int)):
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            values[key] = cast(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a number") from None
    try:
        return RetentionPolicy(**values)
    except ConfigError as exc:
        raise ConfigError(f"LAKEMARK_KEEP_DAYS/LAKEMARK_KEEP_RUNS: {exc}") from None


_DAY_S = 86_400.0


def _iso(epoch: float) -> str:
    """A time as the store stamps rows (so that stamps compare as text)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def _epoch(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)]


def _count(db: Any, sql: str, ids: Sequence[Any], head: Sequence[Any] = ()) -> int:
    total = 0
    for part in _chunks(ids):
        marks = ",".join("?" * len(part))
        total += int(db.execute(sql.format(marks=marks), (*head, *part)).fetchone()[0])
    return total


def _delete(db: Any, sql: str, ids: Sequence[Any], head: Sequence[Any] = ()) -> None:
    for part in _chunks(ids):
        db.execute(sql.format(marks=",".join("?" * len(part))), (*head, *part))


def prune_job(db: Any, job_name: str, policy: RetentionPolicy, now: float, *,
              dry_run: bool = False) -> PruneReport:
    """Delete (or only count, ``dry_run``) what ``policy`` lets go of job ``job_name``.

    ``db`` is inside the store's write transaction. Only the runs before the window are read
    (they are the only candidates), with the bookmark versions older than the version the
    window's oldest run started from.
    """
    row = db.execute("SELECT version, run, run_id, previous_run_id FROM jobs WHERE job_name = ?",
                     (job_name,)).fetchone()
    total = int(db.execute("SELECT COUNT(*) FROM runs WHERE job_name = ?",
                           (job_name,)).fetchone()[0])
    # A job whose runs never moved a bookmark (disable, pause) has none: version 0, run 0.
    current = (CurrentBookmark(version=0, run=0) if row is None else
               CurrentBookmark(version=int(row[0]), run=int(row[1]), run_id=row[2],
                               previous_run_id=row[3]))
    # The window's oldest run: the first of the last keep_runs, or the first that started
    # within keep_days if that is older. It and every later run stay, so only the runs before
    # it are read (in steady state a handful: the index on started_at finds it).
    cutoff = now - policy.keep_days * _DAY_S
    starts = []
    if policy.keep_runs:
        first = db.execute(
            "SELECT seq FROM runs WHERE job_name = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
            (job_name, policy.keep_runs - 1)).fetchone()
        if first is None:  # fewer runs than keep_runs: nothing may go
            return PruneReport(job_name, 0, 0, 0, 0, dry_run, total)
        starts.append(int(first[0]))
    recent = db.execute("SELECT MIN(seq) FROM runs WHERE job_name = ? AND started_at >= ?",
                        (job_name, _iso(cutoff))).fetchone()
    if recent is not None and recent[0] is not None:
        starts.append(int(recent[0]))
    limit = None
    if starts:
        seq = min(starts)
        base = db.execute("SELECT base_version FROM runs WHERE seq = ?", (seq,)).fetchone()
        limit = (seq, int(base[0]))
    where = " AND seq < ?" if limit else ""
    runs = [
        RunRow(seq=int(r[0]), run_id=str(r[1]), run=int(r[2]), status=str(r[3]),
               bookmark_option=str(r[4]), started_at=_epoch(r[5]), base_version=int(r[6]))
        for r in db.execute(
            "SELECT seq, run_id, run, status, bookmark_option, started_at, base_version "
            f"FROM runs WHERE job_name = ?{where} ORDER BY seq",
            (job_name, limit[0]) if limit else (job_name,)).fetchall()
    ]
    # Versions made by runs not read are newer than the version the first of them started
    # from, which stays too (the history inside the window is kept whole).
    vwhere = " AND version < ?" if limit else ""
    versions = [
        VersionRow(version=int(v[0]), made_by_run_id=v[1], created_at=_epoch(v[2]))
        for v in db.execute(
            "SELECT version, made_by_run_id, created_at FROM bookmark_versions "
            f"WHERE job_name = ?{vwhere}",
            (job_name, limit[1]) if limit else (job_name,)).fetchall()
    ]
    # The rows read are all before the window: decided with keep_runs 0, they are decided
    # as over every row (tests/unit/test_planning_retention.py checks the equivalence).
    decision: PruneDecision = decide(runs, versions, current,
                                     RetentionPolicy(policy.keep_days, 0), now)
    ids = list(decision.runs)
    files = _count(db, "SELECT COUNT(*) FROM run_files WHERE run_id IN ({marks})", ids)
    plans = _count(db, "SELECT COUNT(*) FROM run_plans WHERE run_id IN ({marks})", ids)
    set_aside = _count(db, "SELECT COUNT(*) FROM quarantine_history WHERE job_name = ? "
                           "AND run_id IN ({marks})", ids, (job_name,))
    records = prune_folder_commits(db, job_name, ids, dry_run=dry_run)
    if not dry_run:
        for table in ("run_files", "run_plans", "run_timings", "runs"):
            _delete(db, f"DELETE FROM {table} WHERE run_id IN ({{marks}})", ids)
        _delete(db, "DELETE FROM quarantine_history WHERE job_name = ? AND run_id IN ({marks})",
                ids, (job_name,))
        _delete(db, "DELETE FROM bookmark_versions WHERE job_name = ? AND version IN ({marks})",
                list(decision.versions), (job_name,))
    return PruneReport(job_name, len(ids), files, plans, len(decision.versions), dry_run,
                       total - len(ids), records, set_aside)
