"""The shared state store: a schema in a PostgreSQL database (``postgresql://…``).

The same model, semantics and code as the SQLite store (the shared logic is in :mod:`._sql`),
so one behavioural test suite runs against both:

* every write is one transaction that first takes a transaction-scoped **advisory lock** for
  the store's schema (``pg_advisory_xact_lock``), so writers serialise exactly as SQLite's
  ``BEGIN IMMEDIATE`` makes them — two concurrent ``begin_run`` calls cannot both win the
  lease, and the commit's compare-and-swap on ``base_version`` sees every earlier write; a
  write waits for the lock at most ``busy_timeout_s`` (``lock_timeout``, 30 s as SQLite's busy
  timeout), then fails naming the store as locked instead of hanging behind a stuck session;
* the lease is a row of ``leases`` with a heartbeat; a holder on the same host whose process
  is gone, or whose heartbeat is older than the lease timeout, is taken over;
* the schema is versioned in ``meta``; a store written by a newer lakemark is refused.

URL: ``postgresql://[user[:password]@]host[:port]/database[?schema=NAME&…]``. ``schema``
(default ``lakemark``) is created if missing; the other query parameters go to libpq. The
password is never part of :attr:`PostgresStore.url`, of messages or of logs.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from ..errors import ConfigError, EnvironmentProblem, StateError
from ..redaction import redact
from ._ddl import ddl
from ._faults import postgres_fault
from ._folder_commits import FOLDER_COMMITS_POSTGRES
from ._schemas import SCHEMA_TABLE_POSTGRES
from ._sql import SCHEMA_VERSION, LockedReads, OlderSchema, SqlStore

try:
    import psycopg
    from psycopg import sql as pgsql
except ImportError:  # pragma: no cover - reported when a postgresql:// URL is opened
    psycopg = None  # type: ignore[assignment]

__all__ = ["PostgresStore"]


_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


class _Qmark:
    """A psycopg connection that takes the shared store's ``?`` placeholders."""

    def __init__(self, db: Any) -> None:
        self._db = db

    def execute(self, query: Any, params: Sequence[Any] | None = None) -> Any:
        if isinstance(query, str):
            query = query.replace("?", "%s")
        return self._db.execute(query, params)

    def executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._db.cursor() as cur:
            cur.executemany(query.replace("?", "%s"), list(rows))


