"""lakemark's AWS Glue facade: run unmodified Glue PySpark scripts anywhere Spark runs.

A thin skin over the core engine (:class:`lakemark.Job`, the planners, sources and sinks):

* :class:`GlueContext` (``context``): sources and sinks in Glue's shapes;
* :class:`DynamicFrame` (``dynamicframe``) over a Spark DataFrame, and the transforms
  (``transforms``: ``ApplyMapping``, ``Relationalize`` …);
* :class:`Job` (``job``): ``init``/``commit`` with the job-bookmark semantics;
* :func:`getResolvedOptions` (``options``): job arguments as Glue resolves them.

Scripts import these as ``awsglue.*`` inside ``lakemark run``, which serves the stand-in package
in ``_shim`` (see docs/glue.md for how it coexists with AWS's own ``awsglue``).
"""

from __future__ import annotations

from pathlib import Path

from .context import GlueContext
from .job import Job, finish_open_jobs
from .options import GlueArgumentError, getResolvedOptions

__all__ = [
    "GlueArgumentError",
    "GlueContext",
    "Job",
    "finish_open_jobs",
    "getResolvedOptions",
    "shim_path",
]


def shim_path() -> str:
    """The folder to put first on ``sys.path`` so that ``import awsglue`` finds lakemark's."""
    return str(Path(__file__).parent / "_shim")
