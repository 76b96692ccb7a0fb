"""Delta tables: Spark (or the executors' pyarrow) writes the Parquet files, deltalake commits.

One write is one Delta commit: ``add`` actions for every non-empty file written (size, Delta
partition values, modification time, statistics from the Parquet footers) and, with an
:class:`~lakemark.sinks.IdempotencyToken`, the ``txn`` action ``(appId, version)`` in the *same*
commit, so "data visible" and "token recorded" cannot come apart.

Sequence and guarantees:

1. Open the table. With a token, if ``transaction_version(app_id) >= version`` the write is
   skipped before Spark computes anything.
2. Check the DataFrame against the table (same columns and types by name, nullability ignored;
   same partition columns) — or, for a new table, that the folder holds nothing foreign.
3. Write the files (local: Spark into ``_lakemark_staging`` then renamed into place; S3: pyarrow
   on the executors, straight to their final keys). Files not in the log are invisible to every
   Delta reader; they are deleted again if the write is not committed.
4. Commit against the snapshot read in step 1, so that the token check and the commit see the
   same table version. deltalake's conflict checker rejects a commit whose snapshot is stale
   when the winning commit carries a ``txn`` for the same app id (and re-bases harmless
   concurrent appends itself). On any commit failure the table is reloaded and the history is
   searched for this write's id (commits carry ``lakemark.writeId``): found → it did commit;
   token now recorded by someone else → skipped (our files deleted, never two copies); other
   conflicts → re-checked and retried a few times. So two writers racing with the same token
   commit the data exactly once.

Local tables are written by Spark's own Parquet writer (executors and driver must share the
filesystem, as for any Spark job on local paths). S3 tables are always written by the executors'
pyarrow, even when the S3A connector is present, because Spark's writer would need a staging
folder and S3 has no rename (a copy per file). On S3 the log is written with conditional puts
(``If-None-Match``), which deltalake uses by
default; S3 and moto_server honour them, so no DynamoDB lock or unsafe rename is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import SinkError
from ..planning.delta_history import OPERATION_KEY, write_record
from ._arrow_writer import ArrowWriteSpec, run_arrow_write
from .._fault import fault_point
from .._commit_gate import before_commit
from ._location import (
    Target,
    check_target,
    check_new_table_location,
    delete_files,
    open_delta,
    sweep_write,
)
from ._model import DataFile, IdempotencyToken, WriteResult
from ._schema import (
    check_partition_kinds,
    delta_schema,
    fields_of,
    grown_columns,
    kinds_of,
    schema_differences,
    spark_type_of,
)
from ._spark_writer import spark_errors, spark_failure, write_delta_files
from ._values import zone

if TYPE_CHECKING:
    from deltalake import DeltaTable
    from deltalake import Schema as DeltaSchema
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["write_delta", "WRITE_ID_KEY", "MAX_COMMIT_ATTEMPTS"]

#: Commit-info key naming the lakemark write that made a commit.
WRITE_ID_KEY = "lakemark.writeId"
#: How often a commit is retried after losing a race that did not settle the write.
MAX_COMMIT_ATTEMPTS = 5


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _already_committed(table: DeltaTable, token: IdempotencyToken | None) -> bool:
    if token is None:
        return False
    recorded = table.transaction_version(token.app_id)
    return recorded is not None and recorded >= token.version


def _fit(target: Target, table: DeltaTable, frame: DeltaSchema,
         partition_by: Sequence[str], *, merge: bool = False) -> list[str]:
    """Check the DataFrame against an existing table; the table's partition columns."""
    differences = schema_differences(table.schema(), frame, merge=merge)
    if differences:
        hint = "" if merge else "; to add new columns to the table, write with mergeSchema=true"
        if any(": table has " in d for d in differences):
            hint += ("; a column whose type changed cannot be merged: read the source with a "
                     "tracked schema (the default of lakemark ingest files and read_files for "
                     "a json, csv, xml or avro source with a ctx, unless --schema-evolution "
                     "off; give the table's type with --schema-hints / schema_hints= if its "
                     "first tracked run infers another) so values that do not fit are kept "
                     "in _rescued_data instead")
        raise SinkError(
            f"the DataFrame does not match the schema of Delta table {target.root} "
            f"(nothing was written): " + "; ".join(differences) + hint
        )
    existing = list(table.metadata().partition_columns)
    if partition_by and list(partition_by) != existing:
        raise SinkError(
            f"Delta table {target.root} is partitioned by {existing or 'nothing'}, not by "
            f"{list(partition_by)} (nothing was written)"
        )
    return existing


