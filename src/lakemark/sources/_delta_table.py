"""Delta tables as bookmarked sources: ``Job.read_table(table, ctx=...)``.

A run of a tracked table source (one with a ``ctx``):

1. pins the table's latest version when it plans — or, for a retry of a failed attempt of the
   same run that started from the same state (and for an attempt whose sink committed), the
   range that attempt recorded, so a retried run reads exactly the same input;
2. plans with :mod:`lakemark.planning.delta_log`: on the first run the snapshot at the pinned
   version (deltalake resolves it from the nearest checkpoint), later the commits after the
   bookmark's version, read one commit file each by version number (``_delta_log/<v>.json``);
3. records the range, its files and the state element in the run's manifest *before* reading
   (the element, the pinned version, commits with the run);
4. reads the planned files with Spark's Parquet reader (or lakemark's data source on S3
   without S3A), partition values and change-feed columns as constants.

A later run loads no snapshot (:mod:`lakemark.planning.delta_table_state`): the state element
carries the table as of its version (schema, partition columns, settings, protocol) and the
SHA-256 of that version's commit file; the run checks that file is still the same (the same
table), pins the latest version by probing commit files forward from the bookmark's version or
``_delta_log/_last_checkpoint``'s, and advances the carried state over the ``metaData`` and
``protocol`` actions of the commits it reads anyway. Its cost follows the number of new commits,
not the table's history. Where that cannot be done — an element written before the state was
carried, the bookmark's commit file cleaned up, a replay of ``job-bookmark-from``/``-to`` —
the run opens the table with deltalake at the pinned version instead, as the first run does.

Options (Delta's streaming-source names): ``readChangeFeed``, ``skipChangeCommits``,
``startingVersion``. See docs/delta.md, "Delta tables as incremental sources".
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from ..errors import ConfigError, SinkError, SourceError
from ..planning import FileEntry
from ..planning.delta_log import (
    ChangeFile,
    Commit,
    TableOptions,
    VersionRange,
    commit_file_name,
    parse_commit,
    parse_table_options,
    partition_value,
    plan_commits,
    plan_range,
)
from ..planning.delta_table_state import (
    TableState,
    check_partitions,
    check_probeable,
    check_readable,
    require_feed,
    commit_digest,
    find_latest,
    last_checkpoint_version,
    plan_table_range,
)
from ..state.manifest import SourceManifest
from ._replay import failed_attempt_plan, recorded_plan
from ..storage import FileSystem, filesystem_for
from ..tables._delta_snapshot import DataFileRef

if TYPE_CHECKING:
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from ..job import Job
    from ..sinks._location import Target

__all__ = ["STATE_KIND", "CHANGE_COLUMNS", "read_table", "resolve_table"]

log = logging.getLogger("lakemark")

#: The manifest and state-element kind of a Delta table source.
STATE_KIND = "delta-table"
#: The columns a change-feed read adds, as Delta names them.
CHANGE_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


def resolve_table(table: str) -> str:
    """The location of ``table``: a path or URI as given, or a ``database.table`` of the
    configured data catalog (``LAKEMARK_CATALOG``) whose format is Delta."""
    if not isinstance(table, str) or not table.strip():
        raise ConfigError("read_table needs a table: a path, an s3:// URI or database.table")
    text = table.strip()
    if "://" in text or "/" in text or os.sep in text or os.path.exists(text) \
            or text.count(".") != 1:
        return text
    from ..catalog import require_catalog

    database, name = text.split(".")
    entry = require_catalog(needed_for=text).get_table(database, name)
    if entry.classification != "delta" or not entry.location:
        raise ConfigError(f"catalog table {text} is {entry.classification or 'of no format'}, "
                          "not a Delta table with a location: read_table reads Delta tables")
    return entry.location


def _target(location: str) -> Target:
    from ..sinks._location import resolve_target

    if location.lower().startswith(("s3a://", "s3n://")):
        location = "s3://" + location.partition("://")[2]
    return resolve_target(location)


def _open(target: Target) -> DeltaTable:
    from ..sinks._location import open_delta
    from ..tables._delta_snapshot import _refusal

    try:
        table = open_delta(target)
    except SinkError as exc:  # a newer protocol or feature: the reader's one-line refusal
        raise _refusal(target.root, str(exc)) or SourceError(str(exc)) from exc
    if table is None:
        raise SourceError(f"{target.root} is not a Delta table (no _delta_log)")
    return table


def _at_version(table: DeltaTable, version: int, root: str) -> None:
    if int(table.version()) == version:
        return
    try:
        table.load_as_version(version)
    except Exception as exc:  # deltalake's DeltaError: the version's log is gone
        raise SourceError(f"Delta table {root} has no version {version} any more (its log "
                          "was cleaned up): reset the ctx to read the table again") from exc


#: Where a table's commit files are, relative to its root.
_LOG = "_delta_log"


def _commit_text(fs: FileSystem, root: str, version: int) -> str | None:
    """The text of version ``version``'s commit file (None if there is none)."""
    try:
        return fs.read_text(f"{_LOG}/{commit_file_name(version)}")
    except SinkError as exc:
        raise SourceError(f"Delta table {root}: {exc}") from exc


