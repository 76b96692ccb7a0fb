"""The job's side of cleaning up processed source files (``clean_source``): the intent recorded
with the run's commit, and the clean-up after it.

A file source read with ``clean_source="delete"`` or ``"archive"`` records, just before the
run commits, a manifest entry ``clean:<ctx>`` with the files the run took and ``status:
pending``. The commit makes the run SUCCEEDED, which is what makes that intent count: an entry
of a run that did not commit is never acted on. After the commit every open entry of the job
(this run's, and any an earlier run left pending: a crash between its commit and its clean-up,
or a clean-up that failed) is carried out and marked ``done`` with its counts, moves and
deletes. A failed clean-up is reported and stays pending; it never fails the run, whose data
is committed. What to do per file is decided in :mod:`lakemark.planning.cleanup`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from ..errors import ConfigError
from ..planning.cleanup import (OUTCOMES, CleanEntry, archive_destination, check_clean_options,
                               decide, parse_retention, plan_cleanup)
from ..planning.files import FileEntry

if TYPE_CHECKING:
    from .quarantine import QuarantinedFile
    from ..planning.files import FilePlan
    from ..state import StateStore
    from ..storage._clean import FileOps
    from .context import RunContext

__all__ = ["CLEAN_PREFIX", "CleanSpec", "LISTED_MAX", "clean_after_commit", "clean_spec",
           "intent", "record_intents", "run_cleanups", "summary"]

log = logging.getLogger("lakemark")

#: The manifest key of a source's clean-up entry is this prefix and the source's ctx.
CLEAN_PREFIX = "clean:"
#: How many paths each list of an entry's record names (the counts are always whole).
LISTED_MAX = 10_000


@dataclass(frozen=True)
class CleanSpec:
    """A source's clean-up: ``delete`` or ``archive`` (to the canonical ``archive_to``)."""

    mode: str
    archive_to: str | None = None
    retention_s: float = 0.0  # how long after the commit the files are left in place


def clean_spec(mode: str | None, archive_to: str | None, paths: Sequence[str], *,
               ctx: str | None, bookmark_option: str, retention: str | float | None = None,
               mode_option: str = "clean_source", archive_option: str = "archive_to",
               retention_option: str = "clean_source_retention") -> CleanSpec | None:
    """The checked clean-up of a source read from ``paths`` (None: ``off``).

    ConfigError, before anything is planned, for an unknown mode, a missing or misplaced
    archive folder (inside a source, or overlapping one), a source with no ctx, or a run that
    leaves its bookmark paused (its files are still to be processed)."""
    from ..storage import parse_uri

    mode = (mode or "off").strip().lower()
    archive = parse_uri(archive_to).root if archive_to else None
    roots = [parse_uri(p).root for p in paths]
    check_clean_options(mode, archive, roots, mode_option=mode_option,
                        archive_option=archive_option)
    retention_s = parse_retention(retention, option=retention_option)
    if mode == "off":
        if retention_s:
            raise ConfigError(f"{retention_option} goes with {mode_option} delete or archive")
        return None
    if ctx is None:
        raise ConfigError(f"{mode_option} {mode} needs a transformation_ctx: the clean-up is "
                          "recorded per source, with the run's commit")
    if bookmark_option == "pause":
        raise ConfigError(f"{mode_option} {mode} cannot run with the bookmark paused: a paused "
                          "run leaves its files to be processed again")
    return CleanSpec(mode, archive, retention_s)


def intent(spec: CleanSpec, ctx: str, roots: Sequence[str], files: Sequence[FileEntry]
           ) -> dict[str, Any]:
    """The pending entry a run records for source ``ctx`` just before it commits."""
    now_ms = time.time_ns() // 1_000_000
    return {"kind": "clean", "ctx": ctx, "mode": spec.mode, "archive_to": spec.archive_to,
            "roots": list(roots), "status": "pending", "files": len(files),
            "bytes": sum(f.size for f in files), "attempts": 0,
            "retention_s": spec.retention_s,
            "not_before_ms": now_ms + int(spec.retention_s * 1000)}


