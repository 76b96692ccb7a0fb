"""``spark.sql`` on Delta and Iceberg tables in sessions without their jars.

Delta on Spark and Iceberg's Spark runtime extend Spark SQL; without their jars Spark fails on
``delta.`path``` ("Unsupported data source type for direct query on files"), on
``DESCRIBE HISTORY`` and on catalog-qualified Iceberg names. :func:`install_sql` wraps
``SparkSession.sql`` so that the statements :func:`lakemark.planning.sql_forms.plan_sql`
recognises are served by lakemark's own Delta/Iceberg support with the engines' semantics:

* queries: each Delta/Iceberg table reference (with ``VERSION AS OF`` / ``TIMESTAMP AS OF``) is
  read as ``format("delta")`` / ``format("iceberg")`` reads it (the same time-travel rules and
  errors), made a temporary view, and the query runs on the views;
* ``DESCRIBE HISTORY``: ``DeltaTable.history()`` (Delta on Spark's columns and names);
* ``CREATE [OR REPLACE] TABLE … USING delta AS SELECT`` / ``REPLACE TABLE … AS SELECT``:
  lakemark's Delta writer, recording ``CREATE TABLE AS SELECT``, ``CREATE OR REPLACE TABLE AS
  SELECT`` or ``REPLACE TABLE AS SELECT`` in history as Delta on Spark does.

Every other statement, and all of them when Delta's (for Delta) or Iceberg's (for Iceberg)
jars are on the classpath, is Spark's own. See docs/delta.md and docs/iceberg.md.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..planning.sql_forms import CreateAs, DeltaDml, DeltaInsert, History, Query, TableRef

__all__ = ["install_sql"]

_installed = False
_CATALOG_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*`?[A-Za-z_][A-Za-z0-9_]*`?\s*\.")


def _iceberg_catalogs(spark: SparkSession, sql: str) -> list[str]:
    """The names in ``sql`` that are Spark catalogs with Iceberg's plugin lakemark serves."""
    from ..catalog._iceberg_spark import is_iceberg_plugin
    from ._iceberg import lakemark_iceberg

    found = []
    for word in {m.group(1) for m in _CATALOG_WORD.finditer(sql)}:
        try:
            plugin = spark.conf.get(f"spark.sql.catalog.{word}", None)
        except Exception:  # noqa: BLE001 - a stopped session or an odd name
            continue
        if is_iceberg_plugin(plugin):
            found.append(word)
    return found if found and lakemark_iceberg(spark) else []


def _delta_names() -> list[str]:
    from ._delta_names import _NAMED

    return list(_NAMED)


def _empty(spark: SparkSession) -> DataFrame:
    from pyspark.sql.types import StructType

    return spark.createDataFrame([], StructType([]))


def _timestamp(spark: SparkSession, ref: TableRef) -> str | None:
    """The ``TIMESTAMP AS OF`` value as text, evaluating an expression with Spark."""
    from pyspark.sql import functions as F

    if ref.timestamp_sql is None:
        return ref.timestamp
    try:
        row = spark.range(1).select(F.expr(ref.timestamp_sql).cast("string")).first()
        value = row[0] if row is not None else None
    except Exception as exc:  # Spark's parse/analysis error
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"spark.sql: TIMESTAMP AS OF {ref.timestamp_sql}: {first}") from None
    if value is None:
        raise ConfigError(f"spark.sql: TIMESTAMP AS OF {ref.timestamp_sql} is null")
    return str(value)


def _read_delta(spark: SparkSession, ref: TableRef) -> DataFrame:
    from ._delta_api import table_location

    reader = spark.read.format("delta")
    if ref.version is not None:
        reader = reader.option("versionAsOf", str(ref.version))
    stamp = _timestamp(spark, ref)
    if stamp is not None:
        reader = reader.option("timestampAsOf", stamp)
    path = ref.name if ref.by_path else table_location(spark, ref.name)
    return reader.load(path)


def _epoch_ms(spark: SparkSession, ref: TableRef, stamp: str) -> int:
    """An Iceberg ``TIMESTAMP AS OF`` value as milliseconds since the epoch (a time without a
    zone is in the session's time zone, as Spark casts it)."""
    from pyspark.sql import functions as F

    row = spark.range(1).select(F.unix_micros(F.lit(stamp).cast("timestamp"))).first()
    micros = row[0] if row is not None else None
    if micros is None:
        raise ConfigError(f"spark.sql: {ref.name} TIMESTAMP AS OF {stamp!r} cannot be converted "
                          "to a valid timestamp")
    return int(micros) // 1000


