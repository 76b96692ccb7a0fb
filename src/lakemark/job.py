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
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .run.file_sources import plan_source, read_plan, read_tracking
from .run.lease import fail_after_commit_error, start_heartbeat, stop_heartbeat
from .run.replay import pinned_inputs, replay_case_of
from .run.sinks import write_frame
from .run.keys import GENERATION_KEY, RUN_ID_KEY, UNTRACKED  # noqa: F401 - re-exported
from .run.heartbeat import Heartbeat, default_interval, held_runs
from .run.stage_timings import StageClock, save_timings
from .run.quarantine import (BadFilePolicy, QuarantinedFile, pin_after_failure,
                             policy_from_env, retried_paths)
from .run.state import RunState
from .errors import ConfigError, LeaseLost, SourceError, StateError
from .planning import (
    DEFAULT_FULL_LISTING_EVERY,
    DEFAULT_MAX_BAND_MS,
    DEFAULT_MODIFIED,
    FileEntry,
    FileOptions,
    FilePlan,
    ListingOptions,
    check_modified_policy,
)
from .run.cleanup import clean_after_commit, record_intents
from .run.context import RunContext
from .run.events import JobEvent
from ._fault import fault_point
from .state import (BOOKMARK_OPTIONS, Bookmark, RunInputs, RunRecord, StateStore, open_store,
                    resolve_state_url)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .sinks import IdempotencyToken, WriteResult
    from .run.cleanup import CleanSpec
    from .sources._schema_track import SchemaTracking

__all__ = ["Job", "JobEvent", "DEFAULT_LEASE_TIMEOUT_S", "add_job_observer"]

log = logging.getLogger("lakemark")

#: How long a run may go without a heartbeat before another host may take its lease over.
DEFAULT_LEASE_TIMEOUT_S = 3600.0


#: Called with each new Job; each may return an observer of its events (or None).
_OBSERVER_FACTORIES: list[Callable[[Job], Callable[[JobEvent], None] | None]] = []


