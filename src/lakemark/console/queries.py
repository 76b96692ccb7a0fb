"""One query layer over a state store for the CLI's views and the web console.

Every answer is plain JSON-ready data (dicts, lists, :class:`Page`), read with a few indexed
statements straight from the store's tables (``state/_ddl.py``), so a store with 1,000 jobs and
100,000 runs answers in milliseconds and a run's 100,000 files page instead of loading whole.
Nothing here writes. Errors and display text pass through :func:`lakemark.redaction.redact`
(the store redacts on write; an older store's rows are redacted again on read).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

from ..errors import ConfigError, StateError
from ..redaction import redact
from ..state import StateStore
from ._details import attempt_chain, job_io, schema_versions_used
from ._match import path_condition

__all__ = ["DEFAULT_STALE_AFTER_S", "MAX_LIMIT", "Page", "StateQueries", "UnknownJobError",
           "nearest_names"]

#: A job whose last successful run ended longer ago than this (a day) is "stale".
DEFAULT_STALE_AFTER_S = 24 * 3600.0
#: The most rows one page may ask for.
MAX_LIMIT = 1000
#: Placeholders per ``IN (...)`` list (well under SQLite's limit).
_CHUNK = 500


class UnknownJobError(StateError):
    """A job name the store has no record of (no bookmark, no run)."""


@dataclass(frozen=True)
class Page:
    """One page of a longer list: ``items`` from ``offset``, of ``total`` in all."""

    items: list[dict[str, Any]]
    total: int
    offset: int
    limit: int

    def to_json(self) -> dict[str, Any]:
        return {"items": self.items, "total": self.total, "offset": self.offset,
                "limit": self.limit}


def nearest_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The names closest to a mistyped ``name`` (difflib's ratio), best first."""
    return difflib.get_close_matches(name, list(names), n=n, cutoff=0.5)


def _epoch(iso: str | None) -> float | None:
    return datetime.fromisoformat(iso).timestamp() if iso else None


def _duration_s(started: str | None, ended: str | None) -> float | None:
    a, b = _epoch(started), _epoch(ended)
    return round(b - a, 3) if a is not None and b is not None else None


