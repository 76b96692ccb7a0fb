"""What a collaborator of a run sees of it: :class:`RunContext`.

The run's collaborators (the lease in :mod:`.lease`, the clean-up in :mod:`.cleanup`, the
tracked-schema read in :mod:`.tracked_read`) used to take the whole ``Job`` and reach into its
private state; they now take this narrow, frozen view and return what they found, and
:class:`lakemark.Job` (the public face) wires them and keeps the state. Like
:class:`lakemark.sources._host.SourceHost` for table sources, it holds only what the
collaborators use, so a reader of one of them need not know ``Job``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..state import StateStore

__all__ = ["Emit", "RunContext"]

#: Tells the job's observers a stage happened: ``emit(stage, ctx or None, detail)``.
Emit = Callable[[str, "str | None", Mapping[str, Any]], None]


@dataclass(frozen=True)
class RunContext:
    """The run a collaborator works for: its job, its id, its state store, its events, its
    Spark session (started on first use, so a collaborator that needs none starts none), and
    where to leave what must be called when the run ends, however it ends."""

    job_name: str
    run_id: str
    store: StateStore
    emit: Emit
    spark: Callable[[], SparkSession]
    at_run_end: Callable[[Callable[[], None]], None]
