"""The job's JDBC sink: append to a database table exactly once per run.

The body of :meth:`lakemark.job.Job.write_jdbc`. Like a Delta sink, a JDBC sink of a run that
tracks its bookmark gets the token ``<job>/<ctx>`` at the run number (``<job>/<dbtable>`` when
no ctx is given); :func:`lakemark.sinks.write_jdbc_table` commits it in the same database
transaction as the rows. The manifest records the write's intent before it starts; a failed
attempt that recorded one may have committed (the state store cannot see into the database),
so its retry replays that attempt's input exactly (docs/exactly-once.md, pinned replay) and the
token decides whether the rows are written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from .._fault import fault_point
from .replay import check_skipped_write
from .sinks import claim_sink
from .verify_reads import check_before_first_sink
from ..state.manifest import SinkManifest, SinkToken

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .context import RunContext
    from .state import RunState
    from ..sinks import JdbcTarget, WriteResult

__all__ = ["jdbc_target", "write_jdbc_frame"]


def jdbc_target(url: str, dbtable: str, *, user: str | None, password: str | None,
                driver: str | None, options: Mapping[str, str] | None) -> JdbcTarget:
    """The JDBC table ``Job.write_jdbc`` appends to: URL, credentials and driver class
    resolved as the JDBC reader resolves them (the driver by URL prefix), the password
    remembered for redaction."""
    from ..redaction import remember_secret
    from ..sinks import JdbcTarget
    from ..sources.jdbc import JdbcSource

    remember_secret(password)
    reach = JdbcSource(url=url, dbtable=dbtable, user=user, password=password,
                       driver=driver).spark_options()
    return JdbcTarget({**(options or {}), **reach, "dbtable": dbtable, "lakemark.url": url})


def write_jdbc_frame(run: RunContext, state: RunState, df: DataFrame, target: JdbcTarget,
                     ctx: str | None) -> WriteResult:
    """Append ``df`` to ``target`` in the run, exactly once (see the module doc)."""
    from ..sinks import IdempotencyToken, write_jdbc_table
    from ..sinks._jdbc import jdbc_dialect

    record = run.started()
    key = claim_sink(state, ctx, target.display)
    token = (IdempotencyToken(f"{run.job_name}/{ctx or target.dbtable}", record.run)
             if run.tracking and jdbc_dialect(target.url) else None)
    run.store.heartbeat(record.run_id)
    state.read_started = True
    check_before_first_sink(run, state)  # all sinks see the same files (verify_reads)
    entry = SinkManifest(
        ctx=ctx, target=target.display, format="jdbc", mode="append", partition_by=[],
        token=SinkToken(token.app_id, token.version) if token else None,
        token_source="automatic" if token else None, status="writing",
        present=frozenset({"token_source"}),
        extra={"url": target.display.rsplit("#", 1)[0], "dbtable": target.dbtable},
    )
    run.store.record_plan(record.run_id, key, entry.to_json(), [])
    result = write_jdbc_table(df, target, token, run_id=record.run_id,
                              before_commit=lambda: run.store.heartbeat(record.run_id))
    fault_point("after-sink-commit")
    if result.skipped:
        check_skipped_write(run, key, target.display, token)
    state.results.append(result)
    entry = replace(entry, status="skipped" if result.skipped else "committed",
                    rows=result.rows, files=0, bytes=0, skipped=result.skipped)
    run.store.record_plan(record.run_id, key, entry.to_json(), [])
    run.emit("written", ctx, {"rows": result.rows, "files": 0, "target": target.display,
                                "table": target.display, "skipped": result.skipped}, frame=df)
    return result
