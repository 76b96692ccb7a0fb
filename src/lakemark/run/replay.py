"""Retries of a run: which input an attempt must replay, and fencing of skipped writes.

A failed attempt whose sink commit landed pins its recorded input: the retry replays it
exactly, so the write its token skips is the same data (docs/exactly-once.md). A write that
its token skipped is checked against the attempt that committed it (same input, or
CommitConflict). Functions of the run's context (and, for the pinned input kept for the
attempt, its state).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .keys import RUN_ID_KEY, UNTRACKED
from ..errors import CommitConflict, SourceError, StateError
from ..planning import (
    FileEntry,
    FilePlan,
    FileState,
)
from ..state.manifest import SinkManifest, SourceManifest
from ..state import RunInputs, RunRecord

if TYPE_CHECKING:
    from .context import RunContext
    from .state import RunState

    from ..sinks import IdempotencyToken
__all__ = ["check_skipped_write", "failed_attempts", "pinned_inputs", "pinned_plan",
           "replay_case_of", "retried_sink"]

log = logging.getLogger("lakemark")


def failed_attempts(run: RunContext) -> list[RunRecord]:
    """Earlier failed attempts of this run's number that tracked the bookmark, oldest first."""
    record = run.started()
    if record.attempt == 0:
        return []
    return [r for r in run.store.list_runs(run.job_name)
            if r.run == record.run and r.run_id != record.run_id and r.status == "FAILED"
            and r.bookmark_option == "enable"]


def retried_sink(run: RunContext, key: str) -> bool:
    """Whether a failed attempt of this run recorded an intent to write sink ``key``."""
    return any(inputs.ctx == key for attempt in failed_attempts(run)
               for inputs in run.store.run_inputs(attempt.run_id))


def check_skipped_write(run: RunContext, key: str, target: str,
                         automatic: IdempotencyToken | None) -> None:
    """Fencing of a write that its token skipped: the attempt of this run whose commit the
    target holds must have read the same input as this attempt, or the bookmark would
    move over input that was never written (an attempt that planned while the committer
    was still writing, after a lease takeover). CommitConflict on a mismatch, so the run
    fails without moving the bookmark and its next attempt replays the committer's input.
    """
    record = run.started()
    committer = next((a.run_id for a in failed_attempts(run)
                      for i in run.store.run_inputs(a.run_id)
                      if i.ctx == key and isinstance(m := i.manifest, SinkManifest)
                      and _sink_committed(m, a.run_id, run.store)), None)
    if committer is None:
        if automatic is not None and not retried_sink(run, key):
            # Only a failed attempt of this very run may have committed its token, or the run
            # that took this one's lease over while it wrote: then say that (LeaseLost).
            run.store.heartbeat(record.run_id, what=f"write to {target}")
            raise StateError(
                f"target {target} already recorded app id {automatic.app_id!r} at "
                f"version >= {automatic.version}, but no earlier attempt of run "
                f"{record.run} of job {run.job_name!r} wrote it: the state store does not "
                "match the table (was the state database replaced?). Nothing was written; "
                "give the sink an explicit token or a new ctx"
            )
        return
    theirs = _source_inputs(run.store.run_inputs(committer))
    mine = _source_inputs(run.store.run_inputs(record.run_id))
    differ = sorted(c for c in theirs.keys() & mine.keys() if theirs[c] != mine[c])
    if differ:
        shown = ", ".join(f"{c!r} ({len(theirs[c][0])} file(s) there, {len(mine[c][0])} "
                          "here)" for c in differ)
        raise CommitConflict(
            f"target {target} already holds the write of run {record.run} of job "
            f"{run.job_name!r} by attempt {committer}, which read other input than this "
            f"attempt {record.run_id} for source(s) {shown}: this attempt planned while "
            f"{committer} was still writing (its lease was taken over). The run fails "
            "without moving the bookmark; its next attempt replays the input of "
            f"{committer}"
        )


