"""Tracked source schemas in the SQL state stores: one row per version of a source's schema.

A file source read with ``schema_evolution=`` keeps its columns per job and
``transformation_ctx`` in the ``source_schemas`` table. A run that infers or evolves the schema
hands the new version to ``commit_run``, which writes it in the same transaction as the
bookmark (so a failed or fenced-off run leaves the schema as it was). Every version is kept with
the run that made it and what changed (``added`` column, ``type`` change, ``reset``), which is
the history ``lakemark schema show`` prints. A reset writes a version without a schema: the
next run infers again.

SQL is parameterised (``?`` placeholders; the PostgreSQL store translates them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

from ..errors import ConfigError

__all__ = ["SCHEMA_TABLE_SQLITE", "SCHEMA_TABLE_POSTGRES", "PendingSchema", "SourceSchema",
           "SchemaRecords"]

SCHEMA_TABLE_SQLITE = """;
CREATE TABLE IF NOT EXISTS source_schemas (
    job_name TEXT NOT NULL,
    ctx TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_json TEXT,
    changes_json TEXT NOT NULL,
    run_id TEXT,
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (job_name, ctx, version)
);
"""

SCHEMA_TABLE_POSTGRES = SCHEMA_TABLE_SQLITE.replace("INTEGER", "BIGINT")


@dataclass(frozen=True)
class PendingSchema:
    """A schema a run will commit for one ctx: its fields (``{"name", "type"}`` each, Spark's
    JSON type form) and what changed against the tracked one."""

    fields: Sequence[Mapping[str, Any]]
    changes: Sequence[Mapping[str, Any]]
    reason: str = "inferred"


@dataclass(frozen=True)
class SourceSchema:
    """One version of a source's tracked schema (``fields`` None: forgotten by a reset)."""

    job_name: str
    ctx: str
    version: int
    fields: list[dict[str, Any]] | None
    changes: list[dict[str, Any]]
    run_id: str | None
    reason: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"job_name": self.job_name, "ctx": self.ctx, "version": self.version,
                "fields": self.fields, "changes": self.changes, "run_id": self.run_id,
                "reason": self.reason, "created_at": self.created_at}


_COLUMNS = "job_name, ctx, version, schema_json, changes_json, run_id, reason, created_at"


def _row(row: Sequence[Any]) -> SourceSchema:
    return SourceSchema(str(row[0]), str(row[1]), int(row[2]),
                        json.loads(row[3]) if row[3] is not None else None,
                        json.loads(row[4]), row[5], str(row[6]), str(row[7]))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SchemaRecords:
    """The tracked-schema operations of :class:`~lakemark.state._sql.SqlStore` (a mixin: it
    uses the store's ``_q`` reads, ``_tx`` transactions and ``_refuse_while_running``)."""

    _q: Any
    _tx: Any  # provided by SqlStore
    _refuse_while_running: Any

    def get_source_schema(self, job_name: str, ctx: str) -> SourceSchema | None:
        """The current schema of a source, or None (never tracked, or reset)."""
        row = self._q.execute(
            f"SELECT {_COLUMNS} FROM source_schemas WHERE job_name = ? AND ctx = ? "
            "ORDER BY version DESC LIMIT 1", (job_name, ctx)).fetchone()
        if row is None:
            return None
        found = _row(row)
        return found if found.fields is not None else None

    def source_schema_history(self, job_name: str, ctx: str | None = None) -> list[SourceSchema]:
        """Every version of the job's tracked schemas (of one ctx), by ctx then version."""
        if ctx is None:
            rows = self._q.execute(f"SELECT {_COLUMNS} FROM source_schemas WHERE job_name = ? "
                                   "ORDER BY ctx, version", (job_name,)).fetchall()
        else:
            rows = self._q.execute(f"SELECT {_COLUMNS} FROM source_schemas WHERE job_name = ? "
                                   "AND ctx = ? ORDER BY version", (job_name, ctx)).fetchall()
        return [_row(r) for r in rows]

    def reset_source_schema(self, job_name: str, ctx: str | None = None) -> list[str]:
        """Forget the tracked schema of one source (or of every source of the job): the next
        run infers again. Returns the ctxs reset; ConfigError if there is nothing to reset,
        LeaseError while a run of the job is in progress."""
        with self._tx() as db:
            self._refuse_while_running(db, job_name, "reset the schema of")
            rows = db.execute(
                "SELECT ctx, MAX(version) FROM source_schemas WHERE job_name = ? GROUP BY ctx "
                "ORDER BY ctx", (job_name,)).fetchall()
            current = {}
            for ctx_name, version in rows:
                row = db.execute(f"SELECT {_COLUMNS} FROM source_schemas WHERE job_name = ? "
                                 "AND ctx = ? AND version = ?",
                                 (job_name, ctx_name, version)).fetchone()
                if row is not None and row[3] is not None:
                    current[str(ctx_name)] = int(version)
            chosen = sorted(current) if ctx is None else [ctx] if ctx in current else []
            if not chosen:
                what = f"transformation_ctx {ctx!r}" if ctx is not None else "any source"
                raise ConfigError(f"job {job_name!r} has no tracked schema for {what} "
                                  f"(tracked: {', '.join(sorted(current)) or 'none'})")
            for name in chosen:
                db.execute(
                    f"INSERT INTO source_schemas ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (job_name, name, current[name] + 1, None,
                     json.dumps([{"change": "reset"}]), None, "reset", _now()))
            return chosen

    def _save_source_schemas(self, db: Any, job_name: str, run_id: str,
                             schemas: Mapping[str, PendingSchema]) -> None:
        """Inside a run's commit transaction: a new version per ctx whose schema changed."""
        for ctx, pending in sorted(schemas.items()):
            row = db.execute("SELECT MAX(version) FROM source_schemas WHERE job_name = ? "
                             "AND ctx = ?", (job_name, ctx)).fetchone()
            version = int(row[0]) + 1 if row is not None and row[0] is not None else 1
            db.execute(
                f"INSERT INTO source_schemas ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (job_name, ctx, version,
                 json.dumps([dict(f) for f in pending.fields], sort_keys=True),
                 json.dumps([dict(c) for c in pending.changes], sort_keys=True), run_id,
                 pending.reason, _now()))