def _add_new_columns(target: Target, table: DeltaTable, frame: DeltaSchema,
                     partition_by: Sequence[str]) -> DeltaTable:
    """For ``mergeSchema``: add the DataFrame's columns the table lacks (nullable), in one
    metadata commit before the data commit. Columns whose type differs are left for
    :func:`_fit` to refuse, so a bad write adds nothing."""
    from deltalake import Field

    _fit(target, table, frame, partition_by, merge=True)
    have = {f.name for f in table.schema().fields}
    new = [Field(f.name, f.type, nullable=True) for f in frame.fields if f.name not in have]
    grown = grown_columns(table.schema(), frame)
    if grown:
        table = _add_nested_fields(target, table, frame, grown)
    if not new:
        return table
    try:
        table.alter.add_columns(new)
    except Exception as exc:  # noqa: BLE001 - a racing writer may have added them first
        latest = open_delta(target)
        if latest is None or {f.name for f in new} - {f.name for f in latest.schema().fields}:
            raise SinkError(f"could not add columns {', '.join(f.name for f in new)} to Delta "
                            f"table {target.root}: {_first_line(exc)}") from exc
        return latest
    latest = open_delta(target)
    if latest is None:
        raise SinkError(f"Delta table {target.root} vanished while adding columns")
    return latest


def _add_nested_fields(target: Target, table: DeltaTable, frame: DeltaSchema,
                       grown: Sequence[str]) -> DeltaTable:
    """For ``mergeSchema``: add the fields the DataFrame has inside the ``grown`` columns'
    structs (``address.zip``) in a metadata-only commit (no data file: deltalake merges the
    schema of an empty append). Top-level columns are added by :func:`_add_new_columns`."""
    import pyarrow as pa
    from deltalake import Schema, write_deltalake

    wanted = {f["name"]: f for f in fields_of(frame)}
    fields = [wanted[f["name"]] if f["name"] in grown else f for f in fields_of(table.schema())]
    merged = Schema.from_json(json.dumps({"type": "struct", "fields": fields}))
    try:
        write_deltalake(target.delta_uri, pa.schema(merged.to_arrow()).empty_table(),
                        mode="append", schema_mode="merge",
                        partition_by=list(table.metadata().partition_columns) or None,
                        storage_options=target.storage_options())
    except Exception as exc:  # noqa: BLE001 - a racing writer may have added them first
        latest = open_delta(target)
        if latest is None or grown_columns(latest.schema(), frame):
            raise SinkError(f"could not add fields inside column(s) {', '.join(grown)} of "
                            f"Delta table {target.root}: {_first_line(exc)}") from exc
        return latest
    latest = open_delta(target)
    if latest is None:
        raise SinkError(f"Delta table {target.root} vanished while adding nested fields")
    return latest


def _merge_flag(options: dict[str, str]) -> bool:
    """Pop Delta's ``mergeSchema`` option (any case) and read it as a boolean."""
    from ..errors import ConfigError

    keys = [k for k in options if k.lower() == "mergeschema"]
    value = options.pop(keys[0]).strip().lower() if keys else "false"
    for k in keys[1:]:
        options.pop(k)
    if value not in ("true", "false"):
        raise ConfigError(f"option mergeSchema must be true or false, got {value!r}")
    return value == "true"


def _find_commit(table: DeltaTable, write_id: str, since: int) -> int | None:
    """The version of the commit made by ``write_id`` after version ``since``, if any."""
    latest = table.version()
    if latest <= since:
        return None
    for entry in table.history(limit=latest - since):
        if entry.get(WRITE_ID_KEY) == write_id:
            return int(entry["version"])
    return None


def _retryable(exc: BaseException, *, creating: bool) -> bool:
    """Whether a failed commit may be tried again against the table's newest version: a
    conflict (deltalake's typed ``CommitFailedError``), or a create that lost the race to
    another writer (the caller found a table there now; deltalake has no typed error for it)."""
    from deltalake.exceptions import CommitFailedError

    return isinstance(exc, CommitFailedError) or creating


