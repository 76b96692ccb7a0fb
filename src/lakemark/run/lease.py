"""The run's lease while it runs: the background heartbeat, and a failed commit that ends
the run as a failed attempt and releases the lease (docs/bookmarks.md).

These see the run through :class:`.context.RunContext` and return what they made or found;
``Job`` keeps it (its heartbeat, its refreshed run record).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import LakemarkError, LeaseLost
from .heartbeat import Heartbeat

if TYPE_CHECKING:
    from ..state import RunRecord
    from .context import RunContext

__all__ = ["start_heartbeat", "stop_heartbeat", "fail_after_commit_error"]

log = logging.getLogger("lakemark")


def start_heartbeat(run: RunContext, interval_s: float, owner: object) -> Heartbeat:
    """A started heartbeat keeping the lease of ``run`` alive from a daemon thread
    (:mod:`.heartbeat`; ``owner``, the job, is held weakly)."""
    heartbeat = Heartbeat(run.store, run.run_id, interval_s, owner=owner)
    heartbeat.start()
    return heartbeat


def stop_heartbeat(heartbeat: Heartbeat | None, *, check: bool) -> None:
    """Stop ``heartbeat``; with ``check``, raise if a beat found the lease taken over (a
    stale holder must not commit)."""
    if heartbeat is not None:
        heartbeat.stop()
        if check:
            heartbeat.check()


def fail_after_commit_error(run: RunContext, exc: BaseException, *, update_bookmark: bool
                            ) -> tuple[str, RunRecord | None]:
    """A commit that raised (a busy store, a conflict, an error inside it) ends the run as
    a failed attempt and releases its lease, so this process is not locked out of the job;
    if even that cannot be recorded, the lease ages out (no more heartbeats) or this
    process's next run of the job takes it over (``held`` in begin_run).

    Returns the failure's message (for the ``failed`` event) and the run's record as the
    store now has it (None when fenced off, or when the failure could not be recorded)."""
    message = f"commit failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, LeaseLost):  # fenced off: the run that took over records the outcome
        return message, None
    try:
        run.store.fail_run(run.run_id, message[:4000], update_bookmark=update_bookmark)
        return message, run.store.get_run(run.run_id)
    except LakemarkError as again:
        log.warning("run %s: its failed commit could not be recorded either: %s",
                    run.run_id, again)
        return message, None
