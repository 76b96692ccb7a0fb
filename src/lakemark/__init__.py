"""lakemark: incremental ETL for Apache Spark — job bookmarks, exactly-once sinks, lineage."""

from __future__ import annotations

from .errors import (
    UnsupportedError,
    CommitConflict,
    ConfigError,
    EnvironmentProblem,
    FormatError,
    LakemarkError,
    LeaseError,
    LeaseLost,
    ReadError,
    SinkError,
    SourceError,
    StateError,
    UnknownRunError,
)

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

from .run.quarantine import BadFilePolicy, QuarantineExceeded
from .job import Job, JobEvent, add_job_observer
from .redaction import install_log_redaction

install_log_redaction()  # no lakemark log record carries a credential, whatever prints it


def _runtime_lineage(job: Job) -> Callable[[JobEvent], None] | None:
    """OpenLineage events for every run when ``LAKEMARK_OPENLINEAGE`` is set (docs/lineage.md)."""
    if not os.environ.get("LAKEMARK_OPENLINEAGE"):
        return None
    from .lineage.runtime import attach

    return attach(job)


add_job_observer(_runtime_lineage)


def register(spark: SparkSession) -> bool:
    """Make ``spark`` read and write ``format("delta")`` with no Delta jars (docs/delta.md).

    lakemark's sessions (``Job``, ``lakemark run``, the Glue facade) are registered already;
    call this in any other session. Returns False, changing nothing, when Delta Lake's own jars
    are on the classpath (they keep ``format("delta")``).

    It also makes ``from delta.tables import DeltaTable`` resolve to lakemark's stand-in when
    Delta Lake's own ``delta`` package is not installed (docs/upserts.md).
    """
    from .spark_io import install
    from .tables import install_delta_shim
    from .tables import register as register_tables

    install()
    install_delta_shim()
    return register_tables(spark)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "BadFilePolicy",
    "CommitConflict",
    "ConfigError",
    "EnvironmentProblem",
    "FormatError",
    "Job",
    "JobEvent",
    "LakemarkError",
    "LeaseError",
    "LeaseLost",
    "QuarantineExceeded",
    "ReadError",
    "SinkError",
    "SourceError",
    "StateError",
    "UnknownRunError",
    "UnsupportedError",
    "register",
]
