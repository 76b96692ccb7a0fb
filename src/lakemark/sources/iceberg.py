"""Incremental Iceberg table sources: only the snapshots appended since the last run.

``job.read_table("db.events", format="iceberg", ctx="events")`` — a run:

1. resolves the catalog (option ``iceberg_catalog``, else ``LAKEMARK_ICEBERG_CATALOG``, else
   the default; see :mod:`lakemark.catalog._iceberg`) and loads the table;
2. pins a snapshot: ``main``'s current one — or, for a retried attempt of a run whose sink
   committed, the snapshot that attempt pinned (read from its manifest), so the retry replays
   exactly what the committed write was computed from;
3. plans the snapshot range with :func:`lakemark.planning.iceberg.plan_snapshots` (first run:
   the whole table as of the pinned snapshot; then the data files added by the ``append``
   snapshots after the bookmarked one; overwrite/delete snapshots fail the run unless skipped
   by option) and records it — range, data files, next state — in the run's manifest
   (``kind="table"``, ``format="iceberg"``) *before* reading; the state element commits with
   the run;
4. reads the data files with Spark's own Parquet reader on the file list (distributed,
   column pruning, no Python on the executors) — for files on S3 without the S3A connector,
   lakemark's file-list data source (pyarrow on the executors), as the Delta table source
   does — with the table's schema as of the pinned snapshot (columns an older file lacks
   read as null). Delete files (row-level deletes of
   format version 2) are refused with an error naming the table and the snapshot: the files'
   rows would be read without their deletes.

Without a ``ctx``, or with bookmarks disabled, the whole table at its current snapshot is read
and no state is kept; with ``pause`` the range is read but the bookmark does not move; with
``job-bookmark-from``/``-to`` the run reads the snapshots the runs in between read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._fault import fault_point
from ..catalog._iceberg_light import LightSnapshot, LightTable, load_light
from ..catalog._iceberg import (
    CatalogChoice,
    load_iceberg_catalog,
    parse_table_name,
    resolve_iceberg_catalog,
    spec_for_table,
)
from ..errors import ConfigError, SourceError
from ..planning import FileEntry
from ..planning.iceberg_manifests import (
    DELETES_CONTENT,
    entries_added_by,
    manifests_added_by,
)
from ..planning.iceberg import (
    ICEBERG_STATE_KIND,
    SKIP_CHANGES,
    SKIP_DELETE,
    SKIP_OVERWRITE,
    IcebergState,
    SnapshotInfo,
    SnapshotRange,
    plan_snapshots,
    skip_options,
)
from ..state.manifest import SourceManifest

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyspark.sql import DataFrame, SparkSession

    from ..job import Job

__all__ = ["CATALOG_OPTION", "ICEBERG_STATE_KIND", "MANIFEST_KIND", "READ_OPTIONS",
           "check_options", "open_light", "open_table", "read_files_of", "read_iceberg",
           "snapshot_infos", "spark_schema", "table_files"]

log = logging.getLogger("lakemark")
T = TypeVar("T")

#: The manifest kind of a table source (the Delta table source uses it too).
MANIFEST_KIND = "table"
CATALOG_OPTION = "iceberg_catalog"
READ_OPTIONS = (CATALOG_OPTION, SKIP_OVERWRITE, SKIP_DELETE, SKIP_CHANGES)


def check_options(table: str, options: Mapping[str, str]) -> dict[str, str]:
    """The options, with unknown ones refused by name (ConfigError)."""
    known = {o.lower() for o in READ_OPTIONS}
    unknown = sorted(k for k in options if k.lower() not in known)
    if unknown:
        raise ConfigError(f"option(s) {', '.join(unknown)} are not supported for Iceberg source "
                          f"{table}; supported: {', '.join(READ_OPTIONS)}")
    return {str(k): str(v) for k, v in options.items()}


def open_table(table: str, catalog: CatalogChoice) -> Table:
    """The Iceberg table ``table`` (ConfigError for a bad name/catalog, SourceError if absent)."""
    return _opened(table, catalog, lambda c, identifier: c.load_table(identifier))


def open_light(table: str, catalog: CatalogChoice) -> LightTable | None:
    """What an incremental run needs of ``table``'s current metadata, read without parsing it
    into pyiceberg's model (None: open it with :func:`open_table`;
    :mod:`lakemark.catalog._iceberg_light`). Errors as :func:`open_table`."""
    return _opened(table, catalog, load_light)


def _opened(table: str, catalog: CatalogChoice, load: Callable[[Any, tuple[str, ...]], T]) -> T:
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    name = parse_table_name(table)
    spec = spec_for_table(resolve_iceberg_catalog(catalog), name)
    try:
        return load(load_iceberg_catalog(spec), name.identifier)
    except (NoSuchTableError, NoSuchNamespaceError):
        raise SourceError(f"Iceberg table {name} does not exist in catalog "
                          f"{spec.name!r} (from {spec.source})") from None


def _info(snapshot: Any) -> SnapshotInfo:
    if isinstance(snapshot, LightSnapshot):
        operation = snapshot.operation
    else:
        operation = snapshot.summary.operation.value if snapshot.summary is not None \
            else "append"
    return SnapshotInfo(snapshot.snapshot_id, snapshot.parent_snapshot_id, str(operation),
                        snapshot.timestamp_ms)


def _snapshot_map(table: Table | LightTable) -> Mapping[int, Any]:
    if isinstance(table, LightTable):
        return table.snapshots
    return {s.snapshot_id: s for s in table.snapshots()}  # snapshot_by_id is a linear search


def snapshot_infos(table: Table | LightTable, pinned: int | None = None,
                   stop: int | None = None) -> list[SnapshotInfo]:
    """What the planner needs of the table's snapshots: all of them, or with ``pinned`` only
    its ancestry, newest first, down to ``stop`` (inclusive) or the root — all that
    :func:`plan_snapshots` looks at, so a run's planning does not grow with the history."""
    by_id = _snapshot_map(table)
    if pinned is None:
        return [_info(s) for s in by_id.values()]
    out: list[SnapshotInfo] = []
    current: int | None = pinned
    while current is not None and current in by_id and len(out) <= len(by_id):
        out.append(_info(by_id[current]))
        if current == stop:
            break
        current = out[-1].parent_id
    return out


