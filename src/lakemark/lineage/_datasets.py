"""Dataset naming (OpenLineage conventions) and catalog resolution for the analyser.

* S3: namespace ``s3://bucket``, name the key path without a trailing ``/``
  (``s3a://``/``s3n://`` are the same store); local paths: namespace ``file``.
* JDBC: ``postgres://host:port`` + ``database.schema.table`` (``public`` when the code names
  no schema), ``mysql://host:port`` + ``database.table``, and so on.
* Glue tables: their storage dataset, with a symlink
  ``arn:aws:glue:<region>:<account>`` / ``table/<db>/<table>``; a table the catalog does not
  hold is named by ``<database LocationUri>/<table>`` (where Spark creates it) when its
  database has a location, else by that symlink alone (and reported).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

from ..catalog import CatalogTable, FolderCatalog
from ..errors import LakemarkError
from ._graph import ColumnEdge, DatasetRef, Symlink
from ._values import Col, DynStr, Frame

__all__ = ["DatasetResolver", "jdbc_dataset", "path_dataset"]

_SCHEMES = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql",
            "mariadb": "mysql", "sqlserver": "sqlserver", "oracle": "oracle",
            "redshift": "redshift", "db2": "db2", "snowflake": "snowflake"}
_DEFAULT_SCHEMA = {"postgres": "public", "redshift": "public", "sqlserver": "dbo"}


def _text(value: str | DynStr) -> tuple[str, bool]:
    return (value.text, True) if isinstance(value, DynStr) else (value, False)


#: a path component holding a Hadoop glob (``*``, ``?``, ``[ab]``, ``{a,b}``); ``{?name}`` is
#: the analyser's placeholder for a part only known at run time, not a glob
_GLOB = re.compile(r"\*|(?<!\{)\?|\[[^\]]*\]|\{[^}?]*,[^}]*\}")


def _glob_root(text: str) -> str:
    """``s3://b/prices/2024-*.csv`` → ``s3://b/prices``: the folder above the first component
    holding a glob (the files it matches are one dataset, as OpenLineage's Spark integration
    names the folders of the files a read lists)."""
    head, sep, rest = text.partition("://")
    if not sep:
        head, rest = "", text
    parts = rest.split("/")
    for i, part in enumerate(parts):
        if i > 0 and _GLOB.search(part):  # parts[0]: the bucket (or "" of /abs)
            return (head + sep if sep else "") + "/".join(parts[:i])
    return text


def path_dataset(path: str | DynStr) -> DatasetRef:
    """The dataset of a file or folder path (``s3://b/k/``, ``/data/x``, ``file:///x``); a glob
    (``s3://b/k/2024-*.csv``) names the folder above its first glob component."""
    text, dynamic = _text(path)
    text = _glob_root(text)
    if text.startswith("arn:"):  # a catalog table over DynamoDB: arn:aws:dynamodb:r:a:table/x
        head = text.split(":", 5)
        if len(head) == 6:
            return DatasetRef(":".join(head[:5]), head[5], dynamic=dynamic)
    m = re.match(r"^(s3[an]?)://([^/]*)/*(.*)$", text, re.IGNORECASE)
    if m:
        return DatasetRef(f"s3://{m.group(2)}", m.group(3).rstrip("/") or "/", dynamic=dynamic)
    parts = urllib.parse.urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme in ("s3", "s3a", "s3n"):
        return DatasetRef(f"s3://{parts.netloc}", parts.path.strip("/") or "/", dynamic=dynamic)
    if scheme in ("", "file"):
        return DatasetRef("file", (parts.path if scheme else text).rstrip("/") or "/",
                          dynamic=dynamic)
    if scheme:
        return DatasetRef(f"{scheme}://{parts.netloc}", parts.path.strip("/") or "/",
                          dynamic=dynamic)
    return DatasetRef("file", text, dynamic=dynamic)


def jdbc_dataset(url: str | DynStr, table: str | DynStr, database: str | None = None,
                 ) -> DatasetRef:
    """The dataset of ``table`` behind a JDBC URL (``jdbc:postgresql://h:5432/db``)."""
    url_text, dyn1 = _text(url)
    table_text, dyn2 = _text(table)
    # a "{?name}" placeholder holds a "?", which would start the URL's query string
    url_text = url_text.replace("{?", "{\x1f")
    rest = url_text[5:] if url_text.lower().startswith("jdbc:") else url_text
    engine, _, tail = rest.partition(":")
    scheme = _SCHEMES.get(engine.lower(), engine.lower() or "jdbc")
    host, db = "", database or ""
    if tail.startswith("//"):
        parts = urllib.parse.urlsplit(f"x:{tail}")
        netloc = parts.netloc.rsplit("@", 1)[-1]
        host = netloc
        path = parts.path.strip("/")
        if engine.lower() == "sqlserver":
            # jdbc:sqlserver://host:1433;databaseName=db
            host, _, props = netloc.partition(";")
            m = re.search(r"database(?:Name)?=([^;]+)", tail, re.IGNORECASE)
            db = db or (m.group(1) if m else "")
        elif path:
            db = db or path.split("/")[0].split("?")[0].split(";")[0]
        if ":" not in host and (port := {"postgres": 5432, "mysql": 3306, "redshift": 5439,
                                         "sqlserver": 1433}.get(scheme)):
            host = f"{host}:{port}"
    elif engine.lower() == "oracle":
        m = re.search(r"@(?://)?([^/:]+)(?::(\d+))?[/:]?(\w+)?", tail)
        if m:
            host = f"{m.group(1)}:{m.group(2) or 1521}"
            db = db or (m.group(3) or "")
    pieces = [p for p in table_text.replace('"', "").replace("`", "").split(".") if p]
    if scheme in _DEFAULT_SCHEMA and len(pieces) == 1:
        pieces = [_DEFAULT_SCHEMA[scheme], *pieces]
    if db and (len(pieces) < 3 or scheme == "mysql" and len(pieces) < 2):
        pieces = [db, *pieces]
    return DatasetRef(f"{scheme}://{host}".replace("{\x1f", "{?"),
                      ".".join(pieces).replace("{\x1f", "{?"), dynamic=dyn1 or dyn2)


@dataclass
class DatasetResolver:
    """Turns catalog table names into datasets and frames (columns from the catalog)."""

    catalog: FolderCatalog | None
    region: str
    account: str
    warn: Callable[[str, int], None]
    _tables: dict[tuple[str, str], CatalogTable | None] = field(default_factory=dict,
                                                                 repr=False)

    @property
    def glue_namespace(self) -> str:
        return f"arn:aws:glue:{self.region}:{self.account}"

    def _lookup(self, database: str, table: str) -> CatalogTable | None:
        if self.catalog is None:
            return None
        key = (database.lower(), table.lower())
        if key in self._tables:  # a script names the same tables many times
            return self._tables[key]
        try:
            found: CatalogTable | None = self.catalog.get_table(database, table)
        except LakemarkError:
            found = None
        self._tables[key] = found
        return found

    def table_at(self, name: str, path: str | DynStr) -> DatasetRef | None:
        """``saveAsTable("db.t")`` with a ``path`` option: when ``db.t`` is not in the
        catalog, Spark creates it as an external table whose files are at ``path`` — the
        dataset is that path, with the Glue symlink (None: the table exists, and keeps its
        own location)."""
        db, _, table = name.replace("`", "").rpartition(".")
        db = db.rpartition(".")[2] or "default"
        if self._lookup(db, table) is not None:
            return None
        found = path_dataset(path)
        link = Symlink(self.glue_namespace, f"table/{db}/{table}")
        return DatasetRef(found.namespace, found.name, (link,), dynamic=found.dynamic)

    def new_table(self, database: str, table: str) -> DatasetRef:
        """A table the script creates (``CREATE TABLE [AS SELECT]`` without ``LOCATION``):
        ``<database LocationUri>/<table>`` where Spark makes it, with the Glue symlink; the
        symlink alone when the database has no location."""
        link = Symlink(self.glue_namespace, f"table/{database}/{table}")
        home = self._database_location(database)
        if not home:
            return DatasetRef(link.namespace, link.name)
        found = path_dataset(f"{home.rstrip('/')}/{table.lower()}")
        return DatasetRef(found.namespace, found.name, (link,))

    def _database_location(self, database: str) -> str | None:
        """The ``LocationUri`` of a catalog database (where a new table of it is made)."""
        if self.catalog is None:
            return None
        try:
            return self.catalog.get_database(database).location_uri
        except LakemarkError:
            return None

    def in_catalog(self, database: str, table: str) -> bool:
        """Whether the catalog has ``database.table``."""
        return self._lookup(database, table) is not None

    def table(self, database: str | DynStr, table: str | DynStr, line: int,
              ) -> tuple[DatasetRef, tuple[tuple[str, str], ...], CatalogTable | None]:
        """A catalog table's dataset, its (column, type) list, and the table when found."""
        db_text, dyn1 = _text(database)
        t_text, dyn2 = _text(table)
        link = Symlink(self.glue_namespace, f"table/{db_text}/{t_text}")
        if dyn1 or dyn2:
            self.warn(f"dynamic table name {db_text}.{t_text}: "
                      f"{(database if dyn1 else table).reason}", line)  # type: ignore[union-attr]
            return DatasetRef(self.glue_namespace, link.name, dynamic=True), (), None
        found = self._lookup(db_text, t_text)
        if found is None:
            where = "no catalog was given" if self.catalog is None else \
                f"it is not in {self.catalog.describe()}"
            home = self._database_location(db_text)
            if home:  # a table the script creates (saveAsTable, CTAS): Spark puts it here
                path = f"{home.rstrip('/')}/{t_text.lower()}"
                self.warn(f"catalog table {db_text}.{t_text}: {where}; named by its "
                          f"database's location ({path}, where Spark creates it), its columns "
                          "are unknown", line)
                made = path_dataset(path)
                return DatasetRef(made.namespace, made.name, (link,)), (), None
            self.warn(f"catalog table {db_text}.{t_text}: {where}; its location and columns "
                      "are unknown", line)
            return DatasetRef(self.glue_namespace, link.name), (), None
        link = Symlink(self.glue_namespace, f"table/{found.database}/{found.name}")
        fields = tuple((c.name, c.type) for c in found.all_columns)
        storage = self._storage(found)
        if storage is None:
            return DatasetRef(self.glue_namespace, link.name), fields, found
        return DatasetRef(storage.namespace, storage.name, (link,)), fields, found

    def _storage(self, table: CatalogTable) -> DatasetRef | None:
        location = table.location
        if not location:
            return None
        if table.is_jdbc and self.catalog is not None:
            conn_name = table.parameters.get("connectionName") or \
                table.storage_parameters.get("connectionName")
            if conn_name:
                try:
                    url = self.catalog.get_connection(conn_name).jdbc_url
                except LakemarkError:
                    url = None
                if url:
                    return jdbc_dataset(url, location)
            return DatasetRef(table.classification or "jdbc", location)
        return path_dataset(location)

    def table_frame(self, database: str | DynStr, table: str | DynStr, line: int,
                    ) -> tuple[Frame, DatasetRef, tuple[tuple[str, str], ...]]:
        """A frame reading a catalog table (open when its columns are unknown)."""
        ds, fields, _ = self.table(database, table, line)
        return frame_of(ds, fields, line), ds, fields

    def qualified(self, name: str | DynStr, line: int,
                  ) -> tuple[DatasetRef, tuple[tuple[str, str], ...]]:
        """``spark.table("db.t")`` / ``saveAsTable("db.t")``: the Glue catalog is Spark's
        metastore in a Glue job; a bare name is in database ``default``."""
        text, dyn = _text(name)
        db, _, t = text.replace("`", "").rpartition(".")
        db = db.rpartition(".")[2] or "default"
        if dyn:
            self.warn(f"dynamic table name {text}: {name.reason}", line)  # type: ignore[union-attr]
            return DatasetRef(self.glue_namespace, f"table/{db}/{t}", dynamic=True), ()
        ds, fields, _ = self.table(db, t, line)
        return ds, fields


def frame_of(ds: DatasetRef, fields: tuple[tuple[str, str], ...], line: int) -> Frame:
    """The frame a read of ``ds`` gives: its known columns, open when none are known."""
    cols = {name: Col((ColumnEdge(ds, name, line=line),), typ) for name, typ in fields}
    return Frame(cols, frozenset(), () if fields else (ds,), line=line)
