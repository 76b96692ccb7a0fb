"""The job's file sources: list, plan (fresh, replayed from/to, or pinned to a failed
attempt's input) and record before reading, then read the planned files.

The bodies of :meth:`lakemark.job.Job.plan_files`, ``read_files`` and ``read_planned`` (the
public methods stay on ``Job``, which calls these with the run's context and state).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ReadError, SourceError
from ..planning import (
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    ListingOptions,
    plan_everything,
    resume_after,
)
from .exact_read import fresh_plan, plan_report
from .._fault import fault_point
from ..state.manifest import SourceManifest
from .replay import pinned_inputs, pinned_plan, replay_case_of
from .quarantine import ReadArgs, add_retries, record_pinned, remember_read, screen

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .cleanup import CleanSpec
    from .context import RunContext
    from .state import RunState

    from ..sources._schema_track import SchemaTracking
__all__ = ["plan_source", "read_plan", "read_tracking", "previous_state", "replay_plan",
           "warn_untracked"]

log = logging.getLogger("lakemark")


def plan_source(
    run: RunContext,
    state: RunState,
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
    """List, plan and record one source (one or more paths); returns its roots and the plan.
    ``clean``: what to do with the source's files after the run's commit (``cleanup``)."""
    record = run.started()
    paths = [path] if isinstance(path, str) else list(path)
    if not paths:
        raise ConfigError("a file source needs at least one path")
    from ..storage import list_files, list_files_after, parse_uri

    if listing.incremental:
        local = [p for p in paths if not parse_uri(p).is_s3]
        if local:
            raise ConfigError(
                f"incremental listing (S3 StartAfter) applies to S3 sources; {local[0]} is "
                "local (a local folder is listed in full, which is already cheap)"
            )
    key = state.claim_ctx(ctx)
    element = run.bookmark.state.get(ctx) if ctx and run.bookmark is not None else None
    pinned = pinned_inputs(run, state).get(ctx) if ctx is not None and run.tracking else None
    # Replays (pinned or from/to) check their recorded files against a full listing.
    resumable = (listing.incremental and ctx is not None and run.tracking
                 and run.from_run_id is None and pinned is None)
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
    run.emit("listed", key, {"files": len(files), "root": source})
    previous = previous_state(run, ctx, source)
    deferred: list[dict[str, Any]] = []
    if ctx is None or run.bookmark_option == "disable":
        if ctx is None and run.bookmark_option != "disable":
            warn_untracked(state, source)
        plan = plan_everything(files)
    elif run.from_run_id is not None and run.to_run_id is not None:
        plan = replay_plan(run, ctx, files)
    else:
        if pinned is not None and pinned[1].manifest.kind == "files":
            plan = pinned_plan(ctx, pinned, files)
        else:  # earlier takes and the policy for modified files: exact_read
            plan, deferred = fresh_plan(run, ctx, previous, files, listed_at, options)
    plan = add_retries(run, key, files, plan)  # set-aside files marked for retry
    recorded = SourceManifest(
        kind="files",
        source=source,
        format=format,
        bookmark_option=run.bookmark_option,
        options={
            "recurse": recurse,
            "exclusions": list(exclusions) if not isinstance(exclusions, str) else exclusions,
            "maxBand": options.max_band_ms,
            "maxFilesInBand": options.max_files_in_band,
            "boundedFiles": options.bounded_files,
            "boundedSize": options.bounded_size,
            "modified": options.modified,
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
        extra=plan_report(plan, deferred),
    )
    if ctx is not None and run.tracking and run.from_run_id is None:
        recorded = recorded.with_replay(replay_case_of(run, state, ctx))
    fault_point("after-plan")
    run.store.record_plan(record.run_id, key, recorded.to_json(), plan.files)
    fault_point("after-plan-recorded")
    if ctx is not None and run.tracking:
        state.pending[ctx] = {**plan.next_state.to_json(), "source": source}
        if listing.incremental:
            state.pending[ctx]["listing"] = listing.next_element(element, {
                lst.root: resume_after(previous, lst.entries, plan, listed_at, options,
                                       starts.get(lst.root))
                for lst in listings}, full=not any(starts.values()))
    state.plans[key] = plan
    state.roots[key] = roots
    if clean is not None:
        state.clean[key] = clean
    run.emit("planned", key, {"files": len(plan.files), "bytes": plan.total_bytes,
                                "pending": plan.pending})
    return roots, plan


def read_tracking(format: str, mode: str, ctx: str | None, schema_given: bool,
                  schema_evolution: str | None, rescued_data_column: str | None,
                  schema_hints: str | None) -> SchemaTracking | None:
    """How a file read tracks its schema (docs/schema.md), its reader options checked first."""
    from ..planning.schema import effective_evolution_mode
    from ..sources import check_read_options
    from ..sources._schema_track import tracking_of

    check_read_options(format, mode)
    return tracking_of(effective_evolution_mode(
        schema_evolution, format=format, ctx=ctx, schema_given=schema_given,
        read_mode=mode), rescued_data_column, schema_hints)


def read_plan(run: RunContext, state: RunState, roots: Sequence[str], plan: FilePlan, *,
              format: str,
               options: Mapping[str, str] | None, schema: Any, mode: str,
               base_path: str | None, ctx: str | None = None,
               tracking: SchemaTracking | None = None) -> DataFrame:
    key = ctx if ctx is not None else next(
        (k for k, p in state.plans.items() if p is plan), "(untracked)")
    planned = len(plan.files)
    # Files that cannot be read are set aside, never allowed to stick the run (quarantine).
    plan = replace(plan, files=tuple(screen(run, state, key, plan.files, format=format,
                                            options=options)))
    while True:
        try:
            return _read_once(run, state, key, planned, roots, plan, format=format,
                              options=options, schema=schema, mode=mode, base_path=base_path,
                              ctx=ctx, tracking=tracking)
        except ReadError as exc:  # inferring the schema failed on one file: set it aside
            named = [f for f in plan.files if f"file {f.path}: " in str(exc)]
            if ("cannot infer the schema" not in str(exc) or len(named) != 1
                    or mode.upper() == "FAILFAST"):  # FAILFAST: the run fails naming the file
                raise
            cause = str(exc).split(f"file {named[0].path}: ", 1)[1]
            record_pinned(run, state, key, named[0], f"no schema can be inferred from it: {cause}",
                          planned)
            plan = replace(plan, files=tuple(f for f in plan.files if f is not named[0]))


def _read_once(run: RunContext, state: RunState, key: str, planned: int,
               roots: Sequence[str], plan: FilePlan, *, format: str,
               options: Mapping[str, str] | None, schema: Any, mode: str,
               base_path: str | None, ctx: str | None,
               tracking: SchemaTracking | None) -> DataFrame:
    """:func:`read_plan` of the screened ``plan``."""
    from ..sources import read_files

    if len(roots) == 1 or base_path is not None:
        remember_read(state, key, ReadArgs(plan.files, planned, base_path or roots[0], format,
                                           dict(options or {}), mode))
    if tracking is not None:  # the tracked schema decides before the run counts as read
        from .tracked_read import read_with_tracking

        read = read_with_tracking(run, ctx, plan.files, roots=roots,
                                  base_path=base_path, format=format, options=options,
                                  schema=schema, mode=mode, tracking=tracking)
        source = str(ctx)  # read_with_tracking refused a source without one
        if read.pending is not None and run.tracking:
            state.pending_schemas[source] = read.pending
        if read.observation is not None:
            state.schema_counts[source] = (read.observation, read.record)
        tracked = read.frame
        state.read_started = True
        fault_point("mid-read")
        if not plan.files:
            state.empty_reads[id(tracked)] = tracked
        return tracked
    state.read_started = True
    if len(roots) == 1 or base_path is not None:
        if not plan.files and schema is None:  # the columns of a file taken before
            from .earlier_schema import earlier_schema

            schema = earlier_schema(run, key, root=base_path or roots[0],
                                    format=format, options=options)
        frame = read_files(
            run.spark(), plan.files, root=base_path or roots[0], format=format,
            options=options, schema=schema, mode=mode,
        )
        fault_point("mid-read")
        if not plan.files:
            state.empty_reads[id(frame)] = frame
        return frame
    # Several paths: each is read under its own root (for its partition folders), then
    # the frames are combined by column name.
    groups = _group_by_root(plan.files, roots)
    frames = [
        read_files(run.spark(), groups[root], root=root, format=format, options=options,
                   schema=schema, mode=mode)
        for root in roots
    ]
    combined = frames[0]
    for frame in frames[1:]:
        combined = combined.unionByName(frame, allowMissingColumns=True)
    return combined


def previous_state(run: RunContext, ctx: str | None, root: str) -> FileState | None:
    if ctx is None or run.bookmark is None:
        return None
    element = run.bookmark.state.get(ctx)
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


def replay_plan(run: RunContext, ctx: str, listing: Sequence[FileEntry]) -> FilePlan:
    assert run.from_run_id is not None and run.to_run_id is not None
    runs = run.store.runs_between(run.job_name, run.from_run_id, run.to_run_id)
    wanted: dict[str, FileEntry] = {}
    for earlier in runs:
        for inputs in run.store.run_inputs(earlier.run_id):
            if inputs.ctx == ctx:
                for entry in inputs.files:
                    wanted[entry.path] = entry
    present = {e.path: e for e in listing}
    missing = sorted(p for p in wanted if p not in present)
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise SourceError(
            f"{len(missing)} file(s) processed between {run.from_run_id} and "
            f"{run.to_run_id} no longer exist: {shown}"
        )
    files = tuple(sorted(present[p] for p in wanted))
    return FilePlan(files=files, next_state=FileState())


def warn_untracked(state: RunState, path: str) -> None:
    if not state.warned_untracked:
        state.warned_untracked = True
        log.warning(
            "source %s has no transformation_ctx: bookmarks do not track it, so every run "
            "reads all of it (give it a ctx to process only new files)", path,
        )


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
