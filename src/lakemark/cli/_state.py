"""``lakemark state``: housekeeping of the bookmark state store (``state prune``)."""

from __future__ import annotations

import click
from rich.table import Table

from ..errors import ConfigError
from ..state import RetentionPolicy, auto_policy, open_store
from ._common import json_option, state_option, state_url_of
from ._output import console, handle_errors, print_json, print_table


@click.group()
def state() -> None:
    """Housekeeping of the bookmark state store."""


@state.command("prune")
@click.argument("job_name", metavar="[JOB]", required=False)
@click.option("--all", "all_jobs", is_flag=True, help="Prune every job of the store.")
@click.option("--keep-days", type=float, default=None, metavar="N",
              help="Keep every run that started within N days "
                   "[env LAKEMARK_KEEP_DAYS; default 30].")
@click.option("--keep-runs", type=int, default=None, metavar="N",
              help="Keep at least the last N runs of each job "
                   "[env LAKEMARK_KEEP_RUNS; default 100].")
@click.option("--dry-run", is_flag=True, help="Count what would be deleted; delete nothing.")
@state_option
@json_option
@handle_errors
def prune(job_name: str | None, all_jobs: bool, keep_days: float | None,
          keep_runs: int | None, dry_run: bool, state_url: str | None, as_json: bool) -> None:
    """Delete old runs of JOB (or of every job, --all): their records, manifests (plans and
    input files), set-aside history, folder-sink commit records and old bookmark versions.

    A run is deleted only when it is older than --keep-days AND not among the last
    --keep-runs of its job. Never deleted: the current bookmark, a running run, the attempts
    of the run now due (a retry replays their input), the runs the bookmark names, and every
    run and bookmark version inside the window (so `bookmark rewind` and --from/--to replays
    between runs of the window stay exact), and the latest committed version of each folder
    target and app id (it refuses writing that version again). The same policy runs
    automatically after commits (LAKEMARK_RETENTION=off turns that off).
    """
    if (job_name is None) == (not all_jobs):
        raise ConfigError("state prune: give a JOB or --all (not both)")
    base = auto_policy() or RetentionPolicy()
    policy = RetentionPolicy(base.keep_days if keep_days is None else keep_days,
                             base.keep_runs if keep_runs is None else keep_runs)
    url = state_url_of(state_url)
    open_store(url, read_only=True).close()  # a store that does not exist is not created
    store = open_store(url)
    try:
        reports = store.prune(job_name, policy, dry_run=dry_run)
    finally:
        store.close()
    if as_json:
        print_json({"keep_days": policy.keep_days, "keep_runs": policy.keep_runs,
                    "dry_run": dry_run, "jobs": [r.to_json() for r in reports]})
        return
    verb = "would delete" if dry_run else "deleted"
    table = Table(title=f"state prune ({verb}; keep {policy.keep_days:g} days and at least "
                        f"{policy.keep_runs} runs)")
    for column in ("job", "runs", "input files", "plans", "bookmark versions",
                   "commit records", "set-aside history", "runs kept"):
        table.add_column(column, justify="left" if column == "job" else "right")
    for r in reports:
        table.add_row(r.job_name, str(r.runs), str(r.files), str(r.plans), str(r.versions),
                      str(r.folder_commits), str(r.quarantine_history), str(r.kept_runs))
    print_table(table)
    if not reports:
        console.print("No jobs in the store.")