def _commit(target: Target, table: DeltaTable | None, schema: DeltaSchema,
            frame: DeltaSchema, partition_cols: list[str], files: Sequence[DataFile],
            mode: str, token: IdempotencyToken | None, write_id: str,
            commit_info: Mapping[str, str] | None = None, *,
            merge: bool = False,
            partition_filters: list[tuple[str, str, Any]] | None = None,
            overwrite_schema: bool = False,
            removes: Sequence[tuple[str, int]] = ()) -> tuple[int, bool]:
    """Commit ``files`` in one transaction; ``(table version, skipped)``.

    ``overwrite_schema``: the commit replaces the table's metadata (schema and partitioning)
    and every live file, keeping its name, description and configuration (Delta's
    ``overwriteSchema``; deltalake's ``CREATE OR REPLACE`` gives the metadata a new id).
    ``removes`` (``(path, size)`` of live files): remove actions in the
    same commit as the adds (``replaceWhere`` on data columns); such a commit is not retried
    after a conflict, since the rows it kept were read from the files it removes."""
    import time

    from deltalake import CommitProperties, Transaction
    from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions

    adds = [
        AddAction(f.path, f.size, dict(f.partition_values), f.mtime_ms, True,
                  f.stats or json.dumps({"numRecords": f.rows}))
        for f in files
    ]
    info = dict(commit_info or {})
    if OPERATION_KEY not in info:  # Delta on Spark's record of a DataFrame write
        info.update(write_record(mode, partition_cols))
    properties = CommitProperties(
        custom_metadata={**info, WRITE_ID_KEY: write_id},
        app_transactions=[Transaction(token.app_id, token.version)] if token else None,
    )
    now = int(time.time() * 1000)
    gone: list[Any] = [RemoveAction(path, True, now, size=size) for path, size in removes]
    for _attempt in range(MAX_COMMIT_ATTEMPTS):
        since = table.version() if table is not None else -1
        try:
            if table is None or overwrite_schema:
                meta = table.metadata() if table is not None else None
                create_table_with_add_actions(
                    target.delta_uri, schema, list(adds),
                    mode="overwrite" if table is not None else "error",
                    partition_by=partition_cols or None,
                    name=meta.name if meta is not None else None,
                    description=meta.description if meta is not None else None,
                    configuration=dict(meta.configuration) if meta is not None else None,
                    storage_options=target.storage_options(),
                    commit_properties=properties,
                )
            elif gone:
                table.create_write_transaction(
                    [*adds, *gone], "append", table.schema(), partition_by=partition_cols,
                    commit_properties=properties)
            elif not adds and mode == "append" and token is None:
                return since, False  # nothing to record
            else:
                table.create_write_transaction(
                    list(adds), mode, table.schema(), partition_by=partition_cols,
                    partition_filters=partition_filters if mode == "overwrite" else None,
                    commit_properties=properties,
                )
        except Exception as exc:  # deltalake raises DeltaError subclasses and IO errors
            latest = open_delta(target)
            if latest is None:
                raise SinkError(
                    f"committing to Delta table {target.root} failed: {_first_line(exc)}"
                ) from exc
            version = _find_commit(latest, write_id, since)
            if version is not None:
                return version, False  # the commit landed although the call failed
            if _already_committed(latest, token):
                return latest.version(), True  # a racing writer committed this token first
            if not _retryable(exc, creating=table is None) or gone or overwrite_schema:
                raise SinkError(
                    f"committing to Delta table {target.root} failed: {_first_line(exc)}"
                ) from exc
            if _fit(target, latest, frame, partition_cols, merge=merge) != partition_cols:
                raise SinkError(f"Delta table {target.root} changed its partitioning while "
                                "this write ran") from exc
            table = latest
            continue
        latest = open_delta(target)
        if latest is None:
            raise SinkError(f"Delta table {target.root} vanished right after a commit")
        version = _find_commit(latest, write_id, since)
        return (version if version is not None else latest.version()), False
    raise SinkError(
        f"could not commit to Delta table {target.root}: other writers committed conflicting "
        f"changes {MAX_COMMIT_ATTEMPTS} times in a row"
    )


def _check_live(target: Target, table: DeltaTable, removes: Sequence[tuple[str, int]]) -> None:
    """Every file a write removes is still live in the table it commits to."""
    import pyarrow as pa

    live = set(pa.table(table.get_add_actions(flatten=True)).column("path").to_pylist())
    gone = [path for path, _ in removes if path not in live]
    if gone:
        raise SinkError(f"Delta table {target.root} changed while this write ran: "
                        f"{len(gone)} file(s) it replaces were removed by another writer "
                        "(nothing was written)")


def _check_replaceable(target: Target, table: DeltaTable) -> None:
    """``overwriteSchema`` rewrites the metadata with protocol (1, 2); a table that needs a
    newer protocol cannot be replaced without downgrading it."""
    protocol = table.protocol()
    if protocol.min_reader_version > 1 or protocol.min_writer_version > 2:
        raise SinkError(
            f"option overwriteSchema on Delta table {target.root}: the table has protocol "
            f"(reader {protocol.min_reader_version}, writer {protocol.min_writer_version}); "
            "lakemark replaces schemas of protocol (1, 2) tables only (nothing was written)")


def _arrow_options(options: Mapping[str, str], target: Target) -> str:
    from ..errors import ConfigError
    from ._arrow_writer import check_compression

    unknown = sorted(k for k in options if k.lower() != "compression")
    if unknown:
        raise ConfigError(
            f"option(s) {', '.join(unknown)} are not supported when writing Delta files to "
            f"{target.root} with pyarrow (no S3A connector); supported: compression"
        )
    codec = next((v for k, v in options.items() if k.lower() == "compression"), "snappy")
    if not check_compression("parquet", codec):
        raise ConfigError(f"unsupported Parquet compression {codec!r}")
    return codec.lower()


