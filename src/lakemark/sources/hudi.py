"""Apache Hudi copy-on-write tables as bookmarked sources: ``read_table(..., format="hudi")``.

``job.read_table("/lake/events", format="hudi", ctx="events")`` — a run:

1. opens the table with hudi-rs (the ``hudi`` package, extra ``lakemark[hudi]``), refusing
   merge-on-read tables, table versions other than 5 and 6, and tables that drop their
   partition columns from the data files;
2. lists ``.hoodie/`` (the active timeline: one listing, no data files; hudi-rs's
   ``HudiTimeline`` lists completed commits only, and the pin needs the pending writes, the
   rollbacks and the restores too) and pins an instant —
   the latest completed commit earlier than every write still pending
   (:func:`lakemark.planning.hudi.pin_instant`) — or, for a retry, the range an earlier
   attempt of the same run recorded (that of the attempt whose sink committed, else that of
   the latest failed attempt that started from the same state), so a retried run reads the
   same rows;
3. plans with :func:`lakemark.planning.hudi.plan_instants`: the first run reads the snapshot
   as of the pinned instant (file slices from hudi-rs), later runs the rows the insert commits
   after the bookmark's instant wrote, read from their base files and kept by
   ``_hoodie_commit_time`` (one filter for all files where that is exact, else per file);
   instants that update, delete or replace rows fail the run naming
   the instant and ``skipChangeCommits``; the range, its files and the next state are
   recorded in the run's manifest *before* reading;
4. reads the planned base files with Spark's Parquet reader (or, on ``s3://`` without the
   S3A connector, lakemark's pyarrow data source — the Delta source's file-list reader), with
   the table's schema including Hudi's meta columns.

Hudi tables cannot be written here: hudi-rs reads only, and Hudi's writer needs its jars.
See docs/hudi.md.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from ..errors import ConfigError, SourceError, UnsupportedError
from ..planning import FileEntry
from ..planning.hudi import (
    HUDI_STATE_KIND,
    CommitInfo,
    HudiState,
    InstantRange,
    PlannedFile,
    Timeline,
    first_range,
    parse_commit_metadata,
    parse_hudi_options,
    parse_properties,
    pin_instant,
    plan_instants,
    timeline_of,
)
from ..state.manifest import SourceManifest
from ._replay import failed_attempt_plan, recorded_plan
from ._host import SourceHost

if TYPE_CHECKING:
    from hudi import HudiTable
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from ..sinks._location import Target

__all__ = ["COMMITS_COLUMN", "read_hudi"]

log = logging.getLogger("lakemark")

#: The per-file constant column the reader filters rows by (dropped from the result).
COMMITS_COLUMN = "_lakemark_hudi_commits"
_VERSIONS = ("5", "6")


def _require_hudi() -> Any:
    try:
        import hudi
    except ImportError as exc:
        raise ConfigError("Hudi table sources need the hudi package (hudi-rs): "
                          "pip install 'lakemark[hudi]'") from exc
    return hudi


def _target(table: str) -> Target:
    from ..sinks._location import resolve_target

    if not isinstance(table, str) or not table.strip():
        raise ConfigError("read_table(format='hudi') needs a table: a path or an s3:// URI")
    location = table.strip()
    if location.lower().startswith(("s3a://", "s3n://")):
        location = "s3://" + location.partition("://")[2]
    return resolve_target(location)


def _open(target: Target) -> HudiTable:
    """The table as hudi-rs opens it; SourceError/UnsupportedError for what is not read
    (checked on ``hoodie.properties`` first, so the error names the property)."""
    hudi = _require_hudi()
    try:
        props = parse_properties(_hoodie_file(target, "hoodie.properties").decode("utf-8"))
    except SourceError:
        raise SourceError(f"{target.root} is not a Hudi table (no .hoodie/hoodie.properties)"
                          ) from None
    kind = props.get("hoodie.table.type", "COPY_ON_WRITE").upper()
    if kind != "COPY_ON_WRITE":
        raise UnsupportedError(
            f"Hudi table {target.root} is a {kind} table: lakemark's Hudi source reads "
            "copy-on-write tables only (merging log files is not supported)")
    version = props.get("hoodie.table.version", "")
    if version not in _VERSIONS:
        raise UnsupportedError(
            f"Hudi table {target.root} has table version {version or '?'}: lakemark's Hudi "
            f"source reads table versions {' and '.join(_VERSIONS)} (Hudi 0.12 to 0.15)")
    if props.get("hoodie.datasource.write.drop.partition.columns", "false").lower() == "true":
        raise UnsupportedError(
            f"Hudi table {target.root} drops its partition columns from the data files "
            "(hoodie.datasource.write.drop.partition.columns=true), which this source does "
            "not read")
    if props.get("hoodie.populate.meta.fields", "true").lower() == "false":
        raise UnsupportedError(
            f"Hudi table {target.root} does not write Hudi's meta columns "
            "(hoodie.populate.meta.fields=false), so the rows a commit wrote cannot be told "
            "apart; this source reads tables with meta columns only")
    options = {k.lower(): v for k, v in (target.storage_options() or {}).items()}
    try:
        table = hudi.HudiTableBuilder.from_base_uri(target.root) \
            .with_storage_options(options).build()
    except Exception as exc:  # hudi-rs's HudiCoreError
        raise SourceError(f"Hudi table {target.root} cannot be opened: {exc}") from exc
    if table.is_mor:
        raise UnsupportedError(f"Hudi table {target.root} is a {table.table_type} table: "
                               "lakemark's Hudi source reads copy-on-write tables only")
    return table


def _timeline(target: Target) -> Timeline:
    """The active timeline, from one listing of ``.hoodie/``."""
    import pyarrow.fs as pafs

    fs = target.filesystem()
    infos = fs.get_file_info(pafs.FileSelector(target.absolute(".hoodie"), recursive=False))
    names = [i.base_name for i in infos if i.type == pafs.FileType.File]
    return timeline_of(names)


def _hoodie_file(target: Target, name: str) -> bytes:
    fs = target.filesystem()
    try:
        with fs.open_input_stream(target.absolute(f".hoodie/{name}")) as handle:
            return bytes(handle.read())
    except (FileNotFoundError, OSError) as exc:
        raise SourceError(f"Hudi table {target.root}: timeline file .hoodie/{name} cannot be "
                          f"read ({exc}); if it was archived since the last run, reset the "
                          "ctx to read the table again") from exc


def _rolled_back(target: Target, time: str) -> CommitInfo | None:
    """A completed rollback's instants (from its Avro metadata), or None if unreadable."""
    import fastavro

    try:
        records = list(fastavro.reader(io.BytesIO(_hoodie_file(target, f"{time}.rollback"))))
        undone = [str(t) for r in records if isinstance(r, dict)
                  for t in (r.get("commitsRollback") or [])]
    except Exception:  # noqa: BLE001 - unreadable metadata: the planner refuses the instant
        return None
    return CommitInfo(time, "rollback", rolled_back=tuple(undone))


