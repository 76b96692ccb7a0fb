"""What a source planned outside the file planner needs from the run it is read in.

JDBC tables (:mod:`lakemark.sources.jdbc`) and S3-event objects (:mod:`lakemark.events`) plan
their own input, then hand it to the run: they read the state element their ``ctx`` starts
from, the replay window and any input a failed attempt pinned, and record their plan with the
state element the run commits. :class:`SourceHost` is that surface and nothing more;
:class:`lakemark.job.Job` implements it, and these sources see the job only through it (a unit
test fails if they reach past it), so a source does not depend on the run lifecycle above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..planning.files import FileEntry
    from ..state.base import RunInputs, RunRecord, StateStore

__all__ = ["SourceHost"]


class SourceHost(Protocol):
    """The run a source is read in (see the module documentation)."""

    @property
    def name(self) -> str:
        """The job's name."""
        ...

    @property
    def bookmark_option(self) -> str:
        """``enable``, ``disable`` or ``pause``."""
        ...

    @property
    def from_run_id(self) -> str | None:
        """With ``pause``: the run after which the replayed window starts (else None)."""
        ...

    @property
    def to_run_id(self) -> str | None:
        """With ``pause``: the last run of the replayed window (else None)."""
        ...

    @property
    def spark(self) -> SparkSession:
        """The Spark session the run reads with."""
        ...

    @property
    def store(self) -> StateStore:
        """The state store (earlier runs and what they read)."""
        ...

    @property
    def run(self) -> RunRecord:
        """This attempt's run record."""
        ...

    @property
    def run_id(self) -> str:
        """This attempt's run id."""
        ...

    def state_of(self, ctx: str) -> dict[str, Any] | None:
        """The committed state element of ``ctx`` the run started from."""
        ...

    def track_source(self, ctx: str | None, recorded: Mapping[str, Any],
                     files: Sequence[FileEntry], next_state: Mapping[str, Any] | None) -> str:
        """Record the source's plan (and the state element ``ctx`` commits with the run)."""
        ...

    def replay_input(self, ctx: str, kind: str) -> RunInputs | None:
        """The input of ``ctx`` this attempt must replay exactly, or None."""
        ...

    def replay_case(self, ctx: str) -> dict[str, Any]:
        """How this attempt chose the input of ``ctx`` (the manifest's ``replay`` entry)."""
        ...

    def read_screened(self, ctx: str, files: Sequence[FileEntry], *, root: str, format: str,
                      options: Mapping[str, str] | None, schema: Any, mode: str) -> Any:
        """A DataFrame of the planned ``files`` of ``ctx`` without those the run's bad-file
        policy sets aside (the run keeps the read, to pin a later failure on a file)."""
        ...
