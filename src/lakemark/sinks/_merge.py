"""Upserts and deletes: an exactly-once MERGE of a DataFrame into a Delta table by key.

``write_target(..., merge_keys=["id"], delete_when="op = 'D'", order_by="updated_at")``:

* every input row whose key matches a table row replaces that row (update-all); a row whose key
  is new is inserted (insert-all); columns the table has but the input lacks keep their value
  on update and are null on insert;
* a row for which ``delete_when`` (a Spark SQL expression over the input's columns) is true
  deletes the table row with its key (and is not inserted when there is none);
* with ``order_by`` (a column, or several compared in turn: ``["changed_at", "seq"]``), the
  input row with the greatest ``order_by`` value per key is the one that counts ("latest
  wins"); without it, a key that occurs twice in the input fails the write
  naming the key (Delta's own rule), before anything is written. So does a tie for the latest.

The input's columns are the table's columns (a new table is created from them, flag columns
such as ``op`` included), checked against an existing table exactly as for an append; with the
``mergeSchema`` option, input columns the table lacks are added to it (nullable, in a metadata
commit before the merge, as for an append), and the merge then writes them.

Exactly once: Spark evaluates ``delete_when``; the input is collected to the driver as Arrow,
where the latest row per key is kept and the keys are checked (a sort, no shuffle in Spark);
the result goes to deltalake's ``DeltaTable.merge``, and the merge commits with the
write's idempotency token as a ``txn`` action *in the same commit* (``CommitProperties``), next to
the write id in ``commitInfo``. Before merging, a token the table has already recorded skips the
write; after a failed commit the history is searched for the write id (committed after all) or
the token (a racing writer did it), and a lost race is retried on the new snapshot. A merge into
a table that does not exist yet is the append of the non-deleted rows (same token rules).

The input of one merge (the changes, not the table) is collected to the driver as Arrow.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._fault import fault_point
from .._commit_gate import before_commit
from ..errors import ConfigError, SinkError
from ._location import Target, check_target, open_delta
from ._model import IdempotencyToken, WriteResult

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["MergeSpec", "merge_spec", "merge_delta", "DELETE_FLAG"]

#: The hidden input column that carries ``delete_when``'s value to deltalake's merge.
DELETE_FLAG = "__lakemark_delete"
_SOURCE, _TARGET = "s", "t"


@dataclass(frozen=True)
class MergeSpec:
    """What a merge matches on (``keys``), deletes on and orders by; see the module docstring."""

    keys: tuple[str, ...]
    delete_when: str | None = None
    order_by: str | tuple[str, ...] | None = None

    @property
    def order_columns(self) -> tuple[str, ...]:
        """The ``order_by`` columns, most significant first (empty without ``order_by``)."""
        if self.order_by is None:
            return ()
        return (self.order_by,) if isinstance(self.order_by, str) else tuple(self.order_by)


def merge_spec(merge_keys: Sequence[str] | str | None, delete_when: str | None,
               order_by: Sequence[str] | str | None, *, format: str, mode: str,
               columns: Sequence[str]) -> MergeSpec | None:
    """Check the merge options of a write against its format, mode and input ``columns``
    (pure: no Spark, no I/O). None when ``merge_keys`` is not given; ConfigError naming the
    option or column otherwise, before anything is recorded or written."""
    if merge_keys is None or merge_keys == [] or merge_keys == ():
        for name, value in (("delete_when", delete_when), ("order_by", order_by)):
            if value is not None:
                raise ConfigError(f"{name} applies to merges only: give merge_keys too")
        return None
    keys = [merge_keys] if isinstance(merge_keys, str) else list(merge_keys)
    for key in keys:
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"merge_keys must name columns, got {key!r}")
    if format.strip().lower() not in ("delta", "iceberg"):
        raise ConfigError(f"merge_keys needs format 'delta' or 'iceberg' (a table to merge "
                          f"into), not {format!r}")
    if mode.strip().lower() != "append":
        raise ConfigError(f"merge_keys cannot be combined with mode {mode!r}: a merge updates "
                          "the table in place (leave mode at 'append')")
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ConfigError(f"merge_keys names column(s) twice: {', '.join(twice)}")
    present = set(columns)
    missing = [k for k in keys if k not in present]
    if missing:
        raise ConfigError(f"merge key column(s) not in the DataFrame: {', '.join(missing)} "
                          f"(columns: {', '.join(columns)})")
    if delete_when is not None and (not isinstance(delete_when, str) or not delete_when.strip()):
        raise ConfigError(f"delete_when must be a SQL expression, got {delete_when!r}")
    order: str | tuple[str, ...] | None = None
    if order_by is not None:
        names = [order_by] if isinstance(order_by, str) else list(order_by)
        if not names:
            raise ConfigError("order_by must name at least one column")
        for name in names:
            if not isinstance(name, str) or name not in present:
                raise ConfigError(f"order_by column {name!r} is not in the DataFrame "
                                  f"(columns: {', '.join(columns)})")
            if name in keys:
                raise ConfigError(f"order_by column {name!r} is a merge key; it cannot order "
                                  "the versions of one key")
        if len(set(names)) != len(names):
            raise ConfigError(f"order_by names a column twice: {names}")
        order = names[0] if len(names) == 1 else tuple(names)
    if DELETE_FLAG in present:
        raise ConfigError(f"column name {DELETE_FLAG!r} is reserved for merges")
    return MergeSpec(tuple(keys), delete_when, order)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _flagged(df: DataFrame, spec: MergeSpec) -> DataFrame:
    """The input with the delete flag column (when ``delete_when`` is given); ConfigError for
    an expression Spark cannot analyse over the input's columns."""
    from pyspark.errors import AnalysisException, ParseException
    from pyspark.sql import functions as F

    if spec.delete_when is None:
        return df
    try:
        flag = F.coalesce(F.expr(spec.delete_when).cast("boolean"), F.lit(False))
        df = df.withColumn(DELETE_FLAG, flag)
        df.schema  # noqa: B018 - analysis: a bad expression fails here, not mid-merge
    except (AnalysisException, ParseException) as exc:
        raise ConfigError(f"delete_when {spec.delete_when!r} is not a valid expression "
                          f"over the input's columns: {str(exc).splitlines()[0]}") from None
    return df