def _delete_files_error(table: str, snapshot: int | None, count: int) -> SourceError:
    return SourceError(
        f"Iceberg table {table} has {count} delete file(s) (row-level deletes) at snapshot "
        f"{snapshot}: lakemark reads data files with Spark's Parquet reader and cannot apply "
        "them; compact the table (rewrite its data files) or read it with an Iceberg engine")


def _delete_file_count(table: Table, snapshot_id: int) -> int:
    """How many delete files the snapshot's delete manifests list."""
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        return 0
    from pyiceberg.manifest import ManifestContent

    return sum(len(m.fetch_manifest_entry(table.io, discard_deleted=True))
               for m in snapshot.manifests(table.io) if m.content == ManifestContent.DELETES)


def table_files(table: Table | LightTable, rng: SnapshotRange) -> list[FileEntry]:
    """The data files the run reads: ``mtime`` is the adding snapshot's time (the whole table
    at ``through`` for a full range, planned by pyiceberg; for an incremental range, the files
    each snapshot added, read from the manifests it wrote as
    :mod:`lakemark.planning.iceberg_manifests` says). SourceError when delete files would
    apply."""
    name = rng.table
    if rng.through is None:
        return []
    if rng.full:
        assert not isinstance(table, LightTable), "a full range is planned with pyiceberg"
        try:
            tasks = list(table.scan(snapshot_id=rng.through).plan_files())
        except ValueError as exc:  # pyiceberg refuses equality delete files when planning
            if "equality delete" not in str(exc):
                raise
            raise _delete_files_error(name, rng.through, _delete_file_count(table, rng.through)
                                      ) from None
        deletes = sum(len(t.delete_files) for t in tasks)
        if deletes:
            raise _delete_files_error(name, rng.through, deletes)
        pinned = table.snapshot_by_id(rng.through)
        when = pinned.timestamp_ms if pinned is not None else 0
        return [FileEntry(when, t.file.file_path, int(t.file.file_size_in_bytes))
                for t in tasks]
    from ._iceberg_manifests import manifest_entries, manifest_list

    out: list[FileEntry] = []
    by_id = _snapshot_map(table)
    for snapshot_id in rng.take:
        snapshot = by_id.get(snapshot_id)
        if snapshot is None:
            raise SourceError(f"Iceberg table {name} has no snapshot {snapshot_id} (expired?)")
        for manifest in manifests_added_by(manifest_list(table.io, snapshot.manifest_list),
                                           snapshot_id):
            added = entries_added_by(manifest_entries(table.io, manifest), manifest,
                                     snapshot_id)
            if added and manifest.content == DELETES_CONTENT:
                raise _delete_files_error(name, snapshot_id, len(added))
            out.extend(FileEntry(snapshot.timestamp_ms, e.file_path, e.file_size)
                       for e in added)
    return out


