"""Ingest files without code: copy only the new files of a source into a target, run after run.

What ``lakemark ingest files`` runs, as a library call: :class:`IngestOptions` holds the whole
configuration (checked as a whole by :meth:`IngestOptions.check` before any work and any state
change); :func:`ingest_files` runs one job run — plan the source's new files, and only when
there are some (or the write overwrites) start Spark, read and write them — and returns an
:class:`IngestResult` (what the run took and wrote, its record and bookmark). The command only
parses its flags into the options, calls this and prints the result.

A combination of options that cannot work raises :class:`IngestOptionError` (a ConfigError),
whose message names the options as the command line spells them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .run.exact_read import forget_sink
from .run.quarantine import BadFilePolicy, QuarantinedFile
from .errors import ChangedDuringRun, ConfigError
from .job import Job, JobEvent
from .planning import DEFAULT_MAX_BAND_MS, FileOptions
from .planning.files import FileEntry
from .planning.schema import EVOLUTION_OFF

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .planning import FilePlan
    from .sinks import WriteResult
    from .state import Bookmark, RunRecord, StateStore

__all__ = ["IngestOptionError", "IngestOptions", "IngestResult", "ingest_files"]

#: The manifest keys of the run's source and sink.
SOURCE_CTX = "source"
TARGET_CTX = "target"


class IngestOptionError(ConfigError):
    """Options that cannot go together (named as the command line spells them)."""


@dataclass(frozen=True)
class IngestOptions:
    """One ingestion job: the source, the target and how each run takes and writes files.

    The fields are those of ``lakemark ingest files`` (its ``--help`` says what each does);
    ``rescued_data_column`` None means no rescued-data column.
    """

    source: str
    target: str  # a path or URI; for target_format "iceberg" the table name
    job_name: str
    format: str = "json"
    target_format: str = "delta"
    iceberg_catalog: str | None = None
    write_mode: str = "append"
    partition_by: tuple[str, ...] = ()
    max_band_ms: int = DEFAULT_MAX_BAND_MS
    max_files_in_band: int | None = None
    bounded_files: int | None = None
    bounded_size: int | None = None
    bookmark: str = "enable"
    from_run_id: str | None = None
    to_run_id: str | None = None
    recurse: bool = True
    exclusions: tuple[str, ...] = ()
    mode: str = "PERMISSIVE"
    reader_options: Mapping[str, str] = field(default_factory=dict)
    master: str | None = None
    #: A Spark Connect server (``sc://…``) to run on instead of a local Spark (``--remote``;
    #: else SPARK_REMOTE). docs/connect.md.
    remote: str | None = None
    force: bool = False
    txn_app_id: str | None = None
    txn_version: int | None = None
    incremental_listing: bool = False
    full_listing_every: int = 24
    merge_schema: bool = False
    merge_keys: tuple[str, ...] = ()
    delete_when: str | None = None
    order_by: tuple[str, ...] = ()
    schema_evolution: str | None = None
    rescued_data_column: str | None = "_rescued_data"
    schema_hints: str | None = None
    clean_source: str = "off"
    archive_to: str | None = None
    clean_source_retention: str | None = None
    on_bad_file: str = "quarantine"
    max_bad_files: str | None = None
    max_record_bytes: str | None = None
    verbose: bool = False
    on_modified: str = "retake"
    #: Spark settings for the session the run starts (``--conf``), over lakemark's defaults
    #: and LAKEMARK_SPARK_CONF; a session already active is used as it is.
    spark_conf: Mapping[str, str] = field(default_factory=dict)

    def check_spark_conf(self) -> None:
        """IngestOptionError naming a ``--conf`` key that is not a Spark setting, or one that
        another option sets (``spark.master``: ``--master``)."""
        for key in self.spark_conf:
            if key in ("spark.master", "spark.app.name"):
                raise IngestOptionError(
                    f"--conf {key} is set by lakemark" + (" (use --master)"
                                                          if key == "spark.master" else ""))
            if not key.startswith("spark.") or key == "spark." or any(c.isspace() for c in key):
                raise IngestOptionError(f"--conf {key!r} is not a Spark setting "
                                        "(a key starting with 'spark.', e.g. spark.ui.enabled)")

    def check_remote(self) -> None:
        """IngestOptionError for ``--remote`` that is not an ``sc://`` URL, or given with
        ``--master`` (the server's master is set where it starts); EnvironmentProblem for a
        server that does not answer, before the run starts (so it changes no state)."""
        from .spark import remote_endpoint

        try:
            remote_endpoint(self.remote, self.master)
        except ConfigError as exc:
            raise IngestOptionError(str(exc)) from None

    def bad_file_policy(self) -> BadFilePolicy:
        """What the run does with input files it cannot read (``--on-bad-file``,
        ``--max-bad-files``, ``--max-record-bytes``; IngestOptionError for a bad value)."""
        try:
            return BadFilePolicy.parse(self.on_bad_file, self.max_bad_files,
                                       self.max_record_bytes)
        except ConfigError as exc:
            raise IngestOptionError(str(exc)) from None

    def evolution_mode(self) -> str | None:
        """The schema evolution mode the source is read with (None: not tracked):
        ``--schema-evolution`` as given, or by default ``addNewColumns`` for a json, csv, xml
        or avro source in PERMISSIVE mode (an upsert, ``--merge-key``, reads untracked; a mode
        given with it is refused by :meth:`check`)."""
        from .planning.schema import effective_evolution_mode

        if self.schema_evolution is None and self.merge_keys:
            return None
        return effective_evolution_mode(self.schema_evolution, format=self.format,
                                        ctx=SOURCE_CTX, schema_given=False,
                                        read_mode=self.mode)

    def file_options(self) -> FileOptions:
        """The planner's options (ConfigError for a bad band, bound or --on-modified)."""
        from .planning import check_modified_policy

        try:
            modified = check_modified_policy(self.on_modified, format=self.format,
                                             option="--on-modified")
        except ConfigError as exc:
            raise IngestOptionError(str(exc)) from None
        return FileOptions(max_band_ms=self.max_band_ms, max_files_in_band=self.max_files_in_band,
                           bounded_files=self.bounded_files, bounded_size=self.bounded_size,
                           modified=modified)

    def writer_options(self) -> dict[str, str]:
        """The sink options the flags amount to (token, mergeSchema); IngestOptionError for
        flags that do not go together."""
        writer: dict[str, str] = {}
        if (self.txn_app_id is None) != (self.txn_version is None):
            missing = "--txn-version" if self.txn_version is None else "--txn-app-id"
            raise IngestOptionError(f"--txn-app-id and --txn-version go together: give both or "
                                    f"neither ({missing} is missing)")
        if self.txn_app_id is not None:
            if not self.txn_app_id.strip():
                raise IngestOptionError("--txn-app-id must not be empty")
            if self.target_format not in ("delta", "iceberg"):
                raise IngestOptionError(f"--txn-app-id/--txn-version apply to Delta and Iceberg "
                                        f"targets only, not --target-format "
                                        f"{self.target_format}")
            writer = {"txnAppId": self.txn_app_id, "txnVersion": str(self.txn_version)}
        if self.merge_schema:
            if self.target_format not in ("delta", "iceberg"):
                raise IngestOptionError(f"--merge-schema applies to Delta and Iceberg targets "
                                        f"only, not --target-format {self.target_format}")
            writer["mergeSchema"] = "true"
        if self.evolution_mode() is not None and self.target_format in ("delta", "iceberg"):
            writer["mergeSchema"] = "true"  # the tracked schema decides the columns written
        return writer

    def check(self) -> dict[str, str]:
        """Check everything that can be checked before any work and any state change (the
        options together, the source, the reader and the writer); the writer options."""
        self.file_options()
        self.bad_file_policy()
        self.check_spark_conf()
        self.check_remote()
        writer = self.writer_options()
        if self.schema_evolution is not None and self.evolution_mode() is not None:
            from .sources._schema_track import TRACKED_FORMATS

            if self.format not in TRACKED_FORMATS:
                raise IngestOptionError(f"--schema-evolution applies to "
                                        f"{', '.join(TRACKED_FORMATS)} sources, not --format "
                                        f"{self.format}")
        if self.evolution_mode() is not None:
            from .sources._schema_track import tracking_of

            tracking_of(self.evolution_mode(), self.rescued_data_column, self.schema_hints)
        elif self.rescued_data_column is None or self.schema_hints is not None:
            reason = ("--schema-evolution off" if self.schema_evolution is not None
                      else "--merge-key" if self.merge_keys
                      else f"--mode {self.mode}" if self.mode.upper() != "PERMISSIVE"
                      else f"--format {self.format}")
            raise IngestOptionError(
                f"--no-rescued-data and --schema-hints apply to a tracked schema (json, csv, "
                f"xml and avro sources); this source is not tracked ({reason})")
        self._check_merge()
        from .sinks import check_write
        from .sources import check_read_options
        from .storage import check_source

        location = check_source(self.source)  # a missing local source fails here
        if self.incremental_listing and not location.is_s3:
            raise IngestOptionError("--incremental-listing applies to S3 sources (s3://, "
                                    f"s3a://); {self.source} is local")
        self._check_clean()
        check_read_options(self.format, self.mode.upper(), self.reader_options, location.root)
        check_write(self.target, format=self.target_format, mode=self.write_mode,
                    partition_by=self.partition_by, options=writer,
                    iceberg_catalog=self.iceberg_catalog)
        return writer

    def _check_clean(self) -> None:
        from .run.cleanup import clean_spec

        try:
            clean_spec(self.clean_source, self.archive_to, [self.source], ctx=SOURCE_CTX,
                       bookmark_option=self.bookmark, retention=self.clean_source_retention,
                       mode_option="--clean-source", archive_option="--archive-to",
                       retention_option="--clean-source-retention")
        except IngestOptionError:
            raise
        except ConfigError as exc:
            raise IngestOptionError(str(exc)) from None

    def _check_merge(self) -> None:
        if not self.merge_keys:
            if self.delete_when is not None or self.order_by:
                raise IngestOptionError("--delete-when and --order-by go with --merge-key")
            return
        if self.target_format not in ("delta", "iceberg"):
            raise IngestOptionError(f"--merge-key applies to Delta and Iceberg targets only, "
                                    f"not --target-format {self.target_format}")
        conflicts = [name for name, given in (
            ("--write-mode overwrite", self.write_mode != "append"),
            ("--partition-by", bool(self.partition_by)),
            ("--schema-evolution", self.evolution_mode() is not None)) if given]
        if conflicts:
            raise IngestOptionError(
                f"--merge-key cannot be combined with {', '.join(conflicts)}")


@dataclass(frozen=True)
class IngestResult:
    """What one ingestion run did: its record and the bookmark after it, the plan (files
    taken and waiting), the write (None: nothing to write) and the run's manifest entries."""

    options: IngestOptions
    record: RunRecord
    bookmark: Bookmark
    plan: FilePlan
    write: WriteResult | None
    inputs: Mapping[str, Mapping[str, Any]]
    cleanups: list[dict[str, Any]] = field(default_factory=list)
    #: Source files set aside because they cannot be read (``earlier``: by an earlier run or
    #: attempt; this run only left them out).
    quarantined: list[QuarantinedFile] = field(default_factory=list)

    @property
    def newly_quarantined(self) -> list[QuarantinedFile]:
        """The files this run set aside itself (what exit status 3 reports)."""
        return [q for q in self.quarantined if not q.earlier]

    @property
    def taken_files(self) -> list[FileEntry]:
        """The planned files the run took: without those it set aside or left out as set
        aside earlier (the summary counts them apart: "N taken, M set aside")."""
        aside = {q.entry.path for q in self.quarantined}
        return [f for f in self.plan.files if f.path not in aside]

    @property
    def sink(self) -> Mapping[str, Any]:
        return self.inputs.get(f"sink:{TARGET_CTX}", {})

    @property
    def tracked_schema(self) -> Mapping[str, Any] | None:
        """The tracked-schema read of the source (with ``--schema-evolution``), else None."""
        return self.inputs.get(f"schema:{SOURCE_CTX}")

    def to_json(self) -> dict[str, Any]:
        """The run as ``lakemark ingest files --json`` prints it."""
        opts, record, plan, write = self.options, self.record, self.plan, self.write
        out: dict[str, Any] = {
            "run_id": record.run_id,
            "job_name": opts.job_name,
            "run": record.run,
            "attempt": record.attempt,
            "status": record.status,
            "bookmark_option": opts.bookmark,
            "files": len(plan.files),
            "bytes": plan.total_bytes,
            "pending_files": plan.pending,
            "files_taken": len(self.taken_files),
            "files_set_aside": len(self.quarantined),
            "rows": write.rows if write else 0,
            "skipped": bool(write and write.skipped),
            "target": opts.target,
            "target_format": opts.target_format,
            "bookmark_version": self.bookmark.version,
            "corrupt_records": int(self.sink.get("corrupt_records") or 0),
            "rejected_file": self.sink.get("rejected_file"),
            **files_report(self.inputs.get(SOURCE_CTX, {})),
            "quarantined_files": len(self.newly_quarantined),
            "quarantined": [q.to_json() for q in self.quarantined],
        }
        tracked = self.tracked_schema
        if tracked is not None:
            out["schema"] = {k: v for k, v in tracked.items() if k not in ("kind", "ctx")}
        if self.cleanups or opts.clean_source != "off":
            out["clean_up"] = clean_report(self.cleanups, record.run_id)
        return out


def files_report(source: Mapping[str, Any]) -> dict[str, Any]:
    """What ``--json`` says about files taken before, skipped as modified and left out as
    changed during the run (from the source's manifest entry)."""
    return {"taken_before": list(source.get("taken_before") or []),
            "skipped_modified": list(source.get("skipped_modified") or []),
            "changed_during_run": list(source.get("changed_during_run") or [])}


def _hints(opts: IngestOptions, store: StateStore) -> str | None:
    """The run's schema hints: ``--schema-hints``, and on a tracked source's first run (no
    schema kept yet) into an existing Delta table, the table's column types for the columns
    the hints do not name, so the tracked schema starts from the table's types
    (``sinks/_table_hints.py``)."""
    if (opts.evolution_mode() is None or opts.target_format != "delta"
            or store.get_source_schema(opts.job_name, SOURCE_CTX) is not None):
        return opts.schema_hints
    from .sinks._table_hints import target_hints

    return target_hints(opts.target, source_format=opts.format,
                        skip=[opts.rescued_data_column or "", "_corrupt_record"],
                        hints=opts.schema_hints)


def clean_report(entries: list[dict[str, Any]], run_id: str) -> dict[str, Any]:
    """The ``clean_up`` of ``--json``: the counts over every entry this run carried out (its
    own and earlier runs' pending ones), then each entry."""
    from .run.cleanup import summary

    return {"counts": summary(entries),
            "pending": sum(1 for e in entries if e.get("status") != "done"),
            "entries": [{k: e.get(k) for k in ("run_id", "ctx", "mode", "archive_to", "status",
                                               "counts", "attempts", "error")}
                        | {"earlier_run": e.get("run_id") != run_id} for e in entries]}


def ingest_files(options: IngestOptions, store: StateStore, *,
                 on_event: Callable[[JobEvent], None] | None = None,
                 writer: Mapping[str, str] | None = None,
                 ) -> IngestResult:
    """Run one ingestion run of ``options`` with state in ``store`` (left open).

    ``writer``: the sink options :meth:`IngestOptions.check` returned (checked here when not
    given). A run with nothing to write records and commits without starting Spark at all.
    ``on_event`` follows the run (started, listed, planned, …) for progress displays.
    """
    opts = options
    sink_options = dict(writer) if writer is not None else opts.check()
    job = Job(opts.job_name, state=store, bookmark=opts.bookmark,
              from_run_id=opts.from_run_id, to_run_id=opts.to_run_id, force=opts.force,
              on_event=on_event, bad_files=opts.bad_file_policy())
    with job:
        plan = job.plan_files(
            opts.source,
            ctx=SOURCE_CTX,
            format=opts.format,
            recurse=opts.recurse,
            exclusions=list(opts.exclusions),
            max_band_ms=opts.max_band_ms,
            max_files_in_band=opts.max_files_in_band,
            bounded_files=opts.bounded_files,
            bounded_size=opts.bounded_size,
            incremental_listing=opts.incremental_listing,
            full_listing_every=opts.full_listing_every,
            clean_source=opts.clean_source,
            archive_to=opts.archive_to,
            clean_source_retention=opts.clean_source_retention,
            on_modified=opts.on_modified,
        )
        result = None
        while plan.files or opts.write_mode == "overwrite":
            from .spark import get_spark

            # the session the job picks up
            get_spark(opts.master, dict(opts.spark_conf), verbose=opts.verbose,
                      remote=opts.remote)
            from .run.quarantine_ingest import write_setting_aside

            def read() -> DataFrame:
                return job.read_planned(
                    SOURCE_CTX, format=opts.format, options=dict(opts.reader_options),
                    mode=opts.mode.upper(),
                    schema_evolution=opts.evolution_mode() or EVOLUTION_OFF,
                    rescued_data_column=opts.rescued_data_column,
                    schema_hints=_hints(opts, store))

            def write(df: DataFrame) -> WriteResult:
                return job.write(
                    df, opts.target, format=opts.target_format, mode=opts.write_mode,
                    partition_by=opts.partition_by, ctx=TARGET_CTX, options=sink_options,
                    merge_keys=list(opts.merge_keys) or None, delete_when=opts.delete_when,
                    order_by=list(opts.order_by) or None, iceberg_catalog=opts.iceberg_catalog,
                )

            try:
                # A file that breaks the read while writing is set aside and the run's read
                # and write are done again without it (run/quarantine_ingest.py).
                result = write_setting_aside(*job._parts(), SOURCE_CTX, f"sink:{TARGET_CTX}",
                                             read, write)
                break
            except ChangedDuringRun:
                # Files changed while read: out of the run (run/exact_read), read again without
                # them before anything commits; each round leaves at least one file out.
                forget_sink(job._parts()[1], f"sink:{TARGET_CTX}", SOURCE_CTX)
                plan = job.plans[SOURCE_CTX]
        plan = job.plans.get(SOURCE_CTX, plan)
    record = store.get_run(job.run.run_id)
    inputs = {i.ctx: i.plan for i in store.run_inputs(record.run_id)}
    return IngestResult(opts, record, store.get_bookmark(opts.job_name), plan, result, inputs,
                        list(job.cleanups), list(job.set_aside.get(SOURCE_CTX, [])))

