"""Stage 2: ingest the objects that the events table says were created, exactly once.

The checkpoint (the state element of the source's ctx, committed with the run) is the events
table version read up to, plus — when a bound cut a version's events in two — the position of
the last event taken (``[commit version, event time, key, record_id]``). A run:

1. reads the events inserted after the checkpoint (Delta's change data feed);
2. keeps, per object, its last event (by S3's sequencer): an object created then removed is
   not read; created events pass the key filters;
3. optionally checks that each object still exists (HEAD), skipping ones deleted since;
4. optionally (**backfill**), before step 1, lists the prefix and writes a backfill event
   into the events table for each object that no created event names with its eTag (the
   notification was lost), so a lost notification cannot lose a file: steps 1–6 then take it
   like any other event, exactly once, and later runs find it named;
5. takes them in (commit version, event time, key) order up to ``max_files`` / ``max_bytes``;
6. records the objects in the run's manifest and reads them with lakemark's file reader.

An object that cannot be read (truncated, wrong format, unreadable, a record over the size
limit) is set aside by the job's :class:`~lakemark.BadFilePolicy` as a file source's is
(:mod:`lakemark.run.quarantine`): the checkpoint still moves past it, so the events after it are
taken; ``lakemark quarantine retry`` marks it and the next run adds it to its plan (as it is
in the bucket then) and takes it once.

Steps 2 and 5 (and the checkpoint) are pure: :mod:`lakemark.planning.events`.

A retry of a run whose failed attempt committed its sink replays that attempt's objects exactly
(its write is then skipped by the sink's token), rather than planning afresh.

``from_version`` restarts from any events-table version, like resetting a consumer offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SourceError
from ..planning import FileEntry
from ..planning.events import (
    STATE_KIND,
    EventObjectPlan,
    ObjectFilter,
    S3EventRecord,
    backfill_events,
    resume_point,
    select_objects,
    take_objects,
)
from ..sources._host import SourceHost
from ..state.manifest import SourceManifest
from .table import EventsTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


__all__ = ["EventObjectPlan", "IncrementalOptions", "plan_event_objects", "plan_event_source",
           "read_event_objects", "read_planned_objects"]


@dataclass(frozen=True)
class IncrementalOptions:
    """What a run takes from the events table."""

    filter: ObjectFilter = ObjectFilter()
    max_files: int | None = None
    max_bytes: int | None = None
    check_exists: bool = False
    backfill_prefix: str | None = None
    from_version: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("--max-files", self.max_files), ("--max-bytes", self.max_bytes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.from_version is not None and (not isinstance(self.from_version, int)
                                              or self.from_version < 0):
            raise ConfigError(f"--from-version must be a version >= 0, got {self.from_version!r}")
        if self.backfill_prefix is not None and not self.backfill_prefix.startswith(
                ("s3://", "s3a://")):
            raise ConfigError(f"--backfill-prefix must be an s3:// URI, got "
                              f"{self.backfill_prefix!r}")


def plan_event_objects(table: EventsTable, previous: dict[str, Any] | None,
                       options: IncrementalOptions, s3_client: Any = None) -> EventObjectPlan:
    """Which objects to take now: the pure rules of :mod:`lakemark.planning.events` over the
    events read from ``table``, with the optional existence checks and backfill listing."""
    after, cut = resume_point(previous, options.from_version)
    if options.backfill_prefix is not None:
        _backfill(table, options, s3_client)
    rows, current = table.changes_after(after)
    earlier = [] if after is None else table.events_before(after, rows)
    selection = select_objects(rows.to_pylist(), cut, options.filter, earlier)
    candidates = list(selection.candidates)
    missing = 0
    if options.check_exists and candidates:
        existing = [c for c in candidates if _exists(s3_client, c[1])]
        missing = len(candidates) - len(existing)
        candidates = existing
    return take_objects(table.uri, current, candidates, max_files=options.max_files,
                        max_bytes=options.max_bytes, removed=selection.removed,
                        missing=missing, stale=selection.stale)


def _exists(client: Any, record: S3EventRecord) -> bool:
    from ..storage import s3_client

    client = client or s3_client()
    try:
        client.head_object(Bucket=record.bucket, Key=record.key)
        return True
    except Exception as exc:
        code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
        if code in ("404", "NoSuchKey", "NotFound"):
            return False
        raise SourceError(f"cannot check {record.uri}: {exc}") from exc


def _backfill(table: EventsTable, options: IncrementalOptions, client: Any) -> int:
    """Write a backfill event for each object under the backfill prefix that no created event
    names with its eTag (:func:`lakemark.planning.events.backfill_events`); how many were new.

    The events table is a changelog, so this is the only thing a backfill must remember: a
    later run that keeps the flag finds those objects named, and a late notification of one of
    them is the same content and stale. Writing them is idempotent (the event id is a digest
    of key, Last-Modified and eTag), so a run that dies after it loses and doubles nothing."""
    from ..storage import parse_uri, s3_client

    assert options.backfill_prefix is not None
    where = parse_uri(options.backfill_prefix)
    bucket = where.bucket
    prefix = where.key if not where.key or where.key.endswith("/") else where.key + "/"
    others = sorted(table.buckets() - {bucket})
    if others:  # checked before anything is written: one source reads one bucket
        raise ConfigError(f"--backfill-prefix {options.backfill_prefix} is in bucket {bucket!r}, "
                          f"but the events table {table.uri} holds events of "
                          f"{', '.join(repr(b) for b in others)}; backfill the bucket its "
                          "events name")
    client = client or s3_client()
    listed: list[tuple[str, int, int, str | None]] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                     Prefix=prefix):
            for obj in page.get("Contents", ()):
                if obj["Key"].endswith("/"):
                    continue  # a "folder" marker, not an object to read
                listed.append((obj["Key"], int(obj["LastModified"].timestamp() * 1000),
                               int(obj["Size"]), obj.get("ETag")))
    except Exception as exc:
        raise SourceError(f"--backfill-prefix {options.backfill_prefix}: cannot list: "
                          f"{exc}") from exc
    events = backfill_events(bucket, listed, table.created_objects(bucket, prefix),
                             options.filter)
    return table.append(events)[0] if events else 0


def read_event_objects(job: SourceHost, events_table: str, *, format: str, ctx: str = "events",
                       options: IncrementalOptions | None = None,
                       read_options: dict[str, str] | None = None, schema: Any = None,
                       mode: str = "PERMISSIVE", s3_client: Any = None) -> DataFrame:
    """A DataFrame of the objects this run takes from ``events_table`` (see module doc).

    The objects are recorded in the run's manifest under ``ctx`` before anything is read, and
    the checkpoint commits with the run.
    """
    from ..sources import check_read_options

    check_read_options(format, mode, read_options)
    plan = plan_event_source(job, events_table, format=format, ctx=ctx, options=options,
                             s3_client=s3_client)
    return read_planned_objects(job, plan, format=format, read_options=read_options,
                                schema=schema, mode=mode, ctx=ctx)


def plan_event_source(job: SourceHost, events_table: str, *, format: str, ctx: str = "events",
                      options: IncrementalOptions | None = None,
                      s3_client: Any = None) -> EventObjectPlan:
    """Plan the objects this run takes from ``events_table`` and record them under ``ctx``
    (nothing is read: a caller with an empty plan need not start Spark)."""
    opts = options or IncrementalOptions()
    table = EventsTable(events_table)
    replay = job.replay_input(ctx, STATE_KIND)
    if replay is not None:
        # A failed attempt of this run committed its sink: take exactly its objects again, so
        # the write its token now skips holds the same data (see docs/exactly-once.md).
        recorded = replay.manifest
        assert isinstance(recorded, SourceManifest) and recorded.next_state is not None
        extra = recorded.extra  # the events source's own entries
        plan = EventObjectPlan(tuple(replay.files), dict(recorded.next_state),
                               extra.get("events_table_version"),
                               int(recorded.pending_files or 0),
                               int(extra.get("skipped_removed") or 0),
                               int(extra.get("skipped_missing") or 0),
                               int(extra.get("backfilled") or 0),
                               int(extra.get("skipped_stale") or 0))
    else:
        plan = plan_event_objects(table, job.state_of(ctx), opts, s3_client)
    plan = _with_retries(job, ctx, plan, s3_client)
    job.track_source(ctx, SourceManifest(
        kind=STATE_KIND, source=table.uri, format=format, planned_files=len(plan.files),
        planned_bytes=sum(f.size for f in plan.files), pending_files=plan.pending,
        next_state=plan.next_state, replay=job.replay_case(ctx),
        extra={"events_table_version": plan.table_version,
               "skipped_removed": plan.skipped_removed, "skipped_missing": plan.skipped_missing,
               "backfilled": plan.backfilled, "skipped_stale": plan.skipped_stale,
               "from_version": opts.from_version},
        present=frozenset({"format", "next_state"}),  # null when none
    ).to_json(), plan.files, plan.next_state)
    buckets = _buckets(plan)
    if len(buckets) > 1:
        raise ConfigError("events from several buckets in one source: filter by bucket "
                          f"({', '.join(buckets)}) with one ctx each")
    return plan


def _with_retries(job: SourceHost, ctx: str, plan: EventObjectPlan,
                  client: Any) -> EventObjectPlan:
    """``plan`` with the set-aside objects of ``ctx`` that ``lakemark quarantine retry``
    marked, as they are in the bucket now (HEAD), added once; a marked object that is gone is
    logged and stays marked. The checkpoint is unchanged: they are taken beside it."""
    import logging
    from dataclasses import replace

    from ..storage import parse_uri, s3_client

    wanted = {q.path for q in job.store.quarantined(job.name, ctx=ctx, statuses=("retry",))}
    wanted -= {f.path for f in plan.files}
    if not wanted:
        return plan
    client = client or s3_client()
    extra: list[FileEntry] = []
    for path in sorted(wanted):
        where = parse_uri(path)
        try:
            head = client.head_object(Bucket=where.bucket, Key=where.key)
        except Exception as exc:
            code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
            if code not in ("404", "NoSuchKey", "NotFound"):
                raise SourceError(f"cannot check set-aside object {path}: {exc}") from exc
            logging.getLogger("lakemark").warning(
                "set-aside object %s (source %r) is marked for retry but no longer exists",
                path, ctx)
            continue
        extra.append(FileEntry(int(head["LastModified"].timestamp() * 1000), path,
                               int(head["ContentLength"])))
    return replace(plan, files=(*plan.files, *extra)) if extra else plan


def read_planned_objects(job: SourceHost, plan: EventObjectPlan, *, format: str,
                         read_options: dict[str, str] | None = None, schema: Any = None,
                         mode: str = "PERMISSIVE", ctx: str = "events") -> DataFrame:
    """A DataFrame of the objects of ``plan`` (from :func:`plan_event_source` for ``ctx``),
    without the ones set aside by the job's bad-file policy (:mod:`lakemark.run.quarantine`):
    earlier, or now by the cheap checks; a failure Spark meets later can be pinned on an
    object (``run.quarantine_ingest.write_setting_aside``)."""
    buckets = _buckets(plan)
    root = f"s3://{buckets[0]}" if len(buckets) == 1 else "s3://"
    return job.read_screened(ctx, _sorted(plan.files), root=root, format=format,
                             options=read_options, schema=schema, mode=mode)


def _buckets(plan: EventObjectPlan) -> list[str]:
    return sorted({f.path.split("/", 3)[2] for f in plan.files})


def _sorted(files: Sequence[FileEntry]) -> list[FileEntry]:
    return sorted(files, key=lambda f: (f.mtime, f.path))
