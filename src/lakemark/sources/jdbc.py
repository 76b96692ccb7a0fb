"""Incremental JDBC sources: only the rows whose bookmark key lies beyond the last run's.

A run of a tracked JDBC source (one with a ``ctx``):

1. resolves its bookmark keys: the given ``keys`` (Glue's ``jobBookmarkKeys``, matched to the
   table's columns case-insensitively), else the table's primary key, as in Glue — with a
   warning when the database does not show it is sequential (one integer column fed by an
   identity, a sequence or auto-increment); a table without one is refused, asking for keys;
2. asks the database for the current extreme key (largest for ``asc``, smallest for ``desc``)
   and pins it as the run's bound — or, for a retry of a failed attempt that started from the
   same state, reuses the bound that attempt pinned, so a retried run reads the same range;
3. plans the key range with :func:`lakemark.planning.jdbc.plan_jdbc` and records it in the
   run's manifest *before* reading (the state element commits with the run);
4. reads ``SELECT * FROM table WHERE <range>`` through Spark's JDBC reader, split into
   ``hashpartitions`` tasks by ``hashfield`` or ``hashexpression`` when given.

The SQL is built by :mod:`lakemark.sources.jdbc_sql` (quoted identifiers, strictly rendered
values; Spark's reader cannot bind parameters). Passwords go to Spark's reader only; the
manifest, the state and the logs get the URL with credentials removed.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..session.jdbc_drivers import (DRIVER_JARS, driver_jars, is_missing_driver,
                                     missing_driver_message)
from ..errors import ConfigError, EnvironmentProblem, SourceError
from ..planning.jdbc import (
    JDBC_STATE_KIND,
    JdbcKeys,
    JdbcPlan,
    JdbcState,
    KeyRange,
    decode_value,
    plan_jdbc,
)
from ..redaction import remember_secret
from .._fault import fault_point
from ._host import SourceHost
from ..state.manifest import SourceManifest
from .jdbc_sql import (
    dialect_of,
    not_null,
    quote_identifier,
    quote_table,
    redact_url,
    render_literal,
    render_predicate,
    split_table_name,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


__all__ = ["DRIVER_JARS", "JdbcSource", "driver_jars", "is_missing_driver", "read_jdbc"]

log = logging.getLogger("lakemark")

_DRIVER_BY_PREFIX = {
    "jdbc:postgresql:": "postgresql", "jdbc:redshift:": "postgresql",
    "jdbc:mariadb:": "mariadb", "jdbc:mysql:": "mariadb",
}

MODES = ("new", "updated")
DEFAULT_HASH_PARTITIONS = 7  # Glue's default


@dataclass(frozen=True)
class JdbcSource:
    """A JDBC table to read incrementally (Glue's JDBC connection options, validated)."""

    url: str
    dbtable: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    driver: str | None = None
    keys: tuple[str, ...] | None = None
    order: str = "asc"
    mode: str = "new"
    fetchsize: int | None = None
    hashfield: str | None = None
    hashexpression: str | None = None
    hashpartitions: int | None = None

    def __post_init__(self) -> None:
        remember_secret(self.password)  # removed from every later message, log and record
        if not isinstance(self.url, str) or not self.url.startswith("jdbc:"):
            raise ConfigError(f"url: a JDBC URL starts with 'jdbc:', got "
                              f"{redact_url(str(self.url))!r}")
        split_table_name(self.dbtable, self.dialect)
        if self.keys is not None:
            JdbcKeys(tuple(self.keys), self.order)
        elif self.order not in ("asc", "desc"):
            raise ConfigError(f"jobBookmarkKeysSortOrder must be 'asc' or 'desc', got "
                              f"{self.order!r}")
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.mode == "updated" and not self.keys:
            raise ConfigError(
                "updated-rows mode needs an explicit cursor in jobBookmarkKeys, e.g. "
                "['updated_at', 'id']"
            )
        for name, value in (("fetchsize", self.fetchsize), ("hashpartitions", self.hashpartitions)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.hashfield and self.hashexpression:
            raise ConfigError("give hashfield or hashexpression, not both")
        if self.hashpartitions is not None and not (self.hashfield or self.hashexpression):
            raise ConfigError("hashpartitions needs hashfield or hashexpression")

    def __repr__(self) -> str:  # never the password, nor one inside the URL
        return (f"JdbcSource({self.display!r}, keys={self.keys!r}, order={self.order!r}, "
                f"mode={self.mode!r})")

    @property
    def dialect(self) -> str:
        return dialect_of(self.url)

    @property
    def driver_class(self) -> str | None:
        if self.driver:
            return self.driver
        for prefix, name in _DRIVER_BY_PREFIX.items():
            if self.url.lower().startswith(prefix):
                return DRIVER_JARS[name][0]
        return None

    @property
    def display(self) -> str:
        """URL (credentials removed) and table, for manifests and messages."""
        return f"{redact_url(self.url)} {self.dbtable}"

    def spark_options(self) -> dict[str, str]:
        out = spark_url_options(self.url)
        if self.user:
            out["user"] = self.user
        if self.password:
            out["password"] = self.password
        if self.driver_class:
            out["driver"] = self.driver_class
        if self.fetchsize:
            out["fetchsize"] = str(self.fetchsize)
        return out


def spark_url_options(url: str) -> dict[str, str]:
    """Spark JDBC options that carry ``url`` so Spark talks the database's SQL dialect.

    Spark picks its dialect by URL prefix and knows MySQL and MariaDB only as ``jdbc:mysql:``;
    under its generic dialect the column names it selects are double-quoted, which MySQL reads
    as string literals. A ``jdbc:mariadb:`` URL is therefore handed to Spark in the MySQL
    spelling, which the MariaDB driver accepts when asked to (``permitMysqlScheme``).
    """
    if url.lower().startswith("jdbc:mariadb:"):
        return {"url": "jdbc:mysql:" + url[len("jdbc:mariadb:"):], "permitMysqlScheme": "true"}
    return {"url": url}


# -- talking to the database through Spark -------------------------------------------------
def _scrub(text: str, source: JdbcSource) -> str:
    if source.password:  # also when shorter than what remember_secret keeps
        text = text.replace(source.password, "***")
    return redact_url(text)


def _load(spark: SparkSession, source: JdbcSource, *, dbtable: str | None = None,
          query: str | None = None, predicates: Sequence[str] | None = None,
          extra: Mapping[str, str] | None = None) -> DataFrame:
    """Spark's JDBC reader; Java/Py4J errors become lakemark errors (password scrubbed)."""
    options = {**source.spark_options(), **(extra or {})}
    try:
        if predicates:
            assert dbtable is not None
            return spark.read.jdbc(options["url"], dbtable, predicates=list(predicates),
                                   properties=options)
        reader = spark.read.format("jdbc").options(**options)
        if query is not None:
            reader = reader.option("query", query)
        else:
            reader = reader.option("dbtable", dbtable)
        return reader.load()
    except Exception as exc:  # Py4JJavaError, AnalysisException, IllegalArgumentException …
        raise _converted(exc, source) from None


def _converted(exc: BaseException, source: JdbcSource) -> Exception:
    text = _scrub(str(exc), source)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    if is_missing_driver(text):
        return EnvironmentProblem(missing_driver_message(source.driver_class,
                                                         redact_url(source.url)))
    return SourceError(f"JDBC source {source.display}: {first[:1000]}")


def _collect(df: DataFrame, source: JdbcSource) -> list[Any]:
    try:
        return df.collect()
    except Exception as exc:
        raise _converted(exc, source) from None


def table_schema(spark: SparkSession, source: JdbcSource) -> StructType:
    """The table's columns as Spark sees them (Spark asks ``SELECT * … WHERE 1=0``)."""
    return _load(spark, source, dbtable=quote_table(source.dbtable, source.dialect)).schema


_KEY_TYPES = ("ByteType", "ShortType", "IntegerType", "LongType", "DecimalType", "FloatType",
              "DoubleType", "StringType", "VarcharType", "CharType", "DateType", "TimestampType",
              "TimestampNTZType")


def resolve_keys(schema: StructType, columns: Sequence[str]) -> tuple[str, ...]:
    """The table's own spelling of each key column; ConfigError naming a missing/unusable one."""
    by_lower: dict[str, str] = {}
    for f in schema.fields:
        by_lower.setdefault(f.name.lower(), f.name)
    exact = {f.name: f for f in schema.fields}
    out = []
    for c in columns:
        name = c if c in exact else by_lower.get(c.lower())
        if name is None:
            raise ConfigError(
                f"jobBookmarkKeys: column {c!r} is not in the table (it has: "
                + ", ".join(f.name for f in schema.fields) + ")"
            )
        kind = type(exact[name].dataType).__name__
        if kind not in _KEY_TYPES:
            raise ConfigError(
                f"jobBookmarkKeys: column {name!r} is of type "
                f"{exact[name].dataType.simpleString()}; "
                "a bookmark key must be a number, string, date or timestamp"
            )
        out.append(name)
    return tuple(out)


def primary_key(spark: SparkSession, source: JdbcSource) -> tuple[tuple[str, ...], bool]:
    """The table's primary key columns and whether it is confirmed sequential.

    Sequential means: one integer column whose values the database generates in increasing
    order (PostgreSQL identity or ``nextval`` default; MySQL/MariaDB ``auto_increment``).
    Other databases: ``((), False)`` — give the keys.
    """
    dialect = source.dialect
    parts = split_table_name(source.dbtable, dialect)
    table = render_literal(parts[-1], dialect) if dialect in ("postgresql", "mysql") else ""
    if dialect == "postgresql":
        schema = render_literal(parts[-2], dialect) if len(parts) > 1 else "current_schema()"
        extra = "c.column_default, c.is_identity"
    elif dialect == "mysql":
        schema = render_literal(parts[-2], dialect) if len(parts) > 1 else "DATABASE()"
        extra = "c.column_default, c.extra"
    else:
        return (), False
    query = (
        f"SELECT kcu.column_name AS column_name, c.data_type AS data_type, {extra} "
        "FROM information_schema.table_constraints tc "
        "JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
        "AND kcu.table_schema = tc.table_schema AND kcu.table_name = tc.table_name "
        "JOIN information_schema.columns c ON c.table_schema = kcu.table_schema "
        "AND c.table_name = kcu.table_name AND c.column_name = kcu.column_name "
        f"WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = {schema} "
        f"AND tc.table_name = {table} ORDER BY kcu.ordinal_position"
    )
    rows = _collect(_load(spark, source, query=query), source)
    columns = tuple(str(r[0]) for r in rows)
    if len(rows) != 1:
        return columns, False
    data_type = str(rows[0][1]).lower()
    default, generated = str(rows[0][2] or ""), str(rows[0][3] or "")
    integer = data_type in ("smallint", "integer", "bigint", "int", "tinyint", "mediumint")
    if dialect == "postgresql":
        seq = generated.upper() == "YES" or default.startswith("nextval(")
    else:
        seq = "auto_increment" in generated.lower()
    return columns, integer and seq


def extreme_key(spark: SparkSession, source: JdbcSource, columns: Sequence[str],
                order: str) -> tuple[Any, ...] | None:
    """The largest (``asc``) or smallest (``desc``) composite key now; None for no rows.

    Rows with a NULL key column are never taken (they have no place in the order).
    """
    dialect = source.dialect
    direction = "DESC" if order == "asc" else "ASC"
    cols = ", ".join(quote_identifier(c, dialect) for c in columns)
    ordering = ", ".join(f"{quote_identifier(c, dialect)} {direction}" for c in columns)
    where = not_null(columns, dialect)
    table = quote_table(source.dbtable, dialect)
    if dialect == "sqlserver":
        query = f"SELECT TOP 1 {cols} FROM {table} WHERE {where} ORDER BY {ordering}"
    elif dialect == "oracle":
        query = (f"SELECT {cols} FROM {table} WHERE {where} ORDER BY {ordering} "
                 "FETCH FIRST 1 ROWS ONLY")
    else:
        query = f"SELECT {cols} FROM {table} WHERE {where} ORDER BY {ordering} LIMIT 1"
    # Timestamps without a zone come back exactly as stored (no session-zone shift).
    df = _load(spark, source, query=query, extra={"preferTimestampNTZ": "true"})
    zoned = {f.name for f in df.schema.fields if type(f.dataType).__name__ == "TimestampType"}
    rows = _collect(df, source)
    if not rows:
        return None
    values = []
    for name, value in zip(df.columns, rows[0]):
        if name in zoned and isinstance(value, _dt.datetime) and value.tzinfo is None:
            # PySpark gives zoned timestamps as naive local time: make them exact instants.
            value = value.astimezone(_dt.UTC)
        values.append(value)
    return tuple(values)


def _hash_predicates(source: JdbcSource, columns: Mapping[str, str]) -> list[str]:
    """One WHERE condition per partition that splits the rows exactly (each row in one)."""
    n = source.hashpartitions or DEFAULT_HASH_PARTITIONS
    dialect = source.dialect
    if source.hashexpression:
        # The user's own SQL expression (as in Glue): trusted like the query of a script.
        expr = f"({source.hashexpression})"
    else:
        assert source.hashfield is not None
        column = quote_identifier(columns.get(source.hashfield, source.hashfield), dialect)
        if dialect == "postgresql":
            expr = f"hashtext(CAST({column} AS TEXT))"
        elif dialect == "mysql":
            expr = f"CRC32({column})"
        else:
            raise ConfigError(
                "hashfield is supported for PostgreSQL and MySQL/MariaDB; use hashexpression "
                "(an integer SQL expression) for this database"
            )
    if dialect == "sqlserver":
        bucket = f"((({expr}) % {n}) + {n}) % {n}"
    else:
        bucket = f"MOD(MOD({expr}, {n}) + {n}, {n})"
    preds = [f"{bucket} = {i}" for i in range(n)]
    preds[0] = f"({preds[0]} OR ({expr}) IS NULL)"
    return preds


# -- the run -----------------------------------------------------------------------------
def _replay_range(job: SourceHost, ctx: str, keys: JdbcKeys) -> KeyRange:
    """Glue's job-bookmark-from/-to: the union of the ranges the runs in between read."""
    assert job.from_run_id is not None and job.to_run_id is not None
    after: Any = None
    through: Any = None
    first = True
    for run in job.store.runs_between(job.name, job.from_run_id, job.to_run_id):
        for inputs in job.store.run_inputs(run.run_id):
            plan = inputs.manifest
            rng = plan.range if inputs.ctx == ctx and isinstance(plan, SourceManifest) else None
            if not rng or rng.get("empty"):
                continue
            if first:
                after = rng.get("after")
                first = False
            through = rng.get("through")
    if first:
        return KeyRange(keys, None, None, empty=True)
    def decode(v: Any) -> Any:
        return None if v is None else tuple(decode_value(x) for x in v)

    return KeyRange(keys, decode(after), decode(through))


def _retry_bound(job: SourceHost, ctx: str, previous: Mapping[str, Any] | None,
                 keys: JdbcKeys) -> tuple[Any, ...] | None:
    """The bound a failed earlier attempt of this run pinned, when it started from the same
    state with the same keys: a retried run reads the same range (rows inserted since wait
    for the next run). None when there is no such attempt."""
    record = job.run
    if record.attempt == 0:
        return None
    for earlier in reversed(job.store.list_runs(job.name)):
        if earlier.run != record.run or earlier.run_id == record.run_id \
                or earlier.status != "FAILED":
            continue
        for inputs in job.store.run_inputs(earlier.run_id):
            plan = inputs.manifest
            rng = plan.range if inputs.ctx == ctx and isinstance(plan, SourceManifest) else None
            if not rng or rng.get("empty") or rng.get("through") is None:
                continue
            same_keys = rng.get("keys") == list(keys.columns) and rng.get("order") == keys.order
            assert isinstance(plan, SourceManifest)
            if same_keys and plan.previous_state == (dict(previous) if previous else None):
                return tuple(decode_value(v) for v in rng["through"])
        return None  # only the latest failed attempt counts
    return None


def read_jdbc(job: SourceHost, source: JdbcSource, *, ctx: str | None = None) -> DataFrame:
    """A DataFrame of the rows of ``source`` that this run of ``job`` should process.

    See the module documentation. With bookmarks disabled, or without a ``ctx``, the whole
    table is read and no state is kept (as in Glue).
    """
    spark = job.spark
    dialect = source.dialect
    schema = table_schema(spark, source)
    columns = {f.name: f.name for f in schema.fields}
    previous = job.state_of(ctx) if ctx is not None else None
    tracked = ctx is not None and job.bookmark_option != "disable"
    key_source = "jobBookmarkKeys"
    plan: JdbcPlan | None = None
    if tracked:
        if source.keys:
            key_cols = resolve_keys(schema, source.keys)
        else:
            pk, sequential = primary_key(spark, source)
            if not pk:
                raise ConfigError(
                    f"JDBC source {source.dbtable}: no primary key was found; give the bookmark "
                    "keys with jobBookmarkKeys (and jobBookmarkKeysSortOrder) — columns whose "
                    "values strictly increase (or decrease) for new rows"
                )
            key_cols = resolve_keys(schema, pk)
            key_source = "primary key"
            if sequential:
                log.info("JDBC source %s: using its sequential primary key %s as bookmark key",
                         source.dbtable, ", ".join(key_cols))
            else:
                # As Glue: the primary key is used; it only finds new rows if new keys sort
                # after every earlier one, which lakemark cannot confirm for this key.
                log.warning(
                    "JDBC source %s: using its primary key %s as bookmark key, but it is not "
                    "confirmed sequential (one integer column fed by an identity, sequence or "
                    "auto-increment): rows whose key sorts before the last one read will be "
                    "missed. Give jobBookmarkKeys to choose the key explicitly.",
                    source.dbtable, ", ".join(key_cols))
                key_source = "primary key (not confirmed sequential)"
        keys = JdbcKeys(key_cols, source.order)
        prev_state = JdbcState.from_json(previous) if previous else None
        if job.from_run_id is not None and ctx is not None:
            rng = _replay_range(job, ctx, keys)
            plan = JdbcPlan(rng, prev_state or JdbcState(keys))
        else:
            bound = _retry_bound(job, ctx, previous, keys) if ctx is not None else None
            if bound is None:
                bound = extreme_key(spark, source, key_cols, keys.order)
            plan = plan_jdbc(prev_state, keys, bound)
        rng = plan.range
    else:
        if ctx is None and job.bookmark_option != "disable":
            log.warning(
                "JDBC source %s has no transformation_ctx: bookmarks do not track it, so every "
                "run reads all of it (give it a ctx to process only new rows)", source.dbtable,
            )
        rng = None
    where = "1=1" if rng is None else render_predicate(rng.predicate(), dialect, columns)
    table_sql = f"(SELECT * FROM {quote_table(source.dbtable, dialect)} WHERE {where}) lakemark_src"
    partitions = _hash_predicates(source, columns) if (source.hashfield or source.hashexpression) \
        else None
    recorded = SourceManifest(
        kind=JDBC_STATE_KIND,
        source=source.display,
        bookmark_option=job.bookmark_option,
        range=rng.to_json() if rng is not None else None,
        previous_state=dict(previous) if previous else None,
        next_state=plan.next_state.to_json() if plan is not None else None,
        planned_files=0,
        extra={"url": redact_url(source.url), "dbtable": source.dbtable, "mode": source.mode,
               "key_source": key_source if tracked else None,
               "partitions": len(partitions) if partitions else 1},
        present=frozenset({"range", "previous_state", "next_state"}),  # null when none
    )
    next_state = None
    if plan is not None and job.from_run_id is None:
        next_state = {**plan.next_state.to_json(), "source": source.display}
    fault_point("after-plan")
    job.track_source(ctx, recorded.to_json(), [], next_state)
    fault_point("after-plan-recorded")
    df = _load(spark, source, dbtable=table_sql, predicates=partitions)
    fault_point("mid-read")
    return df
