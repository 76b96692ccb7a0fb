"""``lakemark ingest files``: copy only the new files of a source into a target, run after run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
from rich.table import Table

from ..job import Job, JobEvent
from ..planning import DEFAULT_MAX_BAND_MS, FileOptions
from ..planning.schema import EVOLUTION_MODES
from ._common import json_option, open_state, parse_key_values, state_option, verbose_option
from ._output import console, handle_errors, human_bytes, print_json, setup_logging, print_table

SOURCE_FORMATS = ("json", "csv", "parquet", "orc", "xml", "text", "avro")
TARGET_FORMATS = ("delta", "parquet", "json", "csv", "orc")


@click.group()
def ingest() -> None:
    """Incremental ingestion jobs that need no code."""


@ingest.command("files")
@click.argument("source")
@click.argument("target")
@click.option("--job", "job_name", required=True, help="Job name: the bookmark is kept per job.")
@click.option(
    "--format", "fmt", type=click.Choice(SOURCE_FORMATS), default="json", show_default=True,
    help="Format of the source files.",
)
@click.option(
    "--target-format", type=click.Choice(TARGET_FORMATS), default="delta", show_default=True,
    help="Format of the target.",
)
@click.option(
    "--write-mode", type=click.Choice(["append", "overwrite"]), default="append",
    show_default=True, help="How the run's rows go into the target.",
)
@click.option("--partition-by", multiple=True, metavar="COL", help="Partition the target by COL.")
@click.option(
    "--max-band", type=int, default=DEFAULT_MAX_BAND_MS, show_default=True, metavar="MS",
    help="MaxBand window in milliseconds: files modified this close to a run's high watermark "
    "are remembered by path, so late listings are neither skipped nor taken twice.",
)
@click.option("--max-files-in-band", type=int, metavar="N",
              help="Cap on files remembered in the band (bounds state; never drops a listed file).")
@click.option("--bounded-files", type=int, metavar="N",
              help="Take at most N files per run, in (mtime, path) order; the rest wait.")
@click.option("--bounded-size", type=int, metavar="BYTES",
              help="Take at most BYTES per run (at least one file), in (mtime, path) order.")
@click.option(
    "--bookmark", "bookmark_option", type=click.Choice(["enable", "disable", "pause"]),
    default="enable", show_default=True,
    help="enable: take new files and advance the bookmark; disable: take every file, keep no "
    "state; pause: take new files (or the --from/--to range) without advancing the bookmark.",
)
@click.option("--from", "from_run", metavar="RUN_ID",
              help="With --bookmark pause: start after the input of this run (needs --to).")
@click.option("--to", "to_run", metavar="RUN_ID",
              help="With --bookmark pause: end with the input of this run (needs --from).")
@click.option("--recurse/--no-recurse", default=True, show_default=True,
              help="Descend into sub-folders of SOURCE.")
@click.option("--exclude", "exclusions", multiple=True, metavar="GLOB",
              help="Skip files matching GLOB (relative to SOURCE; ** crosses folders).")
@click.option(
    "--mode", type=click.Choice(["PERMISSIVE", "DROPMALFORMED", "FAILFAST"],
                                case_sensitive=False),
    default="PERMISSIVE", show_default=True,
    help="Corrupt records: keep with nulls, drop, or fail the run (files stay unprocessed).",
)
@click.option("--option", "reader_options", multiple=True, metavar="KEY=VALUE",
              help="A Spark reader option, e.g. --option header=true (repeatable).")
@click.option("--master", metavar="URL", help="Spark master [env LAKEMARK_SPARK_MASTER; local[*]].")
@click.option("--force", is_flag=True,
              help="Take over the job's lease even if its holder may be alive.")
@click.option("--txn-app-id", metavar="ID",
              help="Delta idempotent write (txnAppId; needs --txn-version): a run whose "
              "(ID, VERSION) the table already recorded at VERSION or higher writes nothing. "
              "Default: the automatic token <job>/target at the run number.")
@click.option("--txn-version", type=click.IntRange(min=0), metavar="VERSION",
              help="Delta idempotent write (txnVersion; needs --txn-app-id).")
@click.option("--incremental-listing", is_flag=True,
              help="S3 source whose keys grow in lexical order (e.g. date prefixes): list only "
              "the keys after the last one the bookmark covers (ListObjectsV2 StartAfter), with "
              "a full listing every --full-listing-every runs. A key that sorts before it is "
              "only seen by that full listing.")
@click.option("--full-listing-every", type=click.IntRange(min=1), default=24, show_default=True,
              metavar="N", help="With --incremental-listing: list the whole prefix every N runs.")
@click.option("--merge-schema", is_flag=True,
              help="Delta target: add new columns of the data to the table (Delta's "
              "mergeSchema); table columns the data lacks are written as nulls (with "
              "--merge-key: the columns are added before the merge, and a table column the "
              "data lacks keeps its value on update). Without it a schema difference fails the "
              "run before anything is written.")
@click.option("--merge-key", "merge_keys", multiple=True, metavar="COL",
              help="Delta target: merge the run's rows into the table by key COL (repeatable "
              "for a compound key) instead of appending: a row whose key is in the table "
              "replaces that row, a new key is inserted; exactly once per run. A key twice in "
              "the input fails the run before anything is written, unless --order-by picks the "
              "latest. See docs/upserts.md.")
@click.option("--delete-when", metavar="EXPR",
              help="With --merge-key: rows for which this Spark SQL expression is true delete "
              "the table row with their key, e.g. \"op = 'D'\".")
@click.option("--order-by", "order_by", multiple=True, metavar="COL",
              help="With --merge-key: of several input rows with one key, the one with the "
              "greatest COL wins (latest wins); repeatable: later columns break ties of "
              "earlier ones.")
@click.option("--schema-evolution", type=click.Choice(EVOLUTION_MODES, case_sensitive=False),
              help="Track the source's schema in the state store (json and csv sources): "
                   "inferred on "
              "the first run, then reused. New columns are added to it and to a Delta target "
              "(addNewColumns), go to the rescued data (rescue), fail the run (failOnNewColumns) "
              "or are ignored and counted (none). Values that do not fit their column go to the "
              "rescued data. See docs/schema.md.")
@click.option("--rescued-data-column", default="_rescued_data", show_default=True,
              metavar="NAME", help="With --schema-evolution: the column holding, per row, a "
              "JSON object of the values that did not fit and the source file (_file_path).")
@click.option("--schema-hints", metavar="DDL",
              help="With --schema-evolution: types that win over inference when a column enters "
              "the tracked schema, e.g. \"id bigint, ts timestamp, amount decimal(12,2)\".")
@click.option("--no-rescued-data", is_flag=True,
              help="With --schema-evolution: no rescued-data column (values that do not fit "
              "become null; unparseable records are set aside as without tracking).")
@state_option
@json_option
@verbose_option
@handle_errors
def ingest_files(
    source: str,
    target: str,
    job_name: str,
    fmt: str,
    target_format: str,
    write_mode: str,
    partition_by: tuple[str, ...],
    max_band: int,
    max_files_in_band: int | None,
    bounded_files: int | None,
    bounded_size: int | None,
    bookmark_option: str,
    from_run: str | None,
    to_run: str | None,
    recurse: bool,
    exclusions: tuple[str, ...],
    mode: str,
    reader_options: tuple[str, ...],
    master: str | None,
    force: bool,
    txn_app_id: str | None,
    txn_version: int | None,
    incremental_listing: bool,
    full_listing_every: int,
    merge_schema: bool,
    merge_keys: tuple[str, ...],
    delete_when: str | None,
    order_by: tuple[str, ...],
    schema_evolution: str | None,
    rescued_data_column: str,
    schema_hints: str | None,
    no_rescued_data: bool,
    state_url: str | None,
    as_json: bool,
    verbose: bool,
) -> None:
    """Copy the files of SOURCE that no earlier run took into TARGET.

    SOURCE is a folder, file or prefix: a local path, file://, s3:// or s3a://. TARGET is a
    local path or s3:// URI. Bookmarks are enabled by default: run it on a schedule and each
    run takes only new (or modified) files. `lakemark runs show RUN_ID` lists what a run took.
    """
    setup_logging(verbose)
    # Everything that can be checked is checked before any work and any state change.
    options = FileOptions(
        max_band_ms=max_band,
        max_files_in_band=max_files_in_band,
        bounded_files=bounded_files,
        bounded_size=bounded_size,
    )
    reader = parse_key_values(reader_options, "--option")
    writer: dict[str, str] = {}
    if (txn_app_id is None) != (txn_version is None):
        missing = "--txn-version" if txn_version is None else "--txn-app-id"
        raise click.UsageError(f"--txn-app-id and --txn-version go together: give both or "
                               f"neither ({missing} is missing)")
    if txn_app_id is not None:
        if not txn_app_id.strip():
            raise click.UsageError("--txn-app-id must not be empty")
        if target_format != "delta":
            raise click.UsageError(f"--txn-app-id/--txn-version apply to Delta targets only, "
                                   f"not --target-format {target_format}")
        writer = {"txnAppId": txn_app_id, "txnVersion": str(txn_version)}
    if merge_schema:
        if target_format != "delta":
            raise click.UsageError(f"--merge-schema applies to Delta targets only, not "
                                   f"--target-format {target_format}")
        writer["mergeSchema"] = "true"
    if schema_evolution is not None:
        from ..sources._schema_track import tracking_of

        if fmt not in ("json", "csv"):
            raise click.UsageError(f"--schema-evolution applies to json and csv sources, not "
                                   f"--format {fmt}")
        tracking_of(schema_evolution, None if no_rescued_data else rescued_data_column,
                    schema_hints)
        if target_format == "delta":  # the tracked schema decides the columns written
            writer["mergeSchema"] = "true"
    elif no_rescued_data or schema_hints is not None:
        raise click.UsageError("--no-rescued-data and --schema-hints go with --schema-evolution")
    _check_merge(merge_keys, delete_when, order_by, target_format=target_format,
                 write_mode=write_mode, partition_by=partition_by,
                 schema_evolution=schema_evolution is not None)
    from ..sinks import check_write
    from ..sources import check_read_options
    from ..storage import check_source

    location = check_source(source)  # a missing local source fails here, before any state
    if incremental_listing and not location.is_s3:
        raise click.UsageError("--incremental-listing applies to S3 sources (s3://, s3a://); "
                               f"{source} is local")
    check_read_options(fmt, mode.upper(), reader, location.root)
    check_write(target, format=target_format, mode=write_mode, partition_by=partition_by,
                options=writer)
    store = open_state(state_url)
    job = Job(
        job_name,
        state=store,
        bookmark=bookmark_option,
        from_run_id=from_run,
        to_run_id=to_run,
        force=force,
    )

    with console.status("starting", spinner="dots") as status:

        def on_event(event: JobEvent) -> None:
            detail = dict(event.detail or {})
            if event.stage == "planned":
                status.update(f"planned {detail['files']} file(s), {human_bytes(detail['bytes'])}"
                              " — reading and writing")
            elif event.stage == "listed":
                status.update(f"listed {detail['files']} file(s) — planning")

        job.on_event = on_event
        with job:
            status.update(f"run {job.run_id} — listing {source}")
            plan = job.plan_files(
                source,
                ctx="source",
                format=fmt,
                recurse=recurse,
                exclusions=list(exclusions),
                max_band_ms=options.max_band_ms,
                max_files_in_band=options.max_files_in_band,
                bounded_files=options.bounded_files,
                bounded_size=options.bounded_size,
                incremental_listing=incremental_listing,
                full_listing_every=full_listing_every,
            )
            result = None
            # A run with nothing to write records and commits without starting Spark at all.
            if plan.files or write_mode == "overwrite":
                from ..spark import get_spark

                get_spark(master, verbose=verbose)  # the session the job picks up
                df = job.read_planned(
                    "source", format=fmt, options=reader, mode=mode.upper(),
                    schema_evolution=schema_evolution,
                    rescued_data_column=None if no_rescued_data else rescued_data_column,
                    schema_hints=schema_hints)
                result = job.write(
                    df, target, format=target_format, mode=write_mode, partition_by=partition_by,
                    ctx="target", options=writer, merge_keys=list(merge_keys) or None,
                    delete_when=delete_when, order_by=list(order_by) or None,
                )
    record = store.get_run(job.run.run_id)
    bookmark = store.get_bookmark(job_name)
    inputs = {i.ctx: i.plan for i in store.run_inputs(record.run_id)}
    sink = inputs.get("sink:target", {})
    tracked = inputs.get("schema:source")
    out: dict[str, Any] = {
        "run_id": record.run_id,
        "job_name": job_name,
        "run": record.run,
        "attempt": record.attempt,
        "status": record.status,
        "bookmark_option": bookmark_option,
        "files": len(plan.files),
        "bytes": plan.total_bytes,
        "pending_files": plan.pending,
        "rows": result.rows if result else 0,
        "skipped": bool(result and result.skipped),
        "target": target,
        "target_format": target_format,
        "bookmark_version": bookmark.version,
        "corrupt_records": int(sink.get("corrupt_records") or 0),
        "rejected_file": sink.get("rejected_file"),
    }
    if tracked is not None:
        out["schema"] = {k: v for k, v in tracked.items() if k not in ("kind", "ctx")}
    store.close()
    if as_json:
        print_json(out)
        return
    table = Table(title=f"lakemark ingest files — job {job_name}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("run", f"{record.run_id} (run {record.run}, attempt {record.attempt})")
    table.add_row("status", record.status)
    table.add_row("files taken", f"{len(plan.files)} ({human_bytes(plan.total_bytes)})")
    if plan.pending:
        table.add_row("files waiting", f"{plan.pending} (bounded run: next runs take them)")
    table.add_row("rows written", str(out["rows"]) + (
        " (skipped: the table already recorded this write's token)" if out["skipped"] else ""))
    if out["corrupt_records"]:
        table.add_row("corrupt records", f"{out['corrupt_records']} (not written; kept in "
                      f"{out['rejected_file']})")
    if tracked is not None:
        table.add_row("schema", _schema_summary(tracked))
    table.add_row("target", f"{target} ({target_format})")
    table.add_row("bookmark", f"{bookmark_option}, version {bookmark.version}")
    print_table(table)
    if not plan.files:
        console.print("No new files: nothing to write.")


def _check_merge(merge_keys: tuple[str, ...], delete_when: str | None, order_by: tuple[str, ...],
                 *, target_format: str, write_mode: str, partition_by: tuple[str, ...],
                 schema_evolution: bool) -> None:
    """UsageError for merge options that cannot go together, before any state changes."""
    if not merge_keys:
        if delete_when is not None or order_by:
            raise click.UsageError("--delete-when and --order-by go with --merge-key")
        return
    if target_format != "delta":
        raise click.UsageError(f"--merge-key applies to Delta targets only, not "
                               f"--target-format {target_format}")
    conflicts = [name for name, given in (("--write-mode overwrite", write_mode != "append"),
                                          ("--partition-by", bool(partition_by)),
                                          ("--schema-evolution", schema_evolution))
                 if given]
    if conflicts:
        raise click.UsageError(f"--merge-key cannot be combined with {', '.join(conflicts)}")


def _schema_summary(tracked: Mapping[str, Any]) -> str:
    """One line per fact of a tracked-schema read (mode, changes, rescued, ignored, corrupt)."""
    parts = [f"{tracked.get('mode')}" + (" (inferred)" if tracked.get("inferred") else "")]
    for key, label in (("added_columns", "added"), ("new_columns", "new")):
        if tracked.get(key):
            parts.append(f"{label}: {', '.join(tracked[key])}")
    for key, label in (("rescued_values", "rescued values"),
                       ("rescued_new_columns", "rescued columns"),
                       ("ignored_columns", "ignored columns")):
        if tracked.get(key):
            parts.append(f"{label}: " + ", ".join(f"{c} ({n})" for c, n in tracked[key].items()))
    if tracked.get("corrupt_records"):
        parts.append(f"corrupt records: {tracked['corrupt_records']}")
    return "\n".join(parts)
