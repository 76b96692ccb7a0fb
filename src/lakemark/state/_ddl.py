"""The state stores' tables: one DDL text for SQLite and PostgreSQL.

The two stores hold the same tables; only a few column types differ (SQLite's ``INTEGER`` and
``REAL``, PostgreSQL's ``BIGINT`` and ``DOUBLE PRECISION``, and how ``runs.seq`` counts up).
:func:`ddl` fills them into one template, so a new column or table is written once. The
tracked-schema table (:mod:`lakemark.state._schemas`) is appended by each store.
"""

from __future__ import annotations

__all__ = ["DIALECTS", "ddl"]

#: dialect -> the column types the template leaves open.
DIALECTS: dict[str, dict[str, str]] = {
    "sqlite": {"int": "INTEGER", "real": "REAL", "identity": "INTEGER PRIMARY KEY AUTOINCREMENT"},
    "postgresql": {"int": "BIGINT", "real": "DOUBLE PRECISION",
                   "identity": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"},
}

_TEMPLATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    job_name TEXT PRIMARY KEY,
    version {int} NOT NULL,
    run {int} NOT NULL,
    attempt {int} NOT NULL,
    run_id TEXT,
    previous_run_id TEXT,
    state_json TEXT NOT NULL,
    reason TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bookmark_versions (
    job_name TEXT NOT NULL,
    version {int} NOT NULL,
    run {int} NOT NULL,
    attempt {int} NOT NULL,
    run_id TEXT,
    previous_run_id TEXT,
    state_json TEXT NOT NULL,
    reason TEXT,
    made_by_run_id TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (job_name, version)
);
CREATE TABLE IF NOT EXISTS runs (
    seq {identity},
    run_id TEXT NOT NULL UNIQUE,
    job_name TEXT NOT NULL,
    run {int} NOT NULL,
    attempt {int} NOT NULL,
    status TEXT NOT NULL,
    bookmark_option TEXT NOT NULL,
    base_version {int} NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    error TEXT,
    host TEXT,
    pid {int},
    generation {int}
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs (job_name, seq);
CREATE INDEX IF NOT EXISTS runs_by_job_start ON runs (job_name, started_at);
CREATE INDEX IF NOT EXISTS runs_by_job_status ON runs (job_name, status, seq);
CREATE TABLE IF NOT EXISTS run_plans (
    run_id TEXT NOT NULL,
    ctx TEXT NOT NULL,
    plan_json TEXT NOT NULL,
    PRIMARY KEY (run_id, ctx)
);
CREATE TABLE IF NOT EXISTS run_files (
    run_id TEXT NOT NULL,
    ctx TEXT NOT NULL,
    path TEXT NOT NULL,
    mtime {int} NOT NULL,
    size {int} NOT NULL
);
CREATE INDEX IF NOT EXISTS run_files_by_run ON run_files (run_id, ctx);
CREATE INDEX IF NOT EXISTS run_files_by_path ON run_files (path);
CREATE INDEX IF NOT EXISTS run_files_by_run_path ON run_files (run_id, path, ctx, mtime, size);
CREATE TABLE IF NOT EXISTS leases (
    job_name TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    host TEXT,
    pid {int},
    heartbeat_at {real} NOT NULL,
    generation {int} NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS quarantine (
    job_name TEXT NOT NULL,
    ctx TEXT NOT NULL,
    path TEXT NOT NULL,
    size {int} NOT NULL,
    mtime {int} NOT NULL,
    reason TEXT NOT NULL,
    run_id TEXT NOT NULL,
    status TEXT NOT NULL,
    retried_by TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (job_name, ctx, path)
);
CREATE TABLE IF NOT EXISTS quarantine_history (
    job_name TEXT NOT NULL,
    ctx TEXT NOT NULL,
    path TEXT NOT NULL,
    run_id TEXT NOT NULL,
    size {int} NOT NULL,
    mtime {int} NOT NULL,
    reason TEXT NOT NULL,
    set_aside_at TEXT NOT NULL,
    PRIMARY KEY (job_name, ctx, path, run_id)
);
CREATE TABLE IF NOT EXISTS run_timings (
    run_id TEXT PRIMARY KEY,
    timings_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lease_generations (
    job_name TEXT PRIMARY KEY,
    generation {int} NOT NULL
);
"""


def ddl(dialect: str) -> str:
    """The ``CREATE ... IF NOT EXISTS`` statements of every state table for ``dialect``
    (``sqlite`` or ``postgresql``), separated by ``;``."""
    try:
        types = DIALECTS[dialect]
    except KeyError:
        raise ValueError(f"no state DDL for dialect {dialect!r}; "
                         f"known: {', '.join(DIALECTS)}") from None
    return _TEMPLATE.format(**types)
