"""The embedded state store: one SQLite file (or ``:memory:``) per deployment.

The bookmark, run and lease logic is shared with the PostgreSQL store (:mod:`._sql`). Every
write is one ``BEGIN IMMEDIATE`` transaction, so two processes sharing the file
serialise their writes and a crash leaves either the whole change or none of it. The schema is
versioned in the ``meta`` table; a file written by a newer lakemark is refused rather than
misread.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConfigError, StateError
from ..redaction import redact
from ._ddl import ddl
from ._faults import filesystem_problem, sqlite_fault, sqlite_not_a_database
from ._folder_commits import FOLDER_COMMITS_SQLITE
from ._schemas import SCHEMA_TABLE_SQLITE
from ._sql import SCHEMA_VERSION, LockedReads, OlderSchema, SqlStore, new_run_id  # noqa: F401 - re-exported

__all__ = ["SCHEMA_VERSION", "SQLiteStore", "new_run_id"]




class SQLiteStore(SqlStore):
    """A :class:`~lakemark.state.base.StateStore` in an SQLite database file."""

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time,
                 read_only: bool = False, busy_timeout_s: float = 30.0) -> None:
        """Open (or create) the file at ``path``; ``busy_timeout_s``: how long a statement
        waits for another process's lock before it fails as "locked"."""
        self.path = str(path)
        self._busy_s = busy_timeout_s
        self.url = f"sqlite:///{self.path}"
        self._clock = clock
        self._lock = threading.RLock()
        self.read_only = read_only and self.path != ":memory:"
        if self.read_only:
            self._open_read_only()
            return
        if self.path != ":memory:":
            file = Path(self.path)
            if file.is_dir():
                raise StateError(f"state database {self.path} is a directory, not an SQLite file")
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StateError(
                    f"cannot create the folder of state database {self.path}: {exc}") from exc
        existed = self.path == ":memory:" or Path(self.path).exists()
        try:
            self._db = sqlite3.connect(self.path, timeout=self._busy_s, isolation_level=None,
                                       check_same_thread=False)
            self._q = LockedReads(self._db, self._lock, self._fault)
        except sqlite3.Error as exc:
            raise sqlite_fault(self.url, self.path, exc, "opening it") from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(self._busy_s * 1000)}")
            if self.path != ":memory:":
                self._use_wal(self._busy_s)
                self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except (StateError, sqlite3.Error) as exc:
            self._db.close()
            if not existed:
                self._remove_empty()
            if isinstance(exc, StateError):
                raise
            raise self._open_fault(exc) from exc

    def _remove_empty(self) -> None:
        """Remove the file this open created if it stayed empty (a full disk, a read-only
        folder): a failed open leaves nothing behind."""
        file = Path(self.path)
        try:
            if file.stat().st_size == 0:
                file.unlink()
        except OSError:
            pass

    def _fault(self, exc: Exception, doing: str) -> StateError | None:
        """The StateError for an sqlite3 error met while ``doing`` something (None for
        another kind of error)."""
        if not isinstance(exc, sqlite3.Error):
            return None
        return sqlite_fault(self.url, self.path, exc, doing)

    def _open_fault(self, exc: sqlite3.Error) -> StateError:
        """Why opening the file failed: "not a lakemark state database" only when SQLite says
        so; a read-only or full file system, a lock or an I/O error is named as such."""
        if sqlite_not_a_database(exc):
            return StateError(
                f"{self.path} is not a lakemark state database ({exc}); point --state or "
                "LAKEMARK_STATE at another file"
            )
        fault = self._fault(exc, "opening it")
        assert fault is not None
        return fault

    def _open_read_only(self) -> None:
        """Open an existing state file without creating or changing anything (no folder, no
        file, no migration, no journal-mode switch); StateError when it is not there."""
        file = Path(self.path)
        if not file.parent.is_dir():
            raise StateError(
                f"state database {self.path}: its folder does not exist (check --state or "
                "LAKEMARK_STATE); nothing was created"
            )
        if file.is_dir():
            raise StateError(f"state database {self.path} is a directory, not an SQLite file")
        if not file.is_file():
            raise StateError(
                f"state database {self.path} does not exist (check --state or LAKEMARK_STATE); "
                "nothing was created"
            )
        # mode=rw never creates the file, and as the last connection it removes the WAL's
        # side files on close, as a writer does (mode=ro would leave -wal/-shm behind);
        # query_only refuses every write. A file we may not write is opened with mode=ro.
        # On a read-only file system SQLite cannot make the WAL's -shm index, so a file
        # there is opened as immutable (nothing can change it) unless a -wal file holds
        # writes not yet copied into it, which mode=ro reads through the existing -shm.
        uri = file.resolve().as_uri()
        modes = ["mode=rw", "mode=ro"]
        if filesystem_problem(self.path) == "its file system is read-only":
            wal = Path(f"{self.path}-wal")
            modes = ["mode=ro"] if wal.exists() and wal.stat().st_size > 0 else \
                ["mode=ro&immutable=1"]
        row = None
        for i, mode in enumerate(modes):
            try:
                self._db = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=self._busy_s,
                                           isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                if i + 1 < len(modes):
                    continue
                raise self._open_fault(exc) from exc
            self._q = LockedReads(self._db, self._lock, self._fault)
            try:
                self._db.execute("PRAGMA query_only = ON")
                self._db.execute(f"PRAGMA busy_timeout = {int(self._busy_s * 1000)}")
                row = self._db.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                break
            except sqlite3.Error as exc:
                self._db.close()
                if i + 1 < len(modes) and not sqlite_not_a_database(exc):
                    continue
                raise self._open_fault(exc) from exc
        if row is not None and int(row[0]) < SCHEMA_VERSION:
            self._db.close()
            raise OlderSchema(f"{self.path} has schema version {row[0]}")
        if row is None or int(row[0]) > SCHEMA_VERSION:
            self._db.close()
            raise StateError(
                f"{self.path} is not a lakemark state database this lakemark can read "
                f"(schema version {row[0] if row else 'missing'}; this lakemark reads up to "
                f"{SCHEMA_VERSION})"
            )

    def _use_wal(self, wait_s: float = 30.0) -> None:
        """Switch the file to write-ahead logging, waiting for other processes doing the same.

        SQLite does not call its busy handler while it changes the journal mode, so two processes
        opening a fresh file at the same moment can see "database is locked" at once; the switch
        is retried until ``wait_s`` has passed.
        """
        deadline = time.monotonic() + wait_s
        delay = 0.005
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise StateError(
                        f"state store {self.url}: opening it failed: it stayed locked by "
                        f"another process for {wait_s:g} s"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    @classmethod
    def from_url(cls, url: str, *, read_only: bool = False) -> SQLiteStore:
        """Open ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or ``sqlite:///:memory:``.

        The path is taken literally; a query string or fragment (``?mode=ro``, ``#x``) is
        refused rather than made part of the file name. ``read_only``: see
        :func:`lakemark.state.open_store`.
        """
        prefix = "sqlite:///"
        if not url.startswith(prefix) or len(url) == len(prefix):
            raise ConfigError(
                f"state URL {redact(url)!r}: an SQLite URL is sqlite:///path/to/state.db "
                "(four slashes for an absolute path) or sqlite:///:memory:"
            )
        path = url[len(prefix):]
        if "?" in path or "#" in path:
            raise ConfigError(
                f"state URL {redact(url)!r}: an SQLite URL takes no query string or fragment "
                "('?…', '#…'); give the file's path only, e.g. sqlite:///path/to/state.db"
            )
        return cls(path if path == ":memory:" else os.path.expanduser(path), read_only=read_only)

    # -- plumbing -------------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        with self._lock:
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise sqlite_fault(self.url, self.path, exc, "a write") from exc
            try:
                yield db
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise sqlite_fault(self.url, self.path, exc, "a write") from exc
                raise
            else:
                try:
                    db.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._rollback()
                    raise sqlite_fault(self.url, self.path, exc, "a write") from exc

    def _rollback(self) -> None:
        """Undo the open transaction; SQLite has already undone it after some errors (a full
        disk, an I/O error), and a failing rollback leaves the file as the journal keeps it."""
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _migrate(self) -> None:
        with self._tx() as db:
            self._create_tables(db, ddl("sqlite") + SCHEMA_TABLE_SQLITE
                               + FOLDER_COMMITS_SQLITE)

    @property
    def _where(self) -> str:
        return f"state database {self.path}"

    def close(self) -> None:
        self._db.close()
