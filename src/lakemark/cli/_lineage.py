"""``lakemark lineage``: extract Glue jobs and catalogs, and scan them for column lineage."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich import box
from rich.markup import escape
from rich.table import Table

from ..lineage import (
    JobLineage,
    redact_lineage,
    scan_folder,
    send_events,
    to_dot,
    to_html,
    to_json,
    to_mermaid,
    to_openlineage,
)
from ..lineage import extract as run_extract
from ..redaction import redact
from ._common import parse_key_values
from ._output import console, handle_errors, print_table

FORMATS = ("openlineage", "dot", "mermaid", "json", "html")


@click.group()
def lineage() -> None:
    """Static column-level lineage of AWS Glue jobs (scripts are parsed, never run)."""


@lineage.command("extract")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder to write <account>-<region>/ into.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only jobs matching (repeat).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip jobs matching (repeat).")
@handle_errors
def extract_cmd(out: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Write the Glue catalog, jobs, scripts and extra py files of the current AWS account
    and region (standard AWS configuration; AWS_ENDPOINT_URL is honoured) to a folder."""
    report = run_extract(out, include=include, exclude=exclude)
    console.print(f"wrote {report.folder}: {report.databases} databases, {report.tables} "
                  f"tables, {len(report.jobs)} jobs")
    for what, why in report.skipped:
        console.print(f"[yellow]skipped[/] {escape(redact(what))}: {escape(redact(why))}",
                      highlight=False, markup=True)


def _render(jobs: list[JobLineage], fmt: str) -> str:
    if fmt == "openlineage":
        return "".join(json.dumps(e, sort_keys=True) + "\n" for e in to_openlineage(jobs))
    if fmt == "dot":
        return to_dot(jobs)
    if fmt == "mermaid":
        return to_mermaid(jobs)
    if fmt == "html":
        return to_html(jobs)
    return json.dumps(to_json(jobs), indent=2) + "\n"


def _summary(jobs: list[JobLineage]) -> None:
    jobs = redact_lineage(jobs)
    table = Table(title="lineage", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("job", "inputs", "outputs", "column edges", "warnings"):
        table.add_column(column)
    for job in jobs:
        table.add_row(job.job, str(len(job.inputs)), str(len(job.outputs)),
                      str(sum(len(e) for o in job.outputs for _, e in o.columns)),
                      str(len(job.warnings)))
    print_table(table)
    for job in jobs:
        for w in job.warnings:
            console.print(f"[yellow]warning[/] {escape(job.job)}: {escape(str(w))}",
                          highlight=False, markup=True)


@lineage.command("scan")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True)
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the result here (default: standard output).")
@click.option("--arg", "args", multiple=True, metavar="KEY=VALUE",
              help="A run argument for every job (as given to start-job-run; repeat).")
@click.option("--include", multiple=True, metavar="GLOB", help="Only jobs matching (repeat).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip jobs matching (repeat).")
@click.option("--send", "send_url", metavar="URL", default=None,
              help="Also POST the OpenLineage events to this endpoint "
              "(Marquez: http://host:5000/api/v1/lineage).")
@click.option("--api-key", envvar="OPENLINEAGE_API_KEY", default=None,
              help="Bearer token for --send [env OPENLINEAGE_API_KEY].")
@handle_errors
def scan_cmd(folder: str, fmt: str, out: str | None, args: tuple[str, ...],
             include: tuple[str, ...], exclude: tuple[str, ...], send_url: str | None,
             api_key: str | None) -> None:
    """Analyse every job in FOLDER (a connection folder or a folder of them)."""
    run_args = {f"--{k.lstrip('-')}": v for k, v in parse_key_values(args, "--arg").items()}
    jobs = scan_folder(folder, run_arguments=run_args, include=include, exclude=exclude)
    if send_url:
        sent = send_events(send_url, to_openlineage(jobs), api_key=api_key)
        click.echo(f"sent {sent} OpenLineage events to {redact(send_url)}", err=True)
    text = _render(jobs, fmt)
    if out is None:
        click.echo(text, nl=False)
        return
    Path(out).write_text(text, encoding="utf-8")
    _summary(jobs)


@lineage.command("analyze")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder for openlineage.jsonl, lineage.dot, lineage.mmd, lineage.json, "
                   "lineage.html.")
@click.option("--arg", "args", multiple=True, metavar="KEY=VALUE",
              help="A run argument for every job (repeat).")
@handle_errors
def analyze_cmd(folder: str, out: str, args: tuple[str, ...]) -> None:
    """Analyse every job in FOLDER and write all output formats into OUT."""
    run_args = {f"--{k.lstrip('-')}": v for k, v in parse_key_values(args, "--arg").items()}
    jobs = scan_folder(folder, run_arguments=run_args)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name, fmt in (("openlineage.jsonl", "openlineage"), ("lineage.dot", "dot"),
                      ("lineage.mmd", "mermaid"), ("lineage.json", "json"),
                      ("lineage.html", "html")):
        (target / name).write_text(_render(jobs, fmt), encoding="utf-8")
    _summary(jobs)
