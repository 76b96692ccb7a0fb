"""What a collaborator of a run sees of it: :class:`RunContext`.

The run's collaborators (everything in :mod:`lakemark.run`) used to take the whole ``Job`` and
reach into its private state; they now take this narrow, frozen view of the started run, plus
the run's mutable bookkeeping (:class:`.state.RunState`) where they add to it, and
:class:`lakemark.Job` (the public face) wires them and owns both. Like
:class:`lakemark.sources._host.SourceHost` for table sources, it holds only what the
collaborators use, so a reader of one of them need not know ``Job``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import StateError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..state import Bookmark, RunRecord, StateStore
    from .quarantine import BadFilePolicy

__all__ = ["Emit", "RunContext"]


class Emit(Protocol):
    """Tells the job's observers a stage happened: ``emit(stage, ctx or None, detail)``, with
    the DataFrame read or written as ``frame`` (runtime lineage traces it)."""

    def __call__(self, stage: str, ctx: str | None, detail: Mapping[str, Any], *,
                 frame: Any = None) -> None: ...


@dataclass(frozen=True)
class RunContext:
    """The run a collaborator works for: its job, its id, its state store, its events, its
    Spark session (started on first use, so a collaborator that needs none starts none), and
    where to leave what must be called when the run ends, however it ends.

    Then what the job was started with: its bookmark option and replay window, the attempt's
    record (run number, attempt, lease generation), the bookmark the run started from and
    the policy for input files that cannot be read. A collaborator that needs none of these
    (the lease, the clean-up) is given a context without them."""

    job_name: str
    run_id: str
    store: StateStore
    emit: Emit
    spark: Callable[[], SparkSession]
    at_run_end: Callable[[Callable[[], None]], None]
    bookmark_option: str = "enable"
    from_run_id: str | None = None
    to_run_id: str | None = None
    record: RunRecord | None = None
    bookmark: Bookmark | None = None
    bad_files: BadFilePolicy | None = None

    @property
    def tracking(self) -> bool:
        """Whether this run changes the bookmark when it ends."""
        return self.bookmark_option == "enable"

    def started(self) -> RunRecord:
        """The attempt's record (StateError for a context made without one)."""
        if self.record is None:
            raise StateError(f"job {self.job_name!r}: run {self.run_id} has no record here")
        return self.record