def _read_commits(fs: FileSystem, root: str, first: int, last: int
                  ) -> tuple[list[Commit], str | None]:
    """The commits ``first`` .. ``last``, each read from its own commit file by name, and the
    text of the last one (None when the range is empty)."""
    out, text = [], None
    for version in range(first, last + 1):
        text = _commit_text(fs, root, version)
        if text is None:
            raise SourceError(
                f"Delta table {root}: the commit file of version {version} "
                f"({_LOG}/{commit_file_name(version)}) is missing; if the log was cleaned up "
                "since the last run, reset the ctx to read the table again")
        out.append(parse_commit(version, text.splitlines()))
    return out, text


# ------------------------------------------------------------------------- the range

def _recorded(inputs: Any, ctx: str) -> SourceManifest | None:
    return recorded_plan(inputs, ctx, STATE_KIND)


def _retry_range(job: Job, ctx: str, previous: Mapping[str, Any] | None) -> VersionRange | None:
    """The range an earlier attempt of this run recorded: that of the attempt whose sink
    committed (replayed exactly), else that of the latest failed attempt that started from
    the same state. None when there is none (plan afresh)."""
    pinned = job.replay_input(ctx, STATE_KIND)
    if pinned is not None:
        committed = pinned.manifest
        assert isinstance(committed, SourceManifest) and committed.range
        return VersionRange.from_json(committed.range)
    plan = failed_attempt_plan(job, ctx, STATE_KIND, previous)
    return VersionRange.from_json(plan.range) if plan is not None and plan.range else None


def _between_range(job: Job, ctx: str) -> VersionRange | None:
    """Glue's job-bookmark-from/-to: the versions the successful runs in between took."""
    assert job.from_run_id is not None and job.to_run_id is not None
    ranges = [VersionRange.from_json(plan.range)
              for run in job.store.runs_between(job.name, job.from_run_id, job.to_run_id)
              for inputs in job.store.run_inputs(run.run_id)
              if (plan := _recorded(inputs, ctx)) is not None and plan.range]
    ranges = [r for r in ranges if not r.empty]
    if not ranges:
        return None
    return VersionRange(ranges[0].from_version, ranges[-1].to_version, ranges[0].snapshot)


def _previous(job: Job, ctx: str | None, root: str) -> dict[str, Any] | None:
    element = job.state_of(ctx) if ctx is not None else None
    if not element:
        return None
    if element.get("kind") != STATE_KIND:
        raise ConfigError(
            f"transformation_ctx {ctx!r} holds state of a {element.get('kind', 'files')!r} "
            "source, not a Delta table source; use another ctx or reset it")
    if element.get("source") not in (None, root):
        log.warning("transformation_ctx %r was last used for %s and now reads %s; its "
                    "bookmark still applies (reset the ctx to start over)", ctx,
                    element.get("source"), root)
    return element