def spark_schema(table: Table | LightTable, snapshot_id: int | None) -> Any:
    """The table's schema as of ``snapshot_id`` (current without one), as a Spark StructType."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if isinstance(table, LightTable):
        return from_arrow_schema(table.arrow_schema(snapshot_id))
    schema = table.schema()
    snapshot = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snapshot is not None and snapshot.schema_id is not None:
        schema = table.schemas().get(snapshot.schema_id, schema)
    return from_arrow_schema(schema.as_arrow())


def _is_s3(path: str) -> bool:
    return path.lower().startswith(("s3://", "s3a://", "s3n://"))


def read_files_of(spark: SparkSession, table: str, schema: Any,
                  files: Sequence[FileEntry]) -> DataFrame:
    """The rows of ``files`` with ``schema`` (empty: no files), read as the Delta table source
    reads its file lists: Spark's own Parquet reader where the JVM can open the files (local
    files; ``s3a://`` when the S3A connector is in the session), else lakemark's file-list
    data source (pyarrow on the executors, :mod:`lakemark.tables._delta_files`) for data
    files on S3. Columns are matched by name; a column a file lacks reads as null."""
    from ..sinks._spark_writer import has_s3a

    if not files:
        return spark.createDataFrame([], schema)
    on_s3 = [f.path for f in files if _is_s3(f.path)]
    if not on_s3:
        return spark.read.schema(schema).parquet(*(f.path for f in files))
    if has_s3a(spark):
        return spark.read.schema(schema).parquet(*(
            "s3a://" + f.path.split("://", 1)[1] if _is_s3(f.path) else f.path for f in files))
    if len(on_s3) != len(files):
        local = next(f.path for f in files if not _is_s3(f.path))
        raise SourceError(f"Iceberg table {table} has data files both on S3 ({on_s3[0]}) and "
                          f"elsewhere ({local}); without the S3A connector lakemark reads "
                          "them only when all are on S3")
    return _read_s3_files(spark, table, schema, files)


def _read_s3_files(spark: SparkSession, table: str, schema: Any,
                   files: Sequence[FileEntry]) -> DataFrame:
    from ..storage import arrow_fs_config
    from ..tables._delta_files import read_file_list
    from ..tables._delta_snapshot import DataFileRef, Snapshot

    bucket = files[0].path.split("://", 1)[1].split("/", 1)[0]
    snapshot = Snapshot(
        root=f"s3://{bucket}", version=0, schema_json=schema.json(), partition_columns=(),
        files=tuple(DataFileRef(path=f.path, size=f.size, rows=None, partition=())
                    for f in files),
        fs_config=arrow_fs_config(f"s3://{bucket}"))
    return read_file_list(spark, snapshot, schema)


def _from_to_range(job: Job, ctx: str, table: str) -> tuple[int | None, int | None]:
    """``job-bookmark-from``/``-to``: the first ``after`` and the last ``through`` of the
    ranges the runs in between read."""
    assert job.from_run_id is not None and job.to_run_id is not None
    after: int | None = None
    through: int | None = None
    first = True
    for run in job.store.runs_between(job.name, job.from_run_id, job.to_run_id):
        for inputs in job.store.run_inputs(run.run_id):
            plan = inputs.manifest
            rng = plan.range if inputs.ctx == ctx and isinstance(plan, SourceManifest) else None
            if not rng or rng.get("through") is None:
                continue
            if first:
                after, first = rng.get("after"), False
            through = rng.get("through")
    if first:
        raise SourceError(f"no run between {job.from_run_id} and {job.to_run_id} read Iceberg "
                          f"table {table} as ctx {ctx!r}")
    return after, through


def _current_snapshot_id(table: Table | LightTable) -> int | None:
    if isinstance(table, LightTable):
        return table.current_snapshot_id
    current = table.current_snapshot()
    return current.snapshot_id if current is not None else None


def read_iceberg(job: Job, table: str, *, ctx: str | None,
                 options: Mapping[str, str]) -> tuple[DataFrame, bool]:
    """The rows of ``table`` this run of ``job`` takes and whether there are none (see the
    module docstring)."""
    opts = check_options(table, options)
    skip_overwrite, skip_delete = skip_options(opts)
    catalog = next((v for k, v in opts.items() if k.lower() == CATALOG_OPTION), None)
    name = str(parse_table_name(table))
    tracked = ctx is not None and job.bookmark_option != "disable"
    element = job.state_of(ctx) if tracked and ctx is not None else None
    previous = IcebergState.from_json(element, name) if element else None
    after = previous.snapshot_id if previous is not None else None
    pinned: int | None = None
    fixed = True  # the range's end comes from a recorded run, not the table
    replayed = job.replay_input(ctx, MANIFEST_KIND) if tracked and ctx is not None else None
    if replayed is not None and isinstance(replayed.manifest, SourceManifest) \
            and replayed.manifest.range:
        recorded_range = replayed.manifest.range
        after, pinned = recorded_range.get("after"), recorded_range.get("through")
    elif tracked and ctx is not None and job.from_run_id is not None:
        after, pinned = _from_to_range(job, ctx, name)
    else:
        fixed = False
    if not tracked:
        if ctx is None and job.bookmark_option != "disable":
            log.warning("Iceberg source %s has no transformation_ctx: bookmarks do not track "
                        "it, so every run reads all of it (give it a ctx to read only new "
                        "snapshots)", name)
        after = None
    # A run continuing from a snapshot reads the metadata lightly; a whole-table read (and any
    # metadata the light reader does not take) goes through pyiceberg.
    iceberg: Table | LightTable | None = open_light(table, catalog) if after is not None \
        else None
    if iceberg is None:
        iceberg = open_table(table, catalog)
    if not fixed:
        pinned = _current_snapshot_id(iceberg)
    rng = plan_snapshots(name, snapshot_infos(iceberg, pinned, after), after, pinned,
                         skip_overwrite=skip_overwrite, skip_delete=skip_delete)
    files = table_files(iceberg, rng)
    next_state = rng.next_state.to_json() if tracked and job.from_run_id is None else None
    recorded = SourceManifest(
        kind=MANIFEST_KIND,
        source=name,
        format="iceberg",
        bookmark_option=job.bookmark_option,
        range=rng.to_json(),
        previous_state=previous.to_json() if previous is not None else None,
        next_state=next_state,
        planned_files=len(files),
        planned_bytes=sum(f.size for f in files),
        extra={"catalog": catalog} if catalog and "@" not in catalog else {},
        present=frozenset({"previous_state", "next_state"}),
    )
    if tracked and ctx is not None and job.from_run_id is None:
        recorded = recorded.with_replay(job.replay_case(ctx))
    fault_point("after-plan")
    job.track_source(ctx, recorded.to_json(), files, next_state)
    fault_point("after-plan-recorded")
    frame = read_files_of(job.spark, name, spark_schema(iceberg, rng.through), files)
    fault_point("mid-read")
    return frame, not files
