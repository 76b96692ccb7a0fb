"""``lakemark schema show|reset``: a job's tracked source schemas and their history."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from ..state import SourceSchema
from ._common import json_option, open_state, state_option
from ._jobs import known_job
from ._output import console, handle_errors, print_json, print_table


@click.group()
def schema() -> None:
    """Show or forget the tracked schemas of a job's file sources (--schema-evolution)."""


def _type_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _origins(history: list[SourceSchema]) -> dict[str, str]:
    """Column (or nested field, ``address.zip``) -> which run added (or last changed) it,
    since the last reset."""
    out: dict[str, str] = {}
    for version in history:
        if version.reason == "reset":
            out.clear()
            continue
        for change in version.changes:
            column = change.get("column")
            if column is None:
                continue
            what = "added" if change.get("change") == "added" else \
                f"changed from {_type_text(change.get('old_type'))}"
            out[column] = f"{what} by {version.run_id or '-'} (v{version.version})"
    return out


def _nested_added(history: list[SourceSchema]) -> dict[str, list[tuple[str, Any]]]:
    """Column -> the fields added inside it since the last reset, as (path text, type)."""
    out: dict[str, list[tuple[str, Any]]] = {}
    for version in history:
        if version.reason == "reset":
            out.clear()
            continue
        for change in version.changes:
            path = change.get("path")
            if change.get("change") == "added" and isinstance(path, list) and len(path) > 1:
                out.setdefault(str(path[0]), []).append((str(change["column"]),
                                                         change.get("type")))
    return out


@schema.command("show")
@click.argument("job_name", metavar="JOB")
@click.argument("ctx", metavar="[CTX]", required=False)
@state_option
@json_option
@handle_errors
def show(job_name: str, ctx: str | None, state_url: str | None, as_json: bool) -> None:
    """Show the tracked schema of JOB's sources (or of CTX) with its history: which run added
    or changed which column, which run added which field inside a column (by path, e.g.
    address.zip, on a row of its own under the column), and resets."""
    store = open_state(state_url, read_only=True)
    known_job(store, job_name)
    history = store.source_schema_history(job_name, ctx)
    current = {c: store.get_source_schema(job_name, c)
               for c in dict.fromkeys(h.ctx for h in history)}
    store.close()
    if as_json:
        print_json({"job_name": job_name, "ctx": ctx,
                    "schemas": {c: s.to_json() if s else None for c, s in current.items()},
                    "history": [h.to_json() for h in history]})
        return
    if not history:
        console.print(f"job {job_name!r} has no tracked schema"
                      + (f" for transformation_ctx {ctx!r}" if ctx else "")
                      + " (read with --schema-evolution to track one)")
        return
    for name, now in current.items():
        own = [h for h in history if h.ctx == name]
        table = Table(title=f"schema of job {job_name}, source {name}")
        table.add_column("column", style="bold")
        table.add_column("type")
        table.add_column("history")
        origins = _origins(own)
        inside = _nested_added(own)
        for f in (now.fields or []) if now else []:
            table.add_row(str(f["name"]), _type_text(f["type"]), origins.get(str(f["name"]), ""))
            for path, type_ in inside.get(str(f["name"]), []):
                table.add_row(f"  {path}", _type_text(type_), origins.get(path, ""))
        if now is None:
            table.add_row("(none)", "", "reset: the next run infers again")
        print_table(table)
        for h in own:
            console.print(f"  v{h.version} {h.created_at} {h.reason}"
                          + (f" by {h.run_id}" if h.run_id else ""))


@schema.command("reset")
@click.argument("job_name", metavar="JOB")
@click.argument("ctx", metavar="[CTX]", required=False)
@state_option
@json_option
@handle_errors
def reset(job_name: str, ctx: str | None, state_url: str | None, as_json: bool) -> None:
    """Forget the tracked schema of JOB's sources (or of CTX): the next run infers it again.
    The history is kept. The bookmark is not touched."""
    store = open_state(state_url)
    done = store.reset_source_schema(job_name, ctx)
    store.close()
    if as_json:
        print_json({"job_name": job_name, "reset": done})
    else:
        console.print(f"forgot the tracked schema of {', '.join(done)} (job {job_name})")
