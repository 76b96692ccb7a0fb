"""Progress lines for `ingest files` when stdout is not a terminal (cron, CI logs).

On a terminal the command shows a spinner that rewrites itself; in a log that spinner prints
nothing, so a run over 2,000 files would say nothing for minutes and then its summary.
:class:`ProgressLines` instead writes one plain line every ``interval_s`` seconds: the stage,
the time since the start, the files and bytes planned, the rows written when known, and the
Spark tasks done in the running stages when Spark is at work. It learns what it prints from the
run's events (:class:`lakemark.job.JobEvent`); :meth:`ProgressLines.tick` decides from its
clock whether a line is due, so a test drives it with a fake clock, and
:meth:`ProgressLines.running` calls it from a daemon thread during the run.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ._output import human_bytes

__all__ = ["DEFAULT_INTERVAL_S", "INTERVAL_ENV", "ProgressLines", "interval_from",
           "spark_tasks"]

#: Seconds between two progress lines unless --progress-interval or the variable says.
DEFAULT_INTERVAL_S = 30.0
INTERVAL_ENV = "LAKEMARK_PROGRESS_INTERVAL"

#: event -> what the run does after it.
_STAGES = {"started": "listing", "listed": "planning", "planned": "reading and writing",
           "read": "reading and writing", "written": "committing", "committed": "cleaning up"}


def interval_from(value: float | None, env: dict[str, str] | os._Environ[str] = os.environ
                  ) -> float:
    """The interval: ``value`` (the option), else :data:`INTERVAL_ENV`, else the default; a
    bad value is a ValueError naming where it came from. 0 turns the lines off."""
    if value is None:
        raw = env.get(INTERVAL_ENV)
        if raw is None or not raw.strip():
            return DEFAULT_INTERVAL_S
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{INTERVAL_ENV}={raw!r} is not a number of seconds") from None
        where = INTERVAL_ENV
    else:
        where = "--progress-interval"
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{where} must be a finite number of seconds ≥ 0, not {value}")
    return float(value)


class ProgressLines:
    """Writes a progress line at a steady interval (see the module doc)."""

    def __init__(self, write: Callable[[str], None], interval_s: float, *,
                 clock: Callable[[], float] = time.monotonic,
                 tasks: Callable[[], tuple[int, int] | None] = lambda: None) -> None:
        self._write = write
        self.interval_s = interval_s
        self._clock = clock
        self._tasks = tasks
        self._start = self._last = clock()
        self.stage = "starting"
        self.files: int | None = None
        self.bytes: int | None = None
        self.rows: int | None = None

    def on_event(self, event: Any) -> None:
        """Take what a run's event says (its stage, the files and bytes planned, the rows
        written)."""
        detail = dict(event.detail or {})
        self.stage = _STAGES.get(event.stage, self.stage)
        if event.stage == "planned":
            self.files = (self.files or 0) + int(detail.get("files") or 0)
            self.bytes = (self.bytes or 0) + int(detail.get("bytes") or 0)
        elif event.stage == "written" and isinstance(detail.get("rows"), int):
            self.rows = (self.rows or 0) + detail["rows"]

    def line(self) -> str:
        """What a progress line says now."""
        parts = [f"progress: {self._clock() - self._start:.0f}s, {self.stage}"]
        if self.files is not None:
            parts.append(f"{self.files} file(s) planned, {human_bytes(self.bytes or 0)}")
        if self.rows is not None:
            parts.append(f"{self.rows} row(s) written")
        tasks = self._tasks() if self.stage == "reading and writing" else None
        if tasks is not None:
            parts.append(f"Spark tasks {tasks[0]}/{tasks[1]} done")
        return ", ".join(parts)

    def due_in(self) -> float:
        """Seconds until the next line is due (0: now)."""
        return max(0.0, self._last + self.interval_s - self._clock())

    def tick(self) -> bool:
        """Write a line if one is due; True if it did."""
        if self.interval_s <= 0 or self.due_in() > 0:
            return False
        self._last = self._clock()
        self._write(self.line())
        return True

    @contextmanager
    def running(self) -> Iterator[ProgressLines]:
        """Tick from a daemon thread while the block runs (nothing with interval 0)."""
        if self.interval_s <= 0:
            yield self
            return
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(max(self.due_in(), 0.01)):
                self.tick()

        thread = threading.Thread(target=loop, name="lakemark-progress", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()


def spark_tasks() -> tuple[int, int] | None:
    """(tasks done, tasks) of the active Spark stages of this process's SparkContext; None
    when no Spark is at work (never starts one, never raises)."""
    import sys

    if "pyspark" not in sys.modules:  # a run with nothing to read never imports Spark
        return None
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is None:
            return None
        tracker = sc.statusTracker()
        done = total = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return (done, total) if total else None
    except Exception:  # noqa: BLE001 - a progress line must never break the run
        return None
