"""``lakemark ingest files``: copy only the new files of a source into a target, run after run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
from rich.table import Table

from .._shown import shown
from ..run.quarantine import ON_BAD_FILE
from ..job import JobEvent
from ..planning import DEFAULT_MAX_BAND_MS
from ..planning.cleanup import CLEAN_MODES
from ..planning.schema import EVOLUTION_MODES, EVOLUTION_OFF
from ._common import json_option, open_state, parse_key_values, state_option, verbose_option
from ._files_report import ON_MODIFIED_HELP, file_notes
from ._output import console, handle_errors, human_bytes, print_json, setup_logging, print_table
from ._progress import (DEFAULT_INTERVAL_S, INTERVAL_ENV, ProgressLines, interval_from,
                        spark_tasks)

SOURCE_FORMATS = ("json", "csv", "parquet", "orc", "xml", "text", "avro")
TARGET_FORMATS = ("delta", "parquet", "json", "csv", "orc", "iceberg")
#: Exit status of a run that committed but set aside source files it could not read.
QUARANTINE_EXIT = 3


@click.group()
def ingest() -> None:
    """Incremental ingestion jobs that need no code."""


@ingest.command("files")
@click.argument("source")
@click.argument("target", required=False)
@click.option("--job", "job_name", required=True, help="Job name: the bookmark is kept per job.")
@click.option(
    "--format", "fmt", type=click.Choice(SOURCE_FORMATS), default="json", show_default=True,
    help="Format of the source files.",
)
@click.option(
    "--target-format", type=click.Choice(TARGET_FORMATS), default="delta", show_default=True,
    help="Format of the target (iceberg: a catalog table named by --table). A folder "
    "format's exactly-once commit records are kept in the state store and its files staged "
    "in TARGET__lakemark_staging/, so TARGET holds only data files "
    "[env LAKEMARK_FOLDER_COMMITS=folder: both under TARGET, as _lakemark_commits/ and "
    "_lakemark_staging/].",
)
@click.option("--table", "table_name", metavar="[CATALOG.]DB.TABLE",
              help="With --target-format iceberg: the Iceberg table to append to (created on "
              "the first run), given instead of TARGET. See docs/iceberg.md.")
@click.option("--iceberg-catalog", metavar="URI|NAME",
              help="With --target-format iceberg: the catalog (sqlite:///PATH, postgresql://…, "
              "http(s)://… for a REST catalog, glue, or a catalog of your pyiceberg "
              "configuration) [env LAKEMARK_ICEBERG_CATALOG; "
              "SQLite under ~/.lakemark/iceberg].")
@click.option(
    "--write-mode", type=click.Choice(["append", "overwrite"]), default="append",
    show_default=True, help="How the run's rows go into the target.",
)
@click.option("--partition-by", multiple=True, metavar="COL",
              help="Partition the target by COL (Iceberg: also a transform such as "
                   "'days(ts)', 'hours(ts)', 'truncate(4, name)').")
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
@click.option("--remote", metavar="sc://HOST:PORT",
              help="Run on this Spark Connect server instead of starting Spark in this "
              "process, e.g. a warm `lakemark server start` [env SPARK_REMOTE]. Features that "
              "need a local JVM are refused in one line. See docs/connect.md.")
@click.option("--force", is_flag=True,
              help="Take over the job's lease even if its holder may be alive.")
@click.option("--txn-app-id", metavar="ID",
              help="Delta/Iceberg idempotent write (txnAppId; needs --txn-version): a run whose "
              "(ID, VERSION) the table already recorded at VERSION or higher writes nothing. "
              "Default: the automatic token <job>/target at the run number.")
@click.option("--txn-version", type=click.IntRange(min=0), metavar="VERSION",
              help="Delta/Iceberg idempotent write (txnVersion; needs --txn-app-id).")
@click.option("--incremental-listing", is_flag=True,
              help="S3 source whose keys grow in lexical order (e.g. date prefixes): list only "
              "the keys after the last one the bookmark covers (ListObjectsV2 StartAfter), with "
              "a full listing every --full-listing-every runs. A key that sorts before it is "
              "only seen by that full listing.")
@click.option("--full-listing-every", type=click.IntRange(min=1), default=24, show_default=True,
              metavar="N", help="With --incremental-listing: list the whole prefix every N runs.")
@click.option("--merge-schema", is_flag=True,
              help="Delta or Iceberg target: add new columns of the data, and new fields "
              "inside its struct columns, to the table (Delta's mergeSchema); table columns "
              "the data lacks are written as nulls (with "
              "--merge-key on Delta: the columns are added before the merge, and a table column "
              "the data lacks keeps its value on update; an Iceberg merge needs every table "
              "column). Without it a schema difference fails the run before anything is "
              "written.")
@click.option("--merge-key", "merge_keys", multiple=True, metavar="COL",
              help="Delta or Iceberg target: merge the run's rows into the table by key COL "
              "(repeatable "
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
@click.option("--schema-evolution",
              type=click.Choice((*EVOLUTION_MODES, EVOLUTION_OFF), case_sensitive=False),
              help="How the source's tracked schema evolves. A json, csv, xml or avro source "
              "keeps its schema in the state store by default: inferred on the first run, then "
              "reused. New columns are added to it and to a Delta or Iceberg target "
              "(addNewColumns, the default), go to the rescued data (rescue), fail the run "
              "(failOnNewColumns) or are ignored and counted (none); values that do not fit "
              "their column go to the rescued data. off: no tracking, Spark infers the schema "
              "every run. An upsert (--merge-key) reads its source untracked. See "
              "docs/schema.md.")
@click.option("--rescued-data-column", default="_rescued_data", show_default=True,
              metavar="NAME", help="With a tracked schema: the column holding, per row, a "
              "JSON object of the values that did not fit and the source file (_file_path).")
@click.option("--schema-hints", metavar="HINTS",
              help="With a tracked schema: types that win over inference when a column enters "
              "the tracked schema, e.g. \"id bigint, ts timestamp, payload.amount "
              "decimal(12,2), tags.element string\" (nested fields by dotted path; not on CSV).")
@click.option("--no-rescued-data", is_flag=True,
              help="With a tracked schema: no rescued-data column (values that do not fit "
              "become null; unparseable records are set aside as without tracking).")
@click.option("--clean-source", type=click.Choice(CLEAN_MODES, case_sensitive=False),
              default="off", show_default=True,
              help="After the run has committed, delete the files it took (delete) or move them "
              "under --archive-to at their path relative to SOURCE (archive), as Spark's "
              "cleanSource and Auto Loader's cloudFiles.cleanSource do. A file changed since "
              "it was planned is kept; a crash between the commit and the clean-up is finished "
              "by the next run; the outcome is in `runs show`. See docs/clean-source.md.")
@click.option("--archive-to", metavar="DIR|s3://…",
              help="With --clean-source archive: the folder or S3 prefix (outside SOURCE, on "
              "the same kind of storage) processed files are moved to; an existing file there "
              "is never overwritten (the source file is kept and reported).")
@click.option("--clean-source-retention", metavar="DURATION",
              help="With --clean-source: leave the files in place this long after the commit "
              "that took them (seconds, or e.g. 30m, 12h, 7d; Auto Loader's "
              "cleanSource.retentionDuration); a later run's commit cleans them. Default: "
              "right after the commit.")
@click.option("--on-modified", type=click.Choice(("retake", "skip", "append"),
                                               case_sensitive=False),
              default="retake", show_default=True, help=ON_MODIFIED_HELP)
@click.option("--on-bad-file", type=click.Choice(ON_BAD_FILE), default="quarantine",
              show_default=True,
              help="A source file that cannot be read (damaged, truncated, wrong format, a "
              "broken or looping link, a record over --max-record-bytes): quarantine sets it "
              "aside and the run commits the other files (exit status 3; `lakemark quarantine "
              "list`), fail fails the run naming it. See docs/bookmarks.md.")
@click.option("--max-bad-files", metavar="N|P%",
              help="Fail the run (nothing written, files kept for the next run) when it would "
              "set aside more than N files, or more than P% of its planned files (Glue's "
              "totalThreshold idea). Default: no limit.")
@click.option("--max-record-bytes", metavar="SIZE",
              help="json, csv, text, xml: a file holding a record (line; xml: element) larger "
              "than SIZE is set aside instead of exhausting memory, e.g. 64MiB, 1g. Only files "
              "larger than SIZE are scanned. [default: 64MiB]")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="A Spark setting for the session the run starts (repeatable), over "
              "lakemark's defaults and $LAKEMARK_SPARK_CONF, e.g. --conf spark.ui.enabled=true "
              "to turn on the Spark UI (off by default) or --conf spark.driver.memory=4g.")
@click.option("--progress-interval", type=float, metavar="SECONDS",
              help="When stdout is not a terminal (cron, CI logs): print a progress line "
              "(stage, files and bytes planned, rows written when known, Spark tasks done) "
              f"every SECONDS, then the summary; 0 turns the lines off; with --json they go to "
              f"stderr. On a terminal a spinner shows the stage instead. Default: "
              f"${INTERVAL_ENV}, else {DEFAULT_INTERVAL_S:.0f}.")
@state_option
@json_option
@verbose_option
@handle_errors
def ingest_files(
    source: str,
    target: str | None,
    job_name: str,
    fmt: str,
    target_format: str,
    table_name: str | None,
    iceberg_catalog: str | None,
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
    remote: str | None,
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
    clean_source: str,
    archive_to: str | None,
    clean_source_retention: str | None,
    on_modified: str,
    on_bad_file: str,
    max_bad_files: str | None,
    max_record_bytes: str | None,
    spark_conf: tuple[str, ...],
    progress_interval: float | None,
    state_url: str | None,
    as_json: bool,
    verbose: bool,
) -> None:
    """Copy the files of SOURCE that no earlier run took into TARGET.

    SOURCE is a folder, file or prefix: a local path, file://, s3:// or s3a://. TARGET is a
    local path or s3:// URI (for --target-format iceberg give --table instead). Bookmarks are
    enabled by default: run it on a schedule and each run takes only new (or modified) files.
    `lakemark runs show RUN_ID` lists what a run took.

    Exit status: 0 committed; 3 committed, but some source files could not be read and were
    set aside (`lakemark quarantine list JOB`); 1 failed; 2 bad command line.
    """
    setup_logging(verbose)
    from ..ingest import IngestOptionError, IngestOptions, ingest_files as run_ingest

    target = _target_of(target, target_format, table_name, iceberg_catalog)
    options = IngestOptions(
        source=source, target=target, job_name=job_name, format=fmt,
        target_format=target_format, iceberg_catalog=iceberg_catalog,
        write_mode=write_mode, partition_by=partition_by,
        max_band_ms=max_band, max_files_in_band=max_files_in_band, bounded_files=bounded_files,
        bounded_size=bounded_size, bookmark=bookmark_option, from_run_id=from_run,
        to_run_id=to_run, recurse=recurse, exclusions=exclusions, mode=mode,
        reader_options=parse_key_values(reader_options, "--option"), master=master, remote=remote,
        force=force, txn_app_id=txn_app_id, txn_version=txn_version,
        incremental_listing=incremental_listing, full_listing_every=full_listing_every,
        merge_schema=merge_schema, merge_keys=merge_keys, delete_when=delete_when,
        order_by=order_by, schema_evolution=schema_evolution,
        rescued_data_column=None if no_rescued_data else rescued_data_column,
        schema_hints=schema_hints, clean_source=clean_source, archive_to=archive_to,
        clean_source_retention=clean_source_retention, on_bad_file=on_bad_file,
        max_bad_files=max_bad_files, max_record_bytes=max_record_bytes, verbose=verbose,
        on_modified=on_modified.lower(), spark_conf=_spark_conf(spark_conf),
    )
    try:  # everything that can be checked is checked before any work and any state change
        writer = options.check()
    except IngestOptionError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        interval = interval_from(progress_interval)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    store = open_state(state_url)

    if not console.is_terminal:  # a log (cron, CI): a plain line at a steady interval
        progress = ProgressLines(lambda line: click.echo(line, err=as_json), interval,
                                 tasks=spark_tasks)
        with progress.running():
            done = run_ingest(options, store, on_event=progress.on_event, writer=writer)
    else:
        with console.status("starting", spinner="dots") as status:

            def on_event(event: JobEvent) -> None:
                detail = dict(event.detail or {})
                if event.stage == "started":
                    status.update(f"run {detail['run_id']} — listing {source}")
                elif event.stage == "planned":
                    status.update(f"planned {detail['files']} file(s), "
                                  f"{human_bytes(detail['bytes'])} — reading and writing")
                elif event.stage == "listed":
                    status.update(f"listed {detail['files']} file(s) — planning")

            done = run_ingest(options, store, on_event=on_event, writer=writer)
    record, plan, tracked = done.record, done.plan, done.tracked_schema
    out = done.to_json()
    store.close()
    if as_json:
        print_json(out)
        _exit_if_quarantined(done)
        return
    table = Table(title=f"lakemark ingest files — job {job_name}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("run", f"{record.run_id} (run {record.run}, attempt {record.attempt})")
    table.add_row("status", record.status)
    table.add_row("files taken", _files_summary(done))
    if plan.pending:
        table.add_row("files waiting", f"{plan.pending} (bounded run: next runs take them)")
    for label, text in file_notes(out):
        table.add_row(label, text)
    table.add_row("rows written", str(out["rows"]) + (
        " (skipped: the table already recorded this write's token)" if out["skipped"] else ""))
    if out["corrupt_records"]:
        table.add_row("corrupt records", f"{out['corrupt_records']} (not written; kept in "
                      f"{out['rejected_file']})")
    if tracked is not None:
        table.add_row("schema", _schema_summary(tracked))
    if "clean_up" in out:
        table.add_row("clean-up", _clean_summary(out["clean_up"]))
    table.add_row("target", f"{target} ({target_format})")
    table.add_row("bookmark", f"{bookmark_option}, version {out['bookmark_version']}")
    if done.quarantined:
        table.add_row("set aside", _quarantine_summary(done))
    print_table(table)
    if not plan.files:
        console.print("No new files: nothing to write.")
    _exit_if_quarantined(done)


def _spark_conf(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--conf`` pairs as settings; a UsageError names a pair without ``=`` or a key."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():  # the value is not echoed: it may be a secret
            raise click.UsageError(
                f"--conf {pair if not sep else '=…'!r} is not a setting: give the key, '=' "
                "and the value, e.g. --conf spark.ui.enabled=true")
        out[key.strip()] = value
    return out


def _files_summary(done: Any) -> str:
    """"N (size), M set aside": the planned files the run read and wrote, apart from the ones
    it set aside (or left out, set aside earlier), which it did not take."""
    taken, aside = done.taken_files, len(done.quarantined)
    text = f"{len(taken)} ({human_bytes(sum(f.size for f in taken))})"
    return text + (f", {aside} set aside" if aside else "")


def _quarantine_summary(done: Any) -> str:
    """A line per set-aside file: its path and reason (control characters escaped)."""
    lines = [f"{shown(q.entry.path)}: {shown(q.reason)}"
             + (" (set aside earlier)" if q.earlier else "")
             for q in done.quarantined[:10]]
    if len(done.quarantined) > 10:
        lines.append(f"… and {len(done.quarantined) - 10} more (lakemark quarantine list)")
    return "\n".join(lines)


def _exit_if_quarantined(done: Any) -> None:
    """Exit status 3 (committed, files set aside), with a last line saying so on stderr."""
    new = done.newly_quarantined
    if new:
        click.echo(f"warning: committed, but {len(new)} source file(s) could not be read and "
                   f"were set aside; see `lakemark quarantine list {done.options.job_name}`",
                   err=True)
        raise SystemExit(QUARANTINE_EXIT)


def _target_of(target: str | None, target_format: str, table_name: str | None,
               iceberg_catalog: str | None) -> str:
    """The target to write: TARGET, or for an Iceberg target the --table name (UsageError for
    a combination that does not fit, before any state changes)."""
    if target_format == "iceberg":
        if table_name is None:
            raise click.UsageError("--target-format iceberg needs --table DB.TABLE (the "
                                   "Iceberg table to write)")
        if target is not None:
            raise click.UsageError(f"give TARGET or --table, not both (TARGET {target!r} with "
                                   f"--table {table_name!r})")
        return table_name
    if table_name is not None or iceberg_catalog is not None:
        given = "--table" if table_name is not None else "--iceberg-catalog"
        raise click.UsageError(f"{given} applies to --target-format iceberg only, not "
                               f"--target-format {target_format}")
    if target is None:
        raise click.UsageError("Missing argument 'TARGET' (or --target-format iceberg with "
                               "--table)")
    return target


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




def _clean_summary(report: Mapping[str, Any]) -> str:
    """One line of counts, and a line per entry of an earlier run finished now."""
    counts = {k: v for k, v in report["counts"].items() if v}
    line = ", ".join(f"{k} {v}" for k, v in counts.items()) or "nothing to clean"
    for entry in report["entries"]:
        if entry["earlier_run"]:
            line += f"\nfinished the pending clean-up of {entry['run_id']}"
    if report["pending"]:
        line += f"\n{report['pending']} clean-up(s) still pending (retried by the next run)"
    return line