# ----------------------------------------------------------------------- planning

@dataclass(frozen=True)
class _Planned:
    """A planned range: the files to read (with their commit times), the table as of the
    pinned version, and what the state element and manifest record."""

    rng: VersionRange | None
    latest: int | None  # the latest version seen (None: not looked up, a recorded range)
    table: TableState
    pairs: tuple[tuple[DataFileRef, int], ...]
    skipped: tuple[int, ...]
    digest: str | None  # SHA-256 of the pinned version's commit file (None: unknown)
    carried: bool  # planned from the carried state, no snapshot loaded


def _plan_from_log(root: str, previous: Mapping[str, Any], retry: VersionRange | None,
                   opts: TableOptions) -> _Planned | None:
    """An incremental run's plan from the state element and commit files alone (no snapshot);
    None when the element cannot vouch for the table (then deltalake plans, see module doc)."""
    carried = TableState.from_element(previous)
    version = int(previous["version"])
    if carried is None or not previous.get("commit_sha256"):
        log.info("Delta table %s: the bookmark carries no table state yet; opening the table "
                 "once", root)
        return None
    fs = filesystem_for(root)
    text = _commit_text(fs, root, version)
    if text is None:
        log.info("Delta table %s: the commit file of the bookmark's version %d was cleaned "
                 "up; opening the table", root, version)
        return None
    if commit_digest(text) != previous["commit_sha256"]:
        raise SourceError(f"Delta table {root} was replaced since the last run (its commit "
                          f"file of version {version} is not the one the bookmark read): "
                          "reset the ctx to read it again")
    check_probeable(carried, root)
    latest: int | None = None
    rng = retry
    if rng is None:
        hint = last_checkpoint_version(_last_checkpoint(fs, root))
        latest = find_latest(
            lambda v: _exists(fs, root, f"{_LOG}/{commit_file_name(v)}"), version, hint)
        rng = plan_range(version, latest, table=root)
    commits, last_text = _read_commits(fs, root, rng.from_version, rng.to_version)
    plan, table = plan_table_range(carried, commits, opts, table=root)
    return _Planned(rng, latest, table, tuple(_commit_refs(plan.files, table, opts)),
                    plan.skipped, commit_digest(last_text) if last_text else
                    str(previous["commit_sha256"]), True)


def _last_checkpoint(fs: FileSystem, root: str) -> str | None:
    try:
        return fs.read_text(f"{_LOG}/_last_checkpoint")
    except SinkError as exc:  # a hint only: probing from the bookmark's version works too
        log.warning("Delta table %s: %s; probing from the bookmark's version", root, exc)
        return None


def _exists(fs: FileSystem, root: str, rel: str) -> bool:
    try:
        return fs.exists(rel)
    except SinkError as exc:
        raise SourceError(f"Delta table {root}: {exc}") from exc


