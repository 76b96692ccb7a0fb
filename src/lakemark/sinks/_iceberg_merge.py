"""Upserts and deletes into an Iceberg table by key, exactly once (docs/upserts.md).

``write_target(..., format="iceberg", merge_keys=["id"], delete_when="op = 'D'",
order_by="updated_at")`` has the Delta merge's rules (:mod:`._merge`): per key of the input,
the latest row (``order_by``) replaces the table's row or is inserted; a row for which
``delete_when`` holds deletes the table's row; a key twice in the input without an order (or a
tie for the latest) fails the write before anything is written.

How, and why this way: Spark evaluates ``delete_when`` and the input (the changes, not the
table) is collected to the driver as Arrow, where the latest row per key is kept and the keys
are checked — the same preparation as for Delta. Then, in one pyiceberg transaction against the
snapshot that was checked for the token:

1. the table's key columns are scanned with a filter built from the changed keys (their range
   prunes data files by column statistics), which says which keys the table holds;
2. if any changed key is in the table, ``delete`` removes the rows of those keys: pyiceberg
   rewrites, copy-on-write, only the data files that hold one (an ``overwrite`` snapshot; a
   file whose every row goes is dropped, a ``delete`` snapshot) — no delete files;
3. the non-deleted latest rows are appended (an ``append`` snapshot).

Every snapshot of the transaction carries the write id and the token (``lakemark.appId`` /
``lakemark.appVersion``) in its summary, and the catalog commit asserts that ``main`` still
points at the snapshot whose ancestry was checked, so a retried run finds its token and skips,
and a racing commit makes ours fail, reload and run again on the new snapshot (5 attempts). A
merge that only inserts is a plain ``append`` snapshot, so incremental readers of the table
take it. pyiceberg's own ``upsert`` was measured against this on the same data and was 2.5×
slower (it compares every matched row in Python) and has no deletes.

Into a table partitioned by a time or truncate transform, pyiceberg needs its optional native
module (``pyiceberg-core``) to split the rows it writes; without it the merge is refused before
anything is written (:func:`_check_partitioning`).

An Iceberg merge replaces whole rows: the input must have every table column (with
``mergeSchema`` it may add new ones, in the same commit). Rows whose key is null never match
(they are inserted), as in SQL. A table row whose key occurs several times in the table is
replaced, all copies, by the one input row.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from .._commit_gate import before_commit
from ..catalog._iceberg import CatalogChoice, load_iceberg_catalog
from ..errors import ConfigError, SinkError
from ._iceberg import (
    APP_ID_KEY,
    APP_VERSION_KEY,
    MAX_COMMIT_ATTEMPTS,
    WRITE_ID_KEY,
    _differences,
    _first_line,
    _has_write,
    _merge_schema,
    _open,
    _snapshot_id,
    _token_committed,
    check_iceberg_write,
    write_iceberg,
)
from ._merge import DELETE_FLAG, MergeSpec, _flagged, _latest_arrow, _latest_spark, _quote
from ._model import IdempotencyToken, WriteResult
from ._schema import arrow_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.table import Table, Transaction
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["check_iceberg_merge", "merge_iceberg"]

#: pyiceberg's table property for its own commit retries (see :func:`_without_retries`).
_RETRIES = "commit.retry.num-retries"


def check_iceberg_merge(table: str, options: Mapping[str, str],
                        partition_by: Sequence[str]) -> None:
    """The checks of an Iceberg merge that need no I/O (ConfigError naming the option): only
    ``mergeSchema`` among the writer options, no ``partition_by``."""
    rest = sorted(k for k in options if k.lower() != "mergeschema")
    if rest:
        raise ConfigError(f"option(s) {', '.join(rest)} are not supported with merge_keys on "
                          f"Iceberg table {table} (pyiceberg writes the merged files; "
                          "mergeSchema is)")
    if list(partition_by):
        raise ConfigError("partition_by cannot be combined with merge_keys: a merge keeps "
                          "the table's own partitioning")


def merge_iceberg(spark: SparkSession, df: DataFrame, table: str, spec: MergeSpec, *,
                  token: IdempotencyToken | None, options: Mapping[str, str],
                  iceberg_catalog: CatalogChoice = None,
                  commit_info: Mapping[str, str] | None = None) -> WriteResult:
    """Merge ``df`` into the Iceberg table ``table`` by ``spec`` (see the module docstring).

    ``rows`` of the result counts the rows inserted, updated and deleted; ``files`` the data
    files the commit added (rewritten and new)."""
    from pyspark.sql import functions as F

    name, catalog_spec = check_iceberg_write(table, mode="append", partition_by=(),
                                             options=options, iceberg_catalog=iceberg_catalog)
    check_iceberg_merge(table, options, ())
    merge_schema = _merge_schema(table, options)
    label = f"Iceberg table {name}"
    catalog = load_iceberg_catalog(catalog_spec)
    current = _open(catalog, name)
    flagged = _flagged(df, spec)
    columns = list(df.columns)
    if current is None:  # nothing to match: the table is the input's non-deleted rows
        prepared = _latest_spark(flagged, spec, label)
        if spec.delete_when is not None:
            prepared = prepared.where(~F.col(DELETE_FLAG))
        kept = prepared.select(*[F.col(_quote(c)) for c in columns])
        return write_iceberg(spark, kept, table, mode="append", partition_by=(), token=token,
                             options={}, iceberg_catalog=iceberg_catalog,
                             commit_info=commit_info)
    if _token_committed(current, token):
        return WriteResult(str(name), "iceberg", 0, 0, 0, skipped=True,
                           table_version=_snapshot_id(current))
    _check_partitioning(current, label, str(name))
    frame = arrow_schema(df.schema, target=table)
    _check_columns(current, label, spec, frame, merge_schema)
    source = _latest_arrow(flagged.toArrow(), spec, label)
    write_id = uuid.uuid4().hex
    properties = {**(commit_info or {}), WRITE_ID_KEY: write_id}
    if token is not None:
        properties.update({APP_ID_KEY: token.app_id, APP_VERSION_KEY: str(token.version)})
    fault_point("mid-write")  # input computed and checked, nothing of the merge written yet
    before_commit()  # the run checks its input was read as planned
    from pyiceberg.exceptions import CommitFailedException

    for _attempt in range(MAX_COMMIT_ATTEMPTS):
        try:
            tx = _without_retries(current).transaction()
            if merge_schema and _differences(current, frame):
                with tx.update_schema() as update:
                    update.union_by_name(frame)
            rows = _apply(tx, current, source, spec, properties, token is not None)
            committed = tx.commit_transaction()
        except CommitFailedException as exc:
            latest = _open(catalog, name)
            if latest is None:
                raise SinkError(f"merge into {label} failed: {_first_line(exc)}",
                                target=str(name)) from exc
            if _has_write(latest, WRITE_ID_KEY, write_id):
                return _result(str(name), latest, write_id, None)
            if _token_committed(latest, token):
                return WriteResult(str(name), "iceberg", 0, 0, 0, skipped=True,
                                   table_version=_snapshot_id(latest))
            _check_columns(latest, label, spec, frame, merge_schema)
            current = latest
            continue
        except ValueError as exc:  # pyiceberg refuses data that does not fit the schema
            raise SinkError(f"merge into {label} failed (nothing was written): "
                            f"{_first_line(exc)}", target=str(name)) from exc
        return _result(str(name), committed, write_id, rows)
    raise SinkError(f"could not merge into {label}: other writers committed "
                    f"{MAX_COMMIT_ATTEMPTS} times in a row", target=str(name))


def _check_partitioning(table: Table, label: str, name: str) -> None:
    """pyiceberg writes a merge's files itself, and splits rows by a time, truncate or bucket
    transform only with its optional native module (``pyiceberg-core``): without it such a
    table is refused here, before anything is computed or written (identity partitions and
    unpartitioned tables need nothing more)."""
    import importlib.util

    from pyiceberg.transforms import IdentityTransform

    fields = [f for f in table.spec().fields if not isinstance(f.transform, IdentityTransform)]
    if fields and importlib.util.find_spec("pyiceberg_core") is None:
        schema = table.schema()
        shown = ", ".join(f"{f.transform}({schema.find_column_name(f.source_id)})"
                          for f in fields)
        raise SinkError(f"merge into {label} partitioned by {shown} needs pyiceberg's native "
                        "transforms: pip install 'pyiceberg[pyiceberg-core]' (appends to the "
                        "table need nothing more; nothing was written)", target=name)


def _without_retries(table: Table) -> Table:
    """``table`` as its transactions should see it: with pyiceberg's own commit retries off.

    On a failed commit pyiceberg 0.12 would otherwise rebuild the staged snapshots on the
    new table state and commit them, unchecked: the merge's key scan would be stale (a key
    another writer added meanwhile would be doubled) and a token committed meanwhile would be
    applied twice. With the retries off, the failure reaches :func:`merge_iceberg`, which
    checks the token and scans again. Only this in-memory view changes, not the table."""
    import copy

    view = copy.copy(table)
    view.metadata = table.metadata.model_copy(update={"properties": {
        **table.metadata.properties, _RETRIES: "0"}})
    return view


def _check_columns(table: Table, label: str, spec: MergeSpec, frame: pa.Schema,
                   merge_schema: bool) -> None:
    """The keys must be table columns, the input must have every table column (an Iceberg
    merge replaces whole rows) with the same types, and only ``mergeSchema`` allows new ones."""
    have = [f.name for f in table.schema().fields]
    missing = [k for k in spec.keys if k not in have]
    if missing:
        raise ConfigError(f"merge key column(s) {', '.join(missing)} not in {label} "
                          f"(columns: {', '.join(have)})")
    differences = _differences(table, frame, merge_schema)
    lacking = [c for c in have if c not in frame.names]
    if merge_schema and lacking:  # _differences allowed them; a merge cannot
        differences.append(f"table column(s) {', '.join(map(repr, lacking))} are missing from "
                           "the DataFrame (an Iceberg merge replaces whole rows)")
    if differences:
        raise SinkError(f"the DataFrame does not match the schema of {label} (nothing was "
                        "written): " + "; ".join(differences), target=label.split(" ")[-1])


def _key_filter(keys: pa.Table, names: Sequence[str], exact: bool) -> BooleanExpression:
    """A pyiceberg filter on the key columns for the (null-free) key rows ``keys``: the range
    of every key column (prunes data files by their statistics) and, with ``exact``, exactly
    these keys (``In`` for one column, an ``Or`` of ``And``s for several); without ``exact``
    a superset (``In`` per column)."""
    import pyarrow.compute as pc
    from pyiceberg import expressions

    ex: Any = expressions  # its constructors are typed for pydantic, not for these calls
    if keys.num_rows == 0:
        return ex.AlwaysFalse()
    terms: list[BooleanExpression] = []
    for column in names:
        values = keys.column(column)
        bounds = pc.min_max(values)
        terms += [ex.GreaterThanOrEqual(column, bounds["min"].as_py()),
                  ex.LessThanOrEqual(column, bounds["max"].as_py())]
        if not exact or len(names) == 1:
            terms.append(ex.In(column, set(pc.unique(values).to_pylist())))
    if exact and len(names) > 1:
        rows = [ex.And(*[ex.EqualTo(c, r[c]) for c in names])
                for r in keys.select(list(names)).to_pylist()]
        terms.append(rows[0] if len(rows) == 1 else ex.Or(*rows))
    return ex.And(*terms) if len(terms) > 1 else terms[0]


def _apply(tx: Transaction, table: Table, source: pa.Table, spec: MergeSpec,
           properties: dict[str, str], tokened: bool) -> int:
    """Stage the merge of the prepared ``source`` into ``tx`` (steps 1–3 of the module
    docstring); the number of rows inserted, updated and deleted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = list(spec.keys)
    if spec.delete_when is not None:
        flag = pc.fill_null(source.column(DELETE_FLAG), False)
        deletes, upserts = source.filter(flag), source.filter(pc.invert(flag))
        upserts = upserts.drop_columns([DELETE_FLAG])
    else:
        deletes, upserts = source.slice(0, 0), source
    null_key = None
    for k in keys:
        missing = pc.is_null(source.column(k))
        null_key = missing if null_key is None else pc.or_(null_key, missing)
    keyed = source.filter(pc.invert(null_key)).select(keys)  # a null key never matches
    found = table.scan(row_filter=_key_filter(keyed, keys, exact=False),
                       selected_fields=tuple(keys)).to_arrow().select(keys)
    keyed = pa.table({k: keyed.column(k).cast(found.schema.field(k).type) for k in keys})
    present = found.group_by(keys).aggregate([])
    matched = keyed.join(present, keys=keys, join_type="left semi") if present.num_rows \
        else keyed.slice(0, 0)
    deleted = _count_in(deletes, matched, keys)
    if matched.num_rows:
        tx.delete(_key_filter(matched, keys, exact=True), snapshot_properties=properties)
    if upserts.num_rows:
        schema = tx.table_metadata.schema().as_arrow()
        wanted = [f.name for f in schema if f.name in upserts.column_names]
        upserts = upserts.select(wanted).cast(pa.schema([schema.field(n) for n in wanted]))
        tx.append(upserts, snapshot_properties=properties)
    elif not matched.num_rows and tokened:  # nothing changes: record the token all the same
        tx.add_files([], snapshot_properties=properties, check_duplicate_files=False)
    return upserts.num_rows + deleted  # inserted + updated, and deleted


def _count_in(rows: pa.Table, matched: pa.Table, keys: Sequence[str]) -> int:
    """How many of ``rows`` have a key in ``matched``."""
    import pyarrow as pa

    if rows.num_rows == 0 or matched.num_rows == 0:
        return 0
    mine = pa.table({k: rows.column(k).cast(matched.schema.field(k).type) for k in keys})
    return int(mine.join(matched, keys=list(keys), join_type="left semi").num_rows)


def _result(table: str, committed: Table, write_id: str, rows: int | None) -> WriteResult:
    """The write's result from the snapshots that carry its write id (files they added)."""
    from pyiceberg.table.snapshots import ancestors_of

    files = 0
    for snapshot in ancestors_of(committed.current_snapshot(), committed.metadata):
        summary: dict[str, Any] = dict(snapshot.summary.additional_properties) \
            if snapshot.summary else {}
        if summary.get(WRITE_ID_KEY) != write_id:
            break
        files += int(summary.get("added-data-files", 0) or 0)
    return WriteResult(table, "iceberg", rows=rows or 0, files=files, bytes=0,
                       table_version=_snapshot_id(committed))
