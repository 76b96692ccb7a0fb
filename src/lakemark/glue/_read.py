"""Glue sources (``from_options``, ``from_catalog``) as core reads: plan, record, then read.

With a started job, a source with a ``transformation_ctx`` goes through the job's bookmark; one
without a ctx is read whole (Glue does the same) and lakemark warns once. Without a job (the
script never called ``Job.init``) nothing is tracked.

Files that cannot be read: a started job sets them aside by its bad-file policy
(:mod:`lakemark.run.quarantine`). Without a job there is no run to record a set-aside file in, so
the same cheap checks run before Spark and the first such file fails the read in one line
that names it and its reason (:func:`_refuse_unreadable`); damage only a full read meets fails
in one line too (the frame's read errors are converted, ``sources._errors``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ReadError, UnsupportedError
from ..planning.schema import EVOLUTION_OFF
from ._formats import read_format, s3_source_options
from ._partition_types import declared_partition_types, retyped_schema, with_partition_ddl

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..catalog import CatalogTable
    from .context import GlueContext

__all__ = ["JDBC_TYPES", "read_catalog", "read_options_source"]

log = logging.getLogger("lakemark.glue")

JDBC_TYPES = ("postgresql", "mysql", "sqlserver", "oracle", "redshift", "jdbc")
_FILE_TYPES = ("s3", "file")

#: What to use instead of a connector that cannot exist outside AWS.
_INSTEAD = {
    "dynamodb": "export the table to S3 and read the export (connection_type 's3')",
    "kinesis": "streaming is not supported; read the landed files from S3",
    "kafka": "streaming is not supported; read the landed files from S3",
    "custom": "use a JDBC connection type (postgresql, mysql, sqlserver, oracle, jdbc)",
    "marketplace": "use a JDBC connection type (postgresql, mysql, sqlserver, oracle, jdbc)",
}


def _glue_column_names(df: DataFrame, fmt: str, options: Mapping[str, str]) -> DataFrame:
    """Glue names header-less CSV columns ``col0, col1, …`` where Spark says ``_c0, _c1, …``."""
    if fmt != "csv" or options.get("header") == "true":
        return df
    renamed = {c: "col" + c[2:] for c in df.columns if c.startswith("_c") and c[2:].isdigit()}
    for old, new in renamed.items():
        df = df.withColumnRenamed(old, new)
    return df


def _read_file_source(
    glue_ctx: GlueContext,
    paths: list[str],
    fmt: str,
    spark_options: dict[str, str],
    planner: dict[str, Any],
    ctx: str | None,
    schema: str | None = None,
    fail_fast: bool = False,
    json_records: bool = False,
    tracking: Mapping[str, Any] | None = None,
    records: bool = False,
    partition_types: Mapping[str, str] | None = None,
) -> DataFrame:
    """One file source; ``partition_types`` (a catalog table's partition keys and their Spark
    types) make those columns the declared types instead of Spark's guesses
    (``_partition_types``)."""
    if not paths:
        raise ConfigError("an S3/file source needs connection option 'paths' (a list of paths)")
    mode = "FAILFAST" if fail_fast else spark_options.pop("mode", "PERMISSIVE")
    if schema is not None:
        spark_options.pop("inferSchema", None)
    job = glue_ctx.active_job()
    if tracking:
        return _read_tracked(job, paths, fmt, spark_options, planner, ctx, schema, mode,
                             tracking, records)
    declared = dict(partition_types or {})
    if schema is not None and declared:
        schema = with_partition_ddl(schema, declared)
        declared = {}
    if json_records and schema is None:
        return _read_json_records(glue_ctx, paths, spark_options, planner, ctx, mode, declared)
    if job is not None:
        df = job.read_files(paths, format=fmt, ctx=ctx, options=spark_options, schema=schema,
                            mode=mode, schema_evolution=EVOLUTION_OFF, **planner)
    else:
        df = _read_untracked(glue_ctx, paths, fmt, spark_options, planner, schema, mode)
    retyped = retyped_schema(df.schema, declared) if declared else None
    if retyped is not None:  # read again with the declared types (no data read twice)
        if job is not None and ctx is not None:
            df = job.read_planned(ctx, format=fmt, options=spark_options, schema=retyped,
                                  mode=mode, base_path=planner.get("base_path"),
                                  schema_evolution=EVOLUTION_OFF)
        else:  # untracked: not recorded a second time in the run's manifest
            df = _read_untracked(glue_ctx, paths, fmt, spark_options, planner, retyped, mode)
    return _glue_column_names(df, fmt, spark_options)


def _read_tracked(job: Any, paths: list[str], fmt: str, spark_options: dict[str, str],
                  planner: dict[str, Any], ctx: str | None, schema: str | None, mode: str,
                  tracking: Mapping[str, Any], records: bool) -> DataFrame:
    """A source with ``schemaEvolutionMode``: the job's tracked read; a DynamicFrame source
    gets choices instead of rescued values (``_tracked``)."""
    from ._tracked import INTERNAL_RESCUED, tracked_choices

    if job is None or not ctx:
        raise ConfigError("connection option schemaEvolutionMode needs a transformation_ctx "
                          "and a started job (Job.init): the schema is kept per job and ctx")
    if schema is not None:
        raise ConfigError("connection option schemaEvolutionMode reads the source's own "
                          "columns; a catalog table of this format gives its schema instead "
                          "(remove schemaEvolutionMode, or read with from_options)")
    kwargs = dict(tracking)
    shown = kwargs.get("rescued_data_column", "_rescued_data")
    if records:
        kwargs["rescued_data_column"] = INTERNAL_RESCUED if shown else None
    df = job.read_files(paths, format=fmt, ctx=ctx, options=spark_options, mode=mode,
                        **kwargs, **planner)
    df = _glue_column_names(df, fmt, spark_options)
    if records and shown:
        df = tracked_choices(df, INTERNAL_RESCUED, shown)
    return df


def _read_json_records(glue_ctx: GlueContext, paths: list[str], spark_options: dict[str, str],
                       planner: dict[str, Any], ctx: str | None, mode: str,
                       partition_types: Mapping[str, str] | None = None) -> DataFrame:
    """A JSON DynamicFrame source: Spark's schema, then the same files read again with the
    fields Spark typed ``string`` as variants, to find Glue's choices (``_jsonchoice``);
    partition columns of ``partition_types`` get those types; fields in the records' order
    (``_jsonorder``)."""
    from ._jsonchoice import json_choices

    job = glue_ctx.active_job()
    base = planner.get("base_path")
    if job is not None and ctx is not None:
        plan_kwargs = {k: v for k, v in planner.items() if k != "base_path"}
        plan = job.plan_files(paths, ctx=ctx, format="json", **plan_kwargs)
        files = [f.path for f in plan.files]

        def read(schema: Any) -> DataFrame:
            return job.read_planned(ctx, format="json", options=spark_options, schema=schema,
                                    mode=mode, base_path=base, schema_evolution=EVOLUTION_OFF)
    else:
        checked: list[bool] = []

        def read(schema: Any) -> DataFrame:
            if job is not None:  # untracked inside a job: recorded once, read again below
                return job.read_files(paths, format="json", ctx=None, options=spark_options,
                                      schema=schema, mode=mode, **planner)
            frame = _read_untracked(glue_ctx, paths, "json", spark_options, planner, schema,
                                    mode, check=not checked)
            checked.append(True)  # the files are checked once, not at every read of them
            return frame
        from ..storage import list_files

        files = [f.path for p in paths
                 for f in list_files(p, recurse=planner.get("recurse", True)).entries[:1000]]
    first = read(None)
    if job is not None and ctx is None:
        def read(schema: Any) -> DataFrame:
            return _read_untracked(glue_ctx, paths, "json", spark_options, planner, schema, mode,
                                   check=False)  # the job's read checked them
    retyped = retyped_schema(first.schema, partition_types) if partition_types else None
    if retyped is not None:
        first = read(retyped)
    from ._jsonorder import in_record_order

    framed = json_choices(first, _partition_names(files, first.columns), read)
    multiline = str(spark_options.get("multiLine", spark_options.get("multiline", "")))
    return in_record_order(framed, files, multiline.strip().lower() == "true")


def _partition_names(files: list[str], columns: list[str]) -> list[str]:
    """The columns that come from ``key=value`` folders of ``files`` (a sample of them)."""
    names = {seg.split("=", 1)[0] for f in files[:1000] for seg in f.split("/")[:-1] if "=" in seg}
    return [c for c in columns if c in names]


def _read_untracked(glue_ctx: GlueContext, paths: list[str], fmt: str,
                    spark_options: dict[str, str],
                    planner: dict[str, Any], schema: Any, mode: str, *,
                    check: bool = True) -> DataFrame:
    """Every file under ``paths``, outside any job; ``check``: refuse an unreadable one first
    (:func:`_refuse_unreadable`)."""
    from ..planning import plan_everything
    from ..sources import check_read_options, read_files
    from ..storage import list_files

    check_read_options(fmt, mode)
    frames = []
    base = planner.get("base_path")
    listings = [list_files(p, recurse=planner["recurse"], exclusions=planner["exclusions"])
                for p in paths]
    if check:
        _refuse_unreadable([f for listing in listings for f in listing.files], fmt,
                           spark_options)
    if base is not None:
        files = plan_everything([f for listing in listings for f in listing.files]).files
        return read_files(glue_ctx.spark_session, files, root=base, format=fmt,
                          options=spark_options, schema=schema, mode=mode)
    for listing in listings:
        plan = plan_everything(listing.files)
        frames.append(read_files(glue_ctx.spark_session, plan.files, root=listing.root, format=fmt,
                                 options=spark_options, schema=schema, mode=mode))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out


def _read_jdbc(glue_ctx: GlueContext, connection_type: str, options: Mapping[str, Any],
               ctx: str | None) -> DataFrame:
    """A JDBC source: through the job's bookmark (bookmark keys, see ``glue.jdbc``) when a job
    runs; a custom ``query`` or no job reads the whole result, as Glue does."""
    from .jdbc import jdbc_failure, jdbc_read_options, jdbc_source

    job = glue_ctx.active_job()
    if job is not None and not options.get("query"):
        s = jdbc_source(glue_ctx, connection_type, options)
        # Through the job's own method, so what the job read is seen (runtime lineage).
        return job.read_jdbc(s.url, s.dbtable, ctx=ctx, user=s.user, password=s.password,
                             keys=s.keys, order=s.order, mode=s.mode, driver=s.driver,
                             fetchsize=s.fetchsize, hashfield=s.hashfield,
                             hashexpression=s.hashexpression, hashpartitions=s.hashpartitions)
    opts = jdbc_read_options(glue_ctx, connection_type, options)
    if ctx and job is not None and job.tracking:
        log.warning(
            "JDBC source with a custom query (ctx %s) is read whole: bookmark keys apply to "
            "a dbtable", ctx,
        )
    try:
        return glue_ctx.spark_session.read.format("jdbc").options(**opts).load()
    except Exception as exc:  # Py4JJavaError, AnalysisException …: one line, no secret
        raise jdbc_failure(exc, opts, "source") from None


#: Reader options of a bookmarked Delta table source (``Job.read_table``), lower case.
def read_options_source(
    glue_ctx: GlueContext,
    connection_type: str,
    connection_options: Mapping[str, Any] | None,
    format: str | None,
    format_options: Mapping[str, Any] | None,
    transformation_ctx: str | None,
    push_down_predicate: str | None = None,
    records: bool = False,
) -> DataFrame:
    """``create_dynamic_frame.from_options`` / ``create_data_frame.from_options`` as a DataFrame.
    ``records`` (a DynamicFrame source): CSV values are typed one by one (``_textchoice``), JSON
    fields holding numbers in some records and text in others become choices (``_jsonchoice``)."""
    ctx = transformation_ctx or None
    kind = (connection_type or "").strip().lower()
    if kind in JDBC_TYPES:
        return _read_jdbc(glue_ctx, kind, connection_options or {}, ctx)
    from ._catalog_frames import CATALOG_CONNECTION, catalog_connection_frame

    if kind == CATALOG_CONNECTION:  # the catalog's own entries (Hive metastore migration)
        return catalog_connection_frame(glue_ctx, connection_options)
    if kind not in _FILE_TYPES:
        hint = _INSTEAD.get(kind) or _INSTEAD.get(kind.split(".")[0]) or (
            "lakemark reads: " + ", ".join(_FILE_TYPES + JDBC_TYPES))
        raise UnsupportedError(f"connection_type {connection_type!r} is not supported; {hint}")
    if push_down_predicate:
        raise UnsupportedError(
            "push_down_predicate applies to catalog tables (from_catalog), not to from_options"
        )
    if (format or "").strip().lower() == "delta":
        from ._delta import read_delta_options

        return read_delta_options(glue_ctx, connection_options, format_options, ctx)
    source = s3_source_options(connection_options)
    fmt, spark_options = read_format(format, format_options)
    tracking = source.tracking_kwargs()
    typed = records and fmt == "csv" and not tracking
    if typed:
        spark_options.pop("inferSchema", None)
    df = _read_file_source(glue_ctx, source.paths, fmt, spark_options, source.planner_kwargs(),
                           ctx, fail_fast=source.fail_fast,
                           json_records=records and fmt == "json", tracking=tracking,
                           records=records)
    return _typed_text(df, ()) if typed else df


def read_catalog(
    glue_ctx: GlueContext,
    database: str,
    table_name: str,
    transformation_ctx: str | None,
    push_down_predicate: str | None = None,
    additional_options: Mapping[str, Any] | None = None,
    records: bool = False,
) -> DataFrame:
    """``create_dynamic_frame.from_catalog``: the table's location, format and partitions.
    ``records`` (a DynamicFrame source): a CSV table's values are typed one by one, not by the
    catalog's column types (Glue's reader does the same; ``_textchoice``)."""
    ctx = transformation_ctx or None
    catalog = glue_ctx.catalog()
    table = catalog.get_table(database, table_name)
    extra = dict(additional_options or {})
    predicate = both_predicates(push_down_predicate, extra.pop("catalogPartitionPredicate", None))
    from ._delta import is_delta_table, read_delta_catalog

    if is_delta_table(table):
        return read_delta_catalog(glue_ctx, table, predicate, extra, ctx)
    from ._iceberg import is_iceberg_table, read_iceberg_catalog

    if is_iceberg_table(table):
        return read_iceberg_catalog(glue_ctx, table, predicate, extra, ctx)
    if table.is_jdbc or table.location.startswith("jdbc:"):
        return _read_jdbc(glue_ctx, "jdbc", {"catalog_table": table, **extra}, ctx)
    source = s3_source_options({"recurse": True}, extra)
    if source.paths:
        raise ConfigError("from_catalog reads the table's location; do not pass 'paths'")
    fmt, spark_options = read_format(table.format, {})
    spark_options.update(table.read_options())
    paths = _partition_paths(catalog, table, predicate)
    tracking = source.tracking_kwargs()
    typed = records and fmt == "csv" and not tracking
    schema = None if tracking else _catalog_schema(table, fmt, spark_options, as_text=typed)
    if paths is None:
        paths = [table.location]
    elif not paths:
        return _empty_frame(glue_ctx, table)
    data_names = {c.name.lower() for c in table.columns}  # a key listed as a column too: once
    declared = {k: t for k, t in declared_partition_types(table).items()
                if k.lower() not in data_names}
    if len(paths) > 1 or paths != [table.location]:
        df = _read_partitions(glue_ctx, table, paths, fmt, spark_options, source, ctx, schema,
                              json_records=records and fmt == "json", tracking=tracking,
                              records=records, partition_types=declared)
    else:
        df = _read_file_source(glue_ctx, paths, fmt, spark_options, source.planner_kwargs(), ctx,
                               schema, source.fail_fast, json_records=records and fmt == "json",
                               tracking=tracking, records=records, partition_types=declared)
    if not df.columns and table.columns:
        # A run that took no file of a self-describing format (Parquet, ORC, …; every file
        # taken before, or set aside) has no columns to read: the catalog's are the frame's,
        # so a mapping and a sink after it see the table's columns and write nothing.
        return _empty_frame(glue_ctx, table)
    return _typed_text(df, [k.name for k in table.partition_keys]) if typed else df


def both_predicates(push_down: str | None, catalog_predicate: Any) -> str | None:
    """``push_down_predicate`` and ``catalogPartitionPredicate`` as one predicate: in Glue
    both narrow the partitions, so a partition is read only when it passes both."""
    parts = [str(p).strip() for p in (push_down, catalog_predicate) if p and str(p).strip()]
    if len(parts) == 2:
        return f"({parts[0]}) AND ({parts[1]})"
    return parts[0] if parts else None


def _typed_text(df: DataFrame, partition_keys: Any) -> DataFrame:
    """Type a CSV frame's string columns value by value (not the partition columns)."""
    from pyspark.sql.types import StringType

    from ._textchoice import type_text_columns

    skip = {k.lower() for k in partition_keys}
    names = [f.name for f in df.schema.fields
             if isinstance(f.dataType, StringType) and f.name.lower() not in skip]
    return type_text_columns(df, names)