def write_delta(spark: SparkSession, df: DataFrame, target: Target, *, mode: str,
                partition_by: Sequence[str], token: IdempotencyToken | None,
                options: Mapping[str, str],
                commit_info: Mapping[str, str] | None = None,
                partition_filters: list[tuple[str, str, Any]] | None = None,
                overwrite_schema: bool = False,
                removes: Sequence[tuple[str, int]] = (),
                replace_partitioning: bool = False) -> WriteResult:
    """Write ``df`` to the Delta table at ``target`` (see the module docstring).

    ``overwrite_schema`` (``overwrite`` only): the table takes the DataFrame's schema and
    ``partition_by`` (else its own partition columns the DataFrame still has; with
    ``replace_partitioning``, as SQL ``REPLACE TABLE … AS SELECT``, exactly ``partition_by``)
    in the one commit. ``removes``: ``(path, size)`` of live files the commit removes next to
    its adds (``replaceWhere`` on data columns); a file no longer live fails the write.

    ``commit_info`` entries go into the commit's ``commitInfo`` next to the write id.
    ``partition_filters`` (deltalake's form; ``overwrite`` of an existing table only): the
    overwrite removes only the files of the partitions they select (Delta's ``replaceWhere``)."""
    from pyspark.sql import functions as F

    options = dict(options)
    merge = _merge_flag(options)
    fs = target.filesystem()
    check_target(target, fs)
    table = open_delta(target)
    if table is None:
        check_new_table_location(target, fs)
    elif _already_committed(table, token):
        return WriteResult(target.root, "delta", 0, 0, 0, skipped=True,
                           table_version=table.version())
    frame = delta_schema(df.schema, target=target.root)
    if removes and table is not None:
        _check_live(target, table, removes)
    if table is not None and overwrite_schema:
        _check_replaceable(target, table)
        existing = list(table.metadata().partition_columns)
        partition_cols = list(partition_by) or (
            existing if set(existing) <= set(df.columns) and not replace_partitioning else [])
        schema = frame
    elif table is not None:
        if merge:
            table = _add_new_columns(target, table, frame, partition_by)
        partition_cols = _fit(target, table, frame, partition_by, merge=merge)
        schema = table.schema()
        present = set(df.columns)
        df = df.select(*[
            F.col("`" + f["name"].replace("`", "``") + "`") if f["name"] in present
            else F.lit(None).cast(spark_type_of(f)).alias(f["name"])  # mergeSchema: nulls
            for f in fields_of(schema)])
    else:
        partition_cols, schema = list(partition_by), frame
    kinds = kinds_of(schema)
    check_partition_kinds(kinds, partition_cols, target=target.root)
    codec = _arrow_options(options, target) if target.is_s3 else ""
    tz_name = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    write_id = uuid.uuid4().hex
    root_existed = target.is_s3 or os.path.isdir(target.root)
    placed: list[str] = []
    committed = False
    try:
        if target.is_s3:
            spec = ArrowWriteSpec(
                fs_config=target.fs_config, root=target.fs_path, write_id=write_id,
                format="parquet", partition_cols=tuple(partition_cols),
                kinds=tuple(kinds.items()), session_tz=tz_name, delta_stats=True,
                compression=codec,
            )
            try:
                files = run_arrow_write(df, spec)
            except spark_errors() as exc:
                sweep_write(target, fs, write_id)  # files of tasks that did finish
                raise spark_failure(target, exc) from exc
            placed.extend(f.path for f in files)
        else:
            files = write_delta_files(
                spark, df, target, write_id=write_id, partition_cols=partition_cols,
                kinds=kinds, tz=zone(tz_name), options=options, placed=placed,
            )
        fault_point("mid-write")
        before_commit()  # the run checks its input was read as planned
        version, skipped = _commit(target, table, schema, frame, partition_cols, files, mode,
                                   token, write_id, commit_info, merge=merge,
                                   partition_filters=partition_filters,
                                   overwrite_schema=overwrite_schema and table is not None,
                                   removes=removes)
        committed = not skipped
    finally:
        if not committed:
            delete_files(target, fs, placed)
            if not root_existed:
                with contextlib.suppress(OSError):
                    os.rmdir(target.root)  # only if the failed write left it empty
    if skipped:
        return WriteResult(target.root, "delta", 0, 0, 0, skipped=True, table_version=version)
    return WriteResult(
        target.root, "delta", rows=sum(f.rows for f in files), files=len(files),
        bytes=sum(f.size for f in files), skipped=False, table_version=version,
    )