def _label(target: Target | str) -> tuple[str, str]:
    """How errors name a merge's table (``Delta table /path``, or the label given) and the
    target they carry."""
    if isinstance(target, str):
        return target, target.split(" ")[-1]
    return f"Delta table {target.root}", target.root


def _twice(spec: MergeSpec, target: Target | str, key: Mapping[str, object]) -> SinkError:
    label, where = _label(target)
    named = ", ".join(f"{k}={key[k]!r}" for k in spec.keys)
    ordered = ", ".join(spec.order_columns)
    why = (f"has two rows with the same latest {ordered!r}" if spec.order_by
           else "occurs more than once and no order_by says which row wins")
    return SinkError(f"merge into {label}: key {named} {why} "
                     "(nothing was written)", target=where)


def _latest_spark(df: DataFrame, spec: MergeSpec, target: Target | str) -> DataFrame:
    """One row per key (latest wins) computed by Spark: the rows of a merge into a table that
    does not exist yet, written by the Delta sink. SinkError naming a key that occurs twice
    without an order (or ties for the latest)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = [F.col(_quote(k)) for k in spec.keys]
    if spec.order_columns:
        latest = "__lakemark_latest"
        cols = [F.col(_quote(c)) for c in spec.order_columns]
        order = cols[0] if len(cols) == 1 else F.struct(*cols)  # structs compare in turn
        df = (df.withColumn(latest, F.max(order).over(Window.partitionBy(*keys)))
              .where(order.eqNullSafe(F.col(latest))).drop(latest))
    twice = df.groupBy(*keys).count().where(F.col("count") > 1).limit(1).collect()
    if twice:
        raise _twice(spec, target, twice[0].asDict())
    return df


def _same_as_next(column: pa.ChunkedArray) -> pa.Array:
    """For rows 0..n-2 of a column: whether row i equals row i+1 (two nulls are equal)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    a, b = column[:-1], column[1:]
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    equal = pc.fill_null(pc.equal(a, b), False)
    out = pc.or_(both_null, equal)
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _latest_arrow(data: pa.Table, spec: MergeSpec, target: Target | str) -> pa.Table:
    """One row per key (latest wins) of the collected input, on the driver with Arrow (no
    shuffle in Spark): rows sorted by key and by ``order_by`` descending (nulls last, as
    Spark's ``max`` skips them), the first row of each key kept. SinkError naming a key that
    occurs twice without an order, or whose two first rows tie on every ``order_by`` column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if data.num_rows < 2:
        return data
    order = [(k, "ascending", "at_end") for k in spec.keys] + \
        [(c, "descending", "at_end") for c in spec.order_columns]
    data = data.take(pc.sort_indices(data, sort_keys=order))
    same_key = pa.array([True] * (data.num_rows - 1))
    for k in spec.keys:
        same_key = pc.and_(same_key, _same_as_next(data.column(k)))
    first = pa.concat_arrays([pa.array([True]), pc.invert(same_key)])  # first row of its key
    # a key's first and second row: the same key, and (ordered) the same order values → tie
    clash = pc.and_(same_key, first[:-1])
    for c in spec.order_columns:
        clash = pc.and_(clash, _same_as_next(data.column(c)))
    if pc.any(clash).as_py():
        row = pc.index(clash, True).as_py()
        raise _twice(spec, target, data.slice(row, 1).to_pylist()[0])
    return data.filter(first)


def _merge_once(table: DeltaTable, source: object, spec: MergeSpec, columns: Sequence[str],
                token: IdempotencyToken | None, write_id: str,
                commit_info: Mapping[str, str] | None) -> dict[str, int]:
    from deltalake import CommitProperties, Transaction

    properties = CommitProperties(
        custom_metadata={**(commit_info or {}), "lakemark.writeId": write_id},
        app_transactions=[Transaction(token.app_id, token.version)] if token else None,
    )
    on = " AND ".join(f"{_TARGET}.{_quote(k)} = {_SOURCE}.{_quote(k)}" for k in spec.keys)
    values = {_quote(c): f"{_SOURCE}.{_quote(c)}" for c in columns}
    merger = table.merge(source, on, source_alias=_SOURCE, target_alias=_TARGET,  # type: ignore[arg-type]
                         commit_properties=properties)
    if spec.delete_when is not None:
        flag = f"{_SOURCE}.{_quote(DELETE_FLAG)}"
        merger = (merger.when_matched_delete(predicate=flag)
                  .when_matched_update(values, predicate=f"NOT {flag}")
                  .when_not_matched_insert(values, predicate=f"NOT {flag}"))
    else:
        merger = merger.when_matched_update(values).when_not_matched_insert(values)
    return {k: v for k, v in merger.execute().items() if isinstance(v, int)}


def merge_delta(spark: SparkSession, df: DataFrame, target: Target, spec: MergeSpec, *,
                token: IdempotencyToken | None, options: Mapping[str, str],
                commit_info: Mapping[str, str] | None = None) -> WriteResult:
    """Merge ``df`` into the Delta table at ``target`` by ``spec`` (see the module docstring).

    ``rows`` of the result counts the rows inserted, updated and deleted; ``files`` the data
    files the merge added."""
    from deltalake.exceptions import CommitFailedError
    from pyspark.sql import functions as F

    from ._delta import (
        MAX_COMMIT_ATTEMPTS,
        _add_new_columns,
        _already_committed,
        _find_commit,
        _fit,
        _merge_flag,
        write_delta,
    )
    from ._schema import delta_schema

    rest = dict(options)
    merge_schema = _merge_flag(rest)
    if rest:
        raise ConfigError(f"option(s) {', '.join(sorted(rest))} are not supported with "
                          "merge_keys (deltalake writes the merged files; mergeSchema is)")
    check_target(target, target.filesystem())
    table = open_delta(target)
    if table is not None:
        if _already_committed(table, token):
            return WriteResult(target.root, "delta", 0, 0, 0, skipped=True,
                               table_version=table.version())
        have = {f.name for f in table.schema().fields}
        missing = [k for k in spec.keys if k not in have]
        if missing:
            raise ConfigError(f"merge key column(s) {', '.join(missing)} not in Delta table "
                              f"{target.root} (columns: {', '.join(sorted(have))})")
    flagged = _flagged(df, spec)
    columns = list(df.columns)
    data = flagged.select(*[F.col(_quote(c)) for c in columns])
    if table is None:  # nothing to match: the table is the input's non-deleted rows
        prepared = _latest_spark(flagged, spec, target)
        data = prepared.select(*[F.col(_quote(c)) for c in columns])
        kept = data if spec.delete_when is None else prepared.where(
            ~F.col(DELETE_FLAG)).select(*[F.col(_quote(c)) for c in columns])
        return write_delta(spark, kept, target, mode="append", partition_by=(), token=token,
                           options={}, commit_info=commit_info)
    frame = delta_schema(data.schema, target=target.root)
    if merge_schema:  # new input columns join the table first (one metadata commit)
        table = _add_new_columns(target, table, frame, ())
    _fit(target, table, frame, (), merge=merge_schema)
    source = _latest_arrow(flagged.toArrow(), spec, target)
    write_id = uuid.uuid4().hex
    fault_point("mid-write")  # input computed and checked, the merge (files + commit) not begun
    before_commit()  # the run checks its input was read as planned
    for _attempt in range(MAX_COMMIT_ATTEMPTS):
        since = table.version()
        try:
            metrics = _merge_once(table, source, spec, columns, token, write_id, commit_info)
        except Exception as exc:  # deltalake raises DeltaError subclasses and IO errors
            latest = open_delta(target)
            if latest is None:
                raise SinkError(f"merge into Delta table {target.root} failed: {exc}",
                                target=target.root) from exc
            version = _find_commit(latest, write_id, since)
            if version is not None:
                return WriteResult(target.root, "delta", 0, 0, 0, table_version=version)
            if _already_committed(latest, token):
                return WriteResult(target.root, "delta", 0, 0, 0, skipped=True,
                                   table_version=latest.version())
            if not isinstance(exc, CommitFailedError):
                raise SinkError(f"merge into Delta table {target.root} failed: "
                                f"{str(exc).splitlines()[0] if str(exc) else exc!r}",
                                target=target.root) from exc
            table = latest
            continue
        latest = open_delta(target)
        version = _find_commit(latest, write_id, since) if latest is not None else None
        rows = sum(metrics.get(f"num_target_rows_{k}", 0)
                   for k in ("inserted", "updated", "deleted"))
        return WriteResult(target.root, "delta", rows=rows,
                           files=metrics.get("num_target_files_added", 0), bytes=0,
                           table_version=version if version is not None else since + 1)
    raise SinkError(f"could not merge into Delta table {target.root}: other writers committed "
                    f"conflicting changes {MAX_COMMIT_ATTEMPTS} times in a row",
                    target=target.root)
