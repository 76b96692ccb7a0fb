"""Apache Iceberg catalogs and table names, resolved once and passed down (docs/iceberg.md).

Which catalog holds lakemark's Iceberg tables is settled by, in this order: the
``iceberg_catalog=`` argument, the ``LAKEMARK_ICEBERG_CATALOG`` environment variable, then the
default. Each may be:

* unset — the default: a SQL catalog on SQLite in ``~/.lakemark/iceberg/catalog.db``, its
  warehouse (where table files go) in ``~/.lakemark/iceberg/warehouse``;
* ``sqlite:///path/to/catalog.db`` — a SQL catalog in that SQLite file, the warehouse folder
  ``warehouse`` next to it;
* ``postgresql://…`` (or ``postgresql+psycopg://…``) — a SQL catalog in PostgreSQL for teams; the
  warehouse must be given with ``LAKEMARK_ICEBERG_WAREHOUSE``;
* a name — a catalog of the user's pyiceberg configuration (``~/.pyiceberg.yaml`` or
  ``PYICEBERG_CATALOG__<NAME>__…`` variables), read when the catalog is resolved;
* ``http(s)://…`` — an Iceberg REST catalog at that URI (no credentials; a REST catalog that
  needs a token or OAuth credential is named in the pyiceberg configuration, ``type: rest``);
* ``glue`` (when the configuration has no catalog of that name) — the AWS Glue Data Catalog
  of the environment's account and region (pyiceberg's Glue catalog over boto3; endpoint
  ``AWS_ENDPOINT_URL_GLUE``/``AWS_ENDPOINT_URL`` when set), warehouse from
  ``LAKEMARK_ICEBERG_WAREHOUSE``.

A warehouse may be a local folder or an ``s3://`` prefix; for S3 the catalog's FileIO gets the
environment's endpoint and region (``s3.endpoint``, ``s3.region``) unless the catalog sets them.

Table names are ``db.table`` or ``catalog.db.table``; in the second form the first part must
be the resolved catalog's name (``lakemark`` for the default and URI catalogs) or a catalog of
the pyiceberg configuration. Everything here is checked before any I/O, so a bad name or
catalog fails with a ConfigError naming it and nothing written. Loading a catalog needs the
``iceberg`` extra (``pip install 'lakemark[iceberg]'``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import ConfigError
from ._iceberg_reuse import reusing

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

__all__ = ["CatalogChoice", "CATALOG_ENV", "WAREHOUSE_ENV", "DEFAULT_NAME", "GLUE_NAME",
           "IcebergCatalogSpec", "IcebergTableName", "resolve_iceberg_catalog",
           "parse_table_name", "spec_for_table", "load_iceberg_catalog"]

CATALOG_ENV = "LAKEMARK_ICEBERG_CATALOG"
WAREHOUSE_ENV = "LAKEMARK_ICEBERG_WAREHOUSE"
#: The name of the default and URI-given catalogs (the first part of ``catalog.db.table``).
DEFAULT_NAME = "lakemark"
#: The name that selects the AWS Glue Data Catalog when no pyiceberg catalog has it.
GLUE_NAME = "glue"
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_SQL_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg", "postgresql+psycopg2")


@dataclass(frozen=True)
class IcebergCatalogSpec:
    """A resolved catalog: its name and the pyiceberg properties to load it with.

    ``configured`` is True for a catalog of the pyiceberg configuration (its properties as read
    when it was resolved). ``source`` says where the setting came from, for errors.
    """

    name: str
    properties: Mapping[str, str] = field(default_factory=dict)
    configured: bool = False
    source: str = "default"

    @property
    def warehouse(self) -> str | None:
        return self.properties.get("warehouse")


#: What names an Iceberg catalog in lakemark's calls: a setting (name or URI; None: the
#: environment's or the default), or a catalog already resolved (e.g. a Spark catalog's).
CatalogChoice = str | IcebergCatalogSpec | None


@dataclass(frozen=True)
class IcebergTableName:
    """``catalog.db.table`` split; ``catalog`` is None for a two-part name."""

    catalog: str | None
    namespace: str
    table: str

    @property
    def identifier(self) -> tuple[str, str]:
        return (self.namespace, self.table)

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.namespace, self.table) if p)


def parse_table_name(name: object) -> IcebergTableName:
    """Split an Iceberg table name; ConfigError naming it when it is not ``[catalog.]db.table``."""
    if not isinstance(name, str):
        raise ConfigError(f"Iceberg table name must be a string like 'db.table', not {name!r}")
    parts = name.strip().split(".")
    bad = [p for p in parts if not _PART.match(p)]
    if len(parts) not in (2, 3) or bad:
        why = (f"part(s) {', '.join(repr(p) for p in bad)} are not names (letters, digits, _ "
               "and -)") if bad and len(parts) in (2, 3) else f"it has {len(parts)} part(s)"
        raise ConfigError(f"Iceberg table name {name!r} is malformed: {why}; expected "
                          "'db.table' or 'catalog.db.table'")
    if len(parts) == 2:
        return IcebergTableName(None, parts[0], parts[1])
    return IcebergTableName(parts[0], parts[1], parts[2])


def _sql_spec(uri: str, source: str, env: Mapping[str, str]) -> IcebergCatalogSpec:
    scheme = uri.split("://", 1)[0].lower()
    if scheme not in _SQL_SCHEMES:
        raise ConfigError(f"Iceberg catalog {uri!r} (from {source}) has an unknown scheme "
                          f"{scheme!r}; expected sqlite:///PATH, postgresql://…, http(s)://… "
                          "(REST) or the name of a catalog in your pyiceberg configuration")
    warehouse = env.get(WAREHOUSE_ENV, "").strip()
    if scheme == "sqlite":
        path = uri[len("sqlite:///"):] if uri.lower().startswith("sqlite:///") else ""
        if not path or path == ":memory:":
            raise ConfigError(f"Iceberg catalog {uri!r} (from {source}) names no SQLite file; "
                              "expected sqlite:///path/to/catalog.db")
        file = Path(path).expanduser().resolve()
        uri = f"sqlite:///{file}"
        warehouse = warehouse or str(file.parent / "warehouse")
    elif not warehouse:
        raise ConfigError(f"Iceberg catalog {_display(uri)} (from {source}) needs a warehouse: "
                          f"set {WAREHOUSE_ENV} to the folder or s3:// prefix for table files")
    elif scheme == "postgresql":
        uri = "postgresql+psycopg" + uri[len("postgresql"):]
    if "://" not in warehouse:
        warehouse = Path(warehouse).expanduser().resolve().as_uri()
    properties = {"type": "sql", "uri": uri, "warehouse": warehouse}
    return IcebergCatalogSpec(DEFAULT_NAME, _with_s3(properties, env), source=source)


def _rest_spec(uri: str, source: str, env: Mapping[str, str]) -> IcebergCatalogSpec:
    """``http(s)://…``: an Iceberg REST catalog at that URI (pyiceberg's REST client, no
    credentials: a catalog that needs a token or an OAuth credential is named in the pyiceberg
    configuration instead). ``LAKEMARK_ICEBERG_WAREHOUSE``, when set, is passed as the
    catalog's ``warehouse`` (the server may also name one)."""
    properties = {"type": "rest", "uri": uri}
    warehouse = env.get(WAREHOUSE_ENV, "").strip()
    if warehouse:
        properties["warehouse"] = warehouse
    return IcebergCatalogSpec(DEFAULT_NAME, _with_s3(properties, env), source=source)


