"""Stage timings of a run: how long it spent planning, reading, writing and committing.

A :class:`~lakemark.job.Job` emits events as it goes (``started``, ``listed``, ``planned``,
``read``, ``written``, then ``committed``/``ended``/``failed``). :class:`StageClock` keeps the
time of the first ``started`` and of the last of each other event, and :meth:`durations` turns
them into four stages, each ending at its mark:

* ``plan``: from ``started`` to the last ``planned`` (listing and planning every source);
* ``read``: to the last ``read`` (the DataFrames made: schema inference, file checks);
* ``write``: to the last ``written`` (Spark reads the input while it writes);
* ``commit``: to the run's end (the state store's commit, or recording the failure).

A stage whose mark never came (a job that wrote nothing) is left out and its time counts in
the next stage present; a mark earlier than the one before it (sources planned after another
was read) counts as zero. The clock is pure (its time source is given, so a test drives it
without waiting); :func:`save_timings` hands its result to the state store.
"""

from __future__ import annotations

from collections.abc import Callable
import logging
import time
from typing import Any

log = logging.getLogger("lakemark.job")

__all__ = ["STAGES", "StageClock", "save_timings"]

#: stage name -> the event that ends it, in run order.
STAGES: dict[str, tuple[str, ...]] = {
    "plan": ("planned",),
    "read": ("read",),
    "write": ("written",),
    "commit": ("committed", "ended", "failed"),
}


class StageClock:
    """The marks of one run's events (see the module doc)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._marks: dict[str, float] = {}

    def mark(self, event: str) -> None:
        """Note that ``event`` happened now (``started`` keeps its first time, others their
        last)."""
        if event == "started" and event in self._marks:
            return
        self._marks[event] = self._clock()

    def durations(self) -> dict[str, float]:
        """Seconds per stage (rounded to ms), in run order; empty before ``started``."""
        if "started" not in self._marks:
            return {}
        out: dict[str, float] = {}
        before = self._marks["started"]
        for stage, events in STAGES.items():
            ends = [self._marks[e] for e in events if e in self._marks]
            if not ends:
                continue
            end = max(max(ends), before)
            out[stage] = round(end - before, 3)
            before = end
        return out


def save_timings(store: Any, run_id: str, clock: StageClock) -> None:
    """Record ``clock``'s stage timings for the ended run ``run_id`` in ``store``. Never
    raises: the run's outcome is already recorded, and a store that cannot take its timings
    (busy, gone) costs only the timings (a warning says so)."""
    timings = clock.durations()
    if not timings:
        return
    try:
        store.record_timings(run_id, timings)
    except Exception as exc:  # noqa: BLE001 - informational; the run has ended either way
        log.warning("run %s: its stage timings could not be recorded: %s", run_id, exc)
