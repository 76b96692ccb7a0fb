"""Glue's ``Job``: ``init`` starts a lakemark run, ``commit`` commits it (seed semantics).

The bookmark option and the from/to run ids come from the job arguments (``args`` given to
``init``, else ``sys.argv``), with Glue's default ``job-bookmark-disable``. A script that ends
without ``job.commit()`` leaves the bookmark where it was, as in Glue: ``lakemark run`` (or,
under spark-submit, the interpreter's exit) closes the run as succeeded without moving the
bookmark, or as failed if the script raised.
"""

from __future__ import annotations

import atexit
import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..run.quarantine import pin_after_failure
from ..errors import StateError
from ..job import Job as CoreJob
from .options import bookmark_arguments, parse_job_arguments

if TYPE_CHECKING:
    from .context import GlueContext

__all__ = ["Job", "finish_open_jobs"]

log = logging.getLogger("lakemark.glue")

_OPEN: list[Job] = []


class Job:
    """A Glue job run over lakemark's core :class:`lakemark.Job`."""

    def __init__(self, glue_context: GlueContext) -> None:
        self._glue_context = glue_context
        self._core: CoreJob | None = None
        self._committed = False

    # Glue's helpers listing the reserved argument names.
    @staticmethod
    def continuation_options() -> list[str]:
        return ["--continuation-option", "continuation-enabled", "continuation-readonly",
                "continuation-ignore"]

    @staticmethod
    def job_bookmark_options() -> list[str]:
        return ["--job-bookmark-option", "job-bookmark-enable", "job-bookmark-disable",
                "job-bookmark-pause"]

    @staticmethod
    def job_bookmark_range_options() -> list[str]:
        return ["--job-bookmark-from", "--job-bookmark-to"]

    @staticmethod
    def id_params() -> list[str]:
        return ["--JOB_NAME", "--JOB_ID", "--JOB_RUN_ID", "--SECURITY_CONFIGURATION"]

    @staticmethod
    def encryption_type_options() -> list[str]:
        return ["--encryption-type", "sse-s3"]

    def init(self, job_name: str, args: Mapping[str, Any] | None = None) -> None:
        """Start the run: take the job's lease and read its bookmark."""
        if self._core is not None:
            raise StateError(f"job {job_name!r} was already initialised")
        given = parse_job_arguments(sys.argv)
        given.update({str(k): str(v) for k, v in (args or {}).items() if v is not None})
        option, start, end = bookmark_arguments(given)
        core = CoreJob(job_name, bookmark=option, from_run_id=start, to_run_id=end,
                       spark=self._glue_context.spark_session)
        core.start()
        self._core = core
        self._glue_context.attach_job(core)
        _OPEN.append(self)
        log.info("job %s run %s (%s) started", job_name, core.run_id, core.bookmark_option)

    def isInitialized(self) -> bool:  # noqa: N802
        return self._core is not None

    @property
    def core(self) -> CoreJob:
        """The lakemark job behind this Glue job (for its run id, plans and results)."""
        if self._core is None:
            raise StateError("Job.init(job_name, args) has not been called")
        return self._core

    def commit(self) -> None:
        """Commit every state element and end the run (Glue's atomic ``job.commit()``)."""
        core = self.core
        if self._committed:
            log.warning("job.commit() called again for run %s; nothing to do", core.run_id)
            return
        core.commit()
        self._committed = True
        self._glue_context.attach_job(None)
        if self in _OPEN:
            _OPEN.remove(self)

    def _finish(self, error: BaseException | None) -> None:
        core = self._core
        if core is None or self._committed or core.run.status != "RUNNING":
            return
        if error is not None:
            # A file that broke the read is set aside, so the retry goes on without it (as
            # for a Python job that fails inside ``with Job(...)``; run/quarantine).
            pin_after_failure(*core._parts(), error)
            core.fail(error)
        else:
            log.warning("job %s ended without job.commit(): its bookmark is unchanged",
                        core.name)
            core.end_without_commit()
        self._glue_context.attach_job(None)


def finish_open_jobs(error: BaseException | None = None) -> None:
    """Close every run a script left open: failed if ``error``, else without a bookmark change."""
    while _OPEN:
        _OPEN.pop()._finish(error)


def _at_exit() -> None:
    error = getattr(sys, "last_value", None)
    finish_open_jobs(error if isinstance(error, BaseException) else None)


atexit.register(_at_exit)
