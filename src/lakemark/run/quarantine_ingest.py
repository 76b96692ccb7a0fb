"""Read and write a run's files, setting aside each file that breaks the read on the way.

``lakemark ingest files`` controls both its read and its write, so when Spark fails on a file
while writing (damage the cheap checks of :mod:`lakemark.run.quarantine` cannot see, such as a
flipped byte inside a Parquet page) the run pins the file — the one Spark's error names, or
by reading halves of the run's files — sets it aside and builds the frame again without it.
A failed write of the Delta, Iceberg and folder sinks commits nothing (they commit on the
driver after every task succeeded), so the write is simply done again under the same token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from .quarantine import is_read_failure, pin_read_failure

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .context import RunContext
    from .state import RunState

__all__ = ["write_setting_aside"]

T = TypeVar("T")


def write_setting_aside(run: RunContext, state: RunState, ctx: str, sink_key: str,
                        read: Callable[[], DataFrame],
                        write: Callable[[DataFrame], T]) -> T:
    """``write(read())``; while that fails on a file of source ``ctx`` that can be pinned, set
    the file aside and do it again without it. Other failures (and a policy that says fail)
    are raised. The full read before a run's first sink (``verify_reads``) is not needed:
    this one sink's write is that read, and a failure of it commits nothing."""
    state.reads_checked = True
    while True:
        try:
            return write(read())
        except Exception as exc:
            if not is_read_failure(exc) or not pin_read_failure(run, state, ctx, exc):
                raise
            state.sinks.discard(sink_key)
