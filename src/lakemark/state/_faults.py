"""What went wrong with a state store, in words: SQLite and PostgreSQL errors turned into one
:class:`~lakemark.errors.StateError` line that names the store and the cause.

A store can fail in a handful of ways that need different actions from the person reading the
message: the file system is read-only, the disk is full, another process holds the lock, the
connection to the server was lost, or the file is not a state database at all. The drivers'
own texts blur these ("disk I/O error", "unable to open database file"), so the cause is taken
from the error code and, for I/O errors, from the file system itself (``statvfs``): a read-only
mount or a disk without free blocks is named as such, anything else stays an I/O error —
never a guess that sends the reader to the wrong fix.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..errors import StateError

__all__ = ["filesystem_problem", "postgres_fault", "sqlite_fault", "sqlite_not_a_database"]

# SQLite's primary result codes (the low byte of an extended code).
_ERROR, _PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT = 1, 3, 5, 6, 8, 10, 11
_FULL, _CANTOPEN, _NOTADB = 13, 14, 26
_READONLY_DBMOVED = 1032


def filesystem_problem(path: str) -> str | None:
    """"read-only file system" or "disk full" when the file system holding ``path`` (or its
    nearest existing parent folder) is mounted read-only or has no free block; else None."""
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        info = os.statvfs(probe)
    except OSError:
        return None
    if info.f_flag & os.ST_RDONLY:
        return "its file system is read-only"
    if info.f_bavail == 0 or (info.f_favail == 0 and info.f_files > 0):
        return "the disk under it is full (no space left on device)"
    return None


def sqlite_not_a_database(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says the file is not an SQLite database, is damaged, or lacks
    lakemark's tables (an empty file or another application's database)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    return code in (_NOTADB, _CORRUPT) or (code == _ERROR and "no such table" in str(exc))


def _sqlite_cause(path: str, exc: sqlite3.Error) -> str:
    extended = getattr(exc, "sqlite_errorcode", None) or 0
    code = extended & 0xFF
    detail = str(exc)
    if extended == _READONLY_DBMOVED:
        return f"the file was moved or deleted while it was open ({detail})"
    if code in (_BUSY, _LOCKED):
        return f"it is locked by another process and stayed locked ({detail})"
    if code == _FULL:
        return f"the disk under it is full ({detail})"
    if code in (_READONLY, _IOERR, _CANTOPEN, _PERM):
        found = filesystem_problem(path) if path != ":memory:" else None
        if found is not None:
            return f"{found} ({detail})"
        if code == _READONLY:
            return f"it is read-only for this user ({detail})"
        if code == _PERM or (code == _CANTOPEN and not os.access(Path(path).parent, os.W_OK)):
            return f"this user may not open or write it ({detail})"
        if code == _IOERR:
            return f"the disk or file system failed to read or write it ({detail})"
        return f"the file cannot be opened ({detail})"
    if code in (_NOTADB, _CORRUPT):
        return f"it is not a lakemark state database or is damaged ({detail})"
    return detail


def sqlite_fault(url: str, path: str, exc: sqlite3.Error, doing: str) -> StateError:
    """The StateError for an SQLite error met while ``doing`` something with the store at
    ``url`` (file ``path``)."""
    return StateError(f"state store {url}: {doing} failed: {_sqlite_cause(path, exc)}",
                      store=url)


# PostgreSQL SQLSTATE classes and codes (Appendix A of its manual).
_PG_CAUSES: tuple[tuple[str, str], ...] = (
    ("57P01", "the connection to the server was lost (the server ended it)"),
    ("57P02", "the connection to the server was lost (the server crashed)"),
    ("57P03", "the server is not accepting connections"),
    ("08", "the connection to the server was lost"),
    ("53100", "the server's disk is full"),
    ("53", "the server ran out of a resource"),
    ("25006", "it is read-only (a read-only transaction or standby server)"),
    ("55P03", "it is locked by another session"),
    ("40P01", "it is locked by another session (deadlock)"),
    ("57014", "a statement was cancelled (statement timeout or a cancel request)"),
    ("42501", "this user may not read or write it"),
)


def postgres_fault(url: str, exc: Exception, doing: str, *, closed: bool) -> StateError:
    """The StateError for a psycopg error met while ``doing`` something with the store at
    ``url``; ``closed``: whether the connection is closed now (then the cause is a lost
    connection whatever the driver's text says)."""
    sqlstate: str = getattr(exc, "sqlstate", None) or ""
    lines = str(exc).strip().splitlines()
    detail = lines[0] if lines else type(exc).__name__
    cause: str | None = None
    for prefix, text in _PG_CAUSES:
        if sqlstate.startswith(prefix):
            cause = text
            break
    if cause is None and closed:
        cause = "the connection to the server was lost"
    message = f"{cause} ({detail})" if cause else detail
    return StateError(f"state store {url}: {doing} failed: {message}", store=url)

