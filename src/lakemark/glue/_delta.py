"""Glue's ``format="delta"`` sources: ``from_options`` on a path, ``from_catalog`` on a Delta
catalog table.

Both read the table through the session's ``delta`` format (lakemark's reader, or Delta's own
when its jars are present), the same path ``spark.read.format("delta").load(path)`` takes.

Bookmarks: a Delta source with a ``transformation_ctx`` in a run whose bookmark is enabled (or
paused) reads incrementally through the job's ``read_table`` (only the commits since the last
run; options ``readChangeFeed``, ``skipChangeCommits``, ``startingVersion``). Without a ctx, or
with bookmarks disabled, the whole table (its latest version, or the one
``versionAsOf``/``timestampAsOf`` name) is read, as Glue does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..catalog import CatalogTable
    from .context import GlueContext

__all__ = ["DELTA_READ_OPTIONS", "catalog_delta_location", "is_delta_table", "read_delta_catalog",
           "read_delta_options", "read_delta_path"]

#: Reader options a Glue Delta source passes on (connection_options or format_options).
DELTA_READ_OPTIONS = {"versionasof": "versionAsOf", "timestampasof": "timestampAsOf"}
#: Options of the bookmarked table source (``Job.read_table``), for a source with a ctx.
_TABLE_OPTIONS = {"readchangefeed": "readChangeFeed", "skipchangecommits": "skipChangeCommits",
                  "startingversion": "startingVersion"}
#: Connection options that need nothing here (Glue's S3 tuning, or the path given twice).
_NOOPS = {"groupfiles", "groupsize", "recurse", "useS3ListImplementation".lower()}
_SYMLINK_INPUT = "org.apache.hadoop.hive.ql.io.symlinktextinputformat"
_MANIFEST_DIR = "_symlink_format_manifest"


def _options(table: str, *maps: Mapping[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for options in maps:
        for key, value in (options or {}).items():
            low = key.lower()
            if low in DELTA_READ_OPTIONS:
                out[DELTA_READ_OPTIONS[low]] = str(value)
            elif low in _TABLE_OPTIONS:
                out[_TABLE_OPTIONS[low]] = str(value)
            elif low in _NOOPS or low in ("path", "paths"):
                continue
            else:
                raise UnsupportedError(
                    f"option {key!r} is not supported for reading Delta table {table}; "
                    "supported: path, versionAsOf, timestampAsOf, and with a bookmarked "
                    "transformation_ctx readChangeFeed, skipChangeCommits, startingVersion")
    return out


def _one_path(connection_options: Mapping[str, Any] | None) -> str:
    options = dict(connection_options or {})
    given = options.get("path", options.get("paths"))
    paths = [given] if isinstance(given, str) else list(given or [])
    if len(paths) != 1 or not str(paths[0]).strip():
        raise ConfigError("a Delta source needs exactly one table path: connection_options "
                          f"{{'path': 's3://bucket/table/'}} (got {given!r})")
    return str(paths[0]).rstrip("/") or "/"


def read_delta_path(glue_ctx: GlueContext, path: str, options: Mapping[str, str],
                    ctx: str | None, what: str) -> DataFrame:
    """The Delta table at ``path`` as a DataFrame (see the module docstring); ``what`` names
    the source in errors."""
    from ..storage import mapped_path

    path = mapped_path(path) or path  # a bucket mapped to a local folder (--bucket-map)
    job = glue_ctx.active_job()
    table_options = {k: v for k, v in options.items() if k in _TABLE_OPTIONS.values()}
    options = {k: v for k, v in options.items() if k not in table_options}
    if ctx is not None and job is not None and job.bookmark_option in ("enable", "pause"):
        if options:
            raise UnsupportedError(f"{what}: versionAsOf/timestampAsOf cannot be combined "
                                   f"with a bookmarked source (transformation_ctx {ctx!r})")
        df: DataFrame = job.read_table(path, ctx=ctx, options=table_options)
        return df
    if table_options:
        raise UnsupportedError(f"{what}: {', '.join(sorted(table_options))} apply to a source "
                               "with a transformation_ctx in a job with bookmarks enabled")
    reader = glue_ctx.spark_session.read.format("delta")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path)


def read_delta_options(glue_ctx: GlueContext, connection_options: Mapping[str, Any] | None,
                       format_options: Mapping[str, Any] | None,
                       ctx: str | None) -> DataFrame:
    """``create_dynamic_frame``/``create_data_frame.from_options(format="delta")``."""
    path = _one_path(connection_options)
    options = _options(path, connection_options, format_options)
    return read_delta_path(glue_ctx, path, options, ctx, f"Delta source {path}")


def is_delta_table(table: CatalogTable) -> bool:
    """Whether a catalog entry is a Delta table: ``classification``/``table_type``/
    ``spark.sql.sources.provider`` say ``delta`` (native tables of Glue's Delta crawler,
    Spark's ``saveAsTable``), or a crawler's symlink-manifest table over a Delta log."""
    if table.classification == "delta":
        return True
    for key, value in table.parameters.items():
        if key.lower() in ("table_type", "spark.sql.sources.provider") and \
                str(value).strip().lower() == "delta":
            return True
    return (table.input_format or "").strip().lower() == _SYMLINK_INPUT and \
        table.location.rstrip("/").endswith("/" + _MANIFEST_DIR)


def catalog_delta_location(table: CatalogTable) -> str:
    """Where a Delta catalog table's ``_delta_log`` is: the SerDe's ``path`` parameter when
    Spark wrote a placeholder location, the folder above a symlink manifest, else the
    table's location."""
    location = table.location.rstrip("/")
    serde_path = next((str(v) for k, v in table.serde_parameters.items()
                       if k.lower() == "path" and str(v).strip()), "")
    if serde_path and (not location or "__PLACEHOLDER__" in location):
        location = serde_path.rstrip("/")
    if location.endswith("/" + _MANIFEST_DIR):
        location = location[: -len(_MANIFEST_DIR) - 1]
    if not location:
        raise ConfigError(f"catalog table {table.qualified_name} is a Delta table with no "
                          "location")
    return location


def read_delta_catalog(glue_ctx: GlueContext, table: CatalogTable, predicate: str | None,
                       extra: Mapping[str, Any], ctx: str | None) -> DataFrame:
    """``from_catalog`` on a Delta table: the table at its location; a push-down predicate is
    applied as a filter (the reader prunes files by partition values and statistics)."""
    name = table.qualified_name
    options = _options(name, extra)
    df = read_delta_path(glue_ctx, catalog_delta_location(table), options, ctx,
                         f"catalog table {name}")
    return df.where(predicate) if predicate else df
