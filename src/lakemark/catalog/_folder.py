"""A data catalog kept as files: the JSON the AWS CLI prints, one file per database.

Layout (see the package docstring and ``docs/catalog.md``)::

    catalog/databases.json                      aws glue get-databases
    catalog/tables/<database>.json              aws glue get-tables --database-name <database>
    catalog/partitions/<database>/<table>.json  aws glue get-partitions … (optional)
    catalog/connections.json                    aws glue get-connections

Reads are cached per file and re-read when the file changes. Writes rewrite one file
atomically (a temporary file in the same folder, then a rename) under an advisory lock on
``catalog/.lock``, so concurrent lakemark runs on one machine do not lose each other's updates.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigError, SinkError, UnsupportedError
from ._model import CatalogTable, Connection, Database, Partition, now_iso
from ._predicate import filter_partitions

__all__ = ["FolderCatalog", "catalog_root", "close_matches"]

DATABASES = "databases.json"
TABLES = "tables"
PARTITIONS = "partitions"
CONNECTIONS = "connections.json"
_LOCK = ".lock"


def close_matches(name: str, candidates: Sequence[str]) -> str:
    """``"; close matches: a, b"`` (or the first few names when none is close)."""
    if not candidates:
        return ""
    lowered = {c.lower(): c for c in candidates}
    close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=5,
                                                            cutoff=0.6)]
    if close:
        return "; close matches: " + ", ".join(close)
    shown = sorted(candidates)[:10]
    more = f" (and {len(candidates) - len(shown)} more)" if len(candidates) > len(shown) else ""
    return "; it has: " + ", ".join(shown) + more


def check_name(kind: str, name: str) -> str:
    """A database or table name that is safe as a file name, else :class:`ConfigError`.

    Names are used as file names as they are (Glue names are lowercase letters, digits and
    ``_``); one that could leave the catalog folder — with ``/``, ``\\``, ``..``, a NUL, or a
    leading ``.`` — is refused.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"empty catalog {kind} name {name!r}")
    if ("/" in name or "\\" in name or "\0" in name or ".." in name or name.startswith(".")
            or (os.altsep and os.altsep in name)):
        raise ConfigError(
            f"unsafe catalog {kind} name {name!r}: a name used as a file name may not contain "
            "'/', '\\' or '..' or start with '.'"
        )
    return name


