"""``lakemark demo``: the bookmark at work on local files, on embedded defaults, in one command."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click
from rich.text import Text

from ..errors import ConfigError
from ._ingest import ingest_files
from ._output import console, handle_errors
from ._runs import list_runs

MARKER = ".lakemark-demo"


def _write_events(folder: Path, day: str, name: str, first_id: int, count: int) -> None:
    target = folder / f"day={day}"
    target.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"event_id": i, "user": f"user-{i % 7}",
                    "action": ["view", "click", "buy"][i % 3],
                    "amount": round(i * 1.25, 2)})
        for i in range(first_id, first_id + count)
    ]
    (target / name).write_text("\n".join(lines) + "\n")


@click.command("demo")
@click.option("--dir", "directory", default="lakemark-demo", show_default=True,
              type=click.Path(file_okay=False),
              help="Folder for the demo's input, table and state.")
@click.pass_context
@handle_errors
def demo(ctx: click.Context, directory: str) -> None:
    """Ingest a folder of JSON files into a Delta table twice, and show the bookmark at work.

    Run 1 takes the three files that are there; two more files arrive; run 2 takes only those
    two; run 3 finds nothing new. Everything stays in --dir (Spark local, SQLite state).
    """
    root = Path(directory).resolve()
    if root.exists() and any(root.iterdir()):
        if not (root / MARKER).exists():
            raise ConfigError(f"{root} exists and is not a lakemark demo folder; choose --dir")
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / MARKER).write_text("made by `lakemark demo`; safe to delete\n")
    source, target = root / "input", root / "lake" / "events"
    state = f"sqlite:///{root / 'state.db'}"
    console.rule(Text.from_markup("[bold]lakemark demo"))
    console.print(f"input  {source}\ntable  {target} (Delta)\nstate  {state}\n")

    for n, day in enumerate(["2026-11-20", "2026-11-20", "2026-11-21"]):
        _write_events(source, day, f"events-{n}.json", n * 100, 100)
    run_args = dict(source=str(source), target=str(target), job_name="demo-events",
                    state_url=state)
    console.rule("run 1: three files are waiting")
    ctx.invoke(ingest_files, **run_args)

    for n in (3, 4):
        _write_events(source, "2026-11-22", f"events-{n}.json", n * 100, 100)
        os.utime(source / "day=2026-11-22" / f"events-{n}.json")
    console.rule("run 2: two new files arrived — only they are taken")
    ctx.invoke(ingest_files, **run_args)

    console.rule("run 3: nothing new")
    ctx.invoke(ingest_files, **run_args)

    console.rule("what happened")
    ctx.invoke(list_runs, job_name="demo-events", state_url=state)
    from deltalake import DeltaTable

    table = DeltaTable(str(target)).to_pyarrow_table()
    ids = table.column("event_id").to_pylist()
    once = len(ids) == len(set(ids)) == 500
    console.print(
        f"The table holds {len(ids)} rows from 5 files, each row once: "
        + ("[green]yes[/]" if once else "[red]NO[/]"), markup=True
    )
    console.print(
        "Try: lakemark runs show RUN_ID --state " + state + "\n"
        "     lakemark bookmark show demo-events --state " + state + "\n"
        "Many scheduled jobs? Keep one Spark warm and skip each run's JVM start:\n"
        "     lakemark server start   # then: lakemark ingest files … --remote "
        "sc://127.0.0.1:15002 (docs/connect.md)"
    )
    if not once:
        raise SystemExit(1)