def add_job_observer(factory: Callable[[Job], Callable[[JobEvent], None] | None],
                     ) -> Callable[[], None]:
    """Give every Job made from now on the observer ``factory(job)`` returns (if not None);
    returns the call that takes it back. How layers above the run lifecycle follow runs
    without it importing them (runtime lineage, ``lakemark run``'s set-aside report)."""
    if factory not in _OBSERVER_FACTORIES:
        _OBSERVER_FACTORIES.append(factory)
    return lambda: _OBSERVER_FACTORIES.remove(factory) if factory in _OBSERVER_FACTORIES else None


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

    ``bad_files`` (:class:`~lakemark.BadFilePolicy`): what a read does with planned files
    that cannot be read — by default they are set aside (quarantined) and the run goes on
    with the others; ``BadFilePolicy("fail")`` fails the run naming the file, and
    ``max_bad_files`` fails a run that sets aside too many (docs/bookmarks.md, "Quarantine").
    Without it, ``$LAKEMARK_ON_BAD_FILE``/``_MAX_BAD_FILES``/``_MAX_RECORD_BYTES`` give it
    (``lakemark run``'s options set them for a script's jobs, Glue's included).
    ``remote`` (``sc://HOST:PORT``) runs reads and writes on that Spark Connect server (checked
    reachable here, before any run starts); bookmark and state stay here (docs/connect.md).
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
        bad_files: BadFilePolicy | None = None,
        remote: str | None = None,
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
        if remote is not None and spark is not None:
            raise ConfigError("Job takes spark= or remote=, not both")
        from .spark import remote_endpoint

        self._remote = remote_endpoint(remote, option="remote=") if remote is not None else None
        self._spark = spark
        self._lease_timeout_s = lease_timeout_s
        self._force = force
        self._heartbeat_interval_s = (default_interval(lease_timeout_s)
                                      if heartbeat_interval_s is None else heartbeat_interval_s)
        self._heartbeat: Heartbeat | None = None
        self.on_event = on_event
        self._record: RunRecord | None = None
        self._bookmark: Bookmark | None = None
        #: What the run accumulates (pending state, plans, reads, sinks, set-aside files …),
        #: handed with the run's context to its collaborators (lakemark/run/state.py).
        self._state = RunState()
        #: Called when the run ends, however: frees what reads keep for the run (run/tracked_read).
        self._at_run_end: list[Callable[[], None]] = []
        #: Input files that cannot be read (run/quarantine.py): the policy (lakemark run's
        #: options give it when not given here).
        self.bad_files = bad_files or policy_from_env(os.environ)
        #: When each stage of the run ended (run/stage_timings.py); recorded when the run ends.
        self._stages = StageClock()
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

            self._spark = get_spark(remote=self._remote)
        return self._spark

    @property
    def results(self) -> list[WriteResult]:
        """What each write of this run wrote (or skipped)."""
        return self._state.results

    @property
    def plans(self) -> dict[str, FilePlan]:
        """The file plan of each file source of this run, by manifest key."""
        return self._state.plans

    @property
    def set_aside(self) -> dict[str, list[QuarantinedFile]]:
        """Per source, the input files this run set aside (or left out as set aside before)."""
        return self._state.set_aside

    @property
    def cleanups(self) -> list[dict[str, Any]]:
        """What the clean-up after this run's commit did (one record per entry)."""
        return self._state.cleanups

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
        self._stages = StageClock()
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
            return
        try:
            if isinstance(exc, (ConfigError, SourceError)) and not self._state.read_started:
                # Bad input found while planning: nothing was read, the bookmark stays.
                self.fail(exc, update_bookmark=False)
            else:
                # A file that broke the read: the retry goes without it (run/quarantine).
                pin_after_failure(self._run_context(), self._state, exc)
                self.fail(exc)
        except StateError as again:
            # The store failed too (a full disk, a lost connection): the run's own error is
            # what the caller sees; the run stays RUNNING in the store until its lease ages
            # out or this host's next run finds its process gone, and its input unprocessed.
            if not isinstance(exc, StateError):
                log.warning("run %s: its failure could not be recorded: %s",
                            self._record.run_id, again)
            self._close()

    def commit(self) -> Bookmark:
        """End the run successfully: every state element and the run's end in one transaction."""
        record = self._started()
        fault_point("before-job-commit")
        try:
            state = self._state
            if state.schema_counts:
                from .run.tracked_read import record_observed_counts

                record_observed_counts(self._run_context(), state.schema_counts)
            # run/cleanup.py: the clean-up the commit makes count
            record_intents(self._run_context(), state.clean, state.roots, state.plans,
                           state.set_aside)
            self._stop_heartbeat(check=True)
            bookmark = self.store.commit_run(
                record.run_id, state.pending, update_bookmark=self._updates_bookmark(record),
                schemas=state.pending_schemas, retried=retried_paths(state),
            )
        except BaseException as exc:
            self._fail_after_commit_error(record, exc)
            raise
        self._record = self.store.get_run(record.run_id)
        self._emit("committed", None, {"version": bookmark.version, "run": bookmark.run})
        save_timings(self.store, record.run_id, self._stages)
        fault_point("after-job-commit")
        # never raises: a failed clean-up waits for a later run
        self._state.cleanups = clean_after_commit(self._run_context())
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
        save_timings(self.store, record.run_id, self._stages)
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
            # Said once: when the run itself failed on being fenced, its error is this one.
            (log.debug if isinstance(error, LeaseLost) else log.info)("run %s: %s",
                                                                      record.run_id, exc)
            bookmark = self.store.get_bookmark(self.name)
        self._record = self.store.get_run(record.run_id)
        self._emit("failed", None, {"error": message})
        save_timings(self.store, record.run_id, self._stages)
        self._close()
        return bookmark

    # -- clean-up of processed files (run/cleanup.py) ----------------------------------------
    def _clean_spec(self, path: str | Sequence[str], ctx: str | None, mode: str | None,
                    archive_to: str | None, retention: str | float | None,
                    ) -> CleanSpec | None:
        from .run.cleanup import clean_spec

        return clean_spec(mode, archive_to, [path] if isinstance(path, str) else list(path),
                          ctx=ctx, bookmark_option=self.bookmark_option, retention=retention)

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
        clean_source: str = "off",
        archive_to: str | None = None,
        clean_source_retention: str | float | None = None,
        on_modified: str = DEFAULT_MODIFIED,
    ) -> FilePlan:
        """Plan (and record) which files of ``path`` this run takes, without reading them.

        ``clean_source``/``archive_to``/``clean_source_retention``/``on_modified``: as for
        :meth:`read_files`."""
        clean = self._clean_spec(path, ctx, clean_source, archive_to, clean_source_retention)
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
                modified=check_modified_policy(on_modified, format=format,
                                               option="on_modified"),
            ),
            format=format,
            listing=ListingOptions(incremental_listing, full_listing_every),
            clean=clean,
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
        clean: CleanSpec | None = None,
    ) -> tuple[list[str], FilePlan]:
        """List, plan and record one source (one or more paths); returns its roots and the plan."""
        return plan_source(self._run_context(), self._state, path, ctx=ctx, recurse=recurse,
                           exclusions=exclusions, options=options, format=format,
                           listing=listing, clean=clean)

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
        clean_source: str = "off",
        archive_to: str | None = None,
        clean_source_retention: str | float | None = None,
        on_modified: str = DEFAULT_MODIFIED,
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

        A json, csv, xml or avro source read with a ``ctx`` and no ``schema`` tracks its schema
        in the state store: inferred on the first run, then reused and evolved under
        ``schema_evolution`` (``addNewColumns``, the default; ``rescue``, ``failOnNewColumns``
        or ``none``; ``"off"``: not tracked, Spark infers every run); values that do not fit
        go to the ``rescued_data_column`` (None: none); ``schema_hints`` (DDL, "id bigint, ts
        timestamp") fix the types of columns as they enter the tracked schema. See
        docs/schema.md.

        A planned file that cannot be read (damaged, truncated, a broken link, a record over
        the size limit) is set aside rather than failing the run again and again: see the
        job's ``bad_files`` policy and docs/bookmarks.md, "Quarantine".

        ``clean_source`` (``off``, ``delete`` or ``archive``; needs a ``ctx``) removes the files
        this run took once the run has committed — deleted, or moved under ``archive_to`` (a
        folder or ``s3://`` prefix outside the source) at their path relative to the source;
        a file changed since it was planned is kept. A crash between the commit and the
        clean-up is finished by the next run. ``clean_source_retention`` (seconds, or "12h",
        "7d"): leave the files that long after the commit; a later run's commit cleans them.
        See docs/clean-source.md.

        ``on_modified``: a file an earlier run took that changed since is retaken whole
        (``retake``, Glue's behaviour, the default; listed as taken before), skipped
        (``skip``), or only its ``append``-ed tail is taken (json, csv, text). A file whose
        size or mtime changes before a sink commits fails the run
        (:class:`~lakemark.errors.ChangedDuringRun`); the next attempt takes it whole.
        """
        tracking = read_tracking(format, mode, ctx, schema is not None, schema_evolution,
                                 rescued_data_column, schema_hints)
        clean = self._clean_spec(path, ctx, clean_source, archive_to, clean_source_retention)
        file_options = FileOptions(
            max_band_ms=max_band_ms,
            max_files_in_band=max_files_in_band,
            bounded_files=bounded_files,
            bounded_size=bounded_size,
            modified=check_modified_policy(on_modified, format=format, option="on_modified"),
        )
        roots, plan = self._plan(
            path, ctx=ctx, recurse=recurse, exclusions=exclusions, options=file_options,
            format=format, listing=ListingOptions(incremental_listing, full_listing_every),
            clean=clean,
        )
        return self._read(ctx, self._read_plan(
            roots, plan, format=format, options=options, schema=schema, mode=mode,
            base_path=base_path, ctx=ctx, tracking=tracking))

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
        tracking = read_tracking(format, mode, ctx, schema is not None, schema_evolution,
                                 rescued_data_column, schema_hints)
        if ctx not in self.plans or ctx not in self._state.roots:
            raise ConfigError(f"transformation_ctx {ctx!r} has no plan in this run: call "
                              "plan_files(..., ctx=...) first")
        return self._read(ctx, self._read_plan(
            self._state.roots[ctx], self.plans[ctx], format=format, options=options,
            schema=schema, mode=mode, base_path=base_path, ctx=ctx, tracking=tracking))

    def _read_plan(self, roots: Sequence[str], plan: FilePlan, *, format: str,
                   options: Mapping[str, str] | None, schema: Any, mode: str,
                   base_path: str | None, ctx: str | None = None,
                   tracking: SchemaTracking | None = None) -> DataFrame:
        return read_plan(self._run_context(), self._state, roots, plan, format=format,
                         options=options, schema=schema, mode=mode, base_path=base_path,
                         ctx=ctx, tracking=tracking)

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
        return self._read(ctx, read_jdbc(self, source, ctx=ctx))

    def _read(self, ctx: str | None, frame: DataFrame) -> DataFrame:
        """Tell observers a source's frame was made (``read`` event) and return it."""
        key = ctx if ctx else f"{UNTRACKED} #{self._state.untracked}"  # as claim_ctx numbered it
        self._emit("read", ctx, {"key": key}, frame=frame)
        return frame

    def read_table(self, table: str, *, ctx: str | None = None, format: str = "delta",
                   options: Mapping[str, str] | None = None) -> DataFrame:
        """A DataFrame of the rows of table ``table`` that this run should process.

        ``format="delta"``: ``table`` is a path, ``s3://`` URI or catalog ``database.table``; a
        run takes the commits after the last successful run's version, up to a version pinned
        when this run plans (a retry replays the same range); the snapshot on the first run.
        Options: ``readChangeFeed``, ``skipChangeCommits``, ``startingVersion``. See
        :mod:`lakemark.sources._delta_table` and docs/delta.md.

        ``format="iceberg"``: ``table`` is ``[catalog.]db.table``; a run takes the data files
        of the snapshots appended since the last run, pinned to a snapshot at run start (a
        retry replays it exactly); options ``iceberg_catalog``,
        ``streaming-skip-overwrite-snapshots``, ``streaming-skip-delete-snapshots``,
        ``skipChangeCommits`` (see :mod:`lakemark.sources.iceberg` and docs/iceberg.md).

        ``format="hudi"``: ``table`` is the path or ``s3://`` URI of a copy-on-write Hudi
        table; a run takes the rows of the insert commits completed since the last run, up to
        an instant pinned at run start (a retry replays it); options ``skipChangeCommits``,
        ``startingInstant`` (see :mod:`lakemark.sources.hudi` and docs/hudi.md).
        """
        fmt = format.strip().lower() if isinstance(format, str) else format
        if fmt == "iceberg":
            self._started()
            from .sources.iceberg import read_iceberg

            frame, empty = read_iceberg(self, table, ctx=ctx, options=options or {})
        elif fmt == "hudi":
            from .sources.hudi import read_hudi

            frame, empty = read_hudi(self, table, ctx=ctx, options=options)
        else:
            from .sources._delta_table import read_table

            frame, empty = read_table(self, table, ctx=ctx, format=format, options=options)
        self._state.read_started = True
        if empty:
            self._state.empty_reads[id(frame)] = frame
        return self._read(ctx, frame)

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
        order_by: str | Sequence[str] | None = None,
    ) -> WriteResult:
        """Write ``df`` to ``target`` and record the write in the run's manifest.

        ``format="iceberg"``: ``target`` is a table name ``[catalog.]db.table`` in
        ``iceberg_catalog`` (else ``LAKEMARK_ICEBERG_CATALOG``, else the default SQLite
        catalog; see docs/iceberg.md), with the same per-run tokens as Delta.

        With ``merge_keys`` (Delta or Iceberg) the frame is merged into the table by those keys
        (update-all/insert-all; ``delete_when`` rows delete; ``order_by``: latest row per key
        wins; see :mod:`lakemark.sinks._merge`), exactly once per run like an append.

        Delta writes are idempotent per run: ``token`` (or ``txnAppId``/``txnVersion`` in
        ``options``) is used as given; otherwise a sink with a ``ctx`` in a run that tracks the
        bookmark gets the automatic token ``(<job>/<ctx>, <run number>)``, so a retried attempt
        of the same run skips a write its failed attempt already committed (and then replays
        that attempt's exact input, see :meth:`read_files`). The intent is recorded in the
        manifest *before* writing, so a retry can find out which attempt committed what.
        """
        return write_frame(self._run_context(), self._state, df, target, format=format,
                           mode=mode, partition_by=partition_by, ctx=ctx, options=options,
                           token=token, iceberg_catalog=iceberg_catalog,
                           merge_keys=merge_keys, delete_when=delete_when, order_by=order_by)

    def write_jdbc(
        self,
        df: DataFrame,
        url: str,
        dbtable: str,
        *,
        ctx: str | None = None,
        user: str | None = None,
        password: str | None = None,
        driver: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> WriteResult:
        """Append ``df`` to database table ``dbtable`` over JDBC, exactly once per run on
        PostgreSQL and MySQL/MariaDB (rows and the run's token commit in one transaction);
        other engines warn that they are not (:mod:`lakemark.sinks._jdbc`,
        docs/exactly-once.md). ``options``: more Spark JDBC writer options."""
        from .run.jdbc_sink import jdbc_target, write_jdbc_frame

        target = jdbc_target(url, dbtable, user=user, password=password, driver=driver,
                             options=options)
        return write_jdbc_frame(self._run_context(), self._state, df, target, ctx)

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
        key = self._state.claim_ctx(ctx)
        self.store.record_plan(record.run_id, key, dict(recorded), list(files))
        if ctx is not None and next_state is not None and self.tracking:
            self._state.pending[ctx] = dict(next_state)
        return key

    def replay_input(self, ctx: str, kind: str) -> RunInputs | None:
        """The input of source ``ctx`` (of manifest kind ``kind``) that this attempt must
        replay exactly — that of a failed attempt of this run whose sink committed — or None
        when the source may plan afresh. For sources planned outside the file planner."""
        pinned = pinned_inputs(self._run_context(), self._state).get(ctx) if self.tracking else None
        if pinned is None or pinned[1].manifest.kind != kind:
            return None
        return pinned[1]

    def replay_case(self, ctx: str) -> dict[str, Any]:
        """How this attempt chose the input of ``ctx`` (the manifest's ``replay`` entry)."""
        self._started()
        return replay_case_of(self._run_context(), self._state, ctx)

    def read_screened(self, ctx: str, files: Sequence[FileEntry], *, root: str, format: str,
                      options: Mapping[str, str] | None, schema: Any, mode: str) -> DataFrame:
        """The planned ``files`` of ``ctx`` without those the bad-file policy sets aside (for
        sources planned elsewhere: S3-event objects; lakemark.run.quarantine)."""
        from .run.quarantine import read_screened

        return read_screened(self._run_context(), self._state, ctx, files, root=root,
                             format=format, options=options, schema=schema, mode=mode)

    # -- internals ------------------------------------------------------------------------
    def _started(self) -> RunRecord:
        if self._record is None:
            raise StateError(
                f"job {self.name!r} has not started: use `with Job(...) as job:` or job.start()"
            )
        return self._record

    def _updates_bookmark(self, record: RunRecord) -> bool:
        return record.bookmark_option in ("enable", "mark-processed")

    def _emit(self, stage: str, ctx: str | None, detail: Mapping[str, Any], *,
              frame: Any = None) -> None:
        event = JobEvent(stage, ctx, detail, frame)
        self._stages.mark(stage)
        if self.on_event is not None:
            self.on_event(event)
        for observer in self._observers:
            observer(event)

    # -- lease: background heartbeat, fencing, failed commits ---------------------------------
    def _run_context(self) -> RunContext:
        """What the run's collaborators (lakemark/run/) see of this job's started run."""
        return RunContext(self.name, self.run_id, self.store, self._emit, lambda: self.spark,
                          self._at_run_end.append, self.bookmark_option, self.from_run_id,
                          self.to_run_id, self._record, self._bookmark, self.bad_files)

    def _parts(self) -> tuple[RunContext, RunState]:
        """The run's context and its bookkeeping, for the commands above the job that drive
        a collaborator themselves (``ingest files``, S3-event objects, Glue's job)."""
        return self._run_context(), self._state

    def _start_heartbeat(self, run_id: str) -> None:
        """Keep the lease of the run alive from a daemon thread (lakemark.run.heartbeat)."""
        self._heartbeat = start_heartbeat(self._run_context(), self._heartbeat_interval_s,
                                          owner=self)

    def _stop_heartbeat(self, *, check: bool) -> None:
        """Stop the heartbeat; with ``check``, raise if a beat found the lease taken over (a
        stale holder must not commit)."""
        heartbeat, self._heartbeat = self._heartbeat, None
        stop_heartbeat(heartbeat, check=check)

    def _fail_after_commit_error(self, record: RunRecord, exc: BaseException) -> None:
        """A commit that raised (a busy store, a conflict, an error inside it) ends the run as
        a failed attempt and releases its lease, so this process is not locked out of the job;
        if even that cannot be recorded, the lease ages out (no more heartbeats) or this
        process's next run of the job takes it over (``held`` in begin_run)."""
        message, now = fail_after_commit_error(
            self._run_context(), exc, update_bookmark=self._updates_bookmark(record))
        if now is not None:
            self._record = now
        self._emit("failed", None, {"error": message})
        self._close()

    def _close(self) -> None:
        self._stop_heartbeat(check=False)
        releases, self._at_run_end = self._at_run_end, []
        for release in releases:
            try:
                release()
            except Exception as exc:  # noqa: BLE001 - the run's outcome is recorded already
                log.warning("job %s: could not free what a read kept for the run: %s",
                            self.name, exc)
        if self._own_store and self._store is not None:
            self._store.close()
            self._store = None


def _bookmark_option(value: str) -> str:
    option = value.removeprefix("job-bookmark-") if isinstance(value, str) else value
    if option not in BOOKMARK_OPTIONS:
        raise ConfigError(
            f"bookmark option {value!r} is not one of "
            + ", ".join(BOOKMARK_OPTIONS)
            + " (Glue's job-bookmark-enable/-disable/-pause are accepted too)"
        )
    return str(option)


