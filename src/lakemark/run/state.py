"""What a run accumulates while it goes: :class:`RunState`.

:class:`lakemark.Job` owns one per job and hands it, with the frozen
:class:`.context.RunContext`, to the collaborators in this package (file sources, replay,
sinks, quarantine, exact reads); each reads and adds to the fields it names, so what one of
them leaves for another (a plan for the check before a sink commits, a set-aside file for the
commit) is spelled out here rather than hidden in ``Job``'s private attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .keys import UNTRACKED

if TYPE_CHECKING:
    from ..planning import FilePlan
    from ..sinks import WriteResult
    from .cleanup import CleanSpec
    from .quarantine import QuarantinedFile, ReadArgs

__all__ = ["RunState"]


@dataclass
class RunState:
    """The run's mutable bookkeeping (one per job; see the module doc)."""

    #: ctx -> the state element the commit writes (file sources, sources planned elsewhere).
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ctx -> PendingSchema / (Observation, record) of a tracked-schema read (tracked_read).
    pending_schemas: dict[str, Any] = field(default_factory=dict)
    schema_counts: dict[str, Any] = field(default_factory=dict)
    #: Source ctxs claimed so far, and how many sources without one (``<untracked> #n``).
    ctxs_read: set[str] = field(default_factory=set)
    untracked: int = 0
    #: Whether anything was read yet (bad input found before that leaves the bookmark).
    read_started: bool = False
    warned_untracked: bool = False
    #: Manifest keys of the sinks written (one write per sink ctx and run).
    sinks: set[str] = field(default_factory=set)
    #: ctx -> (attempt id, inputs) this attempt replays, and how it was chosen (replay).
    pinned: dict[str, tuple[str, Any]] | None = None
    pin_info: dict[str, Any] = field(default_factory=dict)
    results: list[WriteResult] = field(default_factory=list)
    #: Manifest key -> the file plan, and the roots it was listed under (file sources only).
    plans: dict[str, FilePlan] = field(default_factory=dict)
    roots: dict[str, list[str]] = field(default_factory=dict)
    #: id -> frame of a source that took no file (a sink of it writes nothing).
    empty_reads: dict[int, Any] = field(default_factory=dict)
    #: Manifest key -> the clean-up after the commit (cleanup).
    clean: dict[str, CleanSpec] = field(default_factory=dict)
    #: Input files that cannot be read (quarantine): set aside per source, set-aside files
    #: taken again, how each source was read, whether damage was looked for before a sink.
    set_aside: dict[str, list[QuarantinedFile]] = field(default_factory=dict)
    retrying: dict[str, set[str]] = field(default_factory=dict)
    reads: dict[str, ReadArgs] = field(default_factory=dict)
    reads_checked: bool = False
    #: What the clean-up after the commit did (one record per entry; cleanup).
    cleanups: list[dict[str, Any]] = field(default_factory=list)

    def claim_ctx(self, ctx: str | None) -> str:
        """The manifest key of a source: its ctx (once per run), or ``<untracked> #n``."""
        if ctx is None:
            self.untracked += 1
            return f"{UNTRACKED} #{self.untracked}"
        if not isinstance(ctx, str) or not ctx.strip():
            raise ConfigError("transformation_ctx must be a non-empty string")
        if ctx in self.ctxs_read or ctx.startswith(("sink:", UNTRACKED)):
            raise ConfigError(
                f"transformation_ctx {ctx!r} is used twice in one run; each source needs its own"
            )
        self.ctxs_read.add(ctx)
        return ctx
