"""``GlueContext``: Glue's entry object, a thin skin over a SparkSession and lakemark's job.

Reads and writes go through :mod:`._read` / :mod:`._write` (which use the core job's planner,
manifest and sinks); this module only holds the Glue-shaped surface: ``create_dynamic_frame``,
``create_data_frame``, ``write_dynamic_frame``, ``getSink``/``getSource``, ``purge_s3_path``,
``spark_session``. Like Glue's (a subclass of SQLContext), it also answers ``sql``, ``read``,
``table`` and ``createDataFrame`` from its SparkSession.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError
from ._read import read_catalog, read_options_source
from ._write import write_catalog, write_jdbc, write_options_sink

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

    from ..catalog import Catalog
    from ..job import Job as CoreJob
    from .dynamicframe import DynamicFrame

__all__ = ["DataSink", "DataSource", "DynamicFrameReader", "DynamicFrameWriter", "GlueContext"]

log = logging.getLogger("lakemark.glue")

# SparkSession members that Glue scripts reach through the GlueContext (an SQLContext in Glue).
_SESSION_PASSTHROUGH = {"sql", "read", "readStream", "table", "createDataFrame", "range", "udf",
                        "catalog", "conf", "sparkContext"}


def _frame(glue_ctx: GlueContext, df: DataFrame, name: str) -> DynamicFrame:
    from .dynamicframe import DynamicFrame

    return DynamicFrame(df, glue_ctx, name)


def _to_df(frame: Any) -> DataFrame:
    from pyspark.sql import DataFrame

    if isinstance(frame, DataFrame):
        return frame
    to_df = getattr(frame, "toDF", None)
    if to_df is None:
        raise ConfigError(f"expected a DynamicFrame or DataFrame, got {type(frame).__name__}")
    df: DataFrame = to_df()
    return df


class GlueContext:
    """Glue's context over a SparkContext (or, with none given, lakemark's session)."""

    def __init__(self, sparkContext: SparkContext | None = None, **options: Any) -> None:  # noqa: N803
        from pyspark.sql import SparkSession

        from ..spark_io import install

        install()  # the script's own spark.read/df.write on s3:// (lakemark.spark_io)
        if options:
            log.debug("GlueContext options ignored: %s", sorted(options))
        session: SparkSession | None
        if sparkContext is None:
            from ..spark import get_spark

            session = get_spark()
        else:
            session = SparkSession.getActiveSession() or SparkSession(sparkContext)
        assert session is not None
        from ..tables import register

        register(session)  # format("delta") with no jars (lakemark.tables)
        # Over Spark Connect the frames are built with DataFrame operations only; what needs
        # the JVM here (RDD record functions, getNumPartitions) refuses by name.
        self.spark_session: SparkSession = session
        self._job: CoreJob | None = None
        self._catalog: Catalog | None = None
        self.create_dynamic_frame = DynamicFrameReader(self)
        self.create_data_frame = DataFrameReader(self)
        self.write_dynamic_frame = DynamicFrameWriter(self)
        self.write_data_frame = DataFrameWriter(self)

    # -- plumbing for the facade --------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name == "sparkContext":
            from ..connect_compat import is_connect, not_over_connect

            if is_connect(self.spark_session):  # lakemark run --remote's stand-in, if any
                import pyspark

                if getattr(pyspark.SparkContext, "_session", None) is self.spark_session:
                    return pyspark.SparkContext.getOrCreate()
                not_over_connect(self.spark_session, "GlueContext.sparkContext")
        if name in _SESSION_PASSTHROUGH:
            return getattr(self.spark_session, name)
        raise AttributeError(
            f"GlueContext has no attribute {name!r} (not provided by lakemark's Glue facade)"
        )

    @property
    def sparkSession(self) -> SparkSession:  # noqa: N802
        return self.spark_session

    def attach_job(self, job: CoreJob | None) -> None:
        """Route reads and writes through ``job`` (set by ``Job.init``)."""
        self._job = job

    def active_job(self) -> CoreJob | None:
        """The core job of this script while it runs, else None (reads are then untracked)."""
        job = self._job
        if job is None:
            return None
        try:
            return job if job.run.status == "RUNNING" else None
        except Exception:  # noqa: BLE001 - a job not started yet tracks nothing
            return None

    def catalog(self) -> Catalog:
        """The data catalog (``--catalog`` / ``LAKEMARK_CATALOG``), opened once."""
        if self._catalog is None:
            from ..catalog import require_catalog

            self._catalog = require_catalog(None)
        return self._catalog

    def get_logger(self) -> logging.Logger:
        return logging.getLogger("lakemark.glue.script")

    # -- sources --------------------------------------------------------------------------------
    def create_dynamic_frame_from_catalog(
        self, database: str | None = None, table_name: str | None = None,
        redshift_tmp_dir: str = "", transformation_ctx: str = "",
        push_down_predicate: str = "", additional_options: Mapping[str, Any] | None = None,
        catalog_id: str | None = None, **kwargs: Any,
    ) -> DynamicFrame:
        df = self._catalog_df(database, table_name, transformation_ctx, push_down_predicate,
                              additional_options, kwargs, records=True)
        return _frame(self, df, transformation_ctx or f"{database}.{table_name}")

    def create_dynamic_frame_from_options(
        self, connection_type: str, connection_options: Mapping[str, Any] | None = None,
        format: str | None = None, format_options: Mapping[str, Any] | None = None,
        transformation_ctx: str = "", push_down_predicate: str = "", **kwargs: Any,
    ) -> DynamicFrame:
        _no_extra_kwargs("create_dynamic_frame.from_options", kwargs)
        df = read_options_source(self, connection_type, connection_options, format,
                                 format_options, transformation_ctx, push_down_predicate,
                                 records=True)
        return _frame(self, df, transformation_ctx or "from_options")

    def create_dynamic_frame_from_rdd(self, data: Any, name: str, schema: Any = None,
                                      sample_ratio: float | None = None,
                                      transformation_ctx: str = "", **kwargs: Any) -> DynamicFrame:
        df = self.spark_session.createDataFrame(data, schema=schema, samplingRatio=sample_ratio)
        return _frame(self, df, name)

    def create_data_frame_from_catalog(
        self, database: str | None = None, table_name: str | None = None,
        redshift_tmp_dir: str = "", transformation_ctx: str = "",
        push_down_predicate: str = "", additional_options: Mapping[str, Any] | None = None,
        catalog_id: str | None = None, **kwargs: Any,
    ) -> DataFrame:
        return self._catalog_df(database, table_name, transformation_ctx, push_down_predicate,
                                additional_options, kwargs)

    def create_data_frame_from_options(
        self, connection_type: str, connection_options: Mapping[str, Any] | None = None,
        format: str | None = None, format_options: Mapping[str, Any] | None = None,
        transformation_ctx: str = "", push_down_predicate: str = "", **kwargs: Any,
    ) -> DataFrame:
        _no_extra_kwargs("create_data_frame.from_options", kwargs)
        return read_options_source(self, connection_type, connection_options, format,
                                   format_options, transformation_ctx, push_down_predicate)

    def _catalog_df(self, database: str | None, table_name: str | None, ctx: str,
                    predicate: str, additional_options: Mapping[str, Any] | None,
                    kwargs: Mapping[str, Any], records: bool = False) -> DataFrame:
        database = database or kwargs.get("name_space")
        table_name = table_name or kwargs.get("table_name")
        extra = {k: v for k, v in kwargs.items() if k != "name_space"}
        _no_extra_kwargs("create_dynamic_frame.from_catalog", extra)
        if not database or not table_name:
            raise ConfigError("from_catalog needs database= and table_name=")
        return read_catalog(self, database, table_name, ctx, predicate, additional_options,
                            records=records)

    def getSource(self, connection_type: str, format: str | None = None,  # noqa: N802
                  transformation_ctx: str = "", push_down_predicate: str = "",
                  **options: Any) -> DataSource:
        return DataSource(self, connection_type, format, transformation_ctx, options)

    # -- sinks ----------------------------------------------------------------------------------
    def write_dynamic_frame_from_options(
        self, frame: Any, connection_type: str, connection_options: Mapping[str, Any] | None = None,
        format: str | None = None, format_options: Mapping[str, Any] | None = None,
        transformation_ctx: str = "", **kwargs: Any,
    ) -> Any:
        _no_extra_kwargs("write_dynamic_frame.from_options", kwargs)
        write_options_sink(self, _to_df(frame), connection_type, connection_options, format,
                           format_options, transformation_ctx)
        return frame

    def write_dynamic_frame_from_catalog(
        self, frame: Any, database: str | None = None, table_name: str | None = None,
        redshift_tmp_dir: str = "", transformation_ctx: str = "",
        additional_options: Mapping[str, Any] | None = None, catalog_id: str | None = None,
        **kwargs: Any,
    ) -> Any:
        database = database or kwargs.pop("name_space", None)
        _no_extra_kwargs("write_dynamic_frame.from_catalog", kwargs)
        if not database or not table_name:
            raise ConfigError("write_dynamic_frame.from_catalog needs database= and table_name=")
        write_catalog(self, _to_df(frame), database, table_name, transformation_ctx,
                      additional_options)
        return frame

    def write_dynamic_frame_from_jdbc_conf(
        self, frame: Any, catalog_connection: str,
        connection_options: Mapping[str, Any] | None = None, redshift_tmp_dir: str = "",
        transformation_ctx: str = "", catalog_id: str | None = None, **kwargs: Any,
    ) -> Any:
        _no_extra_kwargs("write_dynamic_frame.from_jdbc_conf", kwargs)
        write_jdbc(self, _to_df(frame), catalog_connection, connection_options or {},
                   transformation_ctx or None)
        return frame

    def write_from_options(self, frame_or_dfc: Any, connection_type: str,
                           connection_options: Mapping[str, Any] | None = None,
                           format: str | None = None,
                           format_options: Mapping[str, Any] | None = None,
                           transformation_ctx: str = "", **kwargs: Any) -> Any:
        return self.write_dynamic_frame_from_options(
            frame_or_dfc, connection_type, connection_options, format, format_options,
            transformation_ctx, **kwargs)

    def getSink(self, connection_type: str, format: str | None = None,  # noqa: N802
                transformation_ctx: str = "", **options: Any) -> DataSink:
        return DataSink(self, connection_type, format, transformation_ctx, options)

    # -- housekeeping ---------------------------------------------------------------------------
    def purge_s3_path(self, s3_path: str, options: Mapping[str, Any] | None = None,
                      transformation_ctx: str = "") -> None:
        """Delete the files under ``s3_path`` older than ``retentionPeriod`` hours (default 168)."""
        from ._purge import purge_path

        purge_path(s3_path, options or {})

    def purge_table(self, database: str, table_name: str,
                    options: Mapping[str, Any] | None = None, transformation_ctx: str = "",
                    catalog_id: str | None = None) -> None:
        """Delete the files of a catalog table older than ``retentionPeriod`` hours."""
        from ._purge import purge_path

        purge_path(self.catalog().get_table(database, table_name).location, options or {})

    def forEachBatch(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802
        raise UnsupportedError("GlueContext.forEachBatch (Glue streaming) is not supported")

    def extract_jdbc_conf(self, connection_name: str,
                          catalog_id: str | None = None) -> dict[str, str]:
        """The JDBC settings of a catalog connection (``url``, ``user``, ``password`` …)."""
        props = self.catalog().get_connection(connection_name, with_password=True).properties
        url = props.get("JDBC_CONNECTION_URL", "")
        return {
            "url": url,
            "fullUrl": url,
            "user": props.get("USERNAME", ""),
            "password": props.get("PASSWORD", ""),
            "vendor": url.split(":")[1] if url.count(":") >= 2 else "",
        }


def _no_extra_kwargs(api: str, kwargs: Mapping[str, Any]) -> None:
    if kwargs:
        raise UnsupportedError(f"{api}: argument(s) not supported: {', '.join(sorted(kwargs))}")


class DynamicFrameReader:
    """``glueContext.create_dynamic_frame``: ``from_catalog``, ``from_options``, ``from_rdd``."""

    def __init__(self, glue_context: GlueContext) -> None:
        self._glue_context = glue_context

    def from_catalog(self, *args: Any, **kwargs: Any) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_catalog(*args, **kwargs)

    def from_options(self, *args: Any, **kwargs: Any) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_options(*args, **kwargs)

    def from_rdd(self, *args: Any, **kwargs: Any) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_rdd(*args, **kwargs)


class DataFrameReader:
    """``glueContext.create_data_frame``: ``from_catalog``, ``from_options`` (Spark DataFrames)."""

    def __init__(self, glue_context: GlueContext) -> None:
        self._glue_context = glue_context

    def from_catalog(self, *args: Any, **kwargs: Any) -> DataFrame:
        return self._glue_context.create_data_frame_from_catalog(*args, **kwargs)

    def from_options(self, *args: Any, **kwargs: Any) -> DataFrame:
        return self._glue_context.create_data_frame_from_options(*args, **kwargs)


class DynamicFrameWriter:
    """``glueContext.write_dynamic_frame``: ``from_options``, ``from_catalog``,
    ``from_jdbc_conf``."""

    def __init__(self, glue_context: GlueContext) -> None:
        self._glue_context = glue_context

    def from_options(self, *args: Any, **kwargs: Any) -> Any:
        return self._glue_context.write_dynamic_frame_from_options(*args, **kwargs)

    def from_catalog(self, *args: Any, **kwargs: Any) -> Any:
        return self._glue_context.write_dynamic_frame_from_catalog(*args, **kwargs)

    def from_jdbc_conf(self, *args: Any, **kwargs: Any) -> Any:
        return self._glue_context.write_dynamic_frame_from_jdbc_conf(*args, **kwargs)


class DataFrameWriter:
    """``glueContext.write_data_frame.from_catalog`` (a Spark DataFrame to a catalog table)."""

    def __init__(self, glue_context: GlueContext) -> None:
        self._glue_context = glue_context

    def from_catalog(self, frame: DataFrame, database: str, table_name: str,
                     transformation_ctx: str = "",
                     additional_options: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        _no_extra_kwargs("write_data_frame.from_catalog", kwargs)
        write_catalog(self._glue_context, frame, database, table_name, transformation_ctx,
                      additional_options)


class DataSource:
    """``glueContext.getSource(...)``: ``setFormat`` then ``getFrame()``."""

    def __init__(self, glue_context: GlueContext, connection_type: str, format: str | None,
                 transformation_ctx: str, options: Mapping[str, Any]) -> None:
        self._glue_context = glue_context
        self._connection_type = connection_type
        self._format = format
        self._format_options: dict[str, Any] = {}
        self._ctx = transformation_ctx
        self._options = dict(options)

    def setFormat(self, format: str, **options: Any) -> None:  # noqa: N802
        self._format = format
        self._format_options = dict(options)

    def getFrame(self, **kwargs: Any) -> DynamicFrame:  # noqa: N802
        return self._glue_context.create_dynamic_frame_from_options(
            self._connection_type, self._options, self._format, self._format_options, self._ctx)


class DataSink:
    """``glueContext.getSink(...)``: ``setFormat``, ``setCatalogInfo``, then ``writeFrame``."""

    def __init__(self, glue_context: GlueContext, connection_type: str, format: str | None,
                 transformation_ctx: str, options: Mapping[str, Any]) -> None:
        self._glue_context = glue_context
        self._connection_type = connection_type
        self._format = format
        self._format_options: dict[str, Any] = {}
        self._ctx = transformation_ctx
        self._options = dict(options)
        self._catalog_info: tuple[str, str] | None = None

    def setFormat(self, format: str, **options: Any) -> None:  # noqa: N802
        self._format = format
        self._format_options = dict(options)

    def setCatalogInfo(self, catalogDatabase: str, catalogTableName: str,  # noqa: N802, N803
                       catalogId: str | None = None) -> None:  # noqa: N803
        self._catalog_info = (catalogDatabase, catalogTableName)

    def setAccumulableSize(self, size: int) -> None:  # noqa: N802
        """Accepted for compatibility; lakemark needs no accumulable."""

    def writeFrame(self, dynamic_frame: Any, info: str = "") -> Any:  # noqa: N802
        options = dict(self._options)
        update_catalog = str(options.pop("enableUpdateCatalog", False)).lower() == "true"
        options.pop("updateBehavior", None)
        df = _to_df(dynamic_frame)
        fmt = self._format or "parquet"
        if self._catalog_info is not None:
            from ._iceberg import iceberg_sink_table, write_iceberg_catalog

            table = iceberg_sink_table(self._glue_context, self._catalog_info)
            if table is not None:  # an Iceberg table: a table commit, not files at a path
                keys = list(options.pop("partitionKeys", None) or [])
                options.pop("path", None)
                write_iceberg_catalog(self._glue_context, df, table,
                                      {**options, **self._format_options}, keys, self._ctx)
                return dynamic_frame
        if update_catalog:  # check before writing, so a refused update writes nothing
            if self._catalog_info is None:
                raise ConfigError("getSink(enableUpdateCatalog=True) needs setCatalogInfo(...)")
            from ._catalog_update import check_catalog_update

            check_catalog_update(self._glue_context.catalog(), self._catalog_info,
                                 options.get("path"), fmt)
        write_options_sink(self._glue_context, df, self._connection_type, options,
                           fmt, self._format_options, self._ctx)
        if update_catalog:
            from ._catalog_update import update_catalog_table

            assert self._catalog_info is not None
            update_catalog_table(self._glue_context.catalog(), self._catalog_info, df,
                                 str(options.get("path")), fmt,
                                 list(options.get("partitionKeys") or []))
        return dynamic_frame

    def write(self, dynamic_frame: Any) -> Any:
        return self.writeFrame(dynamic_frame)
