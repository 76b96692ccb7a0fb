"""The job's sinks: record the write intent, write with the run's token, record the outcome.

The body of :meth:`lakemark.job.Job.write` (which stays on ``Job`` and calls this with the
run's context and state).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from .keys import GENERATION_KEY, RUN_ID_KEY
from ..errors import ConfigError
from .._fault import fault_point
from .._commit_gate import commit_gate
from .exact_read import check_reads
from .verify_reads import check_before_first_sink
from ..state.manifest import SinkManifest, SinkToken

from .replay import check_skipped_write

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .context import RunContext
    from .state import RunState

    from ..sinks import IdempotencyToken, WriteResult
__all__ = ["write_frame", "nothing_to_write", "claim_sink"]

log = logging.getLogger("lakemark")


def write_frame(
    run: RunContext,
    state: RunState,
    df: DataFrame,
    target: str,
    *,
    format: str = "delta",
    mode: str = "append",
    partition_by: Sequence[str] = (),
    ctx: str | None = None,
    options: Mapping[str, str] | None = None,
    token: IdempotencyToken | None = None,
    iceberg_catalog: str | None = None,
    merge_keys: Sequence[str] | None = None,
    delete_when: str | None = None,
    order_by: str | Sequence[str] | None = None,
) -> WriteResult:
    """:meth:`lakemark.job.Job.write` in the run (see it): check, record the intent, write
    with the run's token, fence a skipped write, record the outcome, emit ``written``."""
    from ..sinks import IdempotencyToken, token_from_options, write_target
    from ..sinks._merge import merge_spec
    from ..sinks._commit_log import folder_records
    from ..sinks._write import folder_token_supported

    record = run.started()
    # Bad format, mode, options or token fail here, before anything is recorded.
    explicit = token_from_options(token, options, format=format, mode=mode)
    merge = merge_spec(merge_keys, delete_when, order_by, format=format, mode=mode,
                       columns=df.columns)
    fmt = format.strip().lower()
    from ..sinks._write import check_partition_by

    parts = check_partition_by(partition_by, df.columns, fmt)  # a str is one column
    kept_at = target  # where corrupt records are kept: the folder of the target
    if fmt == "iceberg":  # name, catalog, mode and options checked before any record
        from ..sinks._iceberg import iceberg_table_root

        kept_at = iceberg_table_root(
            target, mode=mode.strip().lower(), partition_by=parts,
            options={k: v for k, v in (options or {}).items()
                     if k not in ("txnAppId", "txnVersion")},
            iceberg_catalog=iceberg_catalog)
        from ..sinks._iceberg_partition import check_partition_schema

        # a transform on a column of the wrong type is named before anything is recorded
        check_partition_schema(parts, df.schema, target)
        if merge is not None:  # a merge's options checked before any record too
            from ..sinks._iceberg_merge import check_iceberg_merge

            check_iceberg_merge(target, {k: v for k, v in (options or {}).items()
                                         if k not in ("txnAppId", "txnVersion")}, partition_by)
    key = claim_sink(state, ctx, target)
    automatic: IdempotencyToken | None = None
    folder = folder_token_supported(target, fmt)
    if explicit is None and ctx is not None and (fmt in ("delta", "iceberg") or folder) \
            and run.tracking:
        automatic = IdempotencyToken(f"{run.job_name}/{ctx}", record.run)
    used = explicit or automatic
    run.store.heartbeat(record.run_id)
    state.read_started = True
    if mode == "append" and state.empty_reads.get(id(df)) is df:
        return nothing_to_write(run, state, key, ctx, target, format, partition_by, used, df)
    check_before_first_sink(run, state)  # all sinks see the same files (verify_reads)
    written = df  # the frame as given (observers trace its columns), before the split
    from ..sinks._rejected import split_corrupt_records, target_columns

    df, rejected = split_corrupt_records(df, kept_at, record.run_id,
                                         target_columns(target, fmt))
    entry = SinkManifest(
        ctx=ctx,
        target=target,
        format=format,
        mode=mode,
        partition_by=list(partition_by),
        token=SinkToken(used.app_id, used.version) if used else None,
        token_source="explicit" if explicit else ("automatic" if automatic else None),
        status="writing",
        merge={"keys": list(merge.keys), "delete_when": merge.delete_when,
               "order_by": merge.order_by} if merge else None,
        present=frozenset({"token_source"}),
        extra=_iceberg_extra(fmt, iceberg_catalog),
    )
    if rejected is not None:  # corrupt lines kept aside, not written as a column
        entry = replace(entry, corrupt_records=rejected.count, rejected_file=rejected.path)
        log.warning("%d record(s) could not be parsed; kept in %s", rejected.count,
                    rejected.path)
    run.store.record_plan(record.run_id, key, entry.to_json(), [])
    user_options = {k: v for k, v in (options or {}).items()
                    if k not in ("txnAppId", "txnVersion")}
    with commit_gate(partial(check_reads, run, state)):  # each file read as planned (exact_read)
        result = write_target(
            run.spark(), df, target, format=format, mode=mode, partition_by=partition_by,
            options=user_options, token=None if folder else used,
            commit_info={RUN_ID_KEY: record.run_id, "lakemark.job": run.job_name,
                         GENERATION_KEY: str(record.generation)},
            commit_token=used if folder else None, iceberg_catalog=iceberg_catalog,
            commit_records=folder_records(run.store, record.run_id) if folder else None,
            merge_keys=merge_keys, delete_when=delete_when, order_by=order_by,
        )
    fault_point("after-sink-commit")
    if result.skipped:
        check_skipped_write(run, key, result.target, automatic)
    state.results.append(result)
    entry = replace(entry, status="skipped" if result.skipped else "committed",
                    rows=result.rows, files=result.files, bytes=result.bytes,
                    skipped=result.skipped, table_version=result.table_version)
    run.store.record_plan(record.run_id, key, entry.to_json(), [])
    run.emit("written", ctx, {"rows": result.rows, "files": result.files,
                                "target": target, "table": result.target,
                                "skipped": result.skipped}, frame=written)
    return result


