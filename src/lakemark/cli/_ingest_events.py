"""``lakemark ingest s3-events`` and ``lakemark ingest s3-incremental``: the two stages of
event-driven S3 ingestion, each its own process on its own schedule."""

from __future__ import annotations

import signal
import threading
from typing import Any

import click
from rich.table import Table

from ..run.quarantine import ON_BAD_FILE, BadFilePolicy
from ..errors import ConfigError
from ..job import Job, JobEvent
from ._common import json_option, open_state, parse_key_values, state_option, verbose_option
from ._output import console, handle_errors, human_bytes, print_json, setup_logging, print_table
from ._progress import DEFAULT_INTERVAL_S, INTERVAL_ENV, ProgressLines, interval_from, spark_tasks

SOURCE_FORMATS = ("json", "csv", "parquet", "orc", "xml", "text", "avro")
TARGET_FORMATS = ("delta", "parquet", "json", "csv", "orc")


def _queue_name(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1] or "queue"


@click.command("s3-events")
@click.option("--queue-url", required=True, metavar="URL",
              help="SQS queue that receives the bucket's notifications (directly or via SNS).")
@click.option("--events-table", required=True, metavar="PATH",
              help="The events Delta table (local path or s3:// URI); created on first use.")
@click.option("--wait-seconds", type=int, default=20, show_default=True,
              help="Long-poll wait per receive, 0–20 s.")
@click.option("--visibility-timeout", type=int, default=30, show_default=True,
              help="Seconds a received message stays hidden, 0–43200. A message not deleted "
              "by then (the sync crashed) is delivered again; its events are not duplicated.")
@click.option("--max-messages", type=int, default=1000, show_default=True,
              help="Most messages per sync (one events-table commit).")
@click.option("--max-fetch-seconds", type=float, default=60.0, show_default=True,
              help="Most time a sync spends receiving before it commits.")
@click.option("--max-receives", type=int, default=3, show_default=True,
              help="A message that cannot be parsed is quarantined after this many receives.")
@click.option("--dead-letter-queue-url", metavar="URL",
              help="Send unparseable messages here instead of the quarantine table.")
@click.option("--quarantine-table", metavar="PATH",
              help="Delta table for unparseable messages [default: EVENTS_TABLE_quarantine].")
@click.option("--continuous", is_flag=True,
              help="Keep syncing until SIGTERM/SIGINT (the sync in progress finishes first).")
@click.option("--min-sync-interval", type=float, default=10.0, show_default=True,
              metavar="SECONDS", help="With --continuous: least time between two syncs' starts.")
@click.option("--job", "job_name", metavar="NAME",
              help="Job name the syncs are recorded under [default: s3-events:QUEUE_NAME].")
@state_option
@json_option
@verbose_option
@handle_errors
def s3_events(queue_url: str, events_table: str, wait_seconds: int, visibility_timeout: int,
              max_messages: int, max_fetch_seconds: float, max_receives: int,
              dead_letter_queue_url: str | None, quarantine_table: str | None,
              continuous: bool, min_sync_interval: float, job_name: str | None,
              state_url: str | None, as_json: bool, verbose: bool) -> None:
    """Stage 1: move S3 event notifications from an SQS queue into the events table.

    Without --continuous it drains what the queue holds now and exits. Messages are deleted
    from the queue only after their events are committed; each sync is recorded as a run of
    the job (`lakemark runs list s3-events:QUEUE_NAME`).
    """
    setup_logging(verbose)
    from ..events import EventsTable, QueueOptions, consume

    options = QueueOptions(wait_seconds, visibility_timeout, max_messages, max_fetch_seconds,
                           max_receives, dead_letter_queue_url, quarantine_table)
    table = EventsTable(events_table)
    store = open_state(state_url)
    name = job_name or f"s3-events:{_queue_name(queue_url)}"
    client = _sqs_client()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    runs: list[str] = []

    def on_sync(result: Any, run_id: str | None) -> None:
        runs.append(run_id or "")
        if not as_json:
            console.print(f"{run_id}: {result.messages} message(s), {result.events} event(s), "
                          f"{result.inserted} new, {result.deleted} deleted"
                          + (f", {result.quarantined} quarantined" if result.quarantined else ""))

    total = consume(client, queue_url, table, options, continuous=continuous,
                    min_sync_interval_s=min_sync_interval, stop_event=stop,
                    job_factory=lambda: Job(name, state=store), on_sync=on_sync)
    store.close()
    out = {"job_name": name, "queue_url": queue_url, "events_table": table.uri,
           "syncs": len(runs), "runs": runs, **total.to_json(),
           "table_version": table.version()}
    if as_json:
        print_json(out)