class PostgresStore(SqlStore):
    """A :class:`~lakemark.state.base.StateStore` in a PostgreSQL schema."""

    def __init__(self, url: str, *, clock: Callable[[], float] = time.time,
                 read_only: bool = False, busy_timeout_s: float = 30.0) -> None:
        """Connect to the store at ``url`` (see the module doc); ``busy_timeout_s``: how long a
        write waits for another session's lock before it fails as "locked"."""
        if psycopg is None:
            raise EnvironmentProblem(
                "a postgresql:// state URL needs psycopg: pip install 'lakemark[postgres]' "
                "(or 'psycopg[binary]>=3.1')"
            )
        conninfo, self.schema = self._parse(url)
        self.url = redact(url)
        self._clock = clock
        self._lock = threading.RLock()
        self._lock_timeout_ms = max(1, int(busy_timeout_s * 1000))
        try:
            self._db: psycopg.Connection[Any] = psycopg.connect(conninfo, autocommit=True,
                                                                connect_timeout=30)
            self._q = LockedReads(_Qmark(self._db), self._lock, self._fault)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc
            raise StateError(f"cannot connect to state store {self.url}: {first}") from None
        self.read_only = read_only
        try:
            if read_only:
                self._check_schema()
            else:
                self._migrate()
        except psycopg.Error as exc:
            self._db.close()
            raise postgres_fault(self.url, exc, "opening it", closed=True) from exc
        except BaseException:
            self._db.close()
            raise

    def _fault(self, exc: Exception, doing: str) -> StateError | None:
        """The StateError for a psycopg error met while ``doing`` something (None for
        another kind of error)."""
        if not isinstance(exc, psycopg.Error):
            return None
        return postgres_fault(self.url, exc, doing, closed=self._db.closed)

    @staticmethod
    def _parse(url: str) -> tuple[str, str]:
        """libpq's URI (without ``schema``) and the schema name; ConfigError for a bad URL."""
        if not isinstance(url, str) or not re.match(r"(postgresql|postgres)(\+psycopg)?://", url):
            raise ConfigError(
                f"state URL {redact(str(url))!r}: a PostgreSQL URL is "
                "postgresql://user@host:port/database[?schema=NAME]"
            )
        parts = urlsplit(url)
        params = parse_qsl(parts.query, keep_blank_values=True)
        schema = "lakemark"
        rest = []
        for key, value in params:
            if key == "schema":
                schema = value
            else:
                rest.append((key, value))
        if not _SCHEMA_NAME.match(schema):
            raise ConfigError(
                f"state URL {redact(url)!r}: schema {schema!r} must be a plain name "
                "(letters, digits, underscore)"
            )
        if not parts.path.strip("/"):
            raise ConfigError(f"state URL {redact(url)!r} names no database")
        # quote, not quote_plus: libpq reads "+" as a plus sign, so a space ("-c a=b" in
        # options) must stay %20.
        conninfo = urlunsplit(("postgresql", parts.netloc, parts.path,
                               urlencode(rest, quote_via=quote), ""))
        return conninfo, schema

    @classmethod
    def from_url(cls, url: str, *, read_only: bool = False) -> PostgresStore:
        """Open ``postgresql://user@host:port/database[?schema=NAME]`` (``read_only``: see
        :func:`lakemark.state.open_store`)."""
        return cls(url, read_only=read_only)

    # -- plumbing -------------------------------------------------------------------------
    @property
    def _where(self) -> str:
        return f"state store {self.url} (schema {self.schema})"

    @contextmanager
    def _tx(self) -> Iterator[_Qmark]:
        """One transaction holding the store's write lock (SQLite's BEGIN IMMEDIATE)."""
        db = self._db
        with self._lock:
            try:
                with db.transaction():
                    db.execute(pgsql.SQL("SET LOCAL lock_timeout = {}").format(
                        pgsql.Literal(f"{self._lock_timeout_ms}ms")))
                    db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                               (f"lakemark-state:{self.schema}",))
                    db.execute(pgsql.SQL("SET LOCAL search_path TO {}").format(
                        pgsql.Identifier(self.schema)))
                    yield _Qmark(db)
            except psycopg.Error as exc:
                raise postgres_fault(self.url, exc, "a write", closed=self._db.closed) from exc

    def _migrate(self) -> None:
        with self._tx() as db:
            db.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                pgsql.Identifier(self.schema)))
            self._create_tables(db, ddl("postgresql") + SCHEMA_TABLE_POSTGRES
                               + FOLDER_COMMITS_POSTGRES)
        # Plain statements outside a transaction (tests, reads) see the store's tables too.
        self._db.execute(pgsql.SQL("SET search_path TO {}").format(pgsql.Identifier(self.schema)))

    def _check_schema(self) -> None:
        """For read-only use: the schema must hold lakemark's tables (nothing is created)."""
        found = self._db.execute("SELECT to_regclass(%s)", (f'"{self.schema}".meta',)).fetchone()
        if found is None or found[0] is None:
            raise StateError(f"{self._where} holds no lakemark state (check --state or "
                             "LAKEMARK_STATE); nothing was created")
        self._db.execute(pgsql.SQL("SET search_path TO {}").format(pgsql.Identifier(self.schema)))
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and int(row[0]) < SCHEMA_VERSION:
            self._db.close()
            raise OlderSchema(f"{self._where} has schema version {row[0]}")
        if row is None or int(row[0]) > SCHEMA_VERSION:
            raise StateError(f"{self._where} has schema version {row[0] if row else 'missing'}; "
                             f"this lakemark reads up to {SCHEMA_VERSION}")

    def close(self) -> None:
        self._db.close()