def _paging(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ConfigError(f"offset must be 0 or more, got {offset}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ConfigError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return offset, limit


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i:i + _CHUNK]


_RUN_COLS = ("run_id, job_name, run, attempt, status, bookmark_option, started_at, ended_at, "
             "error, host, generation")


class StateQueries:
    """Read-only questions about one open store (SQLite or PostgreSQL).

    ``now`` (epoch seconds; default: the clock) and ``stale_after_s`` decide which jobs are
    stale: no successful run ended within ``stale_after_s`` of ``now``.
    """

    def __init__(self, store: StateStore, *, stale_after_s: float = DEFAULT_STALE_AFTER_S,
                 now: float | None = None) -> None:
        self.store = store
        # The stores' shared read connection (state/_sql.py: reads outside a transaction,
        # under the store's lock); every statement below uses ``?`` placeholders.
        self._q = store._q  # type: ignore[attr-defined]
        self.dialect = "postgresql" if store.url.lower().startswith("postgres") else "sqlite"
        self.stale_after_s = stale_after_s
        self._now = now

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self._q.execute(sql, tuple(params)).fetchall())

    def _now_s(self) -> float:
        return self._now if self._now is not None else datetime.now(UTC).timestamp()

    # -- jobs -----------------------------------------------------------------------------
    def job_names(self) -> list[str]:
        """Every job with a bookmark or a run, by name."""
        return [r[0] for r in self._rows(
            "SELECT job_name FROM jobs UNION SELECT DISTINCT job_name FROM runs ORDER BY 1")]

    def require_job(self, job_name: str) -> None:
        """UnknownJobError (naming the nearest known names) unless the store has a bookmark
        or a run of ``job_name``."""
        if self._rows("SELECT 1 FROM jobs WHERE job_name = ?", (job_name,)):
            return
        if self._rows("SELECT 1 FROM runs WHERE job_name = ? LIMIT 1", (job_name,)):
            return
        names = self.job_names()
        near = nearest_names(job_name, names)
        hint = (f"; did you mean {', '.join(repr(n) for n in near)}?" if near
                else f"; {len(names)} job(s) known: `lakemark jobs list` shows them" if names
                else "; the store has no jobs yet")
        raise UnknownJobError(f"no job {job_name!r} in {redact(self.store.url)}{hint}")

    def jobs(self, *, totals: bool = True) -> list[dict[str, Any]]:
        """Every job with its last run (status, start, duration, files, bytes, rows),
        its bookmark version, its last success and whether it is stale. ``totals=False``
        leaves the last runs' files, bytes and rows out (:meth:`add_totals` adds them to the
        jobs a page shows: summing a big run's files is the costly part)."""
        # One grouped pass over runs' (job_name, status, seq) index for the last run and the
        # last success of each job, then those runs by key: joining runs back on a
        # correlated MAX(seq) makes PostgreSQL hash the whole runs table twice.
        latest: dict[str, tuple[Any, Any]] = {
            str(name): (seq, ok_seq) for name, seq, ok_seq in self._rows(
                "SELECT job_name, MAX(seq), MAX(CASE WHEN status = 'SUCCEEDED' THEN seq END) "
                "FROM runs GROUP BY job_name")}
        bookmarks = {str(name): (version, updated) for name, version, updated in self._rows(
            "SELECT job_name, version, updated_at FROM jobs")}
        by_seq: dict[Any, tuple[Any, ...]] = {}
        seqs = sorted({s for pair in latest.values() for s in pair if s is not None})
        for chunk in _chunks(seqs):
            marks = ",".join("?" * len(chunk))
            for seq, *row in self._rows("SELECT seq, run_id, status, started_at, ended_at "
                                        f"FROM runs WHERE seq IN ({marks})", chunk):
                by_seq[seq] = tuple(row)
        rows = []
        for name in sorted(set(latest) | set(bookmarks)):
            version, updated = bookmarks.get(name, (None, None))
            seq, ok_seq = latest.get(name, (None, None))
            run_id, status, started, ended = by_seq.get(seq, (None, None, None, None))
            ok_id, _, _, ok_ended = by_seq.get(ok_seq, (None, None, None, None))
            rows.append((name, version, updated, run_id, status, started, ended, ok_id,
                         ok_ended))
        cutoff = self._now_s() - self.stale_after_s
        out = []
        for (name, version, updated, run_id, status, started, ended, ok_id, ok_ended) in rows:
            last = None
            if run_id:
                last = {"run_id": run_id, "status": status, "started_at": started,
                        "ended_at": ended, "duration_s": _duration_s(started, ended)}
            seen = _epoch(ok_ended) if ok_ended else _epoch(started or updated)
            out.append({
                "job_name": name, "bookmark_version": version or 0, "last_run": last,
                "last_success_run_id": ok_id, "last_success_at": ok_ended,
                "stale": seen is not None and seen < cutoff,
            })
        return self.add_totals(out) if totals else out

    def add_totals(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``jobs`` (from :meth:`jobs`) with their last runs' files, bytes and rows."""
        totals = self._totals([j["last_run"]["run_id"] for j in jobs if j["last_run"]])
        aside = self._quarantined_counts([j["job_name"] for j in jobs])
        for job in jobs:
            if job["last_run"]:
                job["last_run"].update(totals[job["last_run"]["run_id"]])
            job["quarantined"] = aside.get(job["job_name"], 0)
        return jobs

    def _quarantined_counts(self, names: Sequence[str]) -> dict[str, int]:
        """job -> how many of its input files are set aside now (``open`` or ``retry``: not
        yet taken again); read from the quarantine table's key (job_name, ...)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(names)):
            marks = ",".join("?" * len(chunk))
            for name, count in self._rows(
                    f"SELECT job_name, COUNT(*) FROM quarantine WHERE job_name IN ({marks}) "
                    "AND status <> 'retried' GROUP BY job_name", chunk):
                out[str(name)] = int(count)
        return out

    # -- runs -----------------------------------------------------------------------------
    def _totals(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """run id -> files and bytes it took, and rows its sinks wrote (None: not recorded),
        and per sink ctx (``sink_rows``: the sinks that recorded their rows)."""
        out: dict[str, dict[str, Any]] = {rid: {**_NO_TOTALS, "sink_rows": {}}
                                          for rid in run_ids}
        for chunk in _chunks(list(run_ids)):
            marks = ",".join("?" * len(chunk))
            for rid, files, size in self._rows(
                    f"SELECT run_id, COUNT(*), SUM(size) FROM run_files WHERE run_id IN ({marks}) "
                    "GROUP BY run_id", chunk):
                out[rid]["files"], out[rid]["bytes"] = int(files), int(size or 0)
            for rid, ctx, plan_json in self._rows(
                    f"SELECT run_id, ctx, plan_json FROM run_plans WHERE run_id IN ({marks})",
                    chunk):
                plan = json.loads(plan_json)
                if plan.get("kind") == "sink" and isinstance(plan.get("rows"), int):
                    out[rid]["rows"] = (out[rid]["rows"] or 0) + plan["rows"]
                    out[rid]["sink_rows"][ctx] = plan["rows"]
        return out

    def _run_json(self, row: Sequence[Any]) -> dict[str, Any]:
        keys = [c.strip() for c in _RUN_COLS.split(",")]
        run = dict(zip(keys, row, strict=True))
        run["error"] = redact(run["error"]) if run["error"] else None
        run["duration_s"] = _duration_s(run["started_at"], run["ended_at"])
        return run

    def runs(self, job_name: str, *, offset: int = 0, limit: int = 50) -> Page:
        """A job's runs, newest first, with files, bytes and rows; UnknownJobError for a job
        the store does not know."""
        offset, limit = _paging(offset, limit)
        self.require_job(job_name)
        total = self._rows("SELECT COUNT(*) FROM runs WHERE job_name = ?", (job_name,))[0][0]
        rows = self._rows(f"SELECT {_RUN_COLS} FROM runs WHERE job_name = ? "
                          "ORDER BY seq DESC LIMIT ? OFFSET ?", (job_name, limit, offset))
        items = [self._run_json(r) for r in rows]
        totals = self._totals([r["run_id"] for r in items])
        for item in items:
            item.update(totals[item["run_id"]])
        return Page(items, int(total), offset, limit)

    def run(self, run_id: str) -> dict[str, Any] | None:
        """One run with its totals, its stage timings and what it recorded per ctx (sources
        and sinks, their files counted, not listed); None if the store has no such run."""
        rows = self._rows(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            return None
        run = self._run_json(rows[0])
        counts = {ctx: (int(n), int(b or 0)) for ctx, n, b in self._rows(
            "SELECT ctx, COUNT(*), SUM(size) FROM run_files WHERE run_id = ? GROUP BY ctx",
            (run_id,))}
        run.update(files=sum(n for n, _ in counts.values()),
                   bytes=sum(b for _, b in counts.values()), rows=None)
        inputs = []
        notes: dict[str, list[dict[str, Any]]] = {key: [] for key in FILE_NOTES}
        for ctx, plan_json in self._rows(
                "SELECT ctx, plan_json FROM run_plans WHERE run_id = ? ORDER BY ctx", (run_id,)):
            plan = json.loads(plan_json)
            if plan.get("kind") == "sink" and isinstance(plan.get("rows"), int):
                run["rows"] = (run["rows"] or 0) + plan["rows"]
            n, size = counts.get(ctx, (0, 0))
            inputs.append({"ctx": ctx, "kind": plan.get("kind", "source"),
                           "source": redact(str(plan.get("source") or plan.get("target") or "")),
                           "status": plan.get("status"), "rows": plan.get("rows"),
                           "files": n, "bytes": size})
            for key in FILE_NOTES:
                notes[key] += [{"ctx": ctx, **e} for e in plan.get(key) or ()
                               if isinstance(e, dict)]
        run["inputs"] = inputs
        run.update(notes)
        run.update(self._run_quarantine(str(run["job_name"]), run_id))
        run["timings"] = self.store.run_timings(run_id)  # seconds per stage; {}: none recorded
        run["attempts"] = attempt_chain(self._rows, str(run["job_name"]), int(run["run"]))
        run["schemas"] = schema_versions_used(self._rows, str(run["job_name"]), run_id,
                                              str(run["started_at"]))
        return run

    def job_io(self, job_name: str) -> list[dict[str, Any]]:
        """The job's sources and sinks with their bookmark state and sink tokens
        (:func:`._details.job_io`); UnknownJobError for a job the store does not know."""
        self.require_job(job_name)
        return job_io(self._rows, job_name)

    def _run_quarantine(self, job_name: str, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """The files ``run_id`` set aside (``quarantined``: with this run's reason, size and
        mtime from ``quarantine_history``, and the file's status now — ``superseded`` when a
        later run set it aside again) and the set-aside files it took again (``retried``)."""
        keys = ("ctx", "path", "size", "mtime", "reason", "run_id", "status", "retried_by",
                "updated_at")
        aside = [dict(zip(keys, r, strict=True)) for r in self._rows(
            "SELECT h.ctx, h.path, h.size, h.mtime, h.reason, h.run_id, "
            "CASE WHEN q.run_id = h.run_id THEN q.status ELSE 'superseded' END, "
            "CASE WHEN q.run_id = h.run_id THEN q.retried_by END, h.set_aside_at "
            "FROM quarantine_history h LEFT JOIN quarantine q ON q.job_name = h.job_name "
            "AND q.ctx = h.ctx AND q.path = h.path WHERE h.job_name = ? AND h.run_id = ? "
            "ORDER BY h.path, h.ctx", (job_name, run_id))]
        again = [dict(zip(keys, r, strict=True)) for r in self._rows(
            "SELECT ctx, path, size, mtime, reason, run_id, status, retried_by, updated_at "
            "FROM quarantine WHERE job_name = ? AND retried_by = ? ORDER BY path, ctx",
            (job_name, run_id))]
        for e in aside + again:
            e["reason"] = redact(str(e["reason"]))
        return {"quarantined": aside, "retried": again}

    # -- tracked schemas ------------------------------------------------------------------
    def schema_history(self, job_name: str) -> list[dict[str, Any]]:
        """Every tracked source of the job (by ctx) with its schema versions, newest first:
        what changed (columns added, types widened, …), the run that changed it, the reason
        and when; UnknownJobError for a job the store does not know."""
        self.require_job(job_name)
        sources: dict[str, list[dict[str, Any]]] = {}
        for h in self.store.source_schema_history(job_name):  # type: ignore[attr-defined]
            sources.setdefault(h.ctx, []).append({
                "version": h.version, "run_id": h.run_id, "reason": redact(h.reason),
                "created_at": h.created_at, "changes": h.changes,
                "columns": None if h.fields is None else len(h.fields),
                "fields": h.fields})
        return [{"ctx": ctx, "versions": versions[::-1]} for ctx, versions in sources.items()]

    def run_files(self, run_id: str, *, pattern: str | None = None, offset: int = 0,
                  limit: int = 100) -> Page:
        """The files a run took, by path (a page), optionally only those matching
        ``pattern`` (a substring, or a glob with ``*``/``?``: :mod:`._match`)."""
        offset, limit = _paging(offset, limit)
        where, params = "run_id = ?", [run_id]
        if pattern:
            cond, value = path_condition(self.dialect, "path", pattern)
            where, params = f"{where} AND {cond}", [run_id, value]
        # counted apart: the count reads only the index (run_id, path, ctx), while a window
        # count would fetch every matching row before the page
        total = self._rows(f"SELECT COUNT(*) FROM run_files WHERE {where}", params)[0][0]
        rows = self._rows(f"SELECT ctx, path, mtime, size FROM run_files WHERE {where} "
                          "ORDER BY path, ctx LIMIT ? OFFSET ?", [*params, limit, offset])
        items = [{"ctx": c, "path": p, "mtime": int(m), "size": int(s)} for c, p, m, s in rows]
        return Page(items, int(total), offset, limit)

    def _total(self, rows: list[Any], count_sql: str, params: Sequence[Any]) -> int:
        """The total a page's rows carry (``COUNT(*) OVER ()`` as their last column: one scan
        for the page and its total); counted apart only for a page past the end."""
        if rows:
            return int(rows[0][-1])
        return int(self._rows(count_sql, params)[0][0])

    # -- bookmarks and files --------------------------------------------------------------
    def bookmark_history(self, job_name: str, *, offset: int = 0, limit: int = 50) -> Page:
        """The job's bookmark versions, newest first, with the run that made each."""
        offset, limit = _paging(offset, limit)
        self.require_job(job_name)
        total = self._rows("SELECT COUNT(*) FROM bookmark_versions WHERE job_name = ?",
                           (job_name,))[0][0]
        rows = self._rows(
            "SELECT version, run, attempt, run_id, reason, made_by_run_id, created_at, "
            "state_json FROM bookmark_versions WHERE job_name = ? "
            "ORDER BY version DESC LIMIT ? OFFSET ?", (job_name, limit, offset))
        items = [{"version": v, "run": run, "attempt": att, "run_id": rid,
                  "reason": redact(reason) if reason else None, "made_by_run_id": made,
                  "created_at": at, "ctxs": sorted(json.loads(state))}
                 for v, run, att, rid, reason, made, at, state in rows]
        return Page(items, int(total), offset, limit)

    def find_files(self, pattern: str, *, job_name: str | None = None, offset: int = 0,
                   limit: int = 100) -> Page:
        """Which run took which file: every recorded take of a path matching ``pattern``
        (substring or glob), across jobs or of one job, by path then oldest run first."""
        offset, limit = _paging(offset, limit)
        cond, value = path_condition(self.dialect, "f.path", pattern)
        where, params = cond, [value]
        if job_name is not None:
            self.require_job(job_name)
            where, params = f"{where} AND r.job_name = ?", [value, job_name]
        # Across jobs: run_files first (a CROSS JOIN keeps SQLite from scanning every run to
        # look up its files; PostgreSQL plans it as the inner join it is). For one job: its
        # runs first (by the runs_by_job index), then their files.
        join = ("FROM runs r JOIN run_files f ON f.run_id = r.run_id WHERE" if job_name
                else "FROM run_files f CROSS JOIN runs r WHERE r.run_id = f.run_id AND")
        rows = self._rows(
            f"SELECT f.path, f.ctx, f.mtime, f.size, r.run_id, r.job_name, r.run, r.status, "
            f"r.started_at, COUNT(*) OVER () {join} {where} ORDER BY f.path, r.seq "
            "LIMIT ? OFFSET ?", [*params, limit, offset])
        total = self._total(rows, f"SELECT COUNT(*) {join} {where}", params)
        keys = ("path", "ctx", "mtime", "size", "run_id", "job_name", "run", "status",
                "started_at")
        return Page([dict(zip(keys, r[:-1], strict=True)) for r in rows], total, offset, limit)

    def chart_runs(self, job_name: str, *, limit: int = 200) -> list[dict[str, Any]]:
        """The job's last ``limit`` runs, oldest first: the points of its charts."""
        page = self.runs(job_name, limit=min(limit, MAX_LIMIT))
        return list(reversed(page.items))


_NO_TOTALS: dict[str, Any] = {"files": 0, "bytes": 0, "rows": None}

#: A file source's manifest entries a run page lists (state/manifest.py; run/exact_read.py):
#: files taken before and taken again, modified files skipped, files changed during the run.
FILE_NOTES = ("taken_before", "skipped_modified", "changed_during_run")
