"""The job's lease while it runs: the background heartbeat, and a failed commit that ends
the run as a failed attempt and releases the lease (docs/bookmarks.md)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .heartbeat import Heartbeat
from ..errors import LakemarkError, LeaseLost
from ..state import RunRecord

if TYPE_CHECKING:
    from ..job import Job

__all__ = ["start_heartbeat", "stop_heartbeat", "fail_after_commit_error"]

log = logging.getLogger("lakemark")


def start_heartbeat(job: Job, run_id: str) -> None:
    """Keep the lease of the run alive from a daemon thread (lakemark.run.heartbeat)."""
    job._heartbeat = Heartbeat(job.store, run_id, job._heartbeat_interval_s, owner=job)
    job._heartbeat.start()


def stop_heartbeat(job: Job, *, check: bool) -> None:
    """Stop the heartbeat; with ``check``, raise if a beat found the lease taken over (a
    stale holder must not commit)."""
    heartbeat, job._heartbeat = job._heartbeat, None
    if heartbeat is not None:
        heartbeat.stop()
        if check:
            heartbeat.check()


def fail_after_commit_error(job: Job, record: RunRecord, exc: BaseException) -> None:
    """A commit that raised (a busy store, a conflict, an error inside it) ends the run as
    a failed attempt and releases its lease, so this process is not locked out of the job;
    if even that cannot be recorded, the lease ages out (no more heartbeats) or this
    process's next run of the job takes it over (``held`` in begin_run)."""
    message = f"commit failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, LeaseLost):  # fenced off: the run that took over records the outcome
        job._emit("failed", None, {"error": message})
        job._close()
        return
    try:
        job.store.fail_run(record.run_id, message[:4000],
                            update_bookmark=job._updates_bookmark(record))
        job._record = job.store.get_run(record.run_id)
    except LakemarkError as again:
        log.warning("run %s: its failed commit could not be recorded either: %s",
                    record.run_id, again)
    job._emit("failed", None, {"error": message})
    job._close()