def nothing_to_write(run: RunContext, state: RunState, key: str, ctx: str | None, target: str,
                     format: str,
                      partition_by: Sequence[str], token: IdempotencyToken | None,
                      frame: DataFrame) -> WriteResult:
    """Appending the frame of a source that took no file: no Spark job, no commit (a run
    with no input adds no table version), recorded as such in the manifest."""
    from ..sinks import WriteResult
    from ..sinks._location import resolve_target

    fmt = format.strip().lower()
    result = WriteResult(target if fmt == "iceberg" else resolve_target(target).root, fmt,
                         0, 0, 0)
    state.results.append(result)
    run.store.record_plan(run.run_id, key, SinkManifest(
        ctx=ctx, target=target, format=format, mode="append",
        partition_by=list(partition_by),
        token=SinkToken(token.app_id, token.version) if token else None,
        status="nothing-to-write", rows=0, files=0, bytes=0, skipped=False,
        reason="the frame written is a source of this run that took no file",
    ).to_json(), [])
    run.emit("written", ctx, {"rows": 0, "files": 0, "target": target,
                                "table": result.target, "skipped": False}, frame=frame)
    return result


def claim_sink(state: RunState, ctx: str | None, target: str) -> str:
    """The manifest key of a sink; one write per sink ctx and run (its token is per run)."""
    if ctx is not None and (not isinstance(ctx, str) or not ctx.strip()):
        raise ConfigError("transformation_ctx must be a non-empty string")
    key = f"sink:{ctx or target}"
    if ctx is not None and key in state.sinks:
        raise ConfigError(
            f"sink transformation_ctx {ctx!r} is written twice in one run; each write needs "
            "its own ctx (its idempotency token is <job>/<ctx> at the run number)"
        )
    state.sinks.add(key)
    return key


def _iceberg_extra(fmt: str, catalog: str | None) -> dict[str, Any]:
    """What a retry needs to find an Iceberg sink's table: the catalog argument, unless it
    holds a password (then the retry resolves it again from the environment)."""
    from urllib.parse import urlsplit

    if fmt != "iceberg" or not catalog or urlsplit(catalog).password is not None:
        return {}
    return {"iceberg_catalog": catalog}