def _plan_with_deltalake(target: Target, previous: Mapping[str, Any] | None,
                         rng: VersionRange | None, opts: TableOptions, *, plan: bool,
                         carry: bool = True) -> _Planned:
    """The plan with the table opened by deltalake at the pinned version: the first run, an
    untracked read, a replay, or when the state element cannot vouch for the table. ``plan``:
    pin the range here (``rng`` is None) from the table's latest version; ``carry``: the run
    passes the table's state on to a next run."""
    from ..tables._delta_snapshot import load_snapshot, table_state

    root = target.root
    delta = _open(target)
    latest = int(delta.version())
    if plan:
        rng = plan_range(None if previous is None else int(previous["version"]), latest,
                         opts.starting_version, table=root)
    pinned = latest if rng is None else rng.to_version
    _at_version(delta, pinned, root)
    table = table_state(delta)
    _check_now(table, root, carry=carry)
    if previous and previous.get("table_id") not in (None, table.table_id):
        raise SourceError(f"Delta table {root} was replaced since the last run (table id "
                          f"{previous.get('table_id')} is now {table.table_id}): reset the ctx "
                          "to read it again")
    require_feed(table, opts, root)
    fs = filesystem_for(root)
    pairs: list[tuple[DataFileRef, int]] = []
    skipped: tuple[int, ...] = ()
    last_text: str | None = None
    if rng is not None and not rng.empty and rng.snapshot:
        snap = load_snapshot(root, {"versionAsOf": str(rng.to_version)})
        commits, last_text = _read_commits(fs, root, rng.to_version, rng.to_version)
        stamp = commits[0].timestamp_ms or 0
        extra = _change_constants("insert", rng.to_version, stamp) \
            if opts.read_change_feed else ()
        pairs = [(replace(r, partition=r.partition + extra), stamp) for r in snap.files]
    elif rng is not None and not rng.empty:
        commits, last_text = _read_commits(fs, root, rng.from_version, rng.to_version)
        at_start = bool(previous.get("cdf", table.cdf)) if previous else table.cdf
        planned = plan_commits(commits, opts, cdf_at_start=at_start, cdf_now=table.cdf,
                               table=root)
        check_partitions(planned.files, table.partition_columns, root)
        pairs = _commit_refs(planned.files, table, opts)
        skipped = planned.skipped
    elif rng is not None:
        last_text = _commit_text(fs, root, rng.to_version)
    return _Planned(rng, latest, table, tuple(pairs), skipped,
                    commit_digest(last_text) if last_text else None, False)


def _check_now(table: TableState, root: str, *, carry: bool) -> None:
    """The reader's refusals (protocol, features, column mapping) for the table at the pinned
    version and, when the run carries its state to a next run (``carry``), the table
    source's: commits a catalog or coordinator holds, which that run's probe could not see."""
    check_readable(table, root)
    if carry:
        check_probeable(table, root)


# ------------------------------------------------------------------------- the files

def _commit_time(ms: int | None) -> dt.datetime | None:
    return None if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


def _change_constants(change: str | None, version: int, ms: int | None
                      ) -> tuple[tuple[str, Any], ...]:
    out: tuple[tuple[str, Any], ...] = (("_commit_version", version),
                                        ("_commit_timestamp", _commit_time(ms)))
    return out + ((("_change_type", change),) if change is not None else ())


def _commit_refs(changes: tuple[ChangeFile, ...], table: TableState, opts: TableOptions
                 ) -> list[tuple[DataFileRef, int]]:
    """Each planned file as the reader takes it (its constants typed by the table's schema),
    with its commit's time in epoch milliseconds (what the manifest lists as the file's
    time)."""
    types = table.column_types()
    cdf = opts.read_change_feed
    refs = []
    for change in changes:
        values = tuple((c, partition_value(v, types.get(c, "string")))
                       for c, v in change.file.partition)
        if cdf:
            values += _change_constants(change.change_type, change.version, change.timestamp_ms)
        refs.append((DataFileRef(change.file.path, change.file.size, change.file.rows, values),
                     change.timestamp_ms or 0))
    return refs


def _schema(table: TableState, cdf: bool, root: str) -> StructType:
    import json

    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    schema = StructType.fromJson(json.loads(table.schema_json))
    clash = [c for c in CHANGE_COLUMNS if c in schema.fieldNames()] if cdf else []
    if clash:
        raise ConfigError(f"Delta table {root} has column(s) {', '.join(clash)}, which the "
                          "change data feed adds; it cannot be read with readChangeFeed=true")
    if cdf:
        schema = StructType(schema.fields + [StructField("_change_type", StringType()),
                                             StructField("_commit_version", LongType()),
                                             StructField("_commit_timestamp", TimestampType())])
    return schema


# --------------------------------------------------------------------------- the run