def _iceberg_metadata(spark: SparkSession, ref: TableRef) -> DataFrame:
    """An Iceberg metadata table (``snapshots``, ``history`` …) from pyiceberg's
    ``Table.inspect``, whose columns follow Iceberg's."""
    from ..sources.iceberg import open_table
    from ._iceberg import resolve_name

    name, catalog = resolve_name(spark, ref.name, None)
    inspect = open_table(name, catalog).inspect
    method = getattr(inspect, str(ref.metadata), None)
    if method is None:
        from ..errors import UnsupportedError

        raise UnsupportedError(f"spark.sql: the Iceberg metadata table {ref.name}."
                               f"{ref.metadata} needs a newer pyiceberg (Table.inspect."
                               f"{ref.metadata})")
    return spark.createDataFrame(method())


def _read_iceberg(spark: SparkSession, ref: TableRef) -> DataFrame:
    from ._iceberg import load_iceberg

    if ref.metadata is not None:
        return _iceberg_metadata(spark, ref)

    options: dict[str, str] = {}
    if ref.version is not None:
        options["snapshot-id"] = str(ref.version)
    stamp = _timestamp(spark, ref)
    if stamp is not None:
        options["as-of-timestamp"] = str(_epoch_ms(spark, ref, stamp))
    return load_iceberg(spark, ref.name, options, None)


def _query(spark: SparkSession, original: Callable[..., DataFrame], plan: Query) -> DataFrame:
    views = []
    try:
        for ref in plan.refs:
            frame = _read_delta(spark, ref) if ref.kind == "delta" else _read_iceberg(spark, ref)
            frame.createOrReplaceTempView(ref.view)
            views.append(ref.view)
        return original(spark, plan.sql)
    finally:
        for view in views:
            spark.catalog.dropTempView(view)


def _history(spark: SparkSession, plan: History) -> DataFrame:
    from ._delta_api import DeltaTable

    table = DeltaTable.forPath(spark, plan.name) if plan.by_path else \
        DeltaTable.forName(spark, plan.name)
    return table.history(plan.limit)


def _dml(spark: SparkSession, plan: DeltaDml) -> DataFrame:
    """``DELETE`` / ``UPDATE`` through ``DeltaTable.delete`` / ``update``; one row with
    ``num_affected_rows``, as Delta's SQL returns (from the commit's metrics)."""
    from ._delta_api import DeltaTable

    table = DeltaTable.forPath(spark, plan.name) if plan.by_path else \
        DeltaTable.forName(spark, plan.name)
    before = table._table().version()
    if plan.kind == "delete":
        table.delete(plan.condition)
        metric = "num_deleted_rows"
    else:
        table.update(plan.condition, dict(plan.assignments))
        metric = "num_updated_rows"
    rs = table._table()
    affected = 0
    if rs.version() > before:
        for commit in rs.history(rs.version() - before):
            if int(commit.get("version", -1)) == before + 1:
                affected = int((commit.get("operationMetrics") or {}).get(metric, 0))
    return spark.createDataFrame([(affected,)], "num_affected_rows long")


def _insert(spark: SparkSession, plan: DeltaInsert) -> DataFrame:
    """``INSERT`` as Spark resolves it (by position, a column list or ``BY NAME``; values cast
    to the table's types, columns left out null), written by lakemark's Delta writer in one
    commit (history ``WRITE``, mode ``Append``/``Overwrite``; ``REPLACE WHERE`` is
    ``replaceWhere``)."""
    from pyspark.sql import functions as F

    from ._delta_api import table_location
    from ._delta_save import save_delta
    from ._delta_sql import quote

    shown = f"delta.`{plan.name}`" if plan.by_path else plan.name
    path = plan.name if plan.by_path else table_location(spark, plan.name)
    assert path is not None
    table = spark.read.format("delta").load(path).schema
    rows = spark.sql(plan.query)  # through this hook: Delta/Iceberg references in it are read
    names = [f.name for f in table.fields]
    if plan.by_name:
        given = list(rows.columns)
        source = {c.lower(): c for c in given}
    else:
        given = list(plan.columns) if plan.columns is not None else names
        if len(given) != len(rows.columns):
            raise ConfigError(f"spark.sql: INSERT into {shown}: the query gives "
                              f"{len(rows.columns)} column(s) for {len(given)} "
                              f"({', '.join(given)})")
        source = {g.lower(): c for g, c in zip(given, rows.columns, strict=True)}
    unknown = [g for g in given if g.lower() not in {n.lower() for n in names}]
    if unknown:
        raise ConfigError(f"spark.sql: INSERT into {shown}: no column(s) {', '.join(unknown)} "
                          f"in the table ({', '.join(names)})")
    out = rows.select(*[
        (F.col(quote(source[f.name.lower()])) if f.name.lower() in source
         else F.lit(None)).cast(f.dataType).alias(f.name) for f in table.fields])
    options = {"replaceWhere": plan.replace_where} if plan.replace_where else {}
    save_delta(out, path, mode="overwrite" if plan.overwrite or plan.replace_where else "append",
               partition_by=[], options=options)
    return _empty(spark)


