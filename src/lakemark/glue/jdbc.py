"""Glue's JDBC connection options, turned into Spark JDBC reader/writer options.

Options are taken as Glue takes them: ``url``/``user``/``password``/``dbtable`` directly, or a
``connectionName`` (``catalog_connection`` for writers) resolved from the catalog's connections.
:func:`jdbc_source` turns them, with the bookmark keys (``jobBookmarkKeys``,
``jobBookmarkKeysSortOrder`` and AWS's own spelling ``jobBookmarksKeysSortOrder``) and the
parallel-read options (``hashfield``/``hashexpression``/``hashpartitions``), into the core's
:class:`~lakemark.sources.jdbc.JdbcSource`. A catalog table's location
(``database.schema.table``) becomes ``schema.table`` for engines whose URL names the database.
Passwords are passed to Spark only, never logged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..session.jdbc_drivers import DRIVER_JARS, OTHER_DRIVERS, missing_driver_message
from ..errors import ConfigError, EnvironmentProblem, SinkError, SourceError, UnsupportedError
from ..redaction import redact_url, remember_secret
from ..session.jdbc_drivers import is_missing_driver
from ..sources.jdbc import spark_url_options

if TYPE_CHECKING:
    from ..sources.jdbc import JdbcSource
    from .context import GlueContext

__all__ = ["jdbc_failure", "jdbc_read_options", "jdbc_source", "jdbc_write_options"]

#: Glue connection type (and URL prefix) → driver class, for every flavour lakemark knows.
_DRIVERS = {"postgresql": DRIVER_JARS["postgresql"][0],
            **{name: driver for name, (driver, _) in OTHER_DRIVERS.items()}}

_ACCEPTED = {
    "url", "user", "password", "dbtable", "connectionName", "useConnectionProperties",
    "customJdbcDriverS3Path", "customJdbcDriverClassName", "hashfield", "hashexpression",
    "hashpartitions", "jobBookmarkKeys", "jobBookmarkKeysSortOrder", "jobBookmarksKeysSortOrder",
    "fetchsize", "fetchSize", "database", "catalog_table", "sampleQuery", "query",
    "enablePartitioningForSampleQuery", "sampleSize", "bulkSize",
}


def _driver_for(url: str, connection_type: str) -> str | None:
    for name, driver in _DRIVERS.items():
        if url.startswith(f"jdbc:{name}:") or connection_type == name:
            return driver
    if url.startswith("jdbc:mariadb:"):
        return "org.mariadb.jdbc.Driver"
    return None


def jdbc_failure(exc: BaseException, options: Mapping[str, str], what: str) -> Exception:
    """A Spark/Java error of a Glue JDBC read or write (``what``: "source"/"sink") as one line:
    a missing driver jar names what to install; the password and URL credentials removed."""
    text = str(exc)
    password = options.get("password")
    if password:
        text = text.replace(password, "***")
    text = redact_url(text)
    url = redact_url(options.get("url", ""))
    if is_missing_driver(text):
        return EnvironmentProblem(missing_driver_message(options.get("driver"), url))
    first = next((line.strip() for line in text.splitlines() if line.strip()),
                 type(exc).__name__)
    table = options.get("dbtable") or "(query)"
    error = SinkError if what == "sink" else SourceError
    return error(f"JDBC {what} {url} {table}: {first[:1000]}")


def _connection_options(glue_ctx: GlueContext, name: str) -> dict[str, str]:
    connection = glue_ctx.catalog().get_connection(name, with_password=True)
    props = connection.properties
    url = props.get("JDBC_CONNECTION_URL")
    if not url:
        raise ConfigError(f"catalog connection {name!r} has no JDBC_CONNECTION_URL")
    out = {"url": url}
    if props.get("USERNAME"):
        out["user"] = props["USERNAME"]
    if props.get("PASSWORD"):
        out["password"] = props["PASSWORD"]
        remember_secret(out["password"])
    return out


def jdbc_read_options(glue_ctx: GlueContext, connection_type: str,
                      options: Mapping[str, Any]) -> dict[str, str]:
    """Spark ``format("jdbc")`` options for a Glue JDBC source."""
    unknown = sorted(set(options) - _ACCEPTED)
    if unknown:
        raise UnsupportedError(
            f"JDBC connection option(s) not supported: {', '.join(unknown)}"
        )
    out: dict[str, str] = {}
    table = options.get("catalog_table")
    if table is not None:
        conn = table.parameters.get("connectionName")
        if not conn:
            raise ConfigError(
                f"catalog table {table.database}.{table.name} names no connectionName")
        out.update(_connection_options(glue_ctx, conn))
        out["dbtable"] = _catalog_dbtable(table.location, out["url"])
    if options.get("connectionName"):
        out.update(_connection_options(glue_ctx, str(options["connectionName"])))
    for key in ("url", "user", "password", "dbtable", "query"):
        if options.get(key):
            out[key] = str(options[key])
    if "url" not in out:
        raise ConfigError("a JDBC source needs connection option 'url' (or 'connectionName')")
    if "dbtable" not in out and "query" not in out:
        raise ConfigError("a JDBC source needs connection option 'dbtable'")
    fetch = options.get("fetchsize") or options.get("fetchSize")
    if fetch:
        out["fetchsize"] = str(fetch)
    driver = options.get("customJdbcDriverClassName") or _driver_for(out["url"], connection_type)
    if driver:
        out["driver"] = str(driver)
    out.update(spark_url_options(out["url"]))
    return out


def jdbc_write_options(glue_ctx: GlueContext, catalog_connection: str | None,
                       options: Mapping[str, Any]) -> dict[str, str]:
    """Spark JDBC writer options for ``write_dynamic_frame.from_jdbc_conf`` / ``from_options``
    (``lakemark.url``: the URL as given, which the exactly-once sink connects to)."""
    out: dict[str, str] = {}
    if catalog_connection:
        out.update(_connection_options(glue_ctx, catalog_connection))
    for key in ("url", "user", "password", "dbtable"):
        if options.get(key):
            out[key] = str(options[key])
    remember_secret(out.get("password"))
    database = options.get("database")
    if database and "url" in out and out["url"].rstrip("/").count("/") <= 2:
        out["url"] = out["url"].rstrip("/") + "/" + str(database)
    if "url" not in out or "dbtable" not in out:
        raise ConfigError("a JDBC sink needs 'dbtable' and a connection ('url' or "
                          "catalog_connection)")
    driver = _driver_for(out["url"], "")
    if driver:
        out["driver"] = driver
    out["lakemark.url"] = out["url"]
    out.update(spark_url_options(out["url"]))
    return out


def _catalog_dbtable(location: str, url: str) -> str:
    """A Glue JDBC table location (``database.schema.table`` or, for MySQL, ``database.table``)
    as the table name to read over a connection whose URL already names the database."""
    parts = location.split(".")
    lowered = url.lower()
    if len(parts) == 3 and not lowered.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return ".".join(parts[1:])
    return location


def _bookmark_keys(options: Mapping[str, Any]) -> tuple[str, ...] | None:
    raw = options.get("jobBookmarkKeys")
    if raw is None or raw == "" or raw == []:
        return None
    if isinstance(raw, str):
        keys = [k.strip() for k in raw.strip("[]").split(",")]
        keys = [k.strip("\"'") for k in keys if k]
    elif isinstance(raw, (list, tuple)) and all(isinstance(k, str) for k in raw):
        keys = list(raw)
    else:
        raise ConfigError(f"jobBookmarkKeys must be a list of column names, got {raw!r}")
    return tuple(keys)


def _sort_order(options: Mapping[str, Any]) -> str:
    given = {k: str(options[k]).strip().lower() for k in
             ("jobBookmarkKeysSortOrder", "jobBookmarksKeysSortOrder") if options.get(k)}
    if len(set(given.values())) > 1:
        raise ConfigError(
            "jobBookmarkKeysSortOrder and jobBookmarksKeysSortOrder disagree: "
            + ", ".join(f"{k}={v!r}" for k, v in given.items())
        )
    order = next(iter(given.values()), "asc")
    if order not in ("asc", "desc"):
        name = next(iter(given))
        raise ConfigError(f"{name} must be 'asc' or 'desc', got {options[name]!r}")
    return order


def _positive_int(options: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = options.get(name)
        if value is None or value == "":
            continue
        try:
            number = int(str(value))
        except ValueError:
            number = 0
        if number < 1:
            raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        return number
    return None


def jdbc_source(glue_ctx: GlueContext, connection_type: str,
                options: Mapping[str, Any]) -> JdbcSource:
    """The core JDBC source for Glue connection options (see the module documentation)."""
    from ..sources.jdbc import JdbcSource

    spark_options = jdbc_read_options(glue_ctx, connection_type, options)
    if "dbtable" not in spark_options:
        raise ConfigError("an incremental JDBC source reads a table: give 'dbtable', not 'query'")
    return JdbcSource(
        url=spark_options["url"],
        dbtable=spark_options["dbtable"],
        user=spark_options.get("user"),
        password=spark_options.get("password"),
        driver=spark_options.get("driver"),
        keys=_bookmark_keys(options),
        order=_sort_order(options),
        fetchsize=_positive_int(options, "fetchsize", "fetchSize"),
        hashfield=str(options["hashfield"]) if options.get("hashfield") else None,
        hashexpression=str(options["hashexpression"]) if options.get("hashexpression") else None,
        hashpartitions=_positive_int(options, "hashpartitions"),
    )