def _sqs_client() -> Any:
    """boto3's SQS client with the standard AWS configuration (AWS_ENDPOINT_URL included)."""
    import boto3

    from ..storage import s3_client

    return boto3.client("sqs", region_name=s3_client().meta.region_name)


@click.command("s3-incremental")
@click.argument("target")
@click.option("--events-table", required=True, metavar="PATH",
              help="The events table that `lakemark ingest s3-events` fills.")
@click.option("--job", "job_name", required=True, help="Job name: the checkpoint is kept per job.")
@click.option("--format", "fmt", type=click.Choice(SOURCE_FORMATS), required=True,
              help="Format of the objects.")
@click.option("--target-format", type=click.Choice(TARGET_FORMATS), default="delta",
              show_default=True)
@click.option("--key-prefix", default="", metavar="P", help="Only keys starting with P.")
@click.option("--key-suffix", default="", metavar="S", help="Only keys ending with S.")
@click.option("--key-regex", metavar="RE", help="Only keys matching RE (Python syntax).")
@click.option("--ignore-prefix", "ignore_prefixes", multiple=True, metavar="P",
              help="Skip keys starting with P (repeatable).")
@click.option("--max-files", type=int, metavar="N", help="Most objects per run.")
@click.option("--max-bytes", type=int, metavar="BYTES", help="Most bytes per run.")
@click.option("--check-exists", is_flag=True,
              help="HEAD each object first and skip ones deleted since their event.")
@click.option("--backfill-prefix", metavar="S3_URI",
              help="Also list this prefix and write an event for each object that no created "
              "event names with its eTag (a lost notification); each is then taken once.")
@click.option("--from-version", type=int, metavar="V",
              help="Start from this events-table version instead of the checkpoint.")
@click.option("--option", "reader_options", multiple=True, metavar="KEY=VALUE",
              help="A Spark reader option (repeatable).")
@click.option("--master", metavar="URL", help="Spark master [env LAKEMARK_SPARK_MASTER; local[*]].")
@click.option("--remote", metavar="sc://HOST:PORT",
              help="Read and write on this Spark Connect server instead of starting Spark in "
              "this process, as `ingest files --remote` does [env SPARK_REMOTE]; the "
              "checkpoint stays here. See docs/connect.md.")
@click.option("--on-bad-file", type=click.Choice(ON_BAD_FILE), default="quarantine",
              show_default=True,
              help="An object that cannot be read (damaged, truncated, wrong format, "
              "unreadable, a record over --max-record-bytes): quarantine sets it aside and the "
              "run commits the other objects and the checkpoint past it (exit status 3; "
              "`lakemark quarantine list|retry JOB`), fail fails the run naming it.")
@click.option("--max-bad-files", metavar="N|P%",
              help="Fail the run (nothing written, the checkpoint stays) when it would set "
              "aside more than N objects, or more than P% of its planned objects. Default: no "
              "limit.")
@click.option("--max-record-bytes", metavar="SIZE",
              help="json, csv, text, xml: an object holding a record larger than SIZE is set "
              "aside instead of exhausting memory, e.g. 64MiB, 1g. [default: 64MiB]")
@click.option("--progress-interval", type=float, metavar="SECONDS",
              help="When stdout is not a terminal (cron, CI logs): print a progress line "
              "(stage, objects and bytes planned, rows written, Spark tasks done) every "
              f"SECONDS, then the summary; 0 turns the lines off; with --json they go to "
              f"stderr. Default: ${INTERVAL_ENV}, else {DEFAULT_INTERVAL_S:.0f}.")
