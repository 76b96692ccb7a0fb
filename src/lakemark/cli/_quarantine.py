"""``lakemark quarantine list|retry``: source files a job set aside because it could not read
them, and taking them again (docs/bookmarks.md, "Quarantine")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
from rich import box
from rich.table import Table

from .._shown import shown
from ..state import QuarantineEntry, StateStore
from ..state._quarantine import QUARANTINE_STATUSES
from ._common import json_option, open_state, state_option
from ._jobs import known_job
from ._output import console, fmt_ms, handle_errors, print_json, print_table

__all__ = ["quarantine", "quarantine_of_run", "print_run_quarantine"]


@click.group()
def quarantine() -> None:
    """List the source files a job set aside (unreadable, damaged, over the record size
    limit), or have the next run take them again."""


@quarantine.command("list")
@click.argument("job_name", metavar="JOB")
@click.option("--all", "show_all", is_flag=True,
              help="Also the files already taken again by a retry (status retried).")
@state_option
@json_option
@handle_errors
def list_quarantine(job_name: str, show_all: bool, state_url: str | None,
                    as_json: bool) -> None:
    """The files JOB set aside, with the reason, size, mtime, the run that set each aside (and
    earlier runs that set it aside before) and its status (open: skipped by later runs;
    retry: the next run takes it)."""
    store = open_state(state_url, read_only=True)
    known_job(store, job_name)  # a mistyped job name is an error, not "no set-aside files"
    statuses = QUARANTINE_STATUSES if show_all else ("open", "retry")
    entries = store.quarantined(job_name, statuses=statuses)
    earlier: dict[tuple[str, str], list[Any]] = {}
    for h in store.quarantine_history(job_name):
        earlier.setdefault((h.ctx, h.path), []).append(h)
    store.close()

    def before(e: QuarantineEntry) -> list[Any]:
        """The earlier runs that set this file aside (not the run the row names)."""
        return [h for h in earlier.get((e.ctx, e.path), []) if h.run_id != e.run_id]

    if as_json:
        print_json({"job_name": job_name, "files": [
            {**e.to_json(), "earlier": [h.to_json() for h in before(e)]} for e in entries]})
        return
    if not entries:
        console.print(f"No set-aside files for job {job_name}.")
        return
    table = Table(title=f"set-aside files of job {job_name}", box=box.SIMPLE_HEAD)
    for name in ("ctx", "path", "size", "modified (UTC)", "status", "run", "reason"):
        table.add_column(name, overflow="fold")
    for e in entries:
        table.add_row(e.ctx, shown(e.path), str(e.size), fmt_ms(e.mtime),
                      e.status + (f" by {e.retried_by}" if e.retried_by else ""),
                      e.run_id + "".join(f"\n(before: {h.run_id})" for h in before(e)),
                      shown(e.reason))
    print_table(table)


@quarantine.command("retry")
@click.argument("job_name", metavar="JOB")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@state_option
@json_option
@handle_errors
def retry(job_name: str, paths: tuple[str, ...], state_url: str | None, as_json: bool) -> None:
    """Have the next run of JOB take its set-aside files again (all, or PATH...), exactly
    once: after the file was fixed, or with other options. A file that still cannot be read
    is set aside again with the new reason."""
    store = open_state(state_url)
    known_job(store, job_name)
    try:
        marked = store.request_retry(job_name, list(paths))
    finally:
        store.close()
    if as_json:
        print_json({"job_name": job_name, "marked": [e.to_json() for e in marked]})
        return
    console.print(f"{len(marked)} file(s) of job {job_name} marked: the next run takes them.",
                  highlight=False)


def quarantine_of_run(store: StateStore, job_name: str, run_id: str) -> dict[str, Any]:
    """What ``runs show`` adds for ``run_id``: the files it set aside (``quarantined``, with
    this run's reason, size and mtime even when a later run set the file aside again: status
    ``superseded``, ``superseded_by``) and the set-aside files it took again (``retried``)."""
    entries: list[QuarantineEntry] = store.quarantined(job_name, statuses=QUARANTINE_STATUSES)
    now = {(e.ctx, e.path): e for e in entries}
    out: dict[str, Any] = {}
    aside = [_as_of_run(h.to_json(), now.get((h.ctx, h.path)), job_name, run_id)
             for h in store.quarantine_history(job_name, run_id=run_id)]
    again = [e.to_json() for e in entries if e.retried_by == run_id]
    if aside:
        out["quarantined"] = aside
    if again:
        out["retried"] = again
    return out


def _as_of_run(event: dict[str, Any], now: QuarantineEntry | None, job_name: str,
               run_id: str) -> dict[str, Any]:
    """A history row of ``run_id`` in the shape of a quarantine entry, its status as now."""
    out = {"job_name": job_name, **{k: v for k, v in event.items() if k != "set_aside_at"},
           "updated_at": event["set_aside_at"]}
    if now is not None and now.run_id == run_id:
        return {**out, "status": now.status, "retried_by": now.retried_by}
    return {**out, "status": "superseded", "retried_by": None,
            "superseded_by": now.run_id if now is not None else None}


def print_run_quarantine(details: Mapping[str, Any]) -> None:
    """The ``runs show`` lines of a run's set-aside and retried files."""
    for e in details.get("quarantined", ()):
        console.print(f"set aside (ctx {e['ctx']}): {shown(e['path'])} ({e['size']} bytes, "
                      f"{fmt_ms(e['mtime'])}): {shown(e['reason'])} [{e['status']}]",
                      highlight=False)
    for e in details.get("retried", ()):
        console.print(f"took again (ctx {e['ctx']}): {shown(e['path'])}", highlight=False)
