"""Earlier takes of files by path: what the planner's policy for modified files needs.

The file planner (:mod:`lakemark.planning.modified`) is pure; the run looks up here, for the
few paths it would take, the last take of each by a successful bookmark-moving run of the same
job and source ctx, at or before the bookmark's run (so a rewind forgets the runs it undid).
An index on ``run_files (path)`` keeps this a lookup however long the history is. Runs pruned
by retention are forgotten: a file they took counts as new (taken whole). A file a run set
aside (a ``quarantine_history`` row names that run) is in the run's file list but was never read, so
it is no take: once fixed it is a new file, not a modification.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..planning.modified import EarlierTake

__all__ = ["earlier_takes"]

#: Paths per query (well under SQLite's and PostgreSQL's parameter limits).
_CHUNK = 500


def earlier_takes(db: Any, job_name: str, ctx: str, paths: Sequence[str],
                  max_run: int) -> dict[str, EarlierTake]:
    """The last take of each of ``paths`` by a SUCCEEDED run (bookmark ``enable`` or
    ``mark-processed``) of ``job_name`` numbered at most ``max_run``, recorded under ``ctx``,
    leaving out the runs that set the file aside."""
    out: dict[str, tuple[int, EarlierTake]] = {}
    unique = sorted(set(paths))
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start:start + _CHUNK]
        marks = ", ".join("?" for _ in chunk)
        rows = db.execute(
            "SELECT f.path, f.mtime, f.size, r.run_id, r.run, r.seq FROM run_files f "
            "JOIN runs r ON r.run_id = f.run_id "
            f"WHERE f.path IN ({marks}) AND f.ctx = ? AND r.job_name = ? "
            "AND r.status = 'SUCCEEDED' AND r.bookmark_option IN ('enable', 'mark-processed') "
            "AND r.run <= ? AND NOT EXISTS (SELECT 1 FROM quarantine_history q "
            "WHERE q.job_name = r.job_name AND q.ctx = f.ctx AND q.path = f.path "
            "AND q.run_id = f.run_id)",
            (*chunk, ctx, job_name, max_run),
        ).fetchall()
        for path, mtime, size, run_id, run, seq in rows:
            seen = out.get(path)
            if seen is None or int(seq) > seen[0]:
                out[path] = (int(seq), EarlierTake(str(path), int(mtime), int(size),
                                                   str(run_id), int(run)))
    return {p: take for p, (_, take) in out.items()}
