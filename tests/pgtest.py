"""The real PostgreSQL of the project's machines (127.0.0.1:5432, trust auth, database ``test``).

``pg_dsn()`` finds a user that can connect (postgres, then root) or returns None; tests that
need PostgreSQL call :func:`need_postgres`, which skips outside CI and fails in CI.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from collections.abc import Iterator
from typing import Any

HOST = os.environ.get("LAKEMARK_TEST_PGHOST", "127.0.0.1")
PORT = int(os.environ.get("LAKEMARK_TEST_PGPORT", "5432"))
DATABASE = os.environ.get("LAKEMARK_TEST_PGDATABASE", "test")


@functools.cache
def pg_user() -> str | None:
    """A user that can connect to the test database, or None (no server, no psycopg)."""
    try:
        import psycopg
    except ImportError:
        return None
    for user in ("postgres", "root"):
        try:
            psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user,
                            connect_timeout=5).close()
            return user
        except psycopg.Error:
            continue
    return None


def need_postgres() -> str:
    """The user to connect as; skips (fails in CI) when PostgreSQL is not reachable."""
    from conftest import need_service

    user = pg_user()
    if user is None:
        need_service(f"PostgreSQL is not reachable at {HOST}:{PORT} (database {DATABASE}, "
                     "trust auth) or psycopg is not installed")
        raise AssertionError("unreachable")
    return user


def jdbc_url() -> str:
    return f"jdbc:postgresql://{HOST}:{PORT}/{DATABASE}"


def state_url(user: str) -> str:
    return f"postgresql://{user}@{HOST}:{PORT}/{DATABASE}"


class PgSchema:
    """A throw-away schema (``<prefix><random>``) in the test database, with a helper to run
    SQL; ``close`` drops it with everything in it."""

    def __init__(self, user: str, prefix: str) -> None:
        import psycopg

        self.user = user
        self.schema = f"{prefix}{uuid.uuid4().hex[:10]}"
        self.conn = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user,
                                    autocommit=True)
        self.sql(f'CREATE SCHEMA "{self.schema}"')

    def sql(self, statement: str, params: Any = None) -> list[Any]:
        with self.conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        self.sql(f'DROP SCHEMA "{self.schema}" CASCADE')
        self.conn.close()


@contextlib.contextmanager
def store_of(backend: str, folder: Any, prefix: str) -> Iterator[Any]:
    """An empty, open state store of ``backend`` (``sqlite`` in ``folder``, or ``postgres``
    in a fresh schema named from ``prefix``), closed (and the schema dropped) afterwards."""
    from lakemark.state import open_store

    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    if backend == "postgres":
        url = state_url(need_postgres()) + f"?schema={schema}"
    else:
        url = f"sqlite:///{folder}/state.db"
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()
        if backend == "postgres":
            import psycopg

            with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=need_postgres(),
                                 autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
