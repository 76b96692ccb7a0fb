"""Where a ``delta.tables`` table is, by path or by name, and the error of a method lakemark
lacks: what :mod:`._delta_api` (``DeltaTable``) and its builders (:mod:`._delta_builders`,
:mod:`._delta_merge_api`) share, below all three so that none imports another back."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError
from ._delta_sql import quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..sinks._location import Target

__all__ = ["NamesMissing", "remember_name", "resolve_path", "table_location", "unsupported"]

log = logging.getLogger("lakemark.tables")

#: Tables created by name in this process (``DeltaTable.create(spark).tableName(n)``) whose
#: location no catalog records: ``forName`` finds them here.
_NAMED: dict[str, str] = {}


def unsupported(method: str, hint: str = "") -> UnsupportedError:
    """The error of a ``delta.tables`` method lakemark does not implement."""
    return UnsupportedError(
        f"{method} is not supported by lakemark's delta.tables (no Delta jars); "
        + (hint + "; " if hint else "")
        + "see docs/upserts.md for what is, or install delta-spark with its jars")


def resolve_path(path: str) -> Target:
    """The write target of a table path (``s3a://`` read as ``s3://``, ``--bucket-map``
    applied)."""
    from ..sinks._location import resolve_target
    from ..storage import mapped_path

    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"a Delta table path must be a non-empty string, got {path!r}")
    if path.lower().startswith(("s3a://", "s3n://")):
        path = "s3://" + path.partition("://")[2]
    return resolve_target(mapped_path(path) or path)


def _split_name(name: str) -> tuple[str, str]:
    parts = [p.strip("`") for p in name.strip().split(".")]
    if parts and parts[0].lower() == "spark_catalog":
        parts = parts[1:]
    if len(parts) == 1:
        return "default", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ConfigError(f"table name {name!r}: expected [database.]table")


def _warehouse_path(spark: SparkSession, name: str) -> str:
    """Where Spark would put a managed table called ``name``."""
    database, table = _split_name(name)
    root = str(spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse"))
    if root.startswith("file:"):
        root = root[len("file:"):]
        root = "/" + root.lstrip("/") if root.startswith("/") else root
    folder = table if database == "default" else f"{database}.db/{table}"
    return f"{root.rstrip('/')}/{folder}"


def table_location(spark: SparkSession, name: str, *, must_exist: bool = True) -> str | None:
    """The location of the table ``name``: ``delta.`path```; a table this process created by
    name; the lakemark catalog (``--catalog`` / ``LAKEMARK_CATALOG``); Spark's session catalog;
    else Spark's warehouse folder. None (or ConfigError when ``must_exist``) if none holds it."""
    text = name.strip()
    if text.lower().startswith("delta.`") and text.endswith("`"):
        return text[len("delta.`"):-1]
    database, table = _split_name(text)
    key = f"{database}.{table}".lower()
    if key in _NAMED:
        return _NAMED[key]
    from ..catalog import open_catalog, resolve_catalog_spec

    if resolve_catalog_spec() is not None:
        try:
            entry = open_catalog().get_table(database, table)
            if entry.location:
                return entry.location
        except ConfigError:
            pass
    try:
        if spark.catalog.tableExists(f"{database}.{table}"):
            for row in spark.sql(f"DESCRIBE TABLE EXTENDED {quote(database)}.{quote(table)}"
                                 ).collect():
                if row[0] == "Location" and row[1]:
                    return str(row[1])
    except Exception as exc:  # a catalog that cannot answer: fall back to the warehouse
        log.debug("Spark catalog lookup of %s failed: %s", name, exc)
    path = _warehouse_path(spark, text)
    from ..sinks._location import open_delta

    if open_delta(resolve_path(path)) is not None or not must_exist:
        return path
    raise ConfigError(f"DeltaTable.forName: table {name!r} was not found (not in the lakemark "
                      "catalog, Spark's catalog or the warehouse folder "
                      f"{path}); use DeltaTable.forPath for a table known by its path")


class NamesMissing(type):
    """Class-level lookups of Delta methods lakemark lacks fail naming them."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"{cls.__name__}.{name}")


def remember_name(name: str, location: str) -> None:
    """Record that the table ``name`` was created at ``location`` in this process."""
    database, table = _split_name(name)
    _NAMED[f"{database}.{table}".lower()] = location
