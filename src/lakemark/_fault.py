"""Fault injection for crash tests: ``LAKEMARK_FAULT=<point>`` makes the process SIGKILL itself
when the run reaches that named point, the way a lost driver dies (no ``finally``, no
``atexit``, no failed-attempt record). Unset (always, outside tests), :func:`fault_point` does
nothing but read one environment variable.

``LAKEMARK_FAULT_WAIT=<point>=<path>`` is a barrier for concurrency tests: at that point the
process creates ``<path>.reached`` and then waits until ``<path>`` exists before going on.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["CLEAN_FAULT_POINTS", "FAULT_ENV", "FAULT_WAIT_ENV", "FAULT_POINTS", "fault_point"]

FAULT_ENV = "LAKEMARK_FAULT"
FAULT_WAIT_ENV = "LAKEMARK_FAULT_WAIT"

#: The named points, in the order a run reaches them.
FAULT_POINTS: tuple[str, ...] = (
    "after-plan",           # a source is planned, the plan not yet recorded
    "after-plan-recorded",  # the plan and its files are in the manifest
    "mid-read",             # Spark has opened the planned input (schema), nothing written
    "mid-write",            # the sink's data files exist, the Delta commit not yet made
                            # (a merge: its input checked, deltalake's merge not begun)
    "after-sink-commit",    # the sink committed, the manifest not yet updated
    "before-job-commit",    # every write done, job.commit() not yet called
    "during-job-commit",    # inside the state store's commit transaction, before it ends
)


#: Points after the run's commit, in the clean-up of processed files (``clean_source``); kept
#: apart from FAULT_POINTS, whose crash matrix checks runs that did not commit.
CLEAN_FAULT_POINTS: tuple[str, ...] = (
    "after-job-commit",     # the run committed (its clean-up intent with it), nothing cleaned
    "mid-clean-up",         # the first file of a clean-up entry cleaned, no "done" mark yet
)


def fault_point(name: str, *, driver: int | None = None) -> None:
    """SIGKILL this process if ``LAKEMARK_FAULT`` names ``name``; ``driver``: the pid of the
    Python driver this process works for (a data source's commit worker), killed first."""
    if os.environ.get(FAULT_ENV) == name:
        if driver is not None and driver != os.getpid():
            os.kill(driver, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    wait = os.environ.get(FAULT_WAIT_ENV)
    if wait:
        point, _, path = wait.partition("=")
        if point == name and path:
            gate = Path(path)
            Path(f"{path}.reached").touch()
            while not gate.exists():  # released by the test that set the barrier
                time.sleep(0.05)