def _create_as(spark: SparkSession, plan: CreateAs) -> DataFrame:
    from ..planning.delta_history import record
    from ..sinks._location import open_delta
    from ._delta_names import remember_name, resolve_path, table_location
    from ._delta_save import save_delta

    shown = f"delta.`{plan.name}`" if plan.by_path else plan.name
    path = plan.name if plan.by_path else (
        plan.location or table_location(spark, plan.name, must_exist=False))
    assert path is not None
    exists = open_delta(resolve_path(path)) is not None
    if plan.how == "create" and exists:
        if plan.if_not_exists:
            return _empty(spark)
        raise SinkError(f"spark.sql: CREATE TABLE {shown} … AS SELECT: table {shown} already "
                        f"exists at {path} (use CREATE OR REPLACE TABLE, or IF NOT EXISTS)")
    if plan.how == "replace" and not exists:
        raise SinkError(f"spark.sql: REPLACE TABLE {shown} … AS SELECT: table {shown} cannot be "
                        "replaced as it does not exist; use CREATE OR REPLACE TABLE to create "
                        "it")
    frame = spark.sql(plan.query)  # through this hook: Delta/Iceberg references in it are read
    managed = not plan.by_path and plan.location is None
    operation = record(plan.operation, {
        "isManaged": "true" if managed else "false", "description": None,
        "partitionBy": json.dumps(list(plan.partition_by)), "properties": "{}"})
    options = {"overwriteSchema": "true"} if exists else {}
    save_delta(frame, path, mode="overwrite" if exists else "errorifexists",
               partition_by=list(plan.partition_by), options=options, operation=operation,
               replace_partitioning=True)
    if not plan.by_path:
        remember_name(plan.name, path)
    return _empty(spark)


def _serve(spark: SparkSession, original: Callable[..., DataFrame], sql: str
           ) -> DataFrame | None:
    """The statement's result when lakemark serves it, else None (Spark's own)."""
    from ..planning.sql_forms import CreateAs, DeltaDml, DeltaInsert, History, plan_sql
    from ._register import register

    plan = plan_sql(sql, iceberg_catalogs=_iceberg_catalogs(spark, sql),
                    delta_names=_delta_names(), view_prefix=f"__lakemark_{uuid.uuid4().hex[:8]}")
    if plan is None:
        return None
    delta = isinstance(plan, (History, CreateAs, DeltaDml, DeltaInsert)) or \
        any(r.kind == "delta" for r in plan.refs)
    if delta and not register(spark):
        return None  # Delta's jars serve it
    if isinstance(plan, History):
        return _history(spark, plan)
    if isinstance(plan, CreateAs):
        return _create_as(spark, plan)
    if isinstance(plan, DeltaDml):
        return _dml(spark, plan)
    if isinstance(plan, DeltaInsert):
        return _insert(spark, plan)
    return _query(spark, original, plan)


def install_sql() -> None:
    """Wrap ``SparkSession.sql`` once per process (module docstring)."""
    global _installed
    if _installed:
        return
    from pyspark.sql import SparkSession

    original = SparkSession.sql

    def sql(self: Any, sqlQuery: str, args: Any = None, **kwargs: Any) -> DataFrame:  # noqa: N803
        if args is None and not kwargs:  # parameterised/formatted queries: Spark's own
            served = _serve(self, original, sqlQuery)
            if served is not None:
                return served
        return original(self, sqlQuery, args, **kwargs)

    sql.__name__ = original.__name__
    sql.__doc__ = original.__doc__
    SparkSession.sql = sql  # type: ignore[method-assign]
    _installed = True