def pinned_inputs(run: RunContext, state: RunState) -> dict[str, tuple[str, Any]]:
    """Per source ctx, the recorded input to replay: that of the failed attempt of this run
    whose sink commit landed in a Delta table (found by the run id in the commit info).

    Empty when no earlier attempt of this run committed anything: the run may then plan
    afresh (and take files that arrived meanwhile), as Glue does.
    """
    if state.pinned is not None:
        return state.pinned
    state.pinned = {}
    state.pin_info = {}
    attempts = failed_attempts(run)
    if not attempts:
        return state.pinned
    state.pin_info = {"case": "replanned", "failed_attempts": [a.run_id for a in attempts],
                      "reason": "no sink of an earlier attempt of this run committed"}
    for attempt in attempts:
        inputs = run.store.run_inputs(attempt.run_id)
        committed = [i.ctx for i in inputs if isinstance(m := i.manifest, SinkManifest)
                     and _sink_committed(m, attempt.run_id, run.store)]
        if committed:
            state.pinned = {i.ctx: (attempt.run_id, i) for i in inputs
                            if not isinstance(i.manifest, SinkManifest)}
            state.pin_info = {
                "case": "pinned",
                "from_attempt": attempt.run_id,
                "committed_sinks": committed,
                "failed_attempts": [a.run_id for a in attempts],
                "reason": "a sink of an earlier attempt of this run committed: its recorded "
                          "input is replayed exactly, so the skipped write is the same data",
            }
            break
    return state.pinned


def replay_case_of(run: RunContext, state: RunState, ctx: str) -> dict[str, Any]:
    """What the manifest says about how this source's input was chosen."""
    pinned_inputs(run, state)
    if not state.pin_info:
        return {"case": "first-attempt"}
    info = dict(state.pin_info)
    if info["case"] == "pinned" and ctx not in pinned_inputs(run, state):
        info.update(case="replanned", reason="the committed attempt did not read this ctx")
    return info


def pinned_plan(ctx: str, pinned: tuple[str, Any],
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
    tails = plan.extra.get("tails") or {}  # appended tails (on_modified append): the same bytes
    files = tuple(FileEntry(e.mtime, e.path, e.size, int(tails.get(e.path, 0)))
                  for e in inputs.files)
    return FilePlan(files=files,
                    next_state=FileState.from_json(plan.next_state),
                    pending=int(plan.pending_files or 0))


def _sink_committed(plan: SinkManifest, run_id: str, store: Any = None) -> bool:
    """Whether the recorded sink ``plan`` has a commit made by attempt ``run_id`` (a folder
    sink's commit record is looked up in ``store``, the job's state store, and the folder)."""
    if plan.status == "committed":
        return True
    fmt = plan.format.strip().lower()
    if fmt == "jdbc":
        # The state store cannot look into the database (no credentials are kept): an
        # attempt that began a tokened write may have committed it. Replaying its input is
        # right either way; the token table then decides whether the rows are written.
        return plan.status == "writing" and plan.token is not None
    token = plan.token
    if fmt == "iceberg":
        from ..sinks._iceberg import iceberg_committed

        return iceberg_committed(plan.target, plan.extra.get("iceberg_catalog"), RUN_ID_KEY,
                                 run_id)
    if fmt != "delta":
        from ..sinks import IdempotencyToken
        from ..sinks._write import folder_commit_run_id, folder_token_supported

        if not token or not folder_token_supported(plan.target, fmt):
            return False
        found = folder_commit_run_id(
            plan.target, IdempotencyToken(token.app_id, token.version), RUN_ID_KEY, store)
        return found == run_id
    from ..sinks._location import open_delta, resolve_target

    table = open_delta(resolve_target(plan.target))
    if table is None:
        return False
    if token:
        recorded = table.transaction_version(token.app_id)
        if recorded is None or recorded < token.version:
            return False  # the token would be there had this attempt committed
    return any(entry.get(RUN_ID_KEY) == run_id for entry in table.history())


def _source_inputs(inputs: Sequence[RunInputs]) -> dict[str, tuple[frozenset[Any], str]]:
    """Per tracked source ctx of a run, what it read: its files and its key range (JDBC)."""
    import json

    return {i.ctx: (frozenset((f.path, f.mtime, f.size) for f in i.files),
                    json.dumps(m.range, sort_keys=True))
            for i in inputs if isinstance(m := i.manifest, SourceManifest)
            and not i.ctx.startswith(UNTRACKED)}
