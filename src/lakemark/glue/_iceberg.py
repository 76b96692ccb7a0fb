"""Glue's Iceberg catalog tables: ``from_catalog`` sources and sinks on a table whose
parameters say ``table_type=ICEBERG`` (as Glue, Athena and Iceberg's Glue catalog register them).

The catalog entry says *that* the table is Iceberg; the table itself (its snapshots) is read and
committed through an Iceberg catalog, as ``database.table_name``:

* ``LAKEMARK_ICEBERG_CATALOG`` when it is set (docs/iceberg.md, "Catalogs");
* else, when the Data Catalog is the AWS Glue API (``--catalog glue``), pyiceberg's Glue
  catalog on the same endpoint (``iceberg_catalog="glue"``) — the table Glue lists *is* the
  Iceberg table;
* else (a catalog folder) lakemark's default Iceberg catalog.

Reads: a source with a ``transformation_ctx`` in a run with bookmarks enabled (or paused) goes
through the job's incremental Iceberg source (only the snapshots appended since the last run,
pinned and recorded before reading); otherwise the table as of its current snapshot, or of
``snapshot-id`` / ``as-of-timestamp`` given in ``additional_options``. A ``push_down_predicate``
is applied as a filter. Writes: an append through the job's Iceberg sink (exactly once per run
with a ctx), the table keeping its own partitioning; ``txnAppId``/``txnVersion``,
``mergeSchema`` and ``compression`` are the options. ``getSink(...)`` with ``setCatalogInfo``
naming an Iceberg table writes to the table (its ``path`` is not used).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..catalog import CatalogTable
    from ..sinks import WriteResult
    from .context import GlueContext

__all__ = ["is_iceberg_table", "iceberg_catalog_of", "iceberg_sink_table",
           "read_iceberg_catalog", "write_iceberg_catalog"]

#: Read options of a whole-table read (``additional_options``), as Iceberg names them.
_TIME_TRAVEL = ("snapshot-id", "as-of-timestamp")
#: Options of the bookmarked (incremental) Iceberg source.
_SKIPS = ("streaming-skip-overwrite-snapshots", "streaming-skip-delete-snapshots",
          "skipChangeCommits")
#: Options that need nothing here.
_NOOPS = ("groupfiles", "groupsize", "recurse", "uses3listimplementation")


def is_iceberg_table(table: CatalogTable) -> bool:
    """Whether a catalog entry is an Iceberg table (``table_type=ICEBERG`` in its parameters,
    any case, or a classification of ``iceberg``)."""
    if table.classification == "iceberg":
        return True
    return any(key.lower() == "table_type" and str(value).strip().lower() == "iceberg"
               for key, value in table.parameters.items())


def iceberg_catalog_of(glue_ctx: GlueContext) -> str | None:
    """The Iceberg catalog setting for the Data Catalog's Iceberg tables (module docstring);
    None: ``LAKEMARK_ICEBERG_CATALOG`` or the default decides."""
    from ..catalog import GlueCatalog
    from ..catalog._iceberg import CATALOG_ENV, GLUE_NAME

    if os.environ.get(CATALOG_ENV, "").strip():
        return None
    return GLUE_NAME if isinstance(glue_ctx.catalog(), GlueCatalog) else None


def iceberg_sink_table(glue_ctx: GlueContext, table_ref: tuple[str, str]) -> CatalogTable | None:
    """The catalog entry ``setCatalogInfo`` names when it is an Iceberg table, else None (a
    table not in the catalog yet is not one)."""
    try:
        table = glue_ctx.catalog().get_table(*table_ref)
    except ConfigError:
        return None
    return table if is_iceberg_table(table) else None


def _name(table: CatalogTable) -> str:
    return f"{table.database}.{table.name}"


def _existing(table: CatalogTable, catalog: str | None) -> str:
    """The Iceberg name of a catalog entry's table, once it is known to exist in the Iceberg
    catalog; ConfigError otherwise (a write must not create a table elsewhere)."""
    from ..catalog._iceberg import CATALOG_ENV
    from ..errors import SourceError
    from ..sources.iceberg import open_table

    name = _name(table)
    try:
        open_table(name, catalog)
    except SourceError as exc:
        raise ConfigError(f"catalog table {table.qualified_name} is an Iceberg table, but {exc}; "
                          f"set {CATALOG_ENV} to the Iceberg catalog that holds it (with "
                          "--catalog glue it is the Glue Data Catalog itself)") from None
    return name


def _read_options(table: CatalogTable, extra: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    known = {o.lower(): o for o in (*_TIME_TRAVEL, *_SKIPS)}
    for key, value in extra.items():
        low = key.lower()
        if low in known:
            out[known[low]] = str(value)
        elif low not in _NOOPS:
            raise UnsupportedError(
                f"option {key!r} is not supported for reading Iceberg table "
                f"{table.qualified_name}; supported: {', '.join(_TIME_TRAVEL)}, and with a "
                f"bookmarked transformation_ctx {', '.join(_SKIPS)}")
    return out


def read_iceberg_catalog(glue_ctx: GlueContext, table: CatalogTable, predicate: str | None,
                         extra: Mapping[str, Any], ctx: str | None) -> DataFrame:
    """``from_catalog`` on an Iceberg table (see the module docstring)."""
    from ..sources.iceberg import CATALOG_OPTION
    from ..tables._iceberg import load_iceberg

    options = _read_options(table, extra)
    catalog = iceberg_catalog_of(glue_ctx)
    name = _existing(table, catalog)
    with_catalog = {CATALOG_OPTION: catalog} if catalog else {}
    skips = {k: v for k, v in options.items() if k in _SKIPS}
    travel = {k: v for k, v in options.items() if k in _TIME_TRAVEL}
    job = glue_ctx.active_job()
    if ctx is not None and job is not None and job.bookmark_option in ("enable", "pause"):
        if travel:
            raise UnsupportedError(f"catalog table {table.qualified_name}: "
                                   f"{', '.join(sorted(travel))} cannot be combined with a "
                                   f"bookmarked source (transformation_ctx {ctx!r})")
        df: DataFrame = job.read_table(name, format="iceberg", ctx=ctx,
                                       options={**skips, **with_catalog})
    else:
        if skips:
            raise UnsupportedError(f"catalog table {table.qualified_name}: "
                                   f"{', '.join(sorted(skips))} apply to a source with a "
                                   "transformation_ctx in a job with bookmarks enabled")
        df = load_iceberg(glue_ctx.spark_session, name, {**travel, **with_catalog})
    return df.where(predicate) if predicate else df


def write_iceberg_catalog(glue_ctx: GlueContext, df: DataFrame, table: CatalogTable,
                          options: Mapping[str, Any], partition_keys: list[str],
                          ctx: str | None) -> WriteResult:
    """Append ``df`` to the Iceberg table of a catalog entry (see the module docstring);
    ``options``: ``txnAppId``/``txnVersion``, ``mergeSchema``, ``compression``; others are
    refused by name. The table must exist in the Iceberg catalog (ConfigError otherwise)."""
    writer: dict[str, str] = {}
    for key, value in options.items():
        if key in ("txnAppId", "txnVersion") or key.lower() in ("mergeschema", "compression"):
            writer[key] = str(value)
        else:
            raise UnsupportedError(f"option {key!r} is not supported for writing Iceberg table "
                                   f"{table.qualified_name}; supported: compression, mergeSchema, "
                                   "txnAppId, txnVersion")
    catalog = iceberg_catalog_of(glue_ctx)
    name = _existing(table, catalog)
    job = glue_ctx.active_job()
    if job is not None:
        return job.write(df, name, format="iceberg", mode="append", partition_by=partition_keys,
                         ctx=ctx, options=writer, iceberg_catalog=catalog)
    from ..sinks import write_target

    return write_target(glue_ctx.spark_session, df, name, format="iceberg", mode="append",
                        partition_by=partition_keys, options=writer, iceberg_catalog=catalog)