def read_table(job: Job, table: str, *, ctx: str | None = None, format: str = "delta",
               options: Mapping[str, str] | None = None) -> tuple[DataFrame, bool]:
    """The DataFrame of what this run of ``job`` takes from Delta table ``table``, and
    whether it is empty by plan (no Spark job made it). See the module documentation."""
    from ..tables._delta_files import read_file_list
    from ..tables._delta_snapshot import Snapshot

    if not isinstance(format, str) or format.strip().lower() != "delta":
        raise ConfigError(f"read_table reads format 'delta', 'iceberg' or 'hudi', not {format!r}")
    opts = parse_table_options(options)
    target = _target(resolve_table(table))
    root = target.root
    previous = _previous(job, ctx, root)
    tracked = ctx is not None and job.bookmark_option != "disable"
    planned: _Planned | None = None
    if not tracked:
        if ctx is None and job.bookmark_option != "disable":
            log.warning("table source %s has no transformation_ctx: bookmarks do not track "
                        "it, so every run reads all of it (give it a ctx to read only new "
                        "commits)", root)
        planned = _plan_with_deltalake(target, None, None, replace(opts, starting_version=None),
                                       plan=True, carry=False)
    elif job.from_run_id is not None:
        assert ctx is not None
        planned = _plan_with_deltalake(target, previous, _between_range(job, ctx), opts,
                                       plan=False, carry=False)
    else:
        assert ctx is not None
        retry = _retry_range(job, ctx, previous)
        if previous is not None and (retry is None or (
                not retry.snapshot and retry.from_version == int(previous["version"]) + 1)):
            planned = _plan_from_log(root, previous, retry, opts)
        if planned is None:
            planned = _plan_with_deltalake(target, previous, retry, opts, plan=retry is None)
    rng, state = planned.rng, planned.table
    cdf = opts.read_change_feed
    schema = _schema(state, cdf, root)
    constants = state.partition_columns + \
        (("_commit_version", "_commit_timestamp") if cdf else ())
    if planned.skipped:
        skipped = planned.skipped
        log.warning("Delta table %s: skipped %d commit(s) that remove or rewrite data "
                    "(skipChangeCommits): versions %s", root, len(skipped),
                    ", ".join(map(str, skipped[:20])) + (" …" if len(skipped) > 20 else ""))
    refs = [ref for ref, _ in planned.pairs]
    pinned = rng.to_version if rng is not None else planned.latest
    assert pinned is not None
    snapshot = Snapshot(root=root, version=pinned, schema_json=schema.json(),
                        partition_columns=constants, files=tuple(refs),
                        fs_config=dict(target.fs_config))
    entries = [FileEntry(ms, snapshot.file_uri(ref), ref.size) for ref, ms in planned.pairs]
    next_state = None
    if tracked and rng is not None and job.from_run_id is None:
        next_state = {"kind": STATE_KIND, "source": root, "version": rng.to_version,
                      **state.to_element(), "commit_sha256": planned.digest}
    elif tracked and previous is not None and job.from_run_id is None:
        next_state = dict(previous)
    recorded = SourceManifest(
        kind=STATE_KIND, source=root, format="delta", bookmark_option=job.bookmark_option,
        range=rng.to_json() if rng is not None else None,
        planned_files=len(refs), planned_bytes=sum(r.size for r in refs),
        previous_state=dict(previous) if previous else None, next_state=next_state,
        replay=job.replay_case(ctx) if tracked and ctx is not None else None,
        extra={"table": table, "latest_version": planned.latest, "options": opts.to_json(),
               "skipped_commits": list(planned.skipped), "change_data_feed": state.cdf,
               "table_state": "carried" if planned.carried else "loaded"},
        present=frozenset({"range", "previous_state", "next_state"}),
    )
    fault_point("after-plan")
    job.track_source(ctx, recorded.to_json(), entries, next_state)
    fault_point("after-plan-recorded")
    frame = read_file_list(job.spark, snapshot, schema)
    fault_point("mid-read")
    return frame, not refs