def record_intents(run: RunContext, specs: Mapping[str, CleanSpec],
                   roots: Mapping[str, Sequence[str]], plans: Mapping[str, FilePlan],
                   set_aside: Mapping[str, Sequence[QuarantinedFile]]) -> None:
    """Record, just before the run commits, the clean-up of each of its sources that asked for
    one (``specs``, by ctx) and took files (``plans``): the commit makes these intents count
    (never a run that did not). Files the run set aside (``set_aside``, quarantine.py) stay
    where they are, for a retry."""
    for ctx, spec in specs.items():
        aside = {q.entry.path for q in set_aside.get(ctx, [])}
        files = tuple(f for f in plans[ctx].files if f.path not in aside)
        if files:
            run.store.record_plan(run.run_id, CLEAN_PREFIX + ctx,
                                  intent(spec, ctx, roots[ctx], files), files)


def clean_after_commit(run: RunContext) -> list[dict[str, Any]]:
    """After the run's commit: clean its files and finish any clean-up an earlier run left
    pending; the records of what was done (``Job.cleanups``). A failure is logged and left
    pending for the next run, never raised: the run's data is committed."""
    try:
        cleanups = run_cleanups(run.store, run.job_name, by_run=run.run_id)
    except Exception as exc:  # noqa: BLE001 - the commit stands; the next run retries
        log.warning("run %s: clean-up of processed files failed (%s); the next run retries it",
                    run.run_id, exc)
        return [{"run_id": run.run_id, "status": "pending",
                 "error": f"{type(exc).__name__}: {exc}"}]
    if cleanups:
        run.emit("cleaned", None, summary(cleanups))
    return cleanups


