"""``lakemark bookmark``: look at and change a job's bookmark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
from rich.table import Table

from ..job import Job
from ..planning import DEFAULT_MAX_BAND_MS
from ..state import Bookmark
from ._common import json_option, open_state, state_option
from ._jobs import known_job
from ._output import console, fmt_ms, handle_errors, print_json, print_table


@click.group()
def bookmark() -> None:
    """Show, reset, rewind or pre-fill a job's bookmark."""


def _element_summary(element: Mapping[str, Any]) -> str:
    if element.get("kind", "files") == "files":
        parts = [
            f"source {element.get('source', '?')}",
            f"low {fmt_ms(element.get('low'))}",
            f"high {fmt_ms(element.get('high'))}",
        ]
        if element.get("high_path"):
            parts.append(f"cut after {element['high_path']}")
        parts.append(f"{len(element.get('band') or [])} file(s) in band")
        if element.get("floor"):
            parts.append(f"floor {fmt_ms(element['floor'][0])} {element['floor'][1]}")
        return "\n".join(parts)
    if element.get("kind") == "delta-table":
        return (f"Delta table {element.get('source', '?')}\nread up to version "
                f"{element.get('version')}")
    if element.get("kind") == "hudi-table":
        return (f"Hudi table {element.get('source', '?')}\nread up to instant "
                f"{element.get('instant') or '(none yet)'}")
    return ", ".join(f"{k}={v}" for k, v in element.items())


def _print_bookmark(b: Bookmark) -> None:
    table = Table(title=f"bookmark of job {b.job_name}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("version", str(b.version))
    table.add_row("run", str(b.run))
    table.add_row("attempt", str(b.attempt))
    table.add_row("run_id", b.run_id or "-")
    table.add_row("previous_run_id", b.previous_run_id or "-")
    if b.reason:
        table.add_row("last change", f"{b.reason} at {b.created_at}")
    for ctx, element in sorted(b.state.items()):
        table.add_row(f"ctx {ctx}", _element_summary(element))
    if not b.state:
        table.add_row("state", "(empty: the next run takes everything)")
    print_table(table)


@bookmark.command("show")
@click.argument("job_name", metavar="JOB")
@state_option
@json_option
@handle_errors
def show(job_name: str, state_url: str | None, as_json: bool) -> None:
    """Show JOB's bookmark: version, run, attempt, run ids and each ctx's state."""
    store = open_state(state_url, read_only=True)
    known_job(store, job_name)
    b = store.get_bookmark(job_name)
    store.close()
    if as_json:
        print_json(b.to_json())
    else:
        _print_bookmark(b)


@bookmark.command("history")
@click.argument("job_name", metavar="JOB")
@state_option
@json_option
@handle_errors
def history(job_name: str, state_url: str | None, as_json: bool) -> None:
    """Every version of JOB's bookmark, oldest first."""
    store = open_state(state_url, read_only=True)
    known_job(store, job_name)
    versions = store.history(job_name)
    store.close()
    if as_json:
        print_json([v.to_json() for v in versions])
        return
    table = Table(title=f"bookmark history of job {job_name}")
    for col in ("version", "run", "attempt", "run_id", "reason", "at"):
        table.add_column(col)
    for v in versions:
        table.add_row(str(v.version), str(v.run), str(v.attempt), v.run_id or "-",
                      v.reason or "-", v.created_at or "-")
    print_table(table)


@bookmark.command("reset")
@click.argument("job_name", metavar="JOB")
@click.option("--ctx", metavar="CTX", help="Reset only this transformation_ctx.")
@state_option
@json_option
@handle_errors
def reset(job_name: str, ctx: str | None, state_url: str | None, as_json: bool) -> None:
    """Forget what JOB (or one ctx of it) has processed: the next run takes everything."""
    store = open_state(state_url)
    b = store.reset(job_name, ctx)
    store.close()
    if as_json:
        print_json(b.to_json())
    else:
        what = f"ctx {ctx} of job {job_name}" if ctx else f"job {job_name}"
        console.print(f"Reset {what}: bookmark version {b.version}.")


@bookmark.command("rewind")
@click.argument("job_name", metavar="JOB")
@click.option("--to", "run_id", required=True, metavar="RUN_ID",
              help="A successful run of JOB: the state goes back to right after it.")
@state_option
@json_option
@handle_errors
def rewind(job_name: str, run_id: str, state_url: str | None, as_json: bool) -> None:
    """Go back to the state right after run RUN_ID: later input is processed again."""
    store = open_state(state_url)
    b = store.rewind(job_name, run_id)
    store.close()
    if as_json:
        print_json(b.to_json())
    else:
        console.print(f"Rewound job {job_name} to {run_id}: bookmark version {b.version}.")


@bookmark.command("mark-processed")
@click.argument("job_name", metavar="JOB")
@click.argument("source")
@click.option("--ctx", required=True, metavar="CTX",
              help="The transformation_ctx the job reads SOURCE with (e.g. 'source' for "
              "`lakemark ingest files`).")
@click.option("--max-band", type=int, default=DEFAULT_MAX_BAND_MS, show_default=True,
              metavar="MS", help="MaxBand window in milliseconds, as the job uses it.")
@click.option("--recurse/--no-recurse", default=True, show_default=True)
@click.option("--exclude", "exclusions", multiple=True, metavar="GLOB")
@click.option("--force", is_flag=True, help="Take over the job's lease even if held.")
@state_option
@json_option
@handle_errors
def mark_processed(
    job_name: str,
    source: str,
    ctx: str,
    max_band: int,
    recurse: bool,
    exclusions: tuple[str, ...],
    force: bool,
    state_url: str | None,
    as_json: bool,
) -> None:
    """Record every file now in SOURCE as processed by JOB, without reading any.

    Use it to start a job on a folder whose history was loaded some other way: the next run
    takes only files that arrive (or change) after this. It is recorded as a run of its own,
    so `lakemark runs show` lists the files it marked and `bookmark rewind` can undo it.
    """
    store = open_state(state_url)
    job = Job(job_name, state=store, bookmark="enable", force=force)
    job.start(label="mark-processed")
    try:
        plan = job.plan_files(source, ctx=ctx, recurse=recurse, exclusions=list(exclusions),
                              max_band_ms=max_band)
    except BaseException as exc:
        job.fail(exc, update_bookmark=False)
        raise
    b = job.commit()
    out = {"run_id": job.run.run_id, "job_name": job_name, "ctx": ctx,
           "files": len(plan.files), "bookmark_version": b.version}
    store.close()
    if as_json:
        print_json(out)
    else:
        console.print(
            f"Marked {len(plan.files)} file(s) of {source} as processed for job {job_name} "
            f"(ctx {ctx}) in run {out['run_id']}; bookmark version {b.version}."
        )
