"""``lakemark files find``: which run took which file, across jobs."""

from __future__ import annotations

import click
from rich import box
from rich.markup import escape
from rich.table import Table

from ..console import StateQueries
from ..console.queries import MAX_LIMIT
from ._common import json_option, open_state, state_option
from ._output import console, handle_errors, print_json, print_table

__all__ = ["files"]


@click.group()
def files() -> None:
    """The input files runs took."""


@files.command("find")
@click.argument("pattern")
@click.option("--job", "job_name", metavar="JOB", default=None, help="Only runs of JOB.")
@click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=100, show_default=True,
              help="At most this many takes.")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many takes.")
@state_option
@json_option
@handle_errors
def find(pattern: str, job_name: str | None, limit: int, offset: int, state_url: str | None,
         as_json: bool) -> None:
    """Every run that took a file matching PATTERN: a part of a path (s3://b/in/a.json,
    2024/05/), or a glob over the whole path with * and ? (s3://b/in/*/a.json).
    Case-sensitive; by path, then oldest run first."""
    store = open_state(state_url, read_only=True)
    try:
        page = StateQueries(store).find_files(pattern, job_name=job_name, offset=offset,
                                              limit=limit)
    finally:
        store.close()
    if as_json:
        print_json(page.to_json())
        return
    table = Table(title=f"runs that took {escape(pattern)}", box=box.SIMPLE_HEAD,
                  pad_edge=False, padding=(0, 1, 0, 0))
    for name in ("path", "job", "run_id", "run", "status", "started (UTC)", "ctx"):
        table.add_column(name, overflow="fold")
    for t in page.items:
        table.add_row(escape(t["path"]), escape(t["job_name"]), t["run_id"], str(t["run"]),
                      t["status"], t["started_at"][:19].replace("T", " "), escape(t["ctx"]))
    print_table(table)
    if not page.items:
        console.print(f"No recorded run took a file matching {escape(pattern)!r}.")
    elif page.total > offset + len(page.items):
        console.print(f"{offset + len(page.items)} of {page.total} takes; --offset "
                      f"{offset + len(page.items)} shows more.")
