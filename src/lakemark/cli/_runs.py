"""``lakemark runs``: what each run of a job did, down to every file it took."""

from __future__ import annotations

import json
from datetime import datetime
from collections.abc import Mapping
from typing import Any

import click
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .._shown import shown
from ..state import StateStore
from ._common import json_option, open_state, state_option
from ._files_report import FILE_NOTE_KEYS, file_notes
from ._jobs import known_job
from ._quarantine import print_run_quarantine, quarantine_of_run
from ._output import console, fmt_ms, handle_errors, human_bytes, print_json, print_table


@click.group()
def runs() -> None:
    """List a job's runs, or show one run with every input it processed."""


@runs.command("list")
@click.argument("job_name", metavar="JOB")
@state_option
@json_option
@handle_errors
def list_runs(job_name: str, state_url: str | None, as_json: bool) -> None:
    """Every attempt of JOB, oldest first."""
    store = open_state(state_url, read_only=True)
    known_job(store, job_name)
    records = store.list_runs(job_name)
    store.close()
    if as_json:
        print_json([r.to_json() for r in records])
        return
    table = Table(title=f"runs of job {job_name}", box=box.SIMPLE_HEAD, pad_edge=False,
                  padding=(0, 1, 0, 0))
    # Run ids are what --from/--to and `runs show` take: never cut them short.
    styles = {"SUCCEEDED": "green", "FAILED": "red", "RUNNING": "yellow"}
    columns = {"run_id": 35, "run": 3, "att": 3, "status": 9, "option": 6, "started (UTC)": 19,
               "took": 6}
    for name, width in columns.items():
        table.add_column(name, min_width=width, overflow="fold")
    for r in records:
        table.add_row(r.run_id, str(r.run), str(r.attempt),
                      Text(r.status, style=styles.get(r.status, "")), r.bookmark_option,
                      r.started_at[:19].replace("T", " "), _took(r.started_at, r.ended_at))
    print_table(table)
    if not records:
        console.print(f"No runs recorded for job {job_name}.")


def _took(started_at: str, ended_at: str | None) -> str:
    """How long a run took, for people (``-`` while it runs)."""
    if not ended_at:
        return "-"
    took = datetime.fromisoformat(ended_at) - datetime.fromisoformat(started_at)
    seconds = took.total_seconds()
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


def _versions(src: Mapping[str, Any]) -> str:
    """The versions a Delta table source took, for people."""
    rng = src.get("range") or {}
    if not rng:
        return "no versions"
    first, last = rng.get("from_version"), rng.get("to_version")
    if rng.get("mode") == "snapshot":
        text = f"snapshot at version {last}"
    elif first is not None and last is not None and first > last:
        text = f"no new version (table at {last})"
    else:
        text = f"versions {first} to {last}"
    skipped = src.get("skipped_commits") or []
    if skipped:
        text += f", skipped change commit(s) {', '.join(map(str, skipped))}"
    # How the run knew the table: from its bookmark (no snapshot loaded) or by opening it.
    how = {"carried": "table state carried from the bookmark",
           "loaded": "table opened with deltalake"}.get(src.get("table_state") or "")
    return text + (f" ({how})" if how else "")


def _instants(src: Mapping[str, Any]) -> str:
    """The instants a Hudi table source took, for people."""
    rng = src.get("range") or {}
    after, through = rng.get("after"), rng.get("through")
    if rng.get("mode") == "snapshot":
        text = f"snapshot as of instant {through}"
    elif not rng.get("take") and not rng.get("skipped"):
        text = f"no new commit (read up to instant {through})"
    else:
        text = f"instants after {after or 'the start'} to {through}"
    skipped = rng.get("skipped") or []
    return text + (f", skipped change instant(s) {', '.join(skipped)}" if skipped else "")


def run_details(store: StateStore, run_id: str) -> dict[str, Any]:
    """The JSON shape of ``runs show``: the run's fields, its sources' files and its sinks."""
    record = store.get_run(run_id)
    out: dict[str, Any] = record.to_json()
    sources: dict[str, Any] = {}
    sinks: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    cleanups: dict[str, Any] = {}
    for inputs in store.run_inputs(run_id):
        plan = dict(inputs.plan)
        if plan.get("kind") == "schema":  # a tracked-schema read (issue 23): its counts
            schemas[str(plan.get("ctx"))] = {k: v for k, v in plan.items() if k != "kind"}
            continue
        if plan.get("kind") == "sink":
            sinks[str(plan.get("ctx") or plan.get("target"))] = plan
            continue
        if plan.get("kind") == "clean":  # the clean-up of processed files after the commit
            cleanups[str(plan.get("ctx"))] = {k: v for k, v in plan.items() if k != "kind"}
            continue
        tails = plan.get("tails") or {}  # appended tails taken (on_modified append)
        sources[inputs.ctx] = {
            "source": plan.get("source"),
            "format": plan.get("format"),
            "planned_files": plan.get("planned_files"),
            "planned_bytes": plan.get("planned_bytes"),
            "pending_files": plan.get("pending_files"),
            "replay": plan.get("replay"),
            "listing": plan.get("listing"),
            "files": [{**e.to_json(), **({"offset": tails[e.path]} if e.path in tails else {})}
                      for e in inputs.files],
            **{k: plan[k] for k in FILE_NOTE_KEYS if plan.get(k)},
        }
        if plan.get("kind") == "jdbc":  # a JDBC source took a key range, not files
            sources[inputs.ctx].update(kind="jdbc", dbtable=plan.get("dbtable"),
                                       range=plan.get("range"))
        if plan.get("kind") == "delta-table":  # a table source took a range of versions
            sources[inputs.ctx].update(kind="delta-table", range=plan.get("range"),
                                       skipped_commits=plan.get("skipped_commits"),
                                       table_state=plan.get("table_state"))
        if plan.get("kind") == "hudi-table":  # a Hudi source took a range of instants
            sources[inputs.ctx].update(kind="hudi-table", range=plan.get("range"))
        if plan.get("kind") == "s3-events":  # what the events said, beside what was taken
            sources[inputs.ctx].update(kind="s3-events", **{k: plan.get(k) for k in (
                "events_table_version", "backfilled", "skipped_stale", "skipped_removed",
                "skipped_missing")})
    out["timings"] = store.run_timings(run_id)  # seconds per stage; {} when none recorded
    out["sources"] = sources
    out["sinks"] = sinks
    if schemas:
        out["schemas"] = schemas
    if cleanups:
        out["cleanups"] = cleanups
    out.update(quarantine_of_run(store, record.job_name, run_id))
    return out