def _partition_paths(catalog: Any, table: CatalogTable, predicate: str | None) -> list[str] | None:
    """Locations of the partitions that ``predicate`` keeps; None when all of the table is read."""
    if not table.partition_keys or not predicate:
        return None
    return [p.location for p in catalog.get_partitions(table, predicate)]


def _read_partitions(glue_ctx: GlueContext, table: CatalogTable, paths: list[str], fmt: str,
                     spark_options: dict[str, str], source: Any, ctx: str | None,
                     schema: str | None, json_records: bool = False,
                     tracking: Mapping[str, Any] | None = None,
                     records: bool = False,
                     partition_types: Mapping[str, str] | None = None) -> DataFrame:
    """Read the kept partitions as one source (one ctx) rooted at the table's location, so the
    partition columns come from the folder names as for a whole-table read."""
    planner = dict(source.planner_kwargs(), base_path=table.location)
    return _read_file_source(glue_ctx, paths, fmt, spark_options, planner, ctx, schema,
                             source.fail_fast, json_records=json_records, tracking=tracking,
                             records=records, partition_types=partition_types)


def _catalog_schema(table: CatalogTable, fmt: str, options: dict[str, str],
                    as_text: bool = False) -> str | None:
    """Text formats take the catalog's column names and types (partition keys come from
    folders); ``as_text``: the names only, every column a string (typed later by value)."""
    if fmt in ("csv",) and table.columns:
        if as_text:
            return ", ".join("`" + c.name.replace("`", "``") + "` string" for c in table.columns)
        return table.spark_ddl(include_partition_keys=False)
    return None


def _empty_frame(glue_ctx: GlueContext, table: CatalogTable) -> DataFrame:
    ddl = table.spark_ddl(include_partition_keys=True)
    return glue_ctx.spark_session.createDataFrame([], ddl)


def _refuse_unreadable(files: list[Any], fmt: str, spark_options: Mapping[str, str]) -> None:
    """Without a started job nothing can be set aside (there is no run to record it in): the
    first file the quarantine checks refuse (``sources._inspect``: links, truncation, wrong
    format, a record over 64 MiB) fails the read in one line, with the same reason a started
    job would set it aside for, before Spark meets it. A zero-byte file is left to Spark, which
    reads it as no rows (nothing is lost), as it did before these checks."""
    from ..sources._inspect import inspect_files

    bad = [b for b in inspect_files(files, format=fmt, options=spark_options)
           if not (b.entry.size == 0 and b.reason.startswith("empty file"))]
    if bad:
        first = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise ReadError(
            f"cannot read {fmt} file {first.entry.path}: {first.reason}{more}. No job is "
            "started (Job.init was not called), so nothing can be set aside; start the job "
            "and give the source a transformation_ctx to set such files aside and go on with "
            "the others (docs/glue.md)")
