"""The range a table source's earlier attempt of the same run recorded, for exact replay.

The Delta and Hudi table sources replay a failed attempt's range when the retry starts from
the same bookmark state, so a write the retry skips by its token held the same rows. Both ask
the state store the same way; only the manifest kind differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..state.manifest import SourceManifest
from ._host import SourceHost

__all__ = ["failed_attempt_plan", "recorded_plan"]


def recorded_plan(inputs: Any, ctx: str, kind: str) -> SourceManifest | None:
    """The manifest of source ``ctx`` of ``kind`` in a run's ``inputs``, if it holds a range."""
    plan = inputs.manifest
    if inputs.ctx == ctx and isinstance(plan, SourceManifest) and plan.kind == kind \
            and plan.range:
        return plan
    return None


def failed_attempt_plan(job: SourceHost, ctx: str, kind: str,
                        previous: Mapping[str, Any] | None) -> SourceManifest | None:
    """The plan the latest failed attempt of this run recorded for ``ctx``, when that attempt
    started from the same state element (``previous``); None for a first attempt, a run that
    does not move the bookmark, or when the latest failed attempt planned from another state."""
    record = job.run
    if record.attempt == 0 or job.bookmark_option != "enable":
        return None
    for earlier in reversed(job.store.list_runs(job.name)):
        if earlier.run != record.run or earlier.run_id == record.run_id \
                or earlier.status != "FAILED":
            continue
        for inputs in job.store.run_inputs(earlier.run_id):
            plan = recorded_plan(inputs, ctx, kind)
            if plan is not None and plan.previous_state == (dict(previous) if previous
                                                            else None):
                return plan
        return None  # only the latest failed attempt counts
    return None
