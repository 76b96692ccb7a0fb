"""The job's side of a tracked-schema read: state in, frame out, schema committed with the run.

``Job.read_files``/``read_planned`` with ``schema_evolution=`` hand their planned files here
(kept out of ``job.py``, which holds the run lifecycle). The source's tracked schema is read
from the job's store, the files are read against it (:mod:`lakemark.sources._schema_track`),
the outcome is recorded in the run's manifest under ``schema:<ctx>`` (mode, new, added and
ignored columns with their record counts; rescued values per column and corrupt records, which
a JSON source counts while its frame is written: :func:`record_observed_counts` adds them just
before the run commits) and the
new schema version, if any, waits in the job to be committed in the run's commit transaction.
``failOnNewColumns`` meeting a new column raises :class:`~lakemark.errors.SchemaEvolutionError`
before anything is written: the run fails, the bookmark keeps its files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SchemaEvolutionError

if TYPE_CHECKING:

    from ..planning.files import FileEntry
    from ..sources._schema_track import SchemaTracking, TrackedRead
    from .context import RunContext

__all__ = ["read_with_tracking", "record_observed_counts"]


def read_with_tracking(run: RunContext, ctx: str | None, files: Sequence[FileEntry], *,
                       roots: Sequence[str],
                       base_path: str | None, format: str, options: Mapping[str, str] | None,
                       schema: object, mode: str, tracking: SchemaTracking) -> TrackedRead:
    """``files`` read against the tracked schema of source ``ctx``, its outcome recorded in
    the run's manifest; the caller keeps its schema change and counts for the commit."""
    from ..sources._schema_track import read_tracked

    if ctx is None:
        raise ConfigError("schema tracking (schema_evolution) needs a transformation_ctx: the "
                          "schema is kept per job and ctx")
    if schema is not None:
        raise ConfigError("give either a schema or schema_evolution, not both: a tracked "
                          "source's schema comes from its first run")
    if len(roots) != 1 and base_path is None:
        raise ConfigError("schema tracking reads one root: give base_path for several paths")
    read = read_tracked(run.spark(), run.store, run.job_name, ctx, files,
                        root=base_path or roots[0], format=format, options=options, mode=mode,
                        tracking=tracking)
    if read.release is not None:  # S3 records kept for the run (sources/_fetched.py)
        run.at_run_end(read.release)
    run.store.record_plan(run.run_id, f"schema:{ctx}",
                          {**read.record, **({"error": read.error} if read.error else {})}, [])
    if read.error is not None:
        raise SchemaEvolutionError(f"source {ctx!r} of job {run.job_name!r}: {read.error}; "
                                   "nothing was written and the bookmark keeps these files")
    return read


def record_observed_counts(run: RunContext, pending: dict[str, tuple[Any, dict[str, Any]]]
                           ) -> None:
    """Before the run commits: add to each tracked source's manifest entry the counts its
    frame gathered while it was written (rescued values per column, corrupt records);
    ``pending`` (ctx -> observation, manifest record) is emptied as they are recorded."""
    from ..sources._schema_track import add_observed

    for ctx, (observation, record) in list(pending.items()):
        if add_observed(record, observation):
            run.store.record_plan(run.run_id, f"schema:{ctx}", record, [])
        del pending[ctx]
