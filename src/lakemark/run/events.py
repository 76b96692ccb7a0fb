"""What a run tells its observers: one :class:`JobEvent` per step."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JobEvent"]


@dataclass(frozen=True)
class JobEvent:
    """A step of a run, for progress displays and observers: ``stage`` and what it is about.

    ``read`` (a source's DataFrame was made; ``detail["key"]`` is its manifest key) and
    ``written`` carry the DataFrame in ``frame``, so an observer such as runtime lineage sees
    what was read and written without wrapping the job's methods.
    """

    stage: str  # started | listed | planned | read | written | committed | cleaned
    # | failed
    ctx: str | None = None
    detail: Mapping[str, Any] | None = None
    frame: Any = field(default=None, compare=False, repr=False)
