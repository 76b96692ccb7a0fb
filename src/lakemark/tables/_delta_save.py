"""``df.write.format("delta")...save(path)`` in a session without Delta's jars.

The write is lakemark's Delta sink (:func:`lakemark.sinks.write_target`): the executors write
Parquet (Spark's own writer locally, pyarrow on S3 without S3A), the driver commits once with
deltalake, and a failed write leaves nothing visible. On top of it come Spark's save modes and
the writer options of Delta's Spark writer:

* modes ``append``, ``overwrite``, ``error``/``errorifexists`` (the default: refused when a
  Delta table is already there) and ``ignore`` (then nothing is written);
* ``txnAppId`` + ``txnVersion``: a write whose version the table already recorded for that app
  id is skipped before anything is computed, and the log says so (Delta's idempotent writes).
  This check comes before the save mode's, so a retried job's write is a no-op even in the
  default ``errorifexists`` mode (the seed's snippet gives no mode);
* ``userMetadata``: recorded in the commit's ``commitInfo`` as Delta does;
* ``mergeSchema``: new columns of the DataFrame are added to the table;
* ``partitionBy`` for a new table (an existing table keeps its own; a different one is refused).

* ``replaceWhere`` (with ``overwrite``): rows outside the predicate fail the write first (Delta's
  constraint check); a predicate over partition columns replaces whole partitions, any other
  predicate replaces the rows it selects (:mod:`._replace_rows`), in the same single commit;
* ``overwriteSchema`` (with ``overwrite``): the table takes the DataFrame's schema (and
  partitioning) in the same single commit.

Options lakemark cannot honour (``partitionOverwriteMode``, ...) are refused by name rather
than ignored, so a write never does something other than what was asked.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError, UnsupportedError
from ..planning.delta_history import write_record

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..sinks import WriteResult
    from ..sinks._model import IdempotencyToken

__all__ = ["already_recorded", "plan_replace_where", "save_delta", "SAVE_MODES"]

log = logging.getLogger("lakemark.tables")

SAVE_MODES = {"append": "append", "overwrite": "overwrite", "error": "error",
              "errorifexists": "error", "default": "error", "ignore": "ignore"}
#: Delta writer options lakemark does not implement (refused, never ignored).
_UNSUPPORTED = {"partitionoverwritemode": "partitionOverwriteMode",
                "datachange": "dataChange", "maxrecordsperfile": "maxRecordsPerFile"}


def save_delta(df: DataFrame, path: str, *, mode: str | None,
               partition_by: Sequence[str], options: Mapping[str, str],
               operation: Mapping[str, str] | None = None,
               replace_partitioning: bool = False) -> WriteResult | None:
    """Write ``df`` to the Delta table at ``path`` with Spark's save-mode semantics; the
    sink's result, or None when mode ``ignore`` found a table there. ``operation``: the
    history record (:func:`lakemark.planning.delta_history.record`) when the write is not a
    DataFrame ``WRITE`` (SQL ``CREATE TABLE … AS SELECT``); ``replace_partitioning``: with
    ``overwriteSchema``, the table takes exactly ``partition_by`` (none when empty), as SQL
    ``REPLACE TABLE … AS SELECT`` does."""
    from ..sinks import TXN_APP_ID, TXN_VERSION, token_from_options, write_target
    from ..sinks._location import open_delta, resolve_target

    how = SAVE_MODES.get((mode or "errorifexists").strip().lower())
    if how is None:
        raise ConfigError(f"writing Delta table {path}: unknown save mode {mode!r} (append, "
                          "overwrite, error/errorifexists, ignore)")
    opts: dict[str, str] = {}
    commit_info: dict[str, str] = {}
    replace_where: str | None = None
    overwrite_schema = False
    for key, value in options.items():
        low = key.lower()
        if low == "overwriteschema":
            overwrite_schema = _flag(key, value, path)
            continue
        if low in _UNSUPPORTED:
            raise UnsupportedError(f"writing Delta table {path}: option {_UNSUPPORTED[low]} is "
                                   "not supported by lakemark's Delta writer (nothing was "
                                   "written)")
        if low == "replacewhere":
            replace_where = str(value)
        elif low == "usermetadata":
            commit_info["userMetadata"] = str(value)
        elif low == "txnappid":
            opts[TXN_APP_ID] = str(value)
        elif low == "txnversion":
            opts[TXN_VERSION] = str(value)
        elif low == "path" or low.startswith("lakemark."):
            continue
        else:
            opts[key] = str(value)
    token = token_from_options(None, opts, format="delta",
                               mode="overwrite" if how == "overwrite" else "append")
    target = resolve_target(path)
    table = open_delta(target) if how in ("error", "ignore") or token is not None else None
    if table is not None and already_recorded(table, token, target.root):
        # before the save mode: a retried job's write is a no-op, whatever its mode
        from ..sinks import WriteResult

        return WriteResult(target.root, "delta", 0, 0, 0, skipped=True,
                           table_version=table.version())
    if how in ("error", "ignore") and table is not None:
        if how == "ignore":
            log.info("writing Delta table %s skipped: it exists and the save mode is 'ignore'",
                     target.root)
            return None
        raise SinkError(f"Delta table {target.root} already exists (save mode 'errorifexists'); "
                        "write with mode('append') or mode('overwrite')")
    if overwrite_schema and (how != "overwrite" or replace_where is not None):
        raise ConfigError(f"writing Delta table {path}: option overwriteSchema needs "
                          "mode('overwrite') and cannot be combined with replaceWhere")
    filters: list[tuple[str, str, Any]] | None = None
    removes: list[tuple[str, int]] = []
    write_mode = "overwrite" if how == "overwrite" else "append"
    if replace_where is not None:
        filters, df, removes = plan_replace_where(df, replace_where, how, open_delta(target),
                                                   target.root, path)
        if filters is None:  # rows replaced: the commit adds and removes files itself
            write_mode = "append"
    # history() shows Delta on Spark's record: the save mode and partitionBy the user gave
    commit_info.update(operation or write_record(how, list(partition_by), replace_where))
    result = write_target(df.sparkSession, df, path, format="delta", mode=write_mode,
                          partition_by=list(partition_by), options=opts,
                          commit_info=commit_info, partition_filters=filters,
                          overwrite_schema=overwrite_schema, removes=removes,
                          replace_partitioning=replace_partitioning)
    if result.skipped and token is not None:
        log.info("writing Delta table %s skipped: it already recorded txnAppId %r with a "
                 "txnVersion >= %d (nothing written)", target.root, token.app_id, token.version)
    elif result.skipped:
        log.info("writing Delta table %s skipped", target.root)
    else:
        log.info("wrote Delta table %s version %s: %d row(s) in %d file(s)", target.root,
                 result.table_version, result.rows, result.files)
    return result


def already_recorded(table: Any, token: IdempotencyToken | None, root: str) -> bool:
    """Whether the Delta ``table`` already recorded ``token``'s app id at a version as high
    (then the write is skipped, and this logs it)."""
    if token is None or table is None:
        return False
    recorded = table.transaction_version(token.app_id)
    if recorded is None or recorded < token.version:
        return False
    log.info("writing Delta table %s skipped: it already recorded txnAppId %r at txnVersion "
             "%d >= %d (nothing written)", root, token.app_id, recorded, token.version)
    return True


def _flag(key: str, value: object, path: str) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"writing Delta table {path}: option {key} must be true or false, "
                          f"not {value!r}")
    return text == "true"


def plan_replace_where(df: DataFrame, expr: str, how: str, table: Any, root: str, path: str
                   ) -> tuple[list[tuple[str, str, Any]] | None, DataFrame,
                              list[tuple[str, int]]]:
    """``(partition filters, DataFrame to write, files to remove)`` for ``replaceWhere``, after
    checking, as Delta does, that every row of ``df`` satisfies the predicate (nothing is
    written otherwise). A predicate over partition columns replaces whole partitions
    (filters); any other predicate replaces the selected rows (:mod:`._replace_rows`)."""
    from ..errors import UnsupportedError
    from ._replace_where import partition_filters

    if how != "overwrite":
        raise ConfigError(f"writing Delta table {root}: option replaceWhere needs "
                          "mode('overwrite')")
    if table is None:
        return None, df, []  # a new table: the write creates it with these rows
    try:
        stray = df.where(f"NOT coalesce(({expr}), false)").limit(1).count()
    except Exception as exc:  # Spark's parse/analysis error of the predicate
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"writing Delta table {root}: replaceWhere {expr!r} cannot be "
                          f"evaluated on the DataFrame: {first}") from exc
    if stray:
        raise SinkError(f"writing Delta table {root}: the DataFrame has rows that do not match "
                        f"replaceWhere {expr!r} (Delta's replaceWhere constraint; nothing was "
                        "written)")
    try:
        return partition_filters(expr, list(table.metadata().partition_columns),
                                 table=root), df, []
    except UnsupportedError:
        from ._replace_rows import replace_rows

        rows, removes = replace_rows(df, expr, path, root)
        return None, rows, removes