@runs.command("show")
@click.argument("run_id", metavar="RUN_ID")
@state_option
@json_option
@handle_errors
def show_run(run_id: str, state_url: str | None, as_json: bool) -> None:
    """One run: its status, stage timings and every file each source took, by name."""
    store = open_state(state_url, read_only=True)
    details = run_details(store, run_id)
    store.close()
    if as_json:
        print_json(details)
        return
    console.print(
        f"[bold]{details['run_id']}[/] job {escape(details['job_name'])} run {details['run']} "
        f"attempt {details['attempt']}: {details['status']} ({details['bookmark_option']}), "
        f"{details['started_at']} → {details['ended_at'] or '-'}", markup=True
    )
    if details.get("error"):
        console.print(f"[red]error:[/] {escape(details['error'])}", highlight=False,
                      markup=True)
    if details["timings"]:
        console.print("stages: " + ", ".join(f"{stage} {seconds:.3f} s" for stage, seconds
                                             in details["timings"].items()), highlight=False)
    for ctx, src in details["sources"].items():
        if src.get("kind") == "jdbc":
            console.print(f"ctx {ctx}: {src['source']} — key range {json.dumps(src['range'])}",
                          highlight=False)
            continue
        if src.get("kind") == "delta-table":
            console.print(f"ctx {ctx}: Delta table {src['source']} — {_versions(src)}",
                          highlight=False)
        if src.get("kind") == "hudi-table":
            console.print(f"ctx {ctx}: Hudi table {src['source']} — {_instants(src)}",
                          highlight=False)
        table = Table(title=f"ctx {ctx}: {src['source']} — {len(src['files'])} file(s), "
                            f"{human_bytes(src['planned_bytes'] or 0)}")
        table.add_column("path")
        table.add_column("modified (UTC)")
        table.add_column("size", justify="right")
        for f in src["files"]:
            table.add_row(shown(f["path"]), fmt_ms(f["mtime"]), str(f["size"]))
        print_table(table)
        for label, text in file_notes(src, limit=1_000_000):
            console.print(f"{label}:\n  " + text.replace("\n", "\n  "), highlight=False)
    for ctx, tracked in details.get("schemas", {}).items():
        counts = {k: tracked.get(k) for k in ("added_columns", "new_columns", "ignored_columns",
                                              "rescued_values", "corrupt_records")
                  if tracked.get(k)}
        console.print(f"schema of ctx {ctx}: {tracked.get('mode')}"
                      + (" (inferred)" if tracked.get("inferred") else "")
                      + "".join(f", {k} {json.dumps(v)}" for k, v in counts.items())
                      + (f" — {tracked['error']}" if tracked.get("error") else ""),
                      highlight=False)
    for ctx, clean in details.get("cleanups", {}).items():
        counts = {k: v for k, v in (clean.get("counts") or {}).items() if v}
        console.print(f"clean-up of ctx {ctx} ({clean.get('mode')}"
                      + (f" to {clean['archive_to']}" if clean.get("archive_to") else "")
                      + f"): {clean.get('status')}"
                      + (f" (not before {fmt_ms(clean['not_before_ms'])})"
                         if clean.get("status") != "done" and clean.get("retention_s") else "")
                      + f", {clean.get('files')} file(s)"
                      + "".join(f", {k} {v}" for k, v in counts.items()), highlight=False)
        for move in clean.get("moves") or ():
            console.print(f"  moved {shown(move['from'])} → {shown(move['to'])}", highlight=False)
        for path in clean.get("deleted") or ():
            console.print(f"  deleted {shown(path)}", highlight=False)
        for path, why in {**(clean.get("kept") or {}), **(clean.get("errors") or {})}.items():
            console.print(f"  kept {shown(path)}: {shown(why)}", highlight=False)
    print_run_quarantine(details)
    for ctx, sink in details["sinks"].items():
        console.print(
            f"sink {ctx}: {sink.get('rows')} row(s) in {sink.get('files')} file(s) → "
            f"{sink.get('target')} ({sink.get('format')}"
            + (", skipped: already committed" if sink.get("skipped") else "") + ")"
        )
