"""Every error lakemark raises on purpose, under one root class.

Errors about one place carry it as a field as well as in the text: ``SourceError.uri`` (the
source path or URI) and ``SinkError.target`` (the target), ``None`` where no single place is at
fault.

Third-party errors (sqlite3, botocore, Spark's Py4J/analysis errors, deltalake) are converted to
these where they enter lakemark, so callers and the CLI catch one family and print one clear line.

    LakemarkError
    ├── ConfigError            bad option, argument, URL or environment value (nothing was done)
    │   ├── FormatError        unknown or unavailable input/output format
    │   ├── UnsupportedError   a Glue API, transform or option lakemark does not provide
    │   └── TypeSyntaxError    a malformed Hive/Glue type string (lakemark.catalog)
    ├── SourceError            a source path/prefix is missing, unreadable or of the wrong kind
    │   ├── SchemaEvolutionError  new columns refused by schema evolution mode failOnNewColumns
    │   └── ChangedDuringRun   a planned file changed while the run read it (nothing committed)
    ├── StateError             the state store cannot be opened, is corrupt or of a newer schema
    │   ├── LeaseError         another run of the same job holds the lease
    │   ├── CommitConflict     a compare-and-swap commit lost a race
    │   │   └── LeaseLost      (also a LeaseError) the run's lease was taken over: fenced off
    │   └── UnknownRunError    a run id that the store does not know
    ├── ReadError              data could not be read (e.g. FAILFAST on a corrupt record)
    ├── SinkError              a target could not be written or is not of the requested kind
    └── EnvironmentProblem     the machine lacks something (Java, a JDBC driver, a jar)
"""

from __future__ import annotations

from .redaction import redact

__all__ = [
    "LakemarkError",
    "ConfigError",
    "SourceError",
    "SchemaEvolutionError",
    "ChangedDuringRun",
    "FormatError",
    "StateError",
    "LeaseError",
    "CommitConflict",
    "LeaseLost",
    "UnknownRunError",
    "ReadError",
    "SinkError",
    "EnvironmentProblem",
    "UnsupportedError",
]


class LakemarkError(Exception):
    """Root of every error lakemark raises on purpose.

    Its text never holds a credential: ``str()`` passes the message through
    :func:`lakemark.redaction.redact`, so a URL or option pasted into a message is safe to
    print, log and store wherever the error goes.
    """

    def __str__(self) -> str:
        return redact(super().__str__())


class ConfigError(LakemarkError, ValueError):
    """An option, argument, URL or environment value is invalid; nothing was done."""


class SourceError(LakemarkError):
    """A source location is missing, unreadable, or not what the options say it is; ``uri``
    names it (as given, credentials removed) when one location is at fault."""

    def __init__(self, message: str, *, uri: str | None = None) -> None:
        super().__init__(message)
        self.uri = redact(uri) if uri is not None else None


class SchemaEvolutionError(SourceError):
    """A tracked source met new columns that its evolution mode (failOnNewColumns) refuses."""


class ChangedDuringRun(SourceError):
    """Planned files whose size or mtime changed between the plan and the end of the read,
    found before a sink committed. ``paths``: those files (``uri`` the first); the next
    attempt plans again and takes them whole."""

    def __init__(self, message: str, *, paths: tuple[str, ...]) -> None:
        super().__init__(message, uri=paths[0] if paths else None)
        self.paths = paths


class FormatError(ConfigError):
    """An input or output format is unknown, or cannot be read on this installation."""


class StateError(LakemarkError):
    """The bookmark state store cannot be opened or used; ``store`` names it (its URL,
    credentials removed) when the store itself failed (read-only, full, locked, lost)."""

    def __init__(self, message: str, *, store: str | None = None) -> None:
        super().__init__(message)
        self.store = redact(store) if store is not None else None


class LeaseError(StateError):
    """Another run of the same job is in progress (it holds the job's lease)."""

    def __init__(self, message: str, *, job_name: str, holder_run_id: str) -> None:
        super().__init__(message)
        self.job_name = job_name
        self.holder_run_id = holder_run_id


class CommitConflict(StateError):
    """A state commit found a different version than the one it started from."""


class LeaseLost(CommitConflict, LeaseError):
    """The run's lease was taken over by a newer run (a higher lease generation): the stale
    holder is refused every state change (fencing). ``holder_run_id`` is the run that took it
    over, ``holder_generation`` its generation, ``generation`` the stale run's."""

    def __init__(self, message: str, *, job_name: str, holder_run_id: str, generation: int,
                 holder_generation: int) -> None:
        LeaseError.__init__(self, message, job_name=job_name, holder_run_id=holder_run_id)
        self.generation = generation
        self.holder_generation = holder_generation


class UnknownRunError(StateError, KeyError):
    """A run id was given that the state store has never recorded for that job."""

    def __str__(self) -> str:  # KeyError would quote the message
        return redact(str(self.args[0])) if self.args else ""


class ReadError(LakemarkError):
    """Input data could not be read as asked (for example a corrupt record under FAILFAST)."""


class SinkError(LakemarkError):
    """A target could not be written, or exists but is not of the requested format; ``target``
    names it (credentials removed) when one target is at fault."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.target = redact(target) if target is not None else None


class EnvironmentProblem(LakemarkError):
    """The machine lacks a prerequisite (Java, a JDBC driver jar, an optional package)."""


class UnsupportedError(ConfigError):
    """A Glue API, transform or option lakemark does not provide; it is named, never ignored."""
