"""A run reads each file as it was planned, and files taken before are handled by a policy.

Two parts of the file-source lifecycle, kept out of ``file_sources`` / ``job``:

* **Planning with earlier takes** (:func:`fresh_plan`): the planner (pure,
  :mod:`lakemark.planning.modified`) gets the last take of each candidate path from the state
  store and applies the source's policy for modified files (``retake``, ``skip``, ``append``).
  A file that the previous failed attempt of this run saw change while it read it, and that has
  changed again since, is still being written: it is left out of this attempt (the next run
  takes it), so a file that keeps changing never sticks the job.
* **The check before a sink commits** (:func:`check_reads`, run by every sink through
  :mod:`lakemark._commit_gate` once Spark has read the input and written the data files): each
  planned file must still have the size and mtime it was planned with. A file that changed was
  maybe half-read, so it is left out of the run — out of its input, its bookmark band and its
  manifest's file list, into the manifest's ``changed_during_run`` — and
  :class:`~lakemark.errors.ChangedDuringRun` stops the commit. ``lakemark ingest files`` then
  reads again without it and writes (:func:`forget_sink` lets it write the sink again); in the
  Python Job API, where user code holds the frame, the run fails naming the file and the next
  attempt plans again and takes it whole.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ChangedDuringRun
from ..planning import (
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    candidate_paths,
    leave_out,
    plan_files,
)

if TYPE_CHECKING:
    from .context import RunContext
    from .state import RunState

__all__ = ["CHANGED_KEY", "check_reads", "forget_sink", "fresh_plan", "plan_report"]

log = logging.getLogger("lakemark")

#: The source manifest's list of files left out because they changed while read.
CHANGED_KEY = "changed_during_run"


def fresh_plan(run: RunContext, ctx: str, previous: FileState | None,
               files: Sequence[FileEntry],
               listed_at: int, options: FileOptions) -> tuple[FilePlan, list[dict[str, Any]]]:
    """The plan of a tracked source that plans afresh, and the files it defers (as manifest
    ``changed_during_run`` entries): those still changing since the previous attempt."""
    earlier = {}
    bookmark = run.bookmark
    if previous is not None and bookmark is not None:  # no state (first run, reset): all new
        wanted = candidate_paths(previous, files, listed_at, options)
        if wanted:
            earlier = run.store.earlier_takes(run.job_name, ctx, wanted, bookmark.run)
    plan = plan_files(previous, files, listed_at, options, earlier)
    deferred = _still_changing(run, ctx, plan)
    if deferred:
        plan = leave_out(plan, [d["path"] for d in deferred])
    return plan, deferred


def _still_changing(run: RunContext, ctx: str, plan: FilePlan) -> list[dict[str, Any]]:
    """Files of ``plan`` that the last failed attempt of this run left out as changed while
    read, and whose size or mtime differs again from what that attempt saw."""
    from .replay import failed_attempts

    attempts = failed_attempts(run)
    if not attempts:
        return []
    seen: dict[str, Mapping[str, Any]] = {}
    for inputs in run.store.run_inputs(attempts[-1].run_id):
        if inputs.ctx == ctx:
            for entry in inputs.plan.get(CHANGED_KEY) or []:
                if entry.get("seen"):
                    seen[str(entry["path"])] = entry["seen"]
    out = []
    for entry in plan.files:
        before = seen.get(entry.path)
        if before is not None and (before.get("mtime"), before.get("size")) != (entry.mtime,
                                                                             entry.size):
            out.append({"path": entry.path, "planned": {"mtime": entry.mtime, "size": entry.size},
                        "seen": None, "when": "still changing since the previous attempt"})
    return out


def plan_report(plan: FilePlan, deferred: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The manifest entries a file plan adds (only those that apply): files taken before
    (with the run that took them, and the tail's first byte under ``append``), modified
    files skipped, files deferred."""
    out: dict[str, Any] = {}
    if plan.taken_before:
        offsets = {e.path: e.offset for e in plan.files}
        out["taken_before"] = [{**take.to_json(), "offset": offsets.get(path, 0)}
                               for path, take in sorted(plan.taken_before.items())]
    if plan.skipped:
        out["skipped_modified"] = [e.to_json() for e in plan.skipped]
    if deferred:
        out[CHANGED_KEY] = [dict(d) for d in deferred]
    tails = {e.path: e.offset for e in plan.files if e.offset}
    if tails:
        out["tails"] = tails
    return out


def check_reads(run: RunContext, state: RunState) -> None:
    """Before a sink commits: every file planned by this run's file sources must still have
    its planned size and mtime. Changed files are left out of the run (plan, bookmark band,
    manifest) and :class:`ChangedDuringRun` stops the commit."""
    from ..storage import stat_files

    changed_all: list[str] = []
    for key, plan in list(state.plans.items()):
        if key not in state.roots or not plan.files:
            continue
        now = stat_files(e.path for e in plan.files)
        changed = [(e, now[e.path]) for e in plan.files
                   if now[e.path] is not None and now[e.path] != (e.mtime, e.size)]
        if changed:
            _leave_out(run, state, key, plan, changed)
            changed_all.extend(e.path for e, _ in changed)
    if changed_all:
        shown = ", ".join(changed_all[:3]) + (" …" if len(changed_all) > 3 else "")
        raise ChangedDuringRun(
            f"{len(changed_all)} planned file(s) changed while the run read them, nothing "
            f"committed: {shown} (the next attempt takes them whole)",
            paths=tuple(changed_all))


def _leave_out(run: RunContext, state: RunState, key: str, plan: FilePlan,
               changed: Sequence[tuple[FileEntry, tuple[int, int] | None]]) -> None:
    """Take ``changed`` out of source ``key``'s plan, pending bookmark and manifest."""
    kept = leave_out(plan, [e.path for e, _ in changed])
    state.plans[key] = kept
    pending = state.pending.get(key)
    if pending is not None:
        pending["band"] = kept.next_state.to_json()["band"]
    record = run.started()
    entry = next((dict(i.plan) for i in run.store.run_inputs(record.run_id) if i.ctx == key),
                 None)
    if entry is None:
        return
    entry[CHANGED_KEY] = [*(entry.get(CHANGED_KEY) or []), *(
        {"path": e.path, "planned": {"mtime": e.mtime, "size": e.size},
         "seen": {"mtime": now[0], "size": now[1]} if now else None,
         "when": "during the read"} for e, now in changed)]
    entry["planned_files"] = len(kept.files)
    entry["planned_bytes"] = kept.total_bytes
    if kept.taken_before != plan.taken_before:
        entry["taken_before"] = [t for t in entry.get("taken_before") or []
                                 if t.get("path") in kept.taken_before]
    run.store.record_plan(record.run_id, key, entry, kept.files)
    for e, now in changed:
        log.warning("file %s changed while the run read it (planned %d bytes, mtime %d; now "
                    "%s): left out of this run, the next run takes it whole", e.path, e.size,
                    e.mtime, f"{now[1]} bytes, mtime {now[0]}" if now else "gone")


def forget_sink(state: RunState, key: str, source: str | None = None) -> None:
    """Let the run write sink ``key`` again (after :class:`ChangedDuringRun` stopped its
    commit: nothing of it was committed), and read ``source`` again: what its tracked-schema
    read left for the commit (a schema change, observed counts) came from files that are no
    longer in the run, so the new read decides afresh."""
    state.sinks.discard(key)
    if source is not None:
        state.pending_schemas.pop(source, None)
        state.schema_counts.pop(source, None)
