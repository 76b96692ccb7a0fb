"""``write_target``: validate the request once, then hand it to the Delta or folder writer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError
from ..planning.partition_transforms import parse_partition_fields
from ._delta import write_delta
from ._files import write_files
from ._iceberg import check_iceberg_write, write_iceberg
from ._iceberg_merge import check_iceberg_merge, merge_iceberg
from ._merge import merge_delta, merge_spec
from ._location import (check_folder_location, check_new_table_location, check_target,
                        open_delta, resolve_target)
from ._commit_log import FolderCommitStore, StoreRecords
from ._model import FORMATS, MODES, IdempotencyToken, WriteResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..catalog._iceberg import CatalogChoice

__all__ = ["write_target", "check_write", "token_from_options", "folder_commit_run_id",
           "folder_token_supported", "TXN_APP_ID", "TXN_VERSION"]

#: Delta's Spark writer options for idempotent writes, accepted as an alternative to ``token``.
TXN_APP_ID = "txnAppId"
TXN_VERSION = "txnVersion"
#: Formats whose tables record idempotency tokens in their own commits.
TABLE_FORMATS = ("delta", "iceberg")


def _format(format: str) -> str:
    name = format.strip().lower() if isinstance(format, str) else ""
    if name not in FORMATS:
        raise FormatError(f"unknown target format {format!r}; expected one of: "
                          f"{', '.join(FORMATS)}")
    return name


def _mode(mode: str) -> str:
    name = mode.strip().lower() if isinstance(mode, str) else ""
    if name not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return name


def _options(options: Mapping[str, str] | None) -> dict[str, str]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"options must be a mapping of strings, not {type(options).__name__}")
    out = {}
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"option names must be non-empty strings, not {key!r}")
        out[key] = value if isinstance(value, str) else str(value)
    return out


def _token(token: IdempotencyToken | None, options: dict[str, str]) -> IdempotencyToken | None:
    """The token, from the argument or Delta's ``txnAppId``/``txnVersion`` options (removed)."""
    if token is not None and not isinstance(token, IdempotencyToken):
        raise ConfigError(f"token must be an IdempotencyToken, not {type(token).__name__}")
    app_id = options.pop(TXN_APP_ID, None)
    raw_version = options.pop(TXN_VERSION, None)
    if app_id is None and raw_version is None:
        return token
    if app_id is None or raw_version is None:
        missing = TXN_VERSION if raw_version is None else TXN_APP_ID
        raise ConfigError(f"options {TXN_APP_ID} and {TXN_VERSION} go together: give both or "
                          f"neither ({missing} is missing)")
    try:
        version = int(raw_version)
    except ValueError:
        raise ConfigError(f"option {TXN_VERSION} must be an integer, not {raw_version!r}") from None
    if not app_id.strip():
        raise ConfigError(f"option {TXN_APP_ID} must be a non-empty string")
    if version < 0:
        raise ConfigError(f"option {TXN_VERSION} must be an integer >= 0, not {raw_version!r}")
    from_options = IdempotencyToken(app_id, version)
    if token is not None and token != from_options:
        raise ConfigError(f"token {token} and options {TXN_APP_ID}/{TXN_VERSION} disagree")
    return from_options


def token_from_options(token: IdempotencyToken | None, options: Mapping[str, str] | None, *,
                       format: str = "delta", mode: str = "append") -> IdempotencyToken | None:
    """The token a write would use (``token`` or ``txnAppId``/``txnVersion`` in ``options``),
    after checking format, mode, options and token exactly as :func:`write_target` does, so a
    caller can refuse bad input before it records anything; ``options`` is not changed."""
    fmt = _format(format)
    _mode(mode)
    idempotency = _token(token, _options(options))
    _delta_only(idempotency, fmt)
    return idempotency


def _delta_only(token: IdempotencyToken | None, fmt: str) -> None:
    if token is not None and fmt not in TABLE_FORMATS:
        raise ConfigError(
            f"an idempotency token ({TXN_APP_ID}/{TXN_VERSION}) applies to Delta and Iceberg "
            f"targets only, "
            f"not to format {fmt!r}: a folder of files has no transaction log to record it in"
        )


