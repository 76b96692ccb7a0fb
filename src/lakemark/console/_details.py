"""The details a Run and a Job page show beyond their own rows: a run's attempt chain and the
tracked schema version each source read with, and a job's sources and sinks with their
current bookmark state and idempotency tokens.

Each is a few indexed reads of the store's tables (``state/_ddl.py``, ``state/_schemas.py``),
given as a ``rows(sql, params)`` function so they stay with the query layer that owns the
connection. Display text passes through :func:`lakemark.redaction.redact`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..redaction import redact, redact_obj

__all__ = ["attempt_chain", "job_io", "schema_versions_used"]

Rows = Callable[[str, Sequence[Any]], list[Any]]


def attempt_chain(rows: Rows, job_name: str, run: int) -> list[dict[str, Any]]:
    """Every attempt of the job's run number ``run``, first attempt first: how a failed run
    was retried until one attempt committed (or none did yet)."""
    found = rows("SELECT run_id, attempt, status, started_at, ended_at, error FROM runs "
                 "WHERE job_name = ? AND run = ? ORDER BY seq", (job_name, run))
    return [{"run_id": rid, "attempt": attempt, "status": status, "started_at": started,
             "ended_at": ended, "error": redact(error)[:200] if error else None}
            for rid, attempt, status, started, ended, error in found]


def schema_versions_used(rows: Rows, job_name: str, run_id: str,
                         started_at: str) -> list[dict[str, Any]]:
    """Per tracked source of the job: the schema version the run read with — the one it
    committed if it changed the schema, else the newest one made before it started (None
    when the source had no tracked schema then)."""
    found = rows("SELECT ctx, version, run_id, created_at, schema_json FROM source_schemas "
                 "WHERE job_name = ? ORDER BY ctx, version", (job_name,))
    by_ctx: dict[str, dict[str, Any]] = {}
    for ctx, version, made_by, created_at, schema_json in found:
        mine = made_by == run_id
        if not mine and created_at > started_at:
            continue
        current = by_ctx.get(ctx)
        if current is None or mine or not current["changed_by_this_run"]:
            by_ctx[ctx] = {"ctx": ctx, "version": None if schema_json is None else version,
                           "changed_by_this_run": mine}
    return [by_ctx[ctx] for ctx in sorted(by_ctx)]


def job_io(rows: Rows, job_name: str) -> list[dict[str, Any]]:
    """The job's sources and sinks as its last committed run recorded them: each ctx with
    its kind, source or target, the bookmark state the job holds for it now (sources) and
    the idempotency token its last write used (sinks: app id and version)."""
    state_row = rows("SELECT state_json FROM jobs WHERE job_name = ?", (job_name,))
    state = json.loads(state_row[0][0]) if state_row else {}
    last = rows("SELECT run_id FROM runs WHERE job_name = ? AND status = 'SUCCEEDED' "
                "ORDER BY seq DESC LIMIT 1", (job_name,))
    plans = rows("SELECT ctx, plan_json FROM run_plans WHERE run_id = ? ORDER BY ctx",
                 (last[0][0],)) if last else []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ctx, plan_json in plans:
        plan = json.loads(plan_json)
        sink = plan.get("kind") == "sink"
        token = plan.get("token") if sink else None
        out.append({
            "ctx": ctx, "kind": "sink" if sink else plan.get("kind") or "source",
            "where": redact(str(plan.get("target" if sink else "source") or "")),
            "format": plan.get("format"),
            "bookmark": None if sink else _brief(state.get(ctx)),
            "token": ({"app_id": redact(str(token.get("app_id"))), "version": token.get("version")}
                      if isinstance(token, dict) else None),
            "table_version": plan.get("table_version") if sink else None,
        })
        seen.add(ctx)
    out += [{"ctx": ctx, "kind": "source", "where": "", "format": None,
             "bookmark": _brief(value), "token": None, "table_version": None}
            for ctx, value in sorted(state.items()) if ctx not in seen]
    return out


def _brief(value: Any) -> Any:
    """A source's bookmark state as a page shows it: a long list (the files of a MaxBand
    window) becomes its count, so a page stays small; secrets removed."""
    if isinstance(value, dict):
        return {k: (f"{len(v)} entries" if isinstance(v, list) and len(v) > _LIST_SHOWN
                    else v) for k, v in redact_obj(value).items()}
    return redact_obj(value)


_LIST_SHOWN = 5