def catalog_root(spec: str) -> Path:
    """The ``catalog/`` folder named by ``spec``: the connection folder or the folder itself."""
    text = spec.strip()
    if text.lower().startswith(("s3://", "s3a://", "s3n://")):
        raise UnsupportedError(
            f"catalog {spec!r}: a catalog folder must be on the local file system; for the AWS "
            "Glue Data Catalog use --catalog glue (or glue:<region>)"
        )
    if text.lower().startswith("file:"):
        parts = urllib.parse.urlsplit(text)
        text = urllib.parse.unquote(parts.path)
    path = Path(os.path.expanduser(text)).absolute()
    if not path.is_dir():
        raise ConfigError(f"catalog folder {spec!r} does not exist (resolved to {path})")
    if (path / "catalog").is_dir():
        return path / "catalog"
    if (path / DATABASES).is_file() or (path / TABLES).is_dir():
        return path
    raise ConfigError(
        f"{path} is not a catalog folder: expected catalog/{DATABASES} and "
        f"catalog/{TABLES}/<database>.json in it (the output of 'aws glue get-databases' and "
        "'aws glue get-tables'; see docs/catalog.md)"
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot write {type(value).__name__} to a catalog file")


class FolderCatalog:
    """A catalog folder (layout in the module docstring)."""

    def __init__(self, spec: str | os.PathLike[str]) -> None:
        self.root = catalog_root(os.fspath(spec))
        self._cache: dict[Path, tuple[tuple[int, int], Any]] = {}

    def __repr__(self) -> str:
        return f"FolderCatalog({str(self.root)!r})"

    def describe(self) -> str:
        return f"catalog folder {self.root}"

    # -- files -------------------------------------------------------------------------------------
    def _inside(self, path: Path) -> Path:
        """``path``, after checking it is really below the catalog folder."""
        resolved = path.resolve()
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise ConfigError(f"catalog path {path} leaves the catalog folder {self.root}")
        return path

    def _load(self, path: Path) -> Any:
        """Parsed JSON of ``path`` (None when it does not exist), cached by mtime and size."""
        try:
            st = path.stat()
        except FileNotFoundError:
            self._cache.pop(path, None)
            return None
        except OSError as exc:
            raise ConfigError(f"cannot read catalog file {path}: {exc.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"catalog file {path} is not valid JSON: {exc.msg} at line {exc.lineno}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read catalog file {path}: {exc}") from None
        self._cache[path] = (stamp, data)
        return data

    def _entries(self, path: Path, key: str, single: str | None = None) -> list[Any]:
        """The list under ``key`` (``TableList`` …) of a CLI output file; ``[]`` if missing."""
        data = self._load(path)
        if data is None:
            return []
        if isinstance(data, list):
            return data
        if isinstance(data, Mapping):
            if key in data and isinstance(data[key], list):
                return list(data[key])
            if single and isinstance(data.get(single), Mapping):  # a get-table style file
                return [data[single]]
        raise ConfigError(
            f"catalog file {path} has no {key!r} list (expected the JSON printed by the AWS CLI)"
        )

    def _tables_dir(self) -> Path:
        return self.root / TABLES

    def _table_file(self, database: str) -> Path:
        """``tables/<database>.json``: the exact name, else a case-insensitive match."""
        check_name("database", database)
        path = self._inside(self._tables_dir() / f"{database}.json")
        if path.is_file():
            return path
        folder = self._tables_dir()
        if folder.is_dir():
            for candidate in folder.glob("*.json"):
                if candidate.stem.lower() == database.lower():
                    return candidate
        return path

    def _partition_file(self, table: CatalogTable) -> Path:
        check_name("database", table.database)
        check_name("table", table.name)
        return self._inside(self.root / PARTITIONS / table.database / f"{table.name}.json")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: rely on the atomic rename alone
            yield
            return
        with open(self.root / _LOCK, "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _write(self, path: Path, data: Any) -> None:
        """Replace ``path`` with ``data`` atomically (temporary file + rename)."""
        self._inside(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=4, ensure_ascii=False, default=_json_default) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise SinkError(f"cannot write catalog file {path}: {exc}") from None
            raise
        self._cache.pop(path, None)

    # -- databases ---------------------------------------------------------------------------------
    def _database_entries(self) -> list[Database]:
        return [Database.from_glue(e) for e in self._entries(self.root / DATABASES,
                                                              "DatabaseList", "Database")]

    def list_databases(self) -> list[str]:
        """Databases in ``databases.json`` and those with a ``tables/<name>.json`` file."""
        names = {d.name for d in self._database_entries()}
        folder = self._tables_dir()
        if folder.is_dir():
            listed = {n.lower() for n in names}
            names.update(p.stem for p in folder.glob("*.json")
                         if not p.name.startswith(".") and p.stem.lower() not in listed)
        return sorted(names)

    def get_database(self, name: str) -> Database:
        check_name("database", name)
        for database in self._database_entries():
            if database.name == name:
                return database
        for database in self._database_entries():
            if database.name.lower() == name.lower():
                return database
        if self._table_file(name).is_file():
            return Database(self._table_file(name).stem)
        raise ConfigError(
            f"catalog database {name!r} not found in {self.root / DATABASES}"
            + close_matches(name, self.list_databases())
        )

    # -- tables ------------------------------------------------------------------------------------
    def list_tables(self, database: str) -> list[CatalogTable]:
        path = self._table_file(database)
        if not path.is_file():
            self.get_database(database)  # a database without tables, or a ConfigError
            return []
        name = path.stem
        return [CatalogTable.from_glue(_entry_of(e, path), name)
                for e in self._entries(path, "TableList", "Table")]

    def get_table(self, database: str, name: str) -> CatalogTable:
        check_name("table", name)
        path = self._table_file(database)
        if not path.is_file():
            raise ConfigError(
                f"catalog table {database}.{name} not found: no file {path}"
                + _databases_hint(database, self.list_databases())
            )
        entries = [_entry_of(e, path) for e in self._entries(path, "TableList", "Table")]
        names = [str(e.get("Name")) for e in entries]
        for exact in (True, False):
            for entry, entry_name in zip(entries, names):
                if entry_name == name if exact else entry_name.lower() == name.lower():
                    return CatalogTable.from_glue(entry, path.stem)
        raise ConfigError(f"catalog table {database}.{name} not found in {path}"
                          + close_matches(name, names))

    def create_or_update_table(self, table: CatalogTable) -> None:
        """Add ``table`` to ``tables/<database>.json``, or replace the entry of that name."""
        check_name("database", table.database)
        check_name("table", table.name)
        with self._locked():
            path = self._table_file(table.database)
            if not path.is_file():
                self.get_database(table.database)  # the database must exist, as in Glue
                data: Any = {"TableList": []}
            else:
                data = self._load(path)
                if isinstance(data, list):
                    data = {"TableList": data}
                if not isinstance(data, Mapping) or not isinstance(data.get("TableList"), list):
                    raise ConfigError(f"catalog file {path} has no 'TableList' list")
                data = dict(data)
            entry = table.to_glue()
            entry["UpdateTime"] = now_iso()
            tables = list(data["TableList"])
            for i, old in enumerate(tables):
                if isinstance(old, Mapping) and str(old.get("Name", "")).lower() == \
                        table.name.lower():
                    entry.setdefault("CreateTime", old.get("CreateTime", entry["UpdateTime"]))
                    tables[i] = entry
                    break
            else:
                entry.setdefault("CreateTime", entry["UpdateTime"])
                tables.append(entry)
            data["TableList"] = tables
            self._write(path, data)

    # -- partitions --------------------------------------------------------------------------------
    def _stored_partitions(self, table: CatalogTable) -> list[Partition] | None:
        path = self._partition_file(table)
        if not path.is_file():
            return None
        return [Partition.from_glue(_entry_of(e, path), table)
                for e in self._entries(path, "Partitions", "Partition")]

    def get_partitions(self, table: CatalogTable, predicate: str | None = None) -> list[Partition]:
        """From ``partitions/<db>/<table>.json`` when present, else by listing the table's
        Hive-style folders (``key=value/``); then filtered by ``predicate``."""
        if not table.partition_keys:
            return []
        stored = self._stored_partitions(table)
        partitions = stored if stored is not None else discover_partitions(table)
        return filter_partitions(table, partitions, predicate)

    def add_partitions(self, table: CatalogTable, partitions: Sequence[Partition]) -> None:
        """Record partitions in ``partitions/<db>/<table>.json``.

        When that file does not exist yet, the partitions found in the table's folders are
        written first, so creating the file does not hide them. A partition whose values are
        already recorded is kept as it is (as Glue's BatchCreatePartition does).
        """
        if not partitions:
            return
        if not table.partition_keys:
            raise ConfigError(f"catalog table {table.qualified_name} has no partition keys")
        for partition in partitions:
            if len(partition.values) != len(table.partition_keys):
                raise ConfigError(
                    f"partition values {list(partition.values)!r} do not match the partition "
                    f"keys {[k.name for k in table.partition_keys]} of {table.qualified_name}"
                )
        with self._locked():
            path = self._partition_file(table)
            stored = self._stored_partitions(table)
            current = stored if stored is not None else discover_partitions(table)
            known = {p.values for p in current}
            merged = list(current)
            stamp = now_iso()
            for partition in partitions:
                if partition.values not in known:
                    known.add(partition.values)
                    merged.append(partition)
            entries = []
            for partition in merged:
                entry = partition.to_glue(table)
                entry.setdefault("CreationTime", stamp)
                entries.append(entry)
            self._write(path, {"Partitions": entries})

    # -- connections -------------------------------------------------------------------------------
    def get_connection(self, name: str, *, with_password: bool = False) -> Connection:
        """A connection from ``connections.json``; secret properties only with
        ``with_password=True``."""
        path = self.root / CONNECTIONS
        entries = [Connection.from_glue(_entry_of(e, path))
                   for e in self._entries(path, "ConnectionList", "Connection")]
        for exact in (True, False):
            for connection in entries:
                if connection.name == name if exact else connection.name.lower() == name.lower():
                    return connection if with_password else connection.without_secrets()
        where = path if path.is_file() else f"{path} (no such file)"
        raise ConfigError(f"catalog connection {name!r} not found in {where}"
                          + close_matches(name, [c.name for c in entries]))


def _entry_of(entry: Any, path: Path) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"catalog file {path}: expected JSON objects in its list, got "
                          f"{type(entry).__name__}")
    return entry


def _databases_hint(database: str, names: Sequence[str]) -> str:
    if not names:
        return " (the catalog has no databases)"
    return close_matches(database, names).replace("; it has:", "; databases:").replace(
        "; close matches:", "; close database names:")


def discover_partitions(table: CatalogTable) -> list[Partition]:
    """Partitions of ``table`` found by listing its location (local or S3).

    A file belongs to a partition when the first folders below the location are
    ``key=value`` for the table's partition keys, in order (names compared
    case-insensitively, values URL-unquoted as Hive escapes them). Other files are ignored;
    a location that does not exist yet has no partitions.
    """
    from ..storage import list_files, parse_uri

    location = parse_uri(table.location)
    if not location.is_s3 and not os.path.isdir(location.key):
        return []
    listing = list_files(table.location, recurse=True)
    root = listing.root.rstrip("/")
    keys = [k.name.lower() for k in table.partition_keys]
    found: dict[tuple[str, ...], str] = {}
    for entry in listing.files:
        path = entry.path
        if not path.startswith(root + "/"):
            continue
        folders = path[len(root) + 1:].split("/")[:-1]
        if len(folders) < len(keys):
            continue
        values: list[str] = []
        for folder, key in zip(folders, keys):
            name, sep, value = folder.partition("=")
            if not sep or urllib.parse.unquote(name).lower() != key:
                break
            values.append(urllib.parse.unquote(value))
        else:
            found.setdefault(tuple(values), root + "/" + "/".join(folders[:len(keys)]))
    return [Partition(values, location) for values, location in sorted(found.items())]