def _details(target: Target, timeline: Timeline, after: str | None,
             through: str | None) -> dict[str, CommitInfo]:
    """The metadata of the completed instants in ``(after, through]`` the planner needs."""
    out: dict[str, CommitInfo] = {}
    if through is None:
        return out
    for instant in timeline.completed:
        if (after is not None and instant.time <= after) or instant.time > through:
            continue
        if instant.action in ("commit", "replacecommit"):
            text = _hoodie_file(target, f"{instant.time}.{instant.action}")
            out[instant.time] = parse_commit_metadata(instant.time, instant.action,
                                                      text.decode("utf-8"))
        elif instant.action == "rollback":
            info = _rolled_back(target, instant.time)
            if info is not None:
                out[instant.time] = info
    return out


def _snapshot_files(table: HudiTable, root: str, pinned: str | None) -> list[PlannedFile]:
    """The base files of the snapshot as of ``pinned`` (hudi-rs's file slices)."""
    if pinned is None:
        return []
    hudi = _require_hudi()
    try:
        slices = table.get_file_slices(hudi.HudiReadOptions().with_as_of_timestamp(pinned))
    except Exception as exc:  # HudiCoreError
        raise SourceError(f"Hudi table {root}: the file slices as of instant {pinned} cannot "
                          f"be listed: {exc}") from exc
    out = []
    for part in slices:
        if part.has_log_files():
            raise UnsupportedError(f"Hudi table {root}: file group {part.file_id} has log "
                                   "files, which this source does not merge")
        out.append(PlannedFile(part.base_file_relative_path(), int(part.base_file_size),
                               str(part.creation_instant_time)))
    return sorted(out, key=lambda f: (f.instant, f.path))


