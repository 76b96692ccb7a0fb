"""Delta tables as bookmarked sources: ``Job.read_table(table, ctx=...)``.

A run of a tracked table source (one with a ``ctx``):

1. pins the table's latest version when it plans — or, for a retry of a failed attempt of the
   same run that started from the same state (and for an attempt whose sink committed), the
   range that attempt recorded, so a retried run reads exactly the same input;
2. plans with :mod:`lakemark.planning.delta_log`: on the first run the snapshot at the pinned
   version (deltalake resolves it from the nearest checkpoint), later the commits after the
   bookmark's version, read one commit file each by version number (``_delta_log/<v>.json``:
   never a listing or replay of the whole log, so planning does not grow with history);
3. records the range, its files and the state element in the run's manifest *before* reading
   (the element, the pinned version, commits with the run);
4. reads the planned files with Spark's Parquet reader (or lakemark's data source on S3
   without S3A), partition values and change-feed columns as constants.

Options (Delta's streaming-source names): ``readChangeFeed``, ``skipChangeCommits``,
``startingVersion``. See docs/delta.md, "Delta tables as incremental sources".
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from ..errors import ConfigError, SourceError
from ..planning import FileEntry
from ..planning.delta_log import (
    CDF_PROPERTY,
    ChangeFile,
    Commit,
    VersionRange,
    commit_file_name,
    parse_commit,
    parse_table_options,
    partition_value,
    plan_commits,
    plan_range,
)
from ..state.manifest import SourceManifest

if TYPE_CHECKING:
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from ..job import Job
    from ..sinks._location import Target
    from ..tables._delta_snapshot import DataFileRef

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
    from ..errors import SinkError
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


def _read_commits(target: Target, first: int, last: int) -> list[Commit]:
    """The commits ``first`` .. ``last``, each read from its own commit file by name."""
    fs = target.filesystem()
    out = []
    for version in range(first, last + 1):
        path = target.absolute(f"_delta_log/{commit_file_name(version)}")
        try:
            with fs.open_input_stream(path) as handle:
                text = handle.read().decode("utf-8")
        except (FileNotFoundError, OSError) as exc:
            raise SourceError(
                f"Delta table {target.root}: the commit file of version {version} cannot be "
                f"read ({exc}); if the log was cleaned up since the last run, reset the ctx "
                "to read the table again") from exc
        out.append(parse_commit(version, text.splitlines()))
    return out


# ------------------------------------------------------------------------- the range

def _recorded(inputs: Any, ctx: str) -> SourceManifest | None:
    plan = inputs.manifest
    if inputs.ctx == ctx and isinstance(plan, SourceManifest) and plan.kind == STATE_KIND \
            and plan.range:
        return plan
    return None


def _retry_range(job: Job, ctx: str, previous: Mapping[str, Any] | None) -> VersionRange | None:
    """The range an earlier attempt of this run recorded: that of the attempt whose sink
    committed (replayed exactly), else that of the latest failed attempt that started from
    the same state. None when there is none (plan afresh)."""
    pinned = job.replay_input(ctx, STATE_KIND)
    if pinned is not None:
        committed = pinned.manifest
        assert isinstance(committed, SourceManifest) and committed.range
        return VersionRange.from_json(committed.range)
    record = job.run
    if record.attempt == 0 or not job.tracking:
        return None
    for earlier in reversed(job.store.list_runs(job.name)):
        if earlier.run != record.run or earlier.run_id == record.run_id \
                or earlier.status != "FAILED":
            continue
        for inputs in job.store.run_inputs(earlier.run_id):
            plan = _recorded(inputs, ctx)
            if plan is not None and plan.previous_state == (dict(previous) if previous else None):
                assert plan.range is not None
                return VersionRange.from_json(plan.range)
        return None  # only the latest failed attempt counts
    return None


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


# ------------------------------------------------------------------------- the files

def _commit_time(ms: int | None) -> dt.datetime | None:
    return None if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


def _change_constants(change: str | None, version: int, ms: int | None
                      ) -> tuple[tuple[str, Any], ...]:
    out: tuple[tuple[str, Any], ...] = (("_commit_version", version),
                                        ("_commit_timestamp", _commit_time(ms)))
    return out + ((("_change_type", change),) if change is not None else ())


def _commit_refs(changes: tuple[ChangeFile, ...], types: Mapping[str, str],
                 cdf: bool) -> list[tuple[DataFileRef, int]]:
    """Each planned file as the reader takes it (its constants typed), with its commit's time
    in epoch milliseconds (what the manifest lists as the file's time)."""
    from ..tables._delta_snapshot import DataFileRef

    refs = []
    for change in changes:
        values = tuple((c, partition_value(v, types.get(c, "string")))
                       for c, v in change.file.partition)
        if cdf:
            values += _change_constants(change.change_type, change.version, change.timestamp_ms)
        refs.append((DataFileRef(change.file.path, change.file.size, change.file.rows, values),
                     change.timestamp_ms or 0))
    return refs


def _schema(table: DeltaTable, cdf: bool) -> StructType:
    import json

    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    schema = StructType.fromJson(json.loads(table.schema().to_json()))
    clash = [c for c in CHANGE_COLUMNS if c in schema.fieldNames()] if cdf else []
    if clash:
        raise ConfigError(f"Delta table has column(s) {', '.join(clash)}, which the change "
                          "data feed adds; it cannot be read with readChangeFeed=true")
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
    from ..tables._delta_snapshot import Snapshot, _check_features, load_snapshot

    if not isinstance(format, str) or format.strip().lower() != "delta":
        raise ConfigError(f"read_table reads format 'delta' or 'iceberg', not {format!r}")
    opts = parse_table_options(options)
    target = _target(resolve_table(table))
    root = target.root
    delta = _open(target)
    latest = int(delta.version())
    previous = _previous(job, ctx, root)
    tracked = ctx is not None and job.bookmark_option != "disable"
    if not tracked:
        if ctx is None and job.bookmark_option != "disable":
            log.warning("table source %s has no transformation_ctx: bookmarks do not track "
                        "it, so every run reads all of it (give it a ctx to read only new "
                        "commits)", root)
        rng: VersionRange | None = VersionRange(0, latest, snapshot=True)
    elif job.from_run_id is not None:
        assert ctx is not None
        rng = _between_range(job, ctx)
    else:
        assert ctx is not None
        rng = _retry_range(job, ctx, previous) or plan_range(
            None if previous is None else int(previous["version"]), latest,
            opts.starting_version, table=root)
    pinned = latest if rng is None else rng.to_version
    _at_version(delta, pinned, root)
    _check_features(delta, root)
    metadata = delta.metadata()
    cdf_now = str((metadata.configuration or {}).get(CDF_PROPERTY, "false")).lower() == "true"
    if previous and previous.get("table_id") not in (None, metadata.id):
        raise SourceError(f"Delta table {root} was replaced since the last run (table id "
                          f"{previous.get('table_id')} is now {metadata.id}): reset the ctx "
                          "to read it again")
    if opts.read_change_feed and not cdf_now:
        raise ConfigError(f"Delta table {root} does not have the change data feed on "
                          f"({CDF_PROPERTY}); readChangeFeed=true needs it")
    cdf = opts.read_change_feed
    schema = _schema(delta, cdf)
    parts = tuple(metadata.partition_columns)
    constants = parts + (("_commit_version", "_commit_timestamp") if cdf else ())
    pairs: list[tuple[DataFileRef, int]] = []
    skipped: tuple[int, ...] = ()
    if rng is not None and not rng.empty and rng.snapshot:
        snap = load_snapshot(root, {"versionAsOf": str(rng.to_version)})
        stamp = _read_commits(target, rng.to_version, rng.to_version)[0].timestamp_ms or 0
        extra = _change_constants("insert", rng.to_version, stamp) if cdf else ()
        pairs = [(replace(r, partition=r.partition + extra), stamp) for r in snap.files]
    elif rng is not None and not rng.empty:
        commits = _read_commits(target, rng.from_version, rng.to_version)
        at_start = bool(previous.get("cdf", cdf_now)) if previous else cdf_now
        planned = plan_commits(commits, opts, cdf_at_start=at_start, cdf_now=cdf_now,
                               table=root)
        types = {f.name: f.dataType.typeName() for f in schema.fields}
        pairs = _commit_refs(planned.files, types, cdf)
        skipped = planned.skipped
        if skipped:
            log.warning("Delta table %s: skipped %d commit(s) that remove or rewrite data "
                        "(skipChangeCommits): versions %s", root, len(skipped),
                        ", ".join(map(str, skipped[:20])) + (" …" if len(skipped) > 20 else ""))
    refs = [ref for ref, _ in pairs]
    snapshot = Snapshot(root=root, version=pinned, schema_json=schema.json(),
                        partition_columns=constants, files=tuple(refs),
                        fs_config=dict(target.fs_config))
    entries = [FileEntry(ms, snapshot.file_uri(ref), ref.size) for ref, ms in pairs]
    next_state = None
    if tracked and rng is not None and job.from_run_id is None:
        next_state = {"kind": STATE_KIND, "source": root, "version": rng.to_version,
                      "table_id": metadata.id, "cdf": cdf_now}
    elif tracked and previous is not None and job.from_run_id is None:
        next_state = dict(previous)
    recorded = SourceManifest(
        kind=STATE_KIND, source=root, format="delta", bookmark_option=job.bookmark_option,
        range=rng.to_json() if rng is not None else None,
        planned_files=len(refs), planned_bytes=sum(r.size for r in refs),
        previous_state=dict(previous) if previous else None, next_state=next_state,
        replay=job.replay_case(ctx) if tracked and ctx is not None else None,
        extra={"table": table, "latest_version": latest, "options": opts.to_json(),
               "skipped_commits": list(skipped), "change_data_feed": cdf_now},
        present=frozenset({"range", "previous_state", "next_state"}),
    )
    fault_point("after-plan")
    job.track_source(ctx, recorded.to_json(), entries, next_state)
    fault_point("after-plan-recorded")
    frame = read_file_list(job.spark, snapshot, schema)
    fault_point("mid-read")
    return frame, not refs

