"""Names a job's records and commits carry, shared by :mod:`lakemark.job` and the run's parts."""

from __future__ import annotations

__all__ = ["GENERATION_KEY", "RUN_ID_KEY", "UNTRACKED"]

#: The manifest key of a source without a ctx is ``<untracked> #n`` (n counts them per run).
UNTRACKED = "<untracked>"

#: Commit-info key of a Delta commit made by a job: the run id (attempt) that made it.
RUN_ID_KEY = "lakemark.runId"
#: Commit-info key: the lease generation of the attempt that made the commit (audit).
GENERATION_KEY = "lakemark.leaseGeneration"