def run_cleanups(store: StateStore, job_name: str, *, by_run: str,
                 ops: FileOps | None = None) -> list[dict[str, Any]]:
    """Carry out every open clean-up entry of ``job_name`` whose run committed, oldest first,
    and record each outcome on its run; returns those records. ``by_run``: the run whose
    commit this follows (recorded as who finished an earlier run's entry)."""
    from ..storage._clean import FileOps

    ops = ops or FileOps()
    opened = store.open_entries(job_name, CLEAN_PREFIX)
    entries = [CleanEntry(run_id=run.run_id, key=inputs.ctx,
                          committed=run.status == "SUCCEEDED",
                          done=inputs.plan.get("status") == "done",
                          mode=str(inputs.plan.get("mode")), files=tuple(inputs.files),
                          roots=tuple(inputs.plan.get("roots") or ()),
                          archive_to=inputs.plan.get("archive_to"),
                          not_before_ms=int(inputs.plan.get("not_before_ms") or 0))
               for run, inputs in opened]
    plans = {(run.run_id, inputs.ctx): inputs.plan for run, inputs in opened}
    reports = []
    for task in plan_cleanup(entries, time.time_ns() // 1_000_000):
        entry = task.entry
        plan = dict(plans[(entry.run_id, entry.key)])
        record = _carry_out(ops, entry, task.files, _earlier(plan))
        record["duplicates"] = len(task.duplicates)
        attempts = int(plan.get("attempts") or 0) + 1
        plan.update(record, attempts=attempts, finished_by=by_run,
                    status="pending" if record["counts"]["failed"] else "done",
                    finished_at=datetime.now(UTC).isoformat(timespec="seconds"))
        try:
            store.record_after_commit(entry.run_id, entry.key, plan)
        except Exception as exc:  # noqa: BLE001 - the files are cleaned; the mark is retried
            log.warning("clean-up of run %s (%s) done but not recorded: %s", entry.run_id,
                        entry.key, exc)
            plan["status"] = "pending"
            plan["record_error"] = str(exc)
        if plan["counts"]["failed"]:
            log.warning("clean-up of run %s (%s): %d file(s) failed; the next run retries",
                        entry.run_id, entry.key, plan["counts"]["failed"])
        reports.append({"run_id": entry.run_id, **plan})
    return reports


def _earlier(plan: Mapping[str, Any]) -> dict[str, tuple[str, str | None]]:
    """What an earlier attempt of an entry (one that left files failed) recorded as done:
    path -> (``deleted``/``archived``, destination)."""
    done: dict[str, tuple[str, str | None]] = {p: ("deleted", None)
                                              for p in plan.get("deleted") or ()}
    done.update({m["from"]: ("archived", m["to"]) for m in plan.get("moves") or ()})
    return done


def _carry_out(ops: FileOps, entry: CleanEntry, files: Sequence[FileEntry],
               earlier: Mapping[str, tuple[str, str | None]]) -> dict[str, Any]:
    """Clean ``files`` of ``entry`` one by one; a file whose operation raises is counted as
    failed with its error, and the others go on. A file an earlier attempt recorded as
    deleted or moved is not touched again: its outcome is carried over."""
    counts = dict.fromkeys(OUTCOMES, 0)
    deleted: list[str] = []
    moves: list[dict[str, str]] = []
    kept: dict[str, str] = {}
    errors: dict[str, str] = {}
    for index, taken in enumerate(files):
        if taken.path in earlier:
            outcome_name, dest = earlier[taken.path]
            counts[outcome_name] += 1
            if dest is None and len(deleted) < LISTED_MAX:
                deleted.append(taken.path)
            elif dest is not None and len(moves) < LISTED_MAX:
                moves.append({"from": taken.path, "to": dest})
            continue
        try:
            outcome, dest = _one(ops, entry, taken)
        except Exception as exc:  # noqa: BLE001 - reported per file, retried by the next run
            counts["failed"] += 1
            if len(errors) < LISTED_MAX:
                errors[taken.path] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        counts[outcome.counted_as] += 1
        if outcome.action == "delete" and len(deleted) < LISTED_MAX:
            deleted.append(taken.path)
        elif outcome.action in ("move", "finish-move") and len(moves) < LISTED_MAX:
            moves.append({"from": taken.path, "to": dest or ""})
        elif outcome.action == "keep" and len(kept) < LISTED_MAX:
            kept[taken.path] = f"{outcome.counted_as}: {outcome.reason}"
        if index == 0:
            fault_point("mid-clean-up")  # crash tests: one file cleaned, no mark recorded
    return {"counts": counts, "deleted": deleted, "moves": moves, "kept": kept,
            "errors": errors}


def _one(ops: FileOps, entry: CleanEntry, taken: FileEntry) -> tuple[Any, str | None]:
    """Decide and do the clean-up of one file; returns the outcome and its destination."""
    now = ops.stat(taken.path)
    if entry.mode == "archive":
        if not entry.archive_to:
            raise ConfigError(f"clean-up entry {entry.key} of run {entry.run_id} archives "
                              "but names no archive folder")
        dest = archive_destination(taken.path, entry.roots, entry.archive_to)
        there = ops.stat(dest)
        same = there is not None and now is not None and ops.same_file(taken.path, dest)
        outcome = decide(taken, now, "archive", destination=there, same_at_destination=same)
        if outcome.action == "move":
            try:
                ops.move(taken.path, dest)
            except FileExistsError:  # appeared since it was looked at: decide again
                same = ops.same_file(taken.path, dest)
                outcome = decide(taken, ops.stat(taken.path), "archive",
                                 destination=ops.stat(dest), same_at_destination=same)
                if outcome.action == "finish-move":
                    ops.delete(taken.path)
                elif outcome.action == "move":
                    raise FileExistsError(f"{dest} appeared and went while archiving "
                                          f"{taken.path}; the next run retries") from None
        elif outcome.action == "finish-move":
            ops.delete(taken.path)
        return outcome, dest
    outcome = decide(taken, now, "delete")
    if outcome.action == "delete":
        ops.delete(taken.path)
    return outcome, None


def summary(reports: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The counts of several entries' records added up."""
    total = dict.fromkeys(OUTCOMES, 0)
    for report in reports:
        for key, value in (report.get("counts") or {}).items():
            total[key] = total.get(key, 0) + int(value)
    return total