def check_partition_by(partition_by: Sequence[str] | str, columns: Sequence[str],
                  fmt: str = "delta") -> list[str]:
    """The partition columns (for Iceberg: fields, which may be transforms such as
    ``days(ts)``), checked against the DataFrame's columns."""
    cols = [partition_by] if isinstance(partition_by, str) else list(partition_by or ())
    for col in cols:
        if not isinstance(col, str) or not col:
            raise ConfigError(f"partition_by must name columns, got {col!r}")
    duplicates = sorted({c for c in cols if cols.count(c) > 1})
    if duplicates:
        raise ConfigError(f"partition_by names column(s) twice: {', '.join(duplicates)}")
    if fmt == "iceberg":
        sources = [f.column for f in parse_partition_fields(cols)]
    else:
        transforms = [c for c in cols if "(" in c and c not in columns]
        if transforms:
            raise ConfigError(f"partition_by: transforms ({', '.join(transforms)}) apply to "
                              f"Iceberg targets only; a {fmt} target is partitioned by column "
                              "names")
        sources = cols
    missing = [c for c in sources if c not in columns]
    if missing:
        raise ConfigError(f"partition_by column(s) not in the DataFrame: {', '.join(missing)} "
                          f"(columns: {', '.join(columns)})")
    if sources and len(cols) == len(columns) and set(cols) == set(columns):
        raise ConfigError("partition_by cannot name every column: no data columns would be left")
    return cols


def write_target(
    spark: SparkSession,
    df: DataFrame,
    target: str,
    *,
    format: str = "delta",
    mode: str = "append",
    partition_by: Sequence[str] = (),
    token: IdempotencyToken | None = None,
    options: Mapping[str, str] | None = None,
    commit_info: Mapping[str, str] | None = None,
    commit_token: IdempotencyToken | None = None,
    commit_records: StoreRecords | None = None,
    partition_filters: list[tuple[str, str, Any]] | None = None,
    iceberg_catalog: CatalogChoice = None,
    merge_keys: Sequence[str] | None = None,
    delete_when: str | None = None,
    order_by: str | Sequence[str] | None = None,
    overwrite_schema: bool = False,
    removes: Sequence[tuple[str, int]] = (),
    replace_partitioning: bool = False,
) -> WriteResult:
    """Write ``df`` to ``target`` (a local path, ``file://`` or ``s3://`` URI, or for
    ``format="iceberg"`` a table name ``[catalog.]db.table`` in ``iceberg_catalog``, see
    :mod:`lakemark.catalog._iceberg` and :mod:`lakemark.sinks._iceberg`).

    ``format`` is ``delta`` (default), ``parquet``, ``json``, ``csv`` or ``orc``; ``mode`` is
    ``append`` or ``overwrite``; ``partition_by`` names Hive-style partition columns (for an
    existing Delta table, its own partitioning applies and a different one is an error).
    ``options`` go to the file writer (e.g. ``compression``, CSV ``header``/``sep``); Delta's
    ``txnAppId``/``txnVersion`` options are read as the idempotency token.

    With ``token`` on a Delta target, a write whose ``(app_id, version)`` the table already
    recorded (same app id, version at or below the recorded one) is skipped before anything is
    computed (``skipped=True``); otherwise data and token are committed together (Delta's own
    ``txn`` action, so any Delta reader sees it). A token on a folder format is refused
    (ConfigError): folder targets have no transaction log to record it in.

    ``commit_info`` adds string entries to the Delta commit's ``commitInfo`` (jobs record their
    run id there, so a retried run can tell which attempt committed).

    ``commit_token`` is a job's automatic per-run token for a *folder* target (local or S3):
    the run's files are staged and published with a commit record named after it, and a write
    whose token already has a commit record is skipped (see :mod:`lakemark.sinks._publish`). It
    is ignored for Delta (use ``token``). ``commit_records`` keeps those records in a state
    store (the job's; the output prefix then holds only data files); without it they are kept
    under the folder's ``_lakemark_commits/``.

    ``partition_filters`` (Delta, ``overwrite``): replace only the partitions they select, in
    deltalake's ``(column, op, value)`` form (``format("delta")``'s ``replaceWhere``).
    ``overwrite_schema``, ``replace_partitioning`` and ``removes`` (Delta): see
    :func:`lakemark.sinks._delta.write_delta`
    (``format("delta")``'s ``overwriteSchema`` and ``replaceWhere`` on data columns).

    ``merge_keys`` (Delta or Iceberg, ``append``): merge ``df`` into the table by these key
    columns instead of appending — update-all/insert-all, rows where ``delete_when`` holds
    delete, ``order_by`` picks the latest row per key (see :mod:`lakemark.sinks._merge` and
    :mod:`lakemark.sinks._iceberg_merge`); the token is committed in the merge's own commit.

    Raises FormatError for an unknown format (or one this installation cannot write there),
    ConfigError for bad arguments, SinkError when the target cannot be written or is of
    another kind (e.g. a non-empty non-Delta folder, a schema mismatch with the Delta table);
    none of these leave data behind.
    """
    fmt = _format(format)
    save_mode = _mode(mode)
    opts = _options(options)
    idempotency = _token(token, opts)
    columns = check_partition_by(partition_by, df.columns, fmt)
    _delta_only(idempotency, fmt)
    merge = merge_spec(merge_keys, delete_when, order_by, format=fmt, mode=save_mode,
                       columns=df.columns)
    if fmt == "iceberg":
        if merge is not None:
            check_iceberg_merge(target, opts, columns)
            return merge_iceberg(spark, df, target, merge, token=idempotency, options=opts,
                                 iceberg_catalog=iceberg_catalog, commit_info=commit_info)
        return write_iceberg(spark, df, target, mode=save_mode, partition_by=columns,
                             token=idempotency, options=opts, iceberg_catalog=iceberg_catalog,
                             commit_info=commit_info)
    resolved = resolve_target(target)
    if merge is not None:
        if columns:
            raise ConfigError("partition_by cannot be combined with merge_keys: a merge keeps "
                              "the table's own partitioning")
        return merge_delta(spark, df, resolved, merge, token=idempotency, options=opts,
                           commit_info=commit_info)
    if fmt == "delta":
        return write_delta(spark, df, resolved, mode=save_mode, partition_by=columns,
                           token=idempotency, options=opts, commit_info=commit_info,
                           partition_filters=partition_filters,
                           overwrite_schema=overwrite_schema, removes=removes,
                           replace_partitioning=replace_partitioning)
    return write_files(spark, df, resolved, format=fmt, mode=save_mode, partition_by=columns,
                       options=opts, commit_token=commit_token, commit_info=commit_info,
                       commit_records=commit_records)