@state_option
@json_option
@verbose_option
@handle_errors
def s3_incremental(target: str, events_table: str, job_name: str, fmt: str,
                   target_format: str, key_prefix: str, key_suffix: str, key_regex: str | None,
                   ignore_prefixes: tuple[str, ...], max_files: int | None,
                   max_bytes: int | None, check_exists: bool, backfill_prefix: str | None,
                   from_version: int | None, reader_options: tuple[str, ...],
                   master: str | None, remote: str | None, on_bad_file: str,
                   max_bad_files: str | None, max_record_bytes: str | None,
                   progress_interval: float | None,
                   state_url: str | None, as_json: bool, verbose: bool) -> None:
    """Stage 2: ingest into TARGET the objects the events table says were created since the
    last run — each exactly once, in event order, bounded by --max-files/--max-bytes.

    Exit status: 0 committed; 3 committed, but some objects could not be read and were set
    aside (`lakemark quarantine list JOB`); 1 failed; 2 bad command line.
    """
    setup_logging(verbose)
    from ..run.quarantine_ingest import write_setting_aside
    from ..events import IncrementalOptions, ObjectFilter
    from ..events.incremental import plan_event_source, read_planned_objects
    from ..sinks import check_write
    from ..sources import check_read_options
    from ._ingest import QUARANTINE_EXIT

    options = IncrementalOptions(
        ObjectFilter(key_prefix, key_suffix, key_regex, tuple(ignore_prefixes)),
        max_files, max_bytes, check_exists, backfill_prefix, from_version,
    )
    reader = parse_key_values(reader_options, "--option")
    check_read_options(fmt, "PERMISSIVE", reader)
    check_write(target, format=target_format)
    try:
        policy = BadFilePolicy.parse(on_bad_file, max_bad_files, max_record_bytes)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        interval = interval_from(progress_interval)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    from ..spark import remote_endpoint

    try:  # a bad endpoint is one line before any state changes; an unreachable one too
        url = remote_endpoint(remote, master)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    store = open_state(state_url)
    # a log (cron, CI): a plain line at a steady interval, on stderr with --json
    progress = ProgressLines(lambda line: click.echo(line, err=as_json),
                             0.0 if console.is_terminal else interval, tasks=spark_tasks)
    with progress.running(), Job(job_name, state=store, bad_files=policy,
                                 on_event=progress.on_event) as job:
        plan = plan_event_source(job, events_table, format=fmt, ctx="events", options=options)
        files = list(plan.files)
        # the events source records its plan itself (no file-planner event): tell the lines
        progress.on_event(JobEvent("planned", "events", {
            "files": len(files), "bytes": sum(f.size for f in files)}))
        result = None
        if files:  # nothing new: the run records and commits without starting Spark
            from ..spark import get_spark

            get_spark(master, verbose=verbose, remote=url)
            # An object that breaks the read while writing is set aside and the read and
            # write are done again without it, before anything commits.
            result = write_setting_aside(
                *job._parts(), "events", "sink:target",
                lambda: read_planned_objects(job, plan, format=fmt, read_options=reader,
                                             ctx="events"),
                lambda df: job.write(df, target, format=target_format, ctx="target"))
    set_aside = list(job.set_aside.get("events", []))
    new = [q for q in set_aside if not q.earlier]
    record = store.get_run(job.run_id)
    total_bytes = sum(f.size for f in files)
    out: dict[str, Any] = {"run_id": record.run_id, "job_name": job_name, "run": record.run,
           "attempt": record.attempt, "status": record.status, "files": len(files),
           "bytes": total_bytes, "rows": result.rows if result else 0,
           "skipped": bool(result and result.skipped),
           "backfilled": plan.backfilled, "skipped_stale": plan.skipped_stale,
           "target": target, "target_format": target_format,
           "bookmark_version": store.get_bookmark(job_name).version,
           "quarantined_files": len(new), "quarantined": [q.to_json() for q in set_aside]}
    store.close()
    if as_json:
        print_json(out)
        _exit_if_set_aside(job_name, len(new), QUARANTINE_EXIT)
        return
    table = Table(title=f"lakemark ingest s3-incremental — job {job_name}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("run", f"{record.run_id} (run {record.run}, attempt {record.attempt})")
    table.add_row("objects taken", f"{len(files)} ({human_bytes(total_bytes)})")
    table.add_row("rows written", str(out["rows"]) + (
        " (write skipped: an earlier attempt of this run committed it)" if out["skipped"]
        else ""))
    table.add_row("target", f"{target} ({target_format})")
    if set_aside:
        table.add_row("set aside", "\n".join(
            f"{q.entry.path}: {q.reason}" + (" (set aside earlier)" if q.earlier else "")
            for q in set_aside))
    print_table(table)
    _exit_if_set_aside(job_name, len(new), QUARANTINE_EXIT)


def _exit_if_set_aside(job_name: str, count: int, status: int) -> None:
    """Exit ``status`` (committed, objects set aside) with a last line saying so on stderr."""
    if count:
        click.echo(f"warning: committed, but {count} object(s) could not be read and were set "
                   f"aside; see `lakemark quarantine list {job_name}`", err=True)
        raise SystemExit(status)
