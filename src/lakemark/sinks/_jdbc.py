"""Exactly-once appends to a database table over JDBC (PostgreSQL, MySQL/MariaDB).

Spark's JDBC writer commits each task's rows on its own, so a run killed after the write and
before its commit, then retried, appends the rows twice. Here the rows and the run's token
commit in **one database transaction** instead:

1. the token table ``_lakemark_commits`` beside the target (same schema) is read: a token
   ``(app_id, version)`` already recorded at ``version`` or later means this write committed
   before (a retry) — nothing is written, the write is reported skipped;
2. Spark writes the rows into a staging table named for the token
   (``_lakemark_stage_<digest>``, created empty like the target; one left by a killed attempt
   is dropped first);
3. one driver-side transaction records the token (an upsert that changes nothing when a
   concurrent writer recorded it first — then this one rolls back and is skipped), moves the
   rows from the staging table into the target, and commits; the staging table is dropped
   (in the transaction on PostgreSQL; just after it on MySQL, whose DDL commits implicitly).

The driver-side connection uses the Python driver of the engine (``psycopg``, ``pymysql``:
the ``postgres`` / ``mysql`` extras). Identifiers are quoted, values bound as parameters.
Engines without such a driver here (SQL Server, Oracle, Redshift, others) are appended to by
Spark alone and are **not** exactly-once: :func:`write_jdbc_table` logs one warning line
saying so (docs/exactly-once.md).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .._fault import fault_point
from ..session.jdbc_drivers import is_missing_driver, missing_driver_message
from ..errors import ConfigError, EnvironmentProblem, SinkError
from ..redaction import redact_url
from ._model import IdempotencyToken, WriteResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["COMMITS_TABLE", "JdbcTarget", "jdbc_dialect", "staging_name", "write_jdbc_table"]

log = logging.getLogger("lakemark")

#: The token table created beside a JDBC target.
COMMITS_TABLE = "_lakemark_commits"

_EXTRAS = {"postgresql": ("psycopg", "postgres"), "mysql": ("pymysql", "mysql")}


@dataclass(frozen=True)
class JdbcTarget:
    """A database table to append to: the Spark JDBC options that reach it (``url``,
    ``dbtable``, ``user``, ``password``, ``driver`` and the like)."""

    options: Mapping[str, str]

    @property
    def url(self) -> str:
        """The URL as the user gave it (``jdbc:mariadb:`` kept: Spark's copy may differ)."""
        return str(self.options.get("lakemark.url") or self.options["url"])

    @property
    def dbtable(self) -> str:
        return str(self.options["dbtable"])

    @property
    def display(self) -> str:
        """``<url without credentials>#<table>``: what manifests and messages name."""
        return f"{redact_url(self.url).split('?', 1)[0]}#{self.dbtable}"

    def spark_options(self, dbtable: str | None = None) -> dict[str, str]:
        out = {k: v for k, v in self.options.items() if not k.startswith("lakemark.")}
        if dbtable is not None:
            out["dbtable"] = dbtable
        return out


def jdbc_dialect(url: str) -> str | None:
    """``postgresql`` or ``mysql`` (MySQL and MariaDB) when the URL's engine has an
    exactly-once sink here; None otherwise."""
    lowered = url.lower()
    if lowered.startswith("jdbc:postgresql:"):
        return "postgresql"
    if lowered.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return "mysql"
    return None


def _split_table(dbtable: str) -> tuple[str | None, str]:
    """``schema.table`` (or ``table``) as its parts, surrounding quotes removed."""
    parts: list[str] = []
    current, quote, i, text = "", "", 0, dbtable.strip()
    while i < len(text):
        char = text[i]
        if quote:
            if char == quote and text[i + 1:i + 2] == quote:  # a doubled quote: one quote
                current += char
                i += 1
            elif char == quote:
                quote = ""
            else:
                current += char
        elif char in "\"`":
            quote = char
        elif char == ".":
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    parts.append(current)
    if quote or not all(parts) or len(parts) > 2:
        raise ConfigError(f"JDBC sink option dbtable {dbtable!r} must be a table name "
                          "(table or schema.table)")
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def staging_name(target: str, token: IdempotencyToken) -> str:
    """The staging table of one write: named for the target and the token, so a retry of
    the same write finds (and drops) what a killed attempt left."""
    digest = hashlib.sha256(f"{target}\x00{token.app_id}\x00{token.version}".encode())
    return f"_lakemark_stage_{digest.hexdigest()[:16]}"


class _Sql:
    """Quoting and statements of one dialect (values are always bound, never pasted)."""

    def __init__(self, dialect: str, schema: str | None) -> None:
        self.dialect = dialect
        self.schema = schema

    def ident(self, name: str) -> str:
        q = '"' if self.dialect == "postgresql" else "`"
        return q + name.replace(q, q + q) + q

    def table(self, name: str) -> str:
        return (f"{self.ident(self.schema)}." if self.schema else "") + self.ident(name)

    def create_commits(self) -> str:
        text = "varchar(255)" if self.dialect == "mysql" else "text"
        return (f"CREATE TABLE IF NOT EXISTS {self.table(COMMITS_TABLE)} ("
                f"target_table {text} NOT NULL, app_id {text} NOT NULL, "
                "version bigint NOT NULL, run_id varchar(64), rows_written bigint, "
                "committed_at timestamp NULL DEFAULT CURRENT_TIMESTAMP, "
                "PRIMARY KEY (target_table, app_id))")

    def recorded(self) -> str:
        return (f"SELECT version FROM {self.table(COMMITS_TABLE)} "
                "WHERE target_table = %s AND app_id = %s")

    def record_token(self) -> str:
        """An upsert that changes nothing when the token is already at this version or later
        (rowcount 0), so of two writers of one token only the first commits."""
        commits = self.table(COMMITS_TABLE)
        if self.dialect == "postgresql":
            return (f"INSERT INTO {commits} AS c (target_table, app_id, version, run_id) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (target_table, app_id) DO UPDATE "
                    "SET version = EXCLUDED.version, run_id = EXCLUDED.run_id, "
                    "committed_at = CURRENT_TIMESTAMP WHERE c.version < EXCLUDED.version")
        return (f"INSERT INTO {commits} (target_table, app_id, version, run_id) "
                "VALUES (%s, %s, %s, %s) ON DUPLICATE KEY UPDATE "
                "run_id = IF(version < VALUES(version), VALUES(run_id), run_id), "
                "committed_at = IF(version < VALUES(version), CURRENT_TIMESTAMP, committed_at), "
                "version = IF(version < VALUES(version), VALUES(version), version)")

    def set_rows(self) -> str:
        return (f"UPDATE {self.table(COMMITS_TABLE)} SET rows_written = %s "
                "WHERE target_table = %s AND app_id = %s")

    def create_like(self, staging: str, target: str) -> str:
        if self.dialect == "postgresql":
            return (f"CREATE TABLE {self.table(staging)} "
                    f"(LIKE {self.table(target)} INCLUDING DEFAULTS)")
        return f"CREATE TABLE {self.table(staging)} LIKE {self.table(target)}"

    def drop(self, name: str) -> str:
        return f"DROP TABLE IF EXISTS {self.table(name)}"

    def exists(self, name: str) -> str:
        return f"SELECT 1 FROM {self.table(name)} WHERE 1 = 0"

    def move(self, staging: str, target: str, columns: list[str]) -> str:
        cols = ", ".join(self.ident(c) for c in columns)
        return (f"INSERT INTO {self.table(target)} ({cols}) "
                f"SELECT {cols} FROM {self.table(staging)}")


def _connect_args(target: JdbcTarget) -> dict[str, Any]:
    """Host, port, database, user and password of the target's URL and options."""
    url = target.url
    rest = url.split(":", 2)[2] if url.count(":") >= 2 else ""
    parts = urlsplit(rest if rest.startswith("//") else "//" + rest.lstrip("/"))
    params = dict(parse_qsl(parts.query))
    args: dict[str, Any] = {
        "host": parts.hostname or "localhost",
        "dbname": unquote(parts.path.lstrip("/")) or None,
        "user": target.options.get("user") or params.get("user") or parts.username,
        "password": target.options.get("password") or params.get("password")
        or parts.password,
    }
    if parts.port:
        args["port"] = parts.port
    return args


@contextmanager
def _connection(dialect: str, target: JdbcTarget) -> Iterator[Any]:
    module, extra = _EXTRAS[dialect]
    args = _connect_args(target)
    try:
        if dialect == "postgresql":
            import psycopg

            conn: Any = psycopg.connect(
                host=args["host"], port=args.get("port", 5432), dbname=args["dbname"],
                user=args["user"], password=args["password"], connect_timeout=30)
        else:
            import pymysql

            conn = pymysql.connect(
                host=args["host"], port=args.get("port", 3306), database=args["dbname"],
                user=args["user"], password=args["password"] or "", charset="utf8mb4",
                connect_timeout=30, autocommit=False)
    except ImportError:
        raise ConfigError(f"the exactly-once JDBC sink for {target.display} needs the Python "
                          f"driver {module!r}: pip install 'lakemark[{extra}]'") from None
    except Exception as exc:
        raise SinkError(f"JDBC sink {target.display}: cannot connect: "
                        f"{_scrub(str(exc), target)}", target=target.display) from None
    try:
        yield conn
    finally:
        conn.close()


def _scrub(text: str, target: JdbcTarget) -> str:
    password = target.options.get("password")
    if password:
        text = text.replace(password, "***")
    return redact_url(text)


def _execute(conn: Any, statement: str, params: Any = None) -> Any:
    cur = conn.cursor()
    cur.execute(statement, params)
    return cur


def _table_exists(conn: Any, sql: _Sql, name: str) -> bool:
    try:
        _execute(conn, sql.exists(name))
        conn.commit()
        return True
    except Exception:  # noqa: BLE001 - "no such table" in each driver's own exception type
        conn.rollback()
        return False


def write_jdbc_table(df: DataFrame, target: JdbcTarget, token: IdempotencyToken | None,
                     *, run_id: str | None = None,
                     before_commit: Callable[[], None] | None = None) -> WriteResult:
    """Append ``df`` to ``target`` exactly once for ``token`` (see the module documentation).

    Without a token (no run of a job: nothing to be idempotent about) or for an engine this
    sink has no transaction for, Spark appends alone and one warning line says the write is
    not exactly-once. ``before_commit`` is called inside the transaction just before it
    commits (the job checks that it still holds its lease there)."""
    dialect = jdbc_dialect(target.url)
    if token is None or dialect is None:
        why = ("it is not written by a run of a job with bookmarks (no run token)"
               if token is None else "lakemark has no transactional commit for this engine")
        log.warning("JDBC sink %s is not exactly-once: %s; a retried run may append its "
                    "rows again (docs/exactly-once.md)", target.display, why)
        _spark_append(df, target, target.dbtable)
        return WriteResult(target.display, "jdbc", 0, 0, 0)  # Spark counts no rows
    schema, table = _split_table(target.dbtable)
    sql = _Sql(dialect, schema)
    key = (target.dbtable, token.app_id)
    with _connection(dialect, target) as conn:
        try:
            _execute(conn, sql.create_commits())
            conn.commit()
            stage = staging_name(target.display, token)
            found = _execute(conn, sql.recorded(), key).fetchone()
            conn.commit()
            if found is not None and int(found[0]) >= token.version:
                _execute(conn, sql.drop(stage))  # a killed attempt may have left it
                conn.commit()
                return WriteResult(target.display, "jdbc", 0, 0, 0, skipped=True)
            if not _table_exists(conn, sql, table):  # Spark creates it, as its writer would
                _spark_append(df.limit(0), target, target.dbtable)
            _execute(conn, sql.drop(stage))
            _execute(conn, sql.create_like(stage, table))
            conn.commit()
        except (ConfigError, SinkError):
            raise
        except Exception as exc:
            raise SinkError(f"JDBC sink {target.display}: {_scrub(str(exc), target)}",
                            target=target.display) from None
        staged = f"{sql.ident(schema)}.{sql.ident(stage)}" if schema else sql.ident(stage)
        _spark_append(df, target, staged)
        fault_point("mid-write")
        try:
            recorded = _execute(conn, sql.record_token(),
                                (*key, token.version, run_id)).rowcount
            rows = 0
            if recorded:
                rows = int(_execute(conn, sql.move(stage, table, list(df.columns))).rowcount)
                _execute(conn, sql.set_rows(), (rows, *key))
                if dialect == "postgresql":  # transactional DDL: gone with the commit
                    _execute(conn, sql.drop(stage))
                if before_commit is not None:
                    before_commit()
                conn.commit()
            else:  # a concurrent writer of the same token committed first
                conn.rollback()
            if dialect != "postgresql" or not recorded:
                _execute(conn, sql.drop(stage))
                conn.commit()
        except Exception as exc:
            conn.rollback()
            _drop_quietly(conn, sql, stage)  # nothing of this write stays behind
            if isinstance(exc, (ConfigError, SinkError)) or not _is_driver_error(exc):
                raise
            raise SinkError(f"JDBC sink {target.display}: {_scrub(str(exc), target)}",
                            target=target.display) from None
    return WriteResult(target.display, "jdbc", rows, 0, 0, skipped=not recorded)


def _drop_quietly(conn: Any, sql: _Sql, stage: str) -> None:
    try:
        _execute(conn, sql.drop(stage))
        conn.commit()
    except Exception:  # noqa: BLE001 - the connection may be gone; the next attempt drops it
        pass


def _is_driver_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("psycopg", "pymysql")


def _spark_append(df: DataFrame, target: JdbcTarget, dbtable: str) -> None:
    try:
        df.write.format("jdbc").options(**target.spark_options(dbtable)).mode("append").save()
    except Exception as exc:
        from ..errors import LakemarkError

        if isinstance(exc, LakemarkError):
            raise
        text = _scrub(str(exc), target)
        if is_missing_driver(text):
            raise EnvironmentProblem(missing_driver_message(
                target.options.get("driver"), redact_url(target.url))) from None
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        # Py4J's first line names only the call; the Java exception's is the cause
        cause = next((line.lstrip(": ") for line in lines if "Exception:" in line), None)
        raise SinkError(f"JDBC sink {target.display}: writing failed: "
                        f"{(cause or (lines[0] if lines else type(exc).__name__))[:500]}",
                        target=target.display) from None