def check_write(
    target: str,
    *,
    format: str = "delta",
    mode: str = "append",
    partition_by: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    iceberg_catalog: CatalogChoice = None,
) -> None:
    """Every check of a write that needs no data, with no Spark and nothing written.

    Commands call it before they open a run, so a bad target (a file, a missing bucket, a
    non-empty folder that is no Delta table, a Delta table written as a folder format), an
    unknown format or mode, or bad writer options fail at once and change no state.
    """
    fmt = _format(format)
    _mode(mode)
    opts = _options(options)
    _delta_only(_token(None, opts), fmt)
    for col in partition_by:
        if not isinstance(col, str) or not col.strip():
            raise ConfigError(f"partition_by must name columns, got {col!r}")
    if fmt == "iceberg":
        check_iceberg_write(target, mode=mode.strip().lower(), partition_by=partition_by,
                            options=opts, iceberg_catalog=iceberg_catalog)
        return
    transforms = [c for c in partition_by if "(" in c]
    if transforms:
        raise ConfigError(f"partition_by: transforms ({', '.join(transforms)}) apply to Iceberg "
                          f"targets only; a {fmt} target is partitioned by column names")
    resolved = resolve_target(target)
    fs = resolved.filesystem()
    check_target(resolved, fs)
    if fmt == "delta":
        if open_delta(resolved) is None:
            check_new_table_location(resolved, fs)
    else:
        check_folder_location(resolved, fs, fmt)


def folder_token_supported(target: str, format: str) -> bool:
    """Whether a job's per-run token applies to a write (every folder format, local or S3:
    the write is staged and published with a commit record; Delta uses its own ``txn``)."""
    fmt = format.strip().lower() if isinstance(format, str) else ""
    if fmt in TABLE_FORMATS or fmt not in FORMATS:
        return False
    try:
        resolve_target(target)
    except Exception:  # bad targets fail later, in write_target, with their own message
        return False
    return True


def folder_commit_run_id(target: str, token: IdempotencyToken, key: str,
                         state: FolderCommitStore | None = None) -> str | None:
    """``commit_info[key]`` of the commit record of ``token`` in a folder target (local or S3),
    looked up in ``state`` (with the folder's old records) or in the folder only; None if that
    exact version has no commit record."""
    from ._publish import commit_record, store_for

    store = store_for(resolve_target(target))
    record = commit_record(store, token,
                           StoreRecords(state).log(store) if state is not None else None)
    if record is None or int(record.get("version", -1)) != token.version:
        return None
    value = record.get(key)
    return str(value) if value is not None else None