def _instant_ms(instant: str | None) -> int:
    """An instant time as epoch milliseconds (read as UTC)."""
    if not instant:
        return 0
    text = instant.ljust(17, "0")
    when = dt.datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000) + int(text[14:17])


def _spark_schema(table: HudiTable) -> StructType:
    """The table's columns, Hudi's meta columns first, all nullable."""
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructField, StructType

    schema = from_arrow_schema(table.get_schema_with_meta_fields())
    return StructType([StructField(f.name, f.dataType, True, f.metadata)
                       for f in schema.fields])


def _read(job: SourceHost, target: Target, schema: StructType, rng: InstantRange
          ) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from ..tables._delta_files import read_file_list
    from ..tables._delta_snapshot import DataFileRef, Snapshot

    one = rng.range_filter
    filtered = not rng.full and one is None  # each file filtered by its own commits
    constants = (COMMITS_COLUMN,) if filtered else ()
    refs = tuple(DataFileRef(f.path, f.size, None,
                             ((COMMITS_COLUMN, " ".join(f.commits)),) if filtered else ())
                 for f in rng.files)
    full = StructType(schema.fields + [StructField(COMMITS_COLUMN, StringType())]) \
        if filtered else schema
    snapshot = Snapshot(root=target.root, version=0, schema_json=full.json(),
                        partition_columns=constants, files=refs,
                        fs_config=dict(target.fs_config))
    frame = read_file_list(job.spark, snapshot, full)
    if one is not None:  # one scan, one filter: the range's commits
        return frame.where(F.col("_hoodie_commit_time").isin(list(one))) if refs else frame
    if not filtered or not refs:
        return frame.drop(COMMITS_COLUMN) if filtered else frame
    keep = F.array_contains(F.split(F.col(COMMITS_COLUMN), " "), F.col("_hoodie_commit_time"))
    return frame.where(keep).drop(COMMITS_COLUMN)


# ------------------------------------------------------------------------- the range

def _recorded(inputs: Any, ctx: str) -> SourceManifest | None:
    return recorded_plan(inputs, ctx, HUDI_STATE_KIND)


def _retry_range(job: SourceHost, ctx: str, previous: Mapping[str, Any] | None
                 ) -> dict[str, Any] | None:
    """The range an earlier attempt of this run recorded: that of the attempt whose sink
    committed, else that of the latest failed attempt that started from the same state."""
    pinned = job.replay_input(ctx, HUDI_STATE_KIND)
    if pinned is not None and isinstance(pinned.manifest, SourceManifest) \
            and pinned.manifest.range:
        return dict(pinned.manifest.range)
    plan = failed_attempt_plan(job, ctx, HUDI_STATE_KIND, previous)
    return dict(plan.range) if plan is not None and plan.range else None


def _between_range(job: SourceHost, ctx: str, root: str) -> dict[str, Any]:
    """Glue's job-bookmark-from/-to: from the first run's start to the last run's end."""
    assert job.from_run_id is not None and job.to_run_id is not None
    ranges = [dict(plan.range)
              for run in job.store.runs_between(job.name, job.from_run_id, job.to_run_id)
              for inputs in job.store.run_inputs(run.run_id)
              if (plan := _recorded(inputs, ctx)) is not None and plan.range]
    if not ranges:
        raise SourceError(f"no run between {job.from_run_id} and {job.to_run_id} read Hudi "
                          f"table {root} as ctx {ctx!r}")
    return {"after": ranges[0].get("after"), "through": ranges[-1].get("through"),
            "mode": ranges[0].get("mode")}


def _as_recorded(rng: InstantRange, recorded: Mapping[str, Any], root: str) -> InstantRange:
    """A replayed range, checked to take the instants the earlier attempt took, with the
    rollbacks that attempt knew of (not those completed since, which it cannot vouch for)."""
    taken = [str(t) for t in recorded.get("take") or ()]
    if "take" in recorded and not rng.full and list(rng.take) != taken:
        gone = sorted(set(taken) - set(rng.take)) or sorted(set(rng.take) ^ set(taken))
        raise SourceError(
            f"Hudi table {root}: this attempt must replay the instants an earlier attempt "
            f"read, but {', '.join(gone)} no longer read the same (rolled back since?); reset "
            "the ctx to read the table again")
    return replace(rng, known=tuple(str(k) for k in recorded.get("known_undo") or ()))


