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

from .job import Job, JobEvent
from .redaction import install_log_redaction

install_log_redaction()  # no lakemark log record carries a credential, whatever prints it

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "CommitConflict",
    "ConfigError",
    "EnvironmentProblem",
    "FormatError",
    "Job",
    "JobEvent",
    "LakemarkError",
    "LeaseError",
    "LeaseLost",
    "ReadError",
    "SinkError",
    "SourceError",
    "StateError",
    "UnknownRunError",
    "UnsupportedError",
]
