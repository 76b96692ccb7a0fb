"""A run's background heartbeat: keeps its lease alive while the run reads and writes.

Without it a run that works for longer than the lease timeout could be taken over by another
host while it is still alive. A daemon thread extends the lease every ``interval_s`` (much less
than the timeout) through the run's state store, whose every change is fenced by the lease
generation: once a heartbeat finds the lease taken over (or the run ended), the thread stops
and keeps the error, and the run refuses to write or commit (:meth:`Heartbeat.check`). Any other
failure (a busy store, a dropped connection) is logged and retried at the next beat; the lease
then simply ages, as it would without a heartbeat.

Also here: the runs that live :class:`~lakemark.job.Job` objects of this process hold, so a run
left RUNNING in this process by a commit that failed (and whose failure could not be recorded
either) does not lock the process out of its own job until the lease expires.
"""

from __future__ import annotations

import logging
import threading
import weakref

from ..errors import LeaseError
from ..state import StateStore

__all__ = ["Heartbeat", "MAX_INTERVAL_S", "default_interval", "held_runs"]

log = logging.getLogger("lakemark")

#: The default interval is a tenth of the lease timeout, but never more than this.
MAX_INTERVAL_S = 60.0

_held: set[str] = set()
_held_lock = threading.Lock()


def default_interval(lease_timeout_s: float) -> float:
    """The heartbeat interval for a lease timeout: a tenth of it, at most a minute."""
    return min(lease_timeout_s / 10.0, MAX_INTERVAL_S)


def held_runs() -> frozenset[str]:
    """The run ids that live jobs of this process hold the lease of right now."""
    with _held_lock:
        return frozenset(_held)


class Heartbeat:
    """Extends the lease of ``run_id`` every ``interval_s`` seconds from a daemon thread.

    ``owner`` (the job) is held weakly: a job dropped without ending its run stops beating, so
    an abandoned run's lease ages out instead of being renewed for the life of the process.
    """

    def __init__(self, store: StateStore, run_id: str, interval_s: float,
                 owner: object | None = None) -> None:
        self.store = store
        self._owner = weakref.ref(owner) if owner is not None else None
        self.run_id = run_id
        self.interval_s = interval_s
        self.lost: LeaseError | None = None  # set once a heartbeat found the lease gone
        self.beats = 0  # heartbeats that went through
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Register the run as held here and, with a positive interval, start beating."""
        with _held_lock:
            _held.add(self.run_id)
        if self.interval_s > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name=f"lakemark-heartbeat-{self.run_id}")
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self._owner is not None and self._owner() is None:
                log.warning("run %s was abandoned without ending: its lease is no longer "
                            "renewed", self.run_id)
                with _held_lock:
                    _held.discard(self.run_id)
                return
            try:
                self.store.heartbeat(self.run_id)
                self.beats += 1
            except LeaseError as exc:  # taken over (a newer generation) or ended: for good
                self.lost = exc
                log.error("run %s lost its lease: %s", self.run_id, exc)
                return
            except Exception as exc:  # noqa: BLE001 - a busy store: try again next beat
                log.warning("heartbeat of run %s failed (retrying in %g s): %s", self.run_id,
                            self.interval_s, exc)

    def check(self) -> None:
        """Raise the error of a heartbeat that found the lease taken over (fencing)."""
        if self.lost is not None:
            raise self.lost

    def stop(self) -> None:
        """Stop beating (waiting for a beat in progress) and unregister the run."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with _held_lock:
            _held.discard(self.run_id)