def _with_s3(properties: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with the S3 settings pyiceberg's PyArrow FileIO needs for a warehouse on
    S3, where the catalog does not give them: ``s3.endpoint`` from ``AWS_ENDPOINT_URL_S3`` /
    ``AWS_ENDPOINT_URL`` (botocore's order; pyarrow itself does not read them) and
    ``s3.region`` from ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` (without a region pyiceberg asks
    AWS where the bucket is, which an emulator's endpoint never answers). Unchanged for other
    warehouses."""
    out = dict(properties)
    if not out.get("warehouse", "").lower().startswith(("s3://", "s3a://", "s3n://")):
        return out
    ignore = env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").strip().lower() == "true"
    endpoint = "" if ignore else (env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
                                  or "").strip()
    if endpoint and "s3.endpoint" not in out:
        out["s3.endpoint"] = endpoint
    region = (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip()
    if region and "s3.region" not in out and "client.region" not in out:
        out["s3.region"] = region
    return out


def _display(uri: str) -> str:
    """A URI with any password replaced, for messages."""
    parts = urlsplit(uri)
    if parts.password is None:
        return repr(uri)
    return repr(uri.replace(f":{parts.password}@", ":***@", 1))


def _configured(name: str, source: str,
                env: Mapping[str, str] | None = None) -> IcebergCatalogSpec:
    """A catalog of the pyiceberg configuration (file and PYICEBERG_ variables, read now)."""
    try:
        from pyiceberg.utils.config import Config
    except ImportError as exc:
        raise ConfigError("Iceberg tables need pyiceberg: pip install 'lakemark[iceberg]'") from exc
    if not _PART.match(name):
        raise ConfigError(f"Iceberg catalog {name!r} (from {source}) is neither a catalog "
                          "name nor a sqlite:/// or postgresql:// URI")
    found = Config().get_catalog_config(name)
    if not found and name == GLUE_NAME:
        return _glue_spec(source, os.environ if env is None else env)
    if not found:
        raise ConfigError(f"Iceberg catalog {name!r} (from {source}) is not in your pyiceberg "
                          "configuration (~/.pyiceberg.yaml or PYICEBERG_CATALOG__"
                          f"{name.upper()}__URI); use sqlite:///PATH or postgresql://… instead")
    # Read now and passed on: pyiceberg's own load_catalog(name) would use the configuration
    # it read once at import time.
    properties = {str(k): str(v) for k, v in found.items() if isinstance(v, str | int | float)}
    return IcebergCatalogSpec(name, _with_s3(properties, os.environ if env is None else env),
                              configured=True, source=source)


def _glue_spec(source: str, env: Mapping[str, str]) -> IcebergCatalogSpec:
    """``glue`` (unless the pyiceberg configuration defines a catalog of that name): the AWS
    Glue Data Catalog of the environment's account and region, through pyiceberg's Glue
    catalog; the Glue endpoint is ``AWS_ENDPOINT_URL_GLUE`` or ``AWS_ENDPOINT_URL`` when set
    (a local emulator), the warehouse ``LAKEMARK_ICEBERG_WAREHOUSE`` (required)."""
    warehouse = env.get(WAREHOUSE_ENV, "").strip()
    if not warehouse:
        raise ConfigError(f"Iceberg catalog 'glue' (from {source}) needs a warehouse: set "
                          f"{WAREHOUSE_ENV} to the folder or s3:// prefix for table files")
    if "://" not in warehouse:
        warehouse = Path(warehouse).expanduser().resolve().as_uri()
    properties = {"type": "glue", "warehouse": warehouse}
    endpoint = (env.get("AWS_ENDPOINT_URL_GLUE") or env.get("AWS_ENDPOINT_URL") or "").strip()
    if endpoint:
        properties["glue.endpoint"] = endpoint
    region = (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip()
    if region:
        properties["glue.region"] = region
    return IcebergCatalogSpec(GLUE_NAME, _with_s3(properties, env), configured=True,
                              source=source)


def resolve_iceberg_catalog(catalog: str | IcebergCatalogSpec | None = None, *,
                            env: Mapping[str, str] | None = None,
                            home: Path | None = None) -> IcebergCatalogSpec:
    """The catalog to use: ``catalog``, else ``LAKEMARK_ICEBERG_CATALOG``, else the default.
    A catalog already resolved (an :class:`IcebergCatalogSpec`, e.g. a Spark catalog's, by
    :mod:`._iceberg_spark`) is used as it is.

    ``env`` (default ``os.environ``) and ``home`` (default ``~``) are read here, once. No I/O
    besides reading the pyiceberg configuration for a catalog name; ConfigError names a bad
    setting and where it came from.
    """
    env = os.environ if env is None else env
    if isinstance(catalog, IcebergCatalogSpec):
        return catalog
    if catalog is not None and not isinstance(catalog, str):
        raise ConfigError(f"iceberg_catalog must be a string, not {type(catalog).__name__}")
    source = "the iceberg_catalog argument"
    value = (catalog or "").strip()
    if not value:
        value, source = env.get(CATALOG_ENV, "").strip(), CATALOG_ENV
    if not value:
        base = (home or Path.home()) / ".lakemark" / "iceberg"
        spec = _sql_spec(f"sqlite:///{base / 'catalog.db'}", "the default", env)
        return spec
    if value.lower().startswith(("http://", "https://")):
        return _rest_spec(value, source, env)
    if "://" in value:
        return _sql_spec(value, source, env)
    return _configured(value, source, env)


def spec_for_table(spec: IcebergCatalogSpec, name: IcebergTableName) -> IcebergCatalogSpec:
    """The catalog a table name selects: ``spec`` itself, or the configured catalog its first
    part names."""
    if name.catalog is None or name.catalog == spec.name:
        return spec
    return _configured(name.catalog, f"table name {str(name)!r}")


_OS_ERROR = re.compile(r"\[Errno -?\d+\] [^\"')\]]+")


def _reason(exc: BaseException) -> str:
    """One short line saying why a catalog could not be opened: for a connection that failed
    (a REST catalog not reachable) the system's reason (``[Errno 111] Connection refused``)
    rather than the HTTP client's nested report; else the error's first line."""
    text = str(exc).strip()
    found = _OS_ERROR.search(text)
    if found and "connection" in type(exc).__name__.lower():
        return f"not reachable ({found.group(0).strip()})"
    return text.splitlines()[0] if text else type(exc).__name__


def load_iceberg_catalog(spec: IcebergCatalogSpec) -> Catalog:
    """Open the catalog (a SQL catalog's folder and tables are created on first use); it
    reuses table metadata this process already parsed or wrote (:mod:`._iceberg_reuse`)."""
    try:
        from pyiceberg.catalog import load_catalog
    except ImportError as exc:
        raise ConfigError("Iceberg tables need pyiceberg: pip install 'lakemark[iceberg]'") from exc
    properties = dict(spec.properties)
    uri = properties.get("uri", "")
    if uri.startswith("sqlite:///"):
        Path(uri[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    try:
        catalog = load_catalog(spec.name, **properties)
    except Exception as exc:  # pyiceberg raises ValueError, SQLAlchemy, HTTP and driver errors
        shown = _display(uri) if uri else repr(spec.name)
        raise ConfigError(f"Iceberg catalog {shown} (from {spec.source}) cannot be opened: "
                          f"{_reason(exc)}") from exc
    return reusing(catalog)