# --------------------------------------------------------------------------- the run

def read_hudi(job: SourceHost, table: str, *, ctx: str | None = None,
              options: Mapping[str, str] | None = None) -> tuple[DataFrame, bool]:
    """The DataFrame of what this run takes from Hudi table ``table``, and whether it is
    empty by plan. See the module documentation."""
    target = _target(table)
    root = target.root
    opts = parse_hudi_options(options, root)
    hudi_table = _open(target)
    timeline = _timeline(target)
    latest, held = pin_instant(timeline)
    tracked = ctx is not None and job.bookmark_option != "disable"
    element = job.state_of(ctx) if tracked and ctx is not None else None
    previous = HudiState.from_json(element, root, str(ctx)) if element else None
    if previous is not None and previous.source != root:
        log.warning("transformation_ctx %r was last used for %s and now reads %s; its "
                    "bookmark still applies (reset the ctx to start over)", ctx,
                    previous.source, root)
    after = previous.instant if previous is not None else None
    bookmark = after
    pinned = latest
    full = False
    recorded_range: dict[str, Any] | None = None
    if not tracked:
        if ctx is None and job.bookmark_option != "disable":
            log.warning("Hudi source %s has no transformation_ctx: bookmarks do not track it, "
                        "so every run reads all of it (give it a ctx to read only new "
                        "commits)", root)
        after, bookmark, full = None, None, True
    elif job.from_run_id is not None:
        assert ctx is not None
        recorded_range = _between_range(job, ctx, root)
    else:
        assert ctx is not None
        recorded_range = _retry_range(job, ctx, element)
    if recorded_range is not None:
        after, pinned = recorded_range.get("after"), recorded_range.get("through")
        full = recorded_range.get("mode") == "snapshot"
        bookmark = None
    elif tracked and previous is None:
        after, full = first_range(pinned, opts.starting_instant)
    if recorded_range is None and held is not None:
        log.warning("Hudi table %s: instant %s (%s, %s) has not completed; this run reads "
                    "up to instant %s, before it", root, held.time, held.action, held.state,
                    pinned)
    details = {} if full else _details(target, timeline, after, pinned)
    rng = plan_instants(
        root, timeline, after, pinned, details, full=full, bookmark=bookmark,
        known=previous.known if previous is not None else (),
        skip_change_commits=opts.skip_change_commits,
        snapshot_files=_snapshot_files(hudi_table, root, pinned) if full else ())
    if recorded_range is not None:
        rng = _as_recorded(rng, recorded_range, root)
    if rng.skipped:
        log.warning("Hudi table %s: skipped %d instant(s) that update, delete or replace rows "
                    "(skipChangeCommits): %s", root, len(rng.skipped), ", ".join(rng.skipped))
    entries = [FileEntry(_instant_ms(f.instant), f"{root.rstrip('/')}/{f.path}", f.size)
               for f in rng.files]
    next_state = rng.next_state.to_json() if tracked and job.from_run_id is None else None
    recorded = SourceManifest(
        kind=HUDI_STATE_KIND, source=root, format="hudi", bookmark_option=job.bookmark_option,
        range=rng.to_json(), planned_files=len(entries),
        planned_bytes=sum(e.size for e in entries),
        previous_state=previous.to_json() if previous is not None else None,
        next_state=next_state,
        replay=job.replay_case(ctx) if tracked and ctx is not None else None,
        extra={"table": table, "table_name": hudi_table.table_name,
               "latest_instant": latest, "options": opts.to_json(),
               "skipped_instants": list(rng.skipped),
               "pending_instant": held.time if held is not None else None},
        present=frozenset({"range", "previous_state", "next_state"}),
    )
    fault_point("after-plan")
    job.track_source(ctx, recorded.to_json(), entries, next_state)
    fault_point("after-plan-recorded")
    frame = _read(job, target, _spark_schema(hudi_table), rng)
    fault_point("mid-read")
    return frame, not entries
