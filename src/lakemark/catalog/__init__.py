"""The data catalog: databases, tables, partitions and connections that Glue scripts name.

``create_dynamic_frame.from_catalog(database=…, table_name=…)`` and friends read a table's
location, format, SerDe options and schema from a catalog. lakemark has two:

* **the AWS Glue Data Catalog** through its API — ``--catalog glue`` (or ``glue:<region>``),
  with the standard AWS configuration (profile, region, credentials, ``AWS_ENDPOINT_URL_GLUE``
  / ``AWS_ENDPOINT_URL``); see :class:`GlueCatalog`;
* **a catalog folder**: the JSON the AWS CLI prints, saved as files — ``--catalog DIR``; see
  :class:`FolderCatalog`.

The catalog is chosen by ``--catalog`` (``lakemark run`` passes it on as ``LAKEMARK_CATALOG``),
then the ``LAKEMARK_CATALOG`` environment variable. ``glue`` always means the API (write
``./glue`` for a folder of that name). Having no catalog is fine until a script needs one.

Catalog folder layout
---------------------

``DIR`` is a *connection folder* (one AWS account and region, e.g.
``extracted/123456789012-us-east-1/``) or its ``catalog/`` subfolder::

    <connection folder>/
      catalog/databases.json                      aws glue get-databases
                                                  {"DatabaseList": [...]}
      catalog/tables/<database>.json              aws glue get-tables --database-name <database>
                                                  {"TableList": [...]}
      catalog/partitions/<database>/<table>.json  aws glue get-partitions --database-name
                                                  <database> --table-name <table>   (optional)
                                                  {"Partitions": [...]}
      catalog/connections.json                    aws glue get-connections
                                                  {"ConnectionList": [...]}
      jobs/...                                    (the lineage extractor's; not read here)

Database and table names are the file names as they are; a name containing ``/``, ``\\`` or
``..`` (or starting with ``.``) is refused, so no name can reach outside the folder. Lookups
try the exact name, then ignore case (Glue stores names in lowercase).

Partitions of a folder-catalog table come from ``partitions/<db>/<table>.json`` when that file
exists; otherwise they are discovered by listing the table's location (local or S3) for
Hive-style ``key=value/`` folders matching the partition keys in order.

Writes (``write_dynamic_frame.from_catalog`` creating a table, ``setCatalogInfo`` +
``enableUpdateCatalog``) rewrite ``tables/<db>.json`` or ``partitions/<db>/<table>.json``
atomically (temporary file + rename) under a lock on ``catalog/.lock``.

Partition predicates (``push_down_predicate``) are evaluated in pure Python; see
:mod:`lakemark.catalog._predicate`. Nothing in this package imports Spark.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..errors import ConfigError
from ._folder import FolderCatalog, discover_partitions
from ._glue import GlueCatalog
from ._model import (
    HIVE_DEFAULT_PARTITION,
    CatalogTable,
    Column,
    Connection,
    Database,
    Partition,
    partition_path,
)
from ._predicate import PartitionPredicate, compile_predicate, filter_partitions
from ._serde import FILE_FORMATS, JDBC_FORMATS
from ._types import HiveType, parse_type

__all__ = [
    "CATALOG_ENV",
    "FILE_FORMATS",
    "HIVE_DEFAULT_PARTITION",
    "JDBC_FORMATS",
    "Catalog",
    "CatalogTable",
    "Column",
    "Connection",
    "Database",
    "FolderCatalog",
    "GlueCatalog",
    "HiveType",
    "Partition",
    "PartitionPredicate",
    "compile_predicate",
    "discover_partitions",
    "filter_partitions",
    "open_catalog",
    "parse_type",
    "partition_path",
    "require_catalog",
    "resolve_catalog_spec",
]

#: The environment variable naming the catalog (``--catalog`` sets it for ``lakemark run``).
CATALOG_ENV = "LAKEMARK_CATALOG"

_REGION = re.compile(r"[a-z]{2}(-[a-z0-9]+)+-\d+")


@runtime_checkable
class Catalog(Protocol):
    """What lakemark asks of a data catalog (:class:`FolderCatalog`, :class:`GlueCatalog`).

    Missing databases, tables and connections raise :class:`ConfigError` naming them.
    """

    def describe(self) -> str:
        """One line saying which catalog this is (for logs and error messages)."""
        ...

    def list_databases(self) -> list[str]:
        ...

    def get_database(self, name: str) -> Database:
        ...

    def list_tables(self, database: str) -> list[CatalogTable]:
        ...

    def get_table(self, database: str, name: str) -> CatalogTable:
        ...

    def get_partitions(self, table: CatalogTable, predicate: str | None = None) -> list[Partition]:
        """The table's partitions that ``predicate`` selects (all when None); ``[]`` for an
        unpartitioned table."""
        ...

    def get_connection(self, name: str, *, with_password: bool = False) -> Connection:
        """A connection; its password and other secret properties only when asked."""
        ...

    def create_or_update_table(self, table: CatalogTable) -> None:
        ...

    def add_partitions(self, table: CatalogTable, partitions: Sequence[Partition]) -> None:
        """Record partitions; ones already recorded (same values) are left as they are."""
        ...


def resolve_catalog_spec(spec: str | None = None,
                         env: Mapping[str, str] | None = None) -> str | None:
    """The catalog to use: ``spec`` (from ``--catalog``), else ``LAKEMARK_CATALOG``, else None."""
    if spec is not None and spec.strip():
        return spec.strip()
    value = (os.environ if env is None else env).get(CATALOG_ENV, "").strip()
    return value or None


def _no_catalog(needed_for: str | None) -> ConfigError:
    what = f"reads {needed_for} from a data catalog" if needed_for else \
        "reads tables from a data catalog"
    return ConfigError(
        f"this script {what}, but no catalog is configured; set --catalog DIR|glue or "
        f"{CATALOG_ENV} (a catalog folder, or 'glue' for the AWS Glue Data Catalog)"
    )


def open_catalog(spec: str | None = None, env: Mapping[str, str] | None = None) -> Catalog:
    """Open the catalog named by ``spec`` / ``LAKEMARK_CATALOG`` (see :func:`resolve_catalog_spec`).

    ``glue`` or ``glue:<region>`` opens the Glue Data Catalog API (nothing is called until the
    first lookup); anything else is a catalog folder. No catalog at all is a
    :class:`ConfigError` (use :func:`resolve_catalog_spec` to find out without raising).
    """
    resolved = resolve_catalog_spec(spec, env)
    if resolved is None:
        raise _no_catalog(None)
    kind, sep, rest = resolved.partition(":")
    if kind.lower() == "glue" and (not sep or not rest.startswith("/")):
        region = rest.strip() or None
        if region is not None and not _REGION.fullmatch(region):
            raise ConfigError(
                f"catalog {resolved!r}: {region!r} is not an AWS region (e.g. glue:eu-west-1)"
            )
        return GlueCatalog(region, env=env)
    return FolderCatalog(resolved)


def require_catalog(spec: str | None = None, env: Mapping[str, str] | None = None, *,
                    needed_for: str | None = None) -> Catalog:
    """:func:`open_catalog`, with the error a script gets when it needs a catalog and none is
    set (``needed_for``, e.g. ``"database.table"``, is named in it)."""
    if resolve_catalog_spec(spec, env) is None:
        raise _no_catalog(needed_for)
    return open_catalog(spec, env)
