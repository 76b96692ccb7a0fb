"""``lakemark jobs``: every job a state store knows, with its last run.

Also :func:`known_job`, the check that turns a mistyped job name in a read-only command
(``runs list``, ``bookmark show|history``) into an error naming the nearest known names.
"""

from __future__ import annotations

from typing import Any

import click
from rich import box
from rich.table import Table
from rich.text import Text

from ..console import StateQueries
from ..state import StateStore
from ._common import json_option, open_state, state_option
from ._output import console, handle_errors, human_bytes, print_json, print_table

__all__ = ["jobs", "known_job"]


def known_job(store: StateStore, job_name: str) -> None:
    """Raise UnknownJobError (closing ``store``) when it holds no bookmark and no run of
    ``job_name``; the message suggests the nearest names."""
    try:
        StateQueries(store).require_job(job_name)
    except Exception:
        store.close()
        raise


def took(seconds: float | None) -> str:
    """A duration for people (``-`` while a run runs)."""
    if seconds is None:
        return "-"
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


@click.group()
def jobs() -> None:
    """The jobs a state store knows."""


@jobs.command("list")
@click.option("--stale-after", "stale_after_h", type=click.FloatRange(min=0), default=24.0,
              show_default=True, metavar="HOURS",
              help="A job whose last successful run ended longer ago is marked stale.")
@state_option
@json_option
@handle_errors
def list_jobs(stale_after_h: float, state_url: str | None, as_json: bool) -> None:
    """Every job in the store, by name, with its last run (status, start, duration, files,
    bytes, rows when recorded), its input files set aside (`lakemark quarantine list JOB`),
    its bookmark version and whether it is stale."""
    store = open_state(state_url, read_only=True)
    try:
        rows = StateQueries(store, stale_after_s=stale_after_h * 3600).jobs()
    finally:
        store.close()
    if as_json:
        print_json(rows)
        return
    table = Table(title="jobs", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
    for name in ("job", "last run", "status", "started (UTC)", "took", "files", "bytes", "rows",
                 "set aside", "bookmark", "stale"):
        table.add_column(name, overflow="fold")
    styles = {"SUCCEEDED": "green", "FAILED": "red", "RUNNING": "yellow"}
    for job in rows:
        last: dict[str, Any] = job["last_run"] or {}
        status = last.get("status", "-")
        table.add_row(
            job["job_name"], last.get("run_id", "-"),
            Text(status, style=styles.get(status, "")),
            (last.get("started_at") or "-")[:19].replace("T", " "), took(last.get("duration_s")),
            str(last.get("files", "-")), human_bytes(last["bytes"]) if last else "-",
            "-" if last.get("rows") is None else str(last["rows"]),
            Text(str(job["quarantined"]), style="red") if job["quarantined"] else "0",
            f"v{job['bookmark_version']}", Text("stale", style="bold red") if job["stale"] else "")
    print_table(table)
    if not rows:
        console.print("No jobs recorded in this store.")
