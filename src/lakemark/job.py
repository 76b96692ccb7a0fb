"""The run lifecycle of a job: start → plan → (record plan) → read → write → commit or fail.

A :class:`Job` is the Python API for plain PySpark scripts::

    from lakemark import Job

    with Job("orders", state="sqlite:///state.db") as job:
        df = job.read_files("s3://bucket/orders/", format="json", ctx="orders")
        job.write(df, "/lake/orders", format="delta", ctx="orders_table")

On entering, the job takes its lease and records a RUNNING attempt; each read plans its input
from the bookmark and records the plan and the file list *before* any data is read; leaving the
block normally commits every state element and the run's end in one transaction, and leaving it
with an exception records a failed attempt (the files stay unprocessed).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._heartbeat import Heartbeat, default_interval, held_runs
from .errors import CommitConflict, ConfigError, LakemarkError, LeaseLost, SourceError, StateError
from .planning import (
    DEFAULT_FULL_LISTING_EVERY,
    DEFAULT_MAX_BAND_MS,
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    ListingOptions,
    plan_everything,
    plan_files,
    resume_after,
)
from ._fault import fault_point
from .state.manifest import SinkManifest, SinkToken, SourceManifest
from .state import (BOOKMARK_OPTIONS, Bookmark, RunInputs, RunRecord, StateStore, open_store,
                    resolve_state_url)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .sinks import IdempotencyToken, WriteResult
    from .sources._schema_track import SchemaTracking

__all__ = ["Job", "JobEvent", "DEFAULT_LEASE_TIMEOUT_S", "add_job_observer"]

log = logging.getLogger("lakemark")

#: How long a run may go without a heartbeat before another host may take its lease over.
DEFAULT_LEASE_TIMEOUT_S = 3600.0

UNTRACKED = "<untracked>"

#: Commit-info key of a Delta commit made by a job: the run id (attempt) that made it.
RUN_ID_KEY = "lakemark.runId"
#: Commit-info key: the lease generation of the attempt that made the commit (audit).
GENERATION_KEY = "lakemark.leaseGeneration"


@dataclass(frozen=True)
class JobEvent:
    """A step of a run, for progress displays: ``stage`` and what it is about."""

    stage: str  # started | listed | planned | written | committed | failed
    ctx: str | None = None
    detail: Mapping[str, Any] | None = None


#: Called with each new Job; each may return an observer of its events (or None).
_OBSERVER_FACTORIES: list[Callable[[Job], Callable[[JobEvent], None] | None]] = []


def add_job_observer(factory: Callable[[Job], Callable[[JobEvent], None] | None]) -> None:
    """Give every Job made from now on the observer ``factory(job)`` returns (if not None).

    How layers above the run lifecycle follow runs without the lifecycle importing them:
    runtime lineage (``lakemark.lineage.runtime``) is registered by the package this way.
    """
    if factory not in _OBSERVER_FACTORIES:
        _OBSERVER_FACTORIES.append(factory)


class Job:
    """One run of a named job under a bookmark option (``enable``, ``disable`` or ``pause``).

    ``state`` is a state URL or an open store (default: ``LAKEMARK_STATE``, then
    ``sqlite:///~/.lakemark/state.db``). ``from_run_id``/``to_run_id`` go with ``pause`` only,
    both or neither (Glue's ``job-bookmark-from``/``-to``): the run then processes exactly the
    input that the successful runs after ``from`` up to and including ``to`` processed.

    While the run holds the job's lease a daemon thread renews it every
    ``heartbeat_interval_s`` (default a tenth of ``lease_timeout_s``, at most 60 s; 0: none);
    a run whose lease was taken over is refused every state change (LeaseLost), and a commit
    that fails ends the run as a failed attempt and releases the lease (docs/bookmarks.md).
    """

    def __init__(
        self,
        name: str,
        *,
        state: str | StateStore | None = None,
        bookmark: str = "enable",
        from_run_id: str | None = None,
        to_run_id: str | None = None,
        spark: SparkSession | None = None,
        lease_timeout_s: float = DEFAULT_LEASE_TIMEOUT_S,
        force: bool = False,
        on_event: Callable[[JobEvent], None] | None = None,
        heartbeat_interval_s: float | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("job name must be a non-empty string")
        bookmark = _bookmark_option(bookmark)
        if (from_run_id is None) != (to_run_id is None):
            raise ConfigError(
                "job-bookmark-from and job-bookmark-to go together: give both run ids or neither"
            )
        if from_run_id is not None and bookmark != "pause":
            raise ConfigError(
                "job-bookmark-from/-to apply only with the bookmark option 'pause' "
                f"(got {bookmark!r})"
            )
        if lease_timeout_s < 0:
            raise ConfigError(f"lease timeout must not be negative, got {lease_timeout_s}")
        if heartbeat_interval_s is not None and heartbeat_interval_s < 0:
            raise ConfigError(
                f"heartbeat interval must not be negative, got {heartbeat_interval_s}")
        self.name = name
        self.bookmark_option = bookmark
        self.from_run_id = from_run_id
        self.to_run_id = to_run_id
        self._own_store = not isinstance(state, StateStore)
        self._store_arg = state
        self._store: StateStore | None = state if isinstance(state, StateStore) else None
        self._spark = spark
        self._lease_timeout_s = lease_timeout_s
        self._force = force
        self._heartbeat_interval_s = (default_interval(lease_timeout_s)
                                      if heartbeat_interval_s is None else heartbeat_interval_s)
        self._heartbeat: Heartbeat | None = None
        self.on_event = on_event
        self._record: RunRecord | None = None
        self._bookmark: Bookmark | None = None
        self._pending: dict[str, dict[str, Any]] = {}
        self._pending_schemas: dict[str, Any] = {}  # ctx -> PendingSchema (_tracked_read)
        self._schema_counts: dict[str, Any] = {}  # ctx -> (Observation, record) (_tracked_read)
        self._ctxs_read: set[str] = set()
        self._untracked = 0
        self._read_started = False
        self._warned_untracked = False
        self._sinks: set[str] = set()
        self._pinned: dict[str, tuple[str, Any]] | None = None  # ctx -> (attempt id, inputs)
        self._pin_info: dict[str, Any] = {}
        self.results: list[WriteResult] = []
        self.plans: dict[str, FilePlan] = {}
        self._roots: dict[str, list[str]] = {}
        self._empty_reads: dict[int, DataFrame] = {}  # id → frame of a source that took no file
        # Observers of every job (runtime lineage subscribes here; see add_job_observer).
        self._observers = [observer for factory in _OBSERVER_FACTORIES
                           if (observer := factory(self)) is not None]

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def store(self) -> StateStore:
        if self._store is None:
            url = resolve_state_url(self._store_arg if isinstance(self._store_arg, str) else None)
            self._store = open_store(url)
        return self._store

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from .spark import get_spark

            self._spark = get_spark()
        return self._spark

    @property
    def run_id(self) -> str:
        return self._started().run_id

    @property
    def run(self) -> RunRecord:
        return self._started()

    @property
    def tracking(self) -> bool:
        """Whether this run changes the bookmark when it ends."""
        return self.bookmark_option == "enable"

    def start(self, *, label: str | None = None) -> RunRecord:
        """Take the lease and record a RUNNING attempt (done by ``with Job(...)``)."""
        if self._record is not None:
            raise StateError(f"job {self.name!r} was already started as {self._record.run_id}")
        if self.from_run_id is not None and self.to_run_id is not None:
            # Fail on unknown run ids before taking the lease (nothing recorded).
            self.store.runs_between(self.name, self.from_run_id, self.to_run_id)
        self._bookmark = self.store.get_bookmark(self.name)
        self._record = self.store.begin_run(
            self.name,
            label or self.bookmark_option,
            host=socket.gethostname(),
            pid=os.getpid(),
            lease_timeout_s=self._lease_timeout_s,
            force=self._force,
            held=held_runs(),
        )
        self._start_heartbeat(self._record.run_id)
        self._bookmark = self.store.get_bookmark(self.name)
        self._emit("started", None, {"run_id": self._record.run_id, "run": self._record.run,
                                     "attempt": self._record.attempt})
        return self._record

    def __enter__(self) -> Job:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._record is None or self._record.status != "RUNNING":
            return
        if exc is None:
            self.commit()
        elif isinstance(exc, (ConfigError, SourceError)) and not self._read_started:
            # Bad input found while planning: nothing was read, so the bookmark stays as it was.
            self.fail(exc, update_bookmark=False)
        else:
            self.fail(exc)

    def commit(self) -> Bookmark:
        """End the run successfully: every state element and the run's end in one transaction."""
        record = self._started()
        fault_point("before-job-commit")
        try:
            if self._schema_counts:
                from ._tracked_read import record_observed_counts

                record_observed_counts(self)
            self._stop_heartbeat(check=True)
            bookmark = self.store.commit_run(
                record.run_id, self._pending, update_bookmark=self._updates_bookmark(record),
                schemas=self._pending_schemas,
            )
        except BaseException as exc:
            self._fail_after_commit_error(record, exc)
            raise
        self._record = self.store.get_run(record.run_id)
        self._emit("committed", None, {"version": bookmark.version, "run": bookmark.run})
        self._close()
        return bookmark

    def end_without_commit(self) -> Bookmark:
        """End the run as succeeded but leave the bookmark as it was (no state is committed).

        What Glue does for a script that never calls ``job.commit()``.
        """
        record = self._started()
        try:
            self._stop_heartbeat(check=True)
            bookmark = self.store.commit_run(record.run_id, {}, update_bookmark=False)
        except BaseException as exc:
            self._fail_after_commit_error(record, exc)
            raise
        self._record = self.store.get_run(record.run_id)
        self._emit("ended", None, {"version": bookmark.version})
        self._close()
        return bookmark

    def fail(self, error: BaseException | str, *, update_bookmark: bool | None = None) -> Bookmark:
        """End the run as a failed attempt; its input stays unprocessed.

        The bookmark records the failure (version and attempt go up) when the run tracks it,
        unless ``update_bookmark`` is False (bad input found before anything was read).
        """
        record = self._started()
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        if update_bookmark is None:
            update_bookmark = self._updates_bookmark(record)
        from .redaction import redact

        self._stop_heartbeat(check=False)
        try:
            # Redacted before it is cut: a cut between a password and its "@" would hide it.
            bookmark = self.store.fail_run(record.run_id, redact(message)[:4000],
                                           update_bookmark=update_bookmark)
        except LeaseLost as exc:  # fenced off: the run that took over records the outcome
            log.info("run %s: %s", record.run_id, exc)
            bookmark = self.store.get_bookmark(self.name)
        self._record = self.store.get_run(record.run_id)
        self._emit("failed", None, {"error": message})
        self._close()
        return bookmark

    # -- reading --------------------------------------------------------------------------
    def plan_files(
        self,
        path: str | Sequence[str],
        *,
        ctx: str | None = None,
        recurse: bool = True,
        exclusions: Sequence[str] | str = (),
        max_band_ms: int = DEFAULT_MAX_BAND_MS,
        max_files_in_band: int | None = None,
        bounded_files: int | None = None,
        bounded_size: int | None = None,
        format: str | None = None,
        incremental_listing: bool = False,
        full_listing_every: int = DEFAULT_FULL_LISTING_EVERY,
    ) -> FilePlan:
        """Plan (and record) which files of ``path`` this run takes, without reading them."""
        return self._plan(
            path,
            ctx=ctx,
            recurse=recurse,
            exclusions=exclusions,
            options=FileOptions(
                max_band_ms=max_band_ms,
                max_files_in_band=max_files_in_band,
                bounded_files=bounded_files,
                bounded_size=bounded_size,
            ),
            format=format,
            listing=ListingOptions(incremental_listing, full_listing_every),
        )[1]

    def _plan(
        self,
        path: str | Sequence[str],
        *,
        ctx: str | None,
        recurse: bool,
        exclusions: Sequence[str] | str,
        options: FileOptions,
        format: str | None,
        listing: ListingOptions = ListingOptions(),  # noqa: B008 - a frozen value object
    ) -> tuple[list[str], FilePlan]:
        """List, plan and record one source (one or more paths); returns its roots and the plan."""
        record = self._started()
        paths = [path] if isinstance(path, str) else list(path)
        if not paths:
            raise ConfigError("a file source needs at least one path")
        from .storage import list_files, list_files_after, parse_uri

        if listing.incremental:
            local = [p for p in paths if not parse_uri(p).is_s3]
            if local:
                raise ConfigError(
                    f"incremental listing (S3 StartAfter) applies to S3 sources; {local[0]} is "
                    "local (a local folder is listed in full, which is already cheap)"
                )
        key = self._claim_ctx(ctx)
        element = self._bookmark.state.get(ctx) if ctx and self._bookmark is not None else None
        pinned = self._pinned_inputs().get(ctx) if ctx is not None and self.tracking else None
        # Replays (pinned or from/to) check their recorded files against a full listing.
        resumable = (listing.incremental and ctx is not None and self.tracking
                     and self.from_run_id is None and pinned is None)
        listings = []
        starts: dict[str, str | None] = {}
        for p in paths:
            root = parse_uri(p).root
            starts[root] = listing.start_after(element, root) if resumable else None
            after = starts[root]
            listings.append(
                list_files_after(p, after, recurse=recurse, exclusions=exclusions) if after
                else list_files(p, recurse=recurse, exclusions=exclusions))
        roots = [listing.root for listing in listings]
        source = roots[0] if len(roots) == 1 else ",".join(roots)
        # In listing order: the planners sort only what they take.
        if len(listings) == 1:
            files = listings[0].entries
        else:
            files = list({f.path: f for listing in listings for f in listing.entries}.values())
        listed_at = min(listing.started_ms for listing in listings)
        self._emit("listed", key, {"files": len(files), "root": source})
        previous = self._previous_state(ctx, source)
        if ctx is None or self.bookmark_option == "disable":
            if ctx is None and self.bookmark_option != "disable":
                self._warn_untracked(source)
            plan = plan_everything(files)
        elif self.from_run_id is not None and self.to_run_id is not None:
            plan = self._replay_plan(ctx, files)
        else:
            if pinned is not None and pinned[1].manifest.kind == "files":
                plan = self._pinned_plan(ctx, pinned, files)
            else:
                plan = plan_files(previous, files, listed_at, options)
        recorded = SourceManifest(
            kind="files",
            source=source,
            format=format,
            bookmark_option=self.bookmark_option,
            options={
                "recurse": recurse,
                "exclusions": list(exclusions) if not isinstance(exclusions, str) else exclusions,
                "maxBand": options.max_band_ms,
                "maxFilesInBand": options.max_files_in_band,
                "boundedFiles": options.bounded_files,
                "boundedSize": options.bounded_size,
            },
            listed_at_ms=listed_at,
            listed_files=len(files),
            listing={
                "mode": "start-after" if any(starts.values()) else "full",
                "start_after": {r: k for r, k in starts.items() if k},
                "incremental": listing.incremental,
                "requests": sum(lst.requests for lst in listings),
            },
            planned_files=len(plan.files),
            planned_bytes=plan.total_bytes,
            pending_files=plan.pending,
            previous_state=previous.to_json() if previous else None,
            next_state=plan.next_state.to_json(),
        )
        if ctx is not None and self.tracking and self.from_run_id is None:
            recorded = recorded.with_replay(self._replay_case(ctx))
        fault_point("after-plan")
        self.store.record_plan(record.run_id, key, recorded.to_json(), plan.files)
        fault_point("after-plan-recorded")
        if ctx is not None and self.tracking:
            self._pending[ctx] = {**plan.next_state.to_json(), "source": source}
            if listing.incremental:
                self._pending[ctx]["listing"] = listing.next_element(element, {
                    lst.root: resume_after(previous, lst.entries, plan, listed_at, options,
                                           starts.get(lst.root))
                    for lst in listings}, full=not any(starts.values()))
        self.plans[key] = plan
        self._roots[key] = roots
        self._emit("planned", key, {"files": len(plan.files), "bytes": plan.total_bytes,
                                    "pending": plan.pending})
        return roots, plan

    def read_files(
        self,
        path: str | Sequence[str],
        *,
        format: str,
        ctx: str | None = None,
        options: Mapping[str, str] | None = None,
        schema: Any = None,
        mode: str = "PERMISSIVE",
        recurse: bool = True,
        exclusions: Sequence[str] | str = (),
        max_band_ms: int = DEFAULT_MAX_BAND_MS,
        max_files_in_band: int | None = None,
        bounded_files: int | None = None,
        bounded_size: int | None = None,
        base_path: str | None = None,
        incremental_listing: bool = False,
        full_listing_every: int = DEFAULT_FULL_LISTING_EVERY,
        schema_evolution: str | None = None,
        rescued_data_column: str | None = "_rescued_data",
        schema_hints: str | None = None,
    ) -> DataFrame:
        """A DataFrame of only the files of ``path`` that this run should process.

        ``ctx`` (Glue's ``transformation_ctx``) names the state element; without it the source
        is not tracked and every file is read, as in Glue. ``path`` may be a list of paths (one
        source, one state element). Partition folders (``key=value``) under each path become
        columns; ``base_path`` reads them relative to a common root instead (for partitions of
        one table given as separate paths).

        ``incremental_listing`` (S3 sources whose keys grow in lexical order, e.g. date
        prefixes): list only the keys after the greatest one the bookmark covers (ListObjectsV2
        ``StartAfter``), with a full listing every ``full_listing_every`` runs; a key that sorts
        before it is only seen by that full listing (docs/bookmarks.md).

        ``schema_evolution`` (``addNewColumns``, ``rescue``, ``failOnNewColumns`` or ``none``;
        json or csv sources with a ``ctx``) tracks the source's schema in the state store:
        inferred on the first run, then reused and evolved; values that do not fit go to the
        ``rescued_data_column`` (None: none); ``schema_hints`` (DDL, "id bigint, ts timestamp")
        fix the types of columns as they enter the tracked schema. See docs/schema.md.
        """
        from .sources import check_read_options
        from .sources._schema_track import tracking_of

        check_read_options(format, mode)
        tracking = tracking_of(schema_evolution, rescued_data_column, schema_hints)
        file_options = FileOptions(
            max_band_ms=max_band_ms,
            max_files_in_band=max_files_in_band,
            bounded_files=bounded_files,
            bounded_size=bounded_size,
        )
        roots, plan = self._plan(
            path, ctx=ctx, recurse=recurse, exclusions=exclusions, options=file_options,
            format=format, listing=ListingOptions(incremental_listing, full_listing_every),
        )
        return self._read_plan(roots, plan, format=format, options=options, schema=schema,
                               mode=mode, base_path=base_path, ctx=ctx, tracking=tracking)

    def read_planned(
        self,
        ctx: str,
        *,
        format: str,
        options: Mapping[str, str] | None = None,
        schema: Any = None,
        mode: str = "PERMISSIVE",
        base_path: str | None = None,
        schema_evolution: str | None = None,
        rescued_data_column: str | None = "_rescued_data",
        schema_hints: str | None = None,
    ) -> DataFrame:
        """A DataFrame of the files :meth:`plan_files` planned (and recorded) for ``ctx``.

        Planning first and reading only when the plan holds files lets a caller skip Spark
        altogether for a run with nothing new (``lakemark ingest files`` does).
        ``schema_evolution``/``rescued_data_column``/``schema_hints``: as for :meth:`read_files`.
        """
        from .sources import check_read_options
        from .sources._schema_track import tracking_of

        check_read_options(format, mode)
        tracking = tracking_of(schema_evolution, rescued_data_column, schema_hints)
        if ctx not in self.plans or ctx not in self._roots:
            raise ConfigError(f"transformation_ctx {ctx!r} has no plan in this run: call "
                              "plan_files(..., ctx=...) first")
        return self._read_plan(self._roots[ctx], self.plans[ctx], format=format,
                               options=options, schema=schema, mode=mode, base_path=base_path,
                               ctx=ctx, tracking=tracking)

    def _read_plan(self, roots: Sequence[str], plan: FilePlan, *, format: str,
                   options: Mapping[str, str] | None, schema: Any, mode: str,
                   base_path: str | None, ctx: str | None = None,
                   tracking: SchemaTracking | None = None) -> DataFrame:
        from .sources import read_files

        if tracking is not None:  # the tracked schema decides before the run counts as read
            from ._tracked_read import read_with_tracking

            tracked = read_with_tracking(self, ctx, plan.files, roots=roots, base_path=base_path,
                                         format=format, options=options, schema=schema,
                                         mode=mode, tracking=tracking)
            self._read_started = True
            if not plan.files:
                self._empty_reads[id(tracked)] = tracked
            return tracked
        self._read_started = True
        if len(roots) == 1 or base_path is not None:
            frame = read_files(
                self.spark, plan.files, root=base_path or roots[0], format=format,
                options=options, schema=schema, mode=mode,
            )
            fault_point("mid-read")
            if not plan.files:
                self._empty_reads[id(frame)] = frame
            return frame
        # Several paths: each is read under its own root (for its partition folders), then
        # the frames are combined by column name.
        groups = _group_by_root(plan.files, roots)
        frames = [
            read_files(self.spark, groups[root], root=root, format=format, options=options,
                       schema=schema, mode=mode)
            for root in roots
        ]
        combined = frames[0]
        for frame in frames[1:]:
            combined = combined.unionByName(frame, allowMissingColumns=True)
        return combined

    def read_jdbc(
        self,
        url: str,
        dbtable: str,
        *,
        ctx: str | None = None,
        user: str | None = None,
        password: str | None = None,
        keys: Sequence[str] | None = None,
        order: str = "asc",
        mode: str = "new",
        driver: str | None = None,
        fetchsize: int | None = None,
        hashfield: str | None = None,
        hashexpression: str | None = None,
        hashpartitions: int | None = None,
    ) -> DataFrame:
        """A DataFrame of the rows of JDBC table ``dbtable`` whose bookmark key lies beyond
        the last successful run's (Glue's ``jobBookmarkKeys``; default: the sequential
        primary key). See :mod:`lakemark.sources.jdbc` and docs/jdbc.md."""
        from .sources.jdbc import JdbcSource, read_jdbc

        source = JdbcSource(url, dbtable, user, password, driver,
                            tuple(keys) if keys else None, order, mode, fetchsize, hashfield,
                            hashexpression, hashpartitions)
        return read_jdbc(self, source, ctx=ctx)

    # -- writing --------------------------------------------------------------------------
    def write(
        self,
        df: DataFrame,
        target: str,
        *,
        format: str = "delta",
        mode: str = "append",
        partition_by: Sequence[str] = (),
        ctx: str | None = None,
        options: Mapping[str, str] | None = None,
        token: IdempotencyToken | None = None,
        iceberg_catalog: str | None = None,
        merge_keys: Sequence[str] | None = None,
        delete_when: str | None = None,
        order_by: str | None = None,
    ) -> WriteResult:
        """Write ``df`` to ``target`` and record the write in the run's manifest.

        ``format="iceberg"``: ``target`` is a table name ``[catalog.]db.table`` in
        ``iceberg_catalog`` (else ``LAKEMARK_ICEBERG_CATALOG``, else the default SQLite
        catalog; see docs/iceberg.md), with the same per-run tokens as Delta.

        With ``merge_keys`` (Delta only) the frame is merged into the table by those keys
        (update-all/insert-all; ``delete_when`` rows delete; ``order_by``: latest row per key
        wins; see :mod:`lakemark.sinks._merge`), exactly once per run like an append.

        Delta writes are idempotent per run: ``token`` (or ``txnAppId``/``txnVersion`` in
        ``options``) is used as given; otherwise a sink with a ``ctx`` in a run that tracks the
        bookmark gets the automatic token ``(<job>/<ctx>, <run number>)``, so a retried attempt
        of the same run skips a write its failed attempt already committed (and then replays
        that attempt's exact input, see :meth:`read_files`). The intent is recorded in the
        manifest *before* writing, so a retry can find out which attempt committed what.
        """
        from .sinks import IdempotencyToken, token_from_options, write_target
        from .sinks._merge import merge_spec
        from .sinks._write import folder_token_supported

        record = self._started()
        # Bad format, mode, options or token fail here, before anything is recorded.
        explicit = token_from_options(token, options, format=format, mode=mode)
        merge = merge_spec(merge_keys, delete_when, order_by, format=format, mode=mode,
                           columns=df.columns)
        fmt = format.strip().lower()
        kept_at = target  # where corrupt records are kept: the folder of the target
        if fmt == "iceberg":  # name, catalog, mode and options checked before any record
            from .sinks._iceberg import iceberg_table_root

            kept_at = iceberg_table_root(
                target, mode=mode.strip().lower(), partition_by=partition_by,
                options={k: v for k, v in (options or {}).items()
                         if k not in ("txnAppId", "txnVersion")},
                iceberg_catalog=iceberg_catalog)
        key = self._claim_sink(ctx, target)
        automatic: IdempotencyToken | None = None
        folder = folder_token_supported(target, fmt)
        if explicit is None and ctx is not None and (fmt in ("delta", "iceberg") or folder) \
                and self.tracking:
            automatic = IdempotencyToken(f"{self.name}/{ctx}", record.run)
        used = explicit or automatic
        self.store.heartbeat(record.run_id)
        self._read_started = True
        if mode == "append" and self._empty_reads.get(id(df)) is df:
            return self._nothing_to_write(key, ctx, target, format, partition_by, used)
        from .sinks._rejected import split_corrupt_records, target_columns

        df, rejected = split_corrupt_records(df, kept_at, record.run_id,
                                             target_columns(target, fmt))
        entry = SinkManifest(
            ctx=ctx,
            target=target,
            format=format,
            mode=mode,
            partition_by=list(partition_by),
            token=SinkToken(used.app_id, used.version) if used else None,
            token_source="explicit" if explicit else ("automatic" if automatic else None),
            status="writing",
            merge={"keys": list(merge.keys), "delete_when": merge.delete_when,
                   "order_by": merge.order_by} if merge else None,
            present=frozenset({"token_source"}),
            extra=_iceberg_extra(fmt, iceberg_catalog),
        )
        if rejected is not None:  # corrupt lines kept aside, not written as a column
            entry = replace(entry, corrupt_records=rejected.count, rejected_file=rejected.path)
            log.warning("%d record(s) could not be parsed; kept in %s", rejected.count,
                        rejected.path)
        self.store.record_plan(record.run_id, key, entry.to_json(), [])
        user_options = {k: v for k, v in (options or {}).items()
                        if k not in ("txnAppId", "txnVersion")}
        result = write_target(
            self.spark, df, target, format=format, mode=mode, partition_by=partition_by,
            options=user_options, token=None if folder else used,
            commit_info={RUN_ID_KEY: record.run_id, "lakemark.job": self.name,
                         GENERATION_KEY: str(record.generation)},
            commit_token=used if folder else None, iceberg_catalog=iceberg_catalog,
            merge_keys=merge_keys, delete_when=delete_when, order_by=order_by,
        )
        fault_point("after-sink-commit")
        if result.skipped:
            self._check_skipped_write(key, result.target, automatic)
        self.results.append(result)
        entry = replace(entry, status="skipped" if result.skipped else "committed",
                        rows=result.rows, files=result.files, bytes=result.bytes,
                        skipped=result.skipped, table_version=result.table_version)
        self.store.record_plan(record.run_id, key, entry.to_json(), [])
        self._emit("written", ctx, {"rows": result.rows, "files": result.files,
                                    "target": target, "skipped": result.skipped})
        return result

    def _nothing_to_write(self, key: str, ctx: str | None, target: str, format: str,
                          partition_by: Sequence[str], token: IdempotencyToken | None,
                          ) -> WriteResult:
        """Appending the frame of a source that took no file: no Spark job, no commit (a run
        with no input adds no table version), recorded as such in the manifest."""
        from .sinks import WriteResult
        from .sinks._location import resolve_target

        fmt = format.strip().lower()
        result = WriteResult(target if fmt == "iceberg" else resolve_target(target).root, fmt,
                             0, 0, 0)
        self.results.append(result)
        self.store.record_plan(self.run_id, key, SinkManifest(
            ctx=ctx, target=target, format=format, mode="append",
            partition_by=list(partition_by),
            token=SinkToken(token.app_id, token.version) if token else None,
            status="nothing-to-write", rows=0, files=0, bytes=0, skipped=False,
            reason="the frame written is a source of this run that took no file",
        ).to_json(), [])
        self._emit("written", ctx, {"rows": 0, "files": 0, "target": target, "skipped": False})
        return result

    # -- sources planned elsewhere (S3 events, JDBC) -------------------------------------------
    def state_of(self, ctx: str) -> dict[str, Any] | None:
        """The committed state element of ``ctx`` this run started from (None if there is none)."""
        self._started()
        element = self._bookmark.state.get(ctx) if self._bookmark is not None else None
        return dict(element) if element else None

    def track_source(self, ctx: str | None, recorded: Mapping[str, Any],
                     files: Sequence[FileEntry], next_state: Mapping[str, Any] | None) -> str:
        """Record a source planned outside the file planner in the run's manifest (``files``
        are what ``runs show`` lists) and the state element ``ctx`` commits with the run
        (None: nothing to commit). Returns the manifest key."""
        record = self._started()
        key = self._claim_ctx(ctx)
        self.store.record_plan(record.run_id, key, dict(recorded), list(files))
        if ctx is not None and next_state is not None and self.tracking:
            self._pending[ctx] = dict(next_state)
        return key

    def replay_input(self, ctx: str, kind: str) -> RunInputs | None:
        """The input of source ``ctx`` (of manifest kind ``kind``) that this attempt must
        replay exactly — that of a failed attempt of this run whose sink committed — or None
        when the source may plan afresh. For sources planned outside the file planner."""
        pinned = self._pinned_inputs().get(ctx) if self.tracking else None
        if pinned is None or pinned[1].manifest.kind != kind:
            return None
        return pinned[1]

    def replay_case(self, ctx: str) -> dict[str, Any]:
        """How this attempt chose the input of ``ctx`` (the manifest's ``replay`` entry)."""
        self._started()
        return self._replay_case(ctx)

    # -- internals ------------------------------------------------------------------------
    def _started(self) -> RunRecord:
        if self._record is None:
            raise StateError(
                f"job {self.name!r} has not started: use `with Job(...) as job:` or job.start()"
            )
        return self._record

    def _updates_bookmark(self, record: RunRecord) -> bool:
        return record.bookmark_option in ("enable", "mark-processed")

    def _claim_ctx(self, ctx: str | None) -> str:
        if ctx is None:
            self._untracked += 1
            return f"{UNTRACKED} #{self._untracked}"
        if not isinstance(ctx, str) or not ctx.strip():
            raise ConfigError("transformation_ctx must be a non-empty string")
        if ctx in self._ctxs_read or ctx.startswith(("sink:", UNTRACKED)):
            raise ConfigError(
                f"transformation_ctx {ctx!r} is used twice in one run; each source needs its own"
            )
        self._ctxs_read.add(ctx)
        return ctx

    def _previous_state(self, ctx: str | None, root: str) -> FileState | None:
        if ctx is None or self._bookmark is None:
            return None
        element = self._bookmark.state.get(ctx)
        if not element:
            return None
        if element.get("kind", "files") != "files":
            raise ConfigError(
                f"transformation_ctx {ctx!r} holds state of a {element.get('kind')!r} source, "
                "not a file source; use another ctx or reset it"
            )
        if element.get("source") not in (None, root):
            log.warning(
                "transformation_ctx %r was last used for %s and now reads %s; its bookmark "
                "still applies (reset the ctx to start over)", ctx, element.get("source"), root,
            )
        return FileState.from_json(element)

    def _replay_plan(self, ctx: str, listing: Sequence[FileEntry]) -> FilePlan:
        assert self.from_run_id is not None and self.to_run_id is not None
        runs = self.store.runs_between(self.name, self.from_run_id, self.to_run_id)
        wanted: dict[str, FileEntry] = {}
        for run in runs:
            for inputs in self.store.run_inputs(run.run_id):
                if inputs.ctx == ctx:
                    for entry in inputs.files:
                        wanted[entry.path] = entry
        present = {e.path: e for e in listing}
        missing = sorted(p for p in wanted if p not in present)
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            raise SourceError(
                f"{len(missing)} file(s) processed between {self.from_run_id} and "
                f"{self.to_run_id} no longer exist: {shown}"
            )
        files = tuple(sorted(present[p] for p in wanted))
        return FilePlan(files=files, next_state=FileState())

    # -- retries of a run: pinned replay ------------------------------------------------------
    def _claim_sink(self, ctx: str | None, target: str) -> str:
        """The manifest key of a sink; one write per sink ctx and run (its token is per run)."""
        if ctx is not None and (not isinstance(ctx, str) or not ctx.strip()):
            raise ConfigError("transformation_ctx must be a non-empty string")
        key = f"sink:{ctx or target}"
        if ctx is not None and key in self._sinks:
            raise ConfigError(
                f"sink transformation_ctx {ctx!r} is written twice in one run; each write needs "
                "its own ctx (its idempotency token is <job>/<ctx> at the run number)"
            )
        self._sinks.add(key)
        return key

    def _failed_attempts(self) -> list[RunRecord]:
        """Earlier failed attempts of this run's number that tracked the bookmark, oldest first."""
        record = self._started()
        if record.attempt == 0:
            return []
        return [r for r in self.store.list_runs(self.name)
                if r.run == record.run and r.run_id != record.run_id and r.status == "FAILED"
                and r.bookmark_option == "enable"]

    def _retried_sink(self, key: str) -> bool:
        """Whether a failed attempt of this run recorded an intent to write sink ``key``."""
        return any(inputs.ctx == key for attempt in self._failed_attempts()
                   for inputs in self.store.run_inputs(attempt.run_id))

    def _check_skipped_write(self, key: str, target: str,
                             automatic: IdempotencyToken | None) -> None:
        """Fencing of a write that its token skipped: the attempt of this run whose commit the
        target holds must have read the same input as this attempt, or the bookmark would
        move over input that was never written (an attempt that planned while the committer
        was still writing, after a lease takeover). CommitConflict on a mismatch, so the run
        fails without moving the bookmark and its next attempt replays the committer's input.
        """
        record = self._started()
        committer = next((a.run_id for a in self._failed_attempts()
                          for i in self.store.run_inputs(a.run_id)
                          if i.ctx == key and isinstance(m := i.manifest, SinkManifest)
                          and _sink_committed(m, a.run_id)), None)
        if committer is None:
            if automatic is not None and not self._retried_sink(key):
                # Only a failed attempt of this very run may have committed its token.
                raise StateError(
                    f"target {target} already recorded app id {automatic.app_id!r} at "
                    f"version >= {automatic.version}, but no earlier attempt of run "
                    f"{record.run} of job {self.name!r} wrote it: the state store does not "
                    "match the table (was the state database replaced?). Nothing was written; "
                    "give the sink an explicit token or a new ctx"
                )
            return
        theirs = _source_inputs(self.store.run_inputs(committer))
        mine = _source_inputs(self.store.run_inputs(record.run_id))
        differ = sorted(c for c in theirs.keys() & mine.keys() if theirs[c] != mine[c])
        if differ:
            shown = ", ".join(f"{c!r} ({len(theirs[c][0])} file(s) there, {len(mine[c][0])} "
                              "here)" for c in differ)
            raise CommitConflict(
                f"target {target} already holds the write of run {record.run} of job "
                f"{self.name!r} by attempt {committer}, which read other input than this "
                f"attempt {record.run_id} for source(s) {shown}: this attempt planned while "
                f"{committer} was still writing (its lease was taken over). The run fails "
                "without moving the bookmark; its next attempt replays the input of "
                f"{committer}"
            )

    def _pinned_inputs(self) -> dict[str, tuple[str, Any]]:
        """Per source ctx, the recorded input to replay: that of the failed attempt of this run
        whose sink commit landed in a Delta table (found by the run id in the commit info).

        Empty when no earlier attempt of this run committed anything: the run may then plan
        afresh (and take files that arrived meanwhile), as Glue does.
        """
        if self._pinned is not None:
            return self._pinned
        self._pinned = {}
        self._pin_info = {}
        attempts = self._failed_attempts()
        if not attempts:
            return self._pinned
        self._pin_info = {"case": "replanned", "failed_attempts": [a.run_id for a in attempts],
                          "reason": "no sink of an earlier attempt of this run committed"}
        for attempt in attempts:
            inputs = self.store.run_inputs(attempt.run_id)
            committed = [i.ctx for i in inputs if isinstance(m := i.manifest, SinkManifest)
                         and _sink_committed(m, attempt.run_id)]
            if committed:
                self._pinned = {i.ctx: (attempt.run_id, i) for i in inputs
                                if not isinstance(i.manifest, SinkManifest)}
                self._pin_info = {
                    "case": "pinned",
                    "from_attempt": attempt.run_id,
                    "committed_sinks": committed,
                    "failed_attempts": [a.run_id for a in attempts],
                    "reason": "a sink of an earlier attempt of this run committed: its recorded "
                              "input is replayed exactly, so the skipped write is the same data",
                }
                break
        return self._pinned

    def _replay_case(self, ctx: str) -> dict[str, Any]:
        """What the manifest says about how this source's input was chosen."""
        self._pinned_inputs()
        if not self._pin_info:
            return {"case": "first-attempt"}
        info = dict(self._pin_info)
        if info["case"] == "pinned" and ctx not in self._pinned_inputs():
            info.update(case="replanned", reason="the committed attempt did not read this ctx")
        return info

    def _pinned_plan(self, ctx: str, pinned: tuple[str, Any],
                     listing: Sequence[FileEntry]) -> FilePlan:
        attempt_id, inputs = pinned
        present = {e.path for e in listing}
        missing = sorted(e.path for e in inputs.files if e.path not in present)
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            raise SourceError(
                f"attempt {attempt_id} committed a sink, so this retry must replay its input, "
                f"but {len(missing)} of its file(s) of ctx {ctx!r} no longer exist: {shown}"
            )
        plan = inputs.manifest
        assert isinstance(plan, SourceManifest) and plan.next_state is not None
        return FilePlan(files=tuple(inputs.files),
                        next_state=FileState.from_json(plan.next_state),
                        pending=int(plan.pending_files or 0))

    def _warn_untracked(self, path: str) -> None:
        if not self._warned_untracked:
            self._warned_untracked = True
            log.warning(
                "source %s has no transformation_ctx: bookmarks do not track it, so every run "
                "reads all of it (give it a ctx to process only new files)", path,
            )

    def _emit(self, stage: str, ctx: str | None, detail: Mapping[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(JobEvent(stage, ctx, detail))
        for observer in self._observers:
            observer(JobEvent(stage, ctx, detail))

    # -- lease: background heartbeat, fencing, failed commits ---------------------------------
    def _start_heartbeat(self, run_id: str) -> None:
        """Keep the lease of the run alive from a daemon thread (lakemark._heartbeat)."""
        self._heartbeat = Heartbeat(self.store, run_id, self._heartbeat_interval_s, owner=self)
        self._heartbeat.start()

    def _stop_heartbeat(self, *, check: bool) -> None:
        """Stop the heartbeat; with ``check``, raise if a beat found the lease taken over (a
        stale holder must not commit)."""
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.stop()
            if check:
                heartbeat.check()

    def _fail_after_commit_error(self, record: RunRecord, exc: BaseException) -> None:
        """A commit that raised (a busy store, a conflict, an error inside it) ends the run as
        a failed attempt and releases its lease, so this process is not locked out of the job;
        if even that cannot be recorded, the lease ages out (no more heartbeats) or this
        process's next run of the job takes it over (``held`` in begin_run)."""
        message = f"commit failed: {type(exc).__name__}: {exc}"
        try:
            self.store.fail_run(record.run_id, message[:4000],
                                update_bookmark=self._updates_bookmark(record))
            self._record = self.store.get_run(record.run_id)
        except LakemarkError as again:
            log.warning("run %s: its failed commit could not be recorded either: %s",
                        record.run_id, again)
        self._emit("failed", None, {"error": message})
        self._close()

    def _close(self) -> None:
        self._stop_heartbeat(check=False)
        if self._own_store and self._store is not None:
            self._store.close()
            self._store = None


def _sink_committed(plan: SinkManifest, run_id: str) -> bool:
    """Whether the recorded Delta sink ``plan`` has a commit made by attempt ``run_id``."""
    if plan.status == "committed":
        return True
    fmt = plan.format.strip().lower()
    token = plan.token
    if fmt == "iceberg":
        from .sinks._iceberg import iceberg_committed

        return iceberg_committed(plan.target, plan.extra.get("iceberg_catalog"), RUN_ID_KEY,
                                 run_id)
    if fmt != "delta":
        from .sinks import IdempotencyToken
        from .sinks._write import folder_commit_run_id, folder_token_supported

        if not token or not folder_token_supported(plan.target, fmt):
            return False
        found = folder_commit_run_id(
            plan.target, IdempotencyToken(token.app_id, token.version), RUN_ID_KEY)
        return found == run_id
    from .sinks._location import open_delta, resolve_target

    table = open_delta(resolve_target(plan.target))
    if table is None:
        return False
    if token:
        recorded = table.transaction_version(token.app_id)
        if recorded is None or recorded < token.version:
            return False  # the token would be there had this attempt committed
    return any(entry.get(RUN_ID_KEY) == run_id for entry in table.history())


def _iceberg_extra(fmt: str, catalog: str | None) -> dict[str, Any]:
    """What a retry needs to find an Iceberg sink's table: the catalog argument, unless it
    holds a password (then the retry resolves it again from the environment)."""
    from urllib.parse import urlsplit

    if fmt != "iceberg" or not catalog or urlsplit(catalog).password is not None:
        return {}
    return {"iceberg_catalog": catalog}


def _source_inputs(inputs: Sequence[RunInputs]) -> dict[str, tuple[frozenset[Any], str]]:
    """Per tracked source ctx of a run, what it read: its files and its key range (JDBC)."""
    import json

    return {i.ctx: (frozenset((f.path, f.mtime, f.size) for f in i.files),
                    json.dumps(m.range, sort_keys=True))
            for i in inputs if isinstance(m := i.manifest, SourceManifest)
            and not i.ctx.startswith(UNTRACKED)}


def _group_by_root(files: Sequence[FileEntry], roots: Sequence[str]) -> dict[str, list[FileEntry]]:
    """Each file under the most specific root that holds it (so nested paths read it once)."""
    groups: dict[str, list[FileEntry]] = {root: [] for root in roots}
    by_length = sorted(roots, key=len, reverse=True)
    for entry in files:
        for root in by_length:
            if entry.path == root or entry.path.startswith(root.rstrip("/") + "/"):
                groups[root].append(entry)
                break
    return groups


def _bookmark_option(value: str) -> str:
    option = value.removeprefix("job-bookmark-") if isinstance(value, str) else value
    if option not in BOOKMARK_OPTIONS:
        raise ConfigError(
            f"bookmark option {value!r} is not one of "
            + ", ".join(BOOKMARK_OPTIONS)
            + " (Glue's job-bookmark-enable/-disable/-pause are accepted too)"
        )
    return str(option)


