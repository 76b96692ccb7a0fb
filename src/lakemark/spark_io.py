"""Plain Spark reads and writes of ``s3://`` paths in sessions that have no S3A connector.

Glue scripts mix DynamicFrame and DataFrame I/O freely: ``spark.read.json("s3://…")``,
``df.write.partitionBy("d").parquet("s3://…")``, ``spark.read.format("csv").load(…)``. On Glue
these work because Glue's Spark has its S3 connector; a local or plain Spark session usually has
no S3A, and Spark fails with ``No FileSystem for scheme "s3"``. :func:`install` (called when
lakemark sets up a session or a GlueContext) wraps pyspark's ``DataFrameReader`` and
``DataFrameWriter`` so that, **only when the session has no S3A** and a path is ``s3://`` /
``s3a://`` / ``s3n://``:

* reads go through lakemark's own read path (``sources.read_files``: listing with the S3 API,
  the Arrow reader on the executors, Hive ``key=value`` folders as partition columns), with the
  format, options and schema the script set;
* writes go through lakemark's folder sink (``sinks.write_target``: Arrow writer, one file per
  task, ``partitionBy`` folders) with Spark's save modes: ``errorifexists`` (the default) fails
  if the folder has files, ``ignore`` then does nothing, ``append`` and ``overwrite`` as Spark.

A path in a bucket mapped to a local folder (``lakemark run --bucket-map``, see
``storage._bucket_map``) is handed to Spark's own reader or writer as that folder, whether or
not S3A is present.

``format("delta")`` and ``format("iceberg")`` (no jars for them in the session) are served
per format and direction by ``LAKEMARK_FORMAT_SERVING`` (:mod:`lakemark.datasources`). Where
it says ``datasource`` — by default Delta writes — Spark's Python data source does the work and
this wrapper only passes on what Spark's data source API cannot carry (the save modes
``errorifexists``/``ignore``, ``partitionBy``, the driver's endpoint and catalog settings) as
hidden options (:mod:`lakemark.datasources._classic`). Where it says ``patch`` this module
serves the call itself, and that is what must stay here until Spark's data source API matches
it (bench/README.md sections 10 and 10b, measured for issue 33):

* Delta reads: Spark's Parquet reader on the snapshot's files (the data source reads a 1 GiB
  table at 0.52x ``spark.read.parquet``, this path at 0.96x);
* Iceberg reads and writes: ``tables._iceberg`` (the data source reads at 0.63x and writes at
  0.47x this path on 4 M rows, quiet machine); ``format("iceberg")`` of a table name, and
  ``spark.table`` / ``spark.read.table`` of a name qualified by a Spark catalog with
  Iceberg's plugin, unless Iceberg's Spark runtime is on the classpath;
* ``LAKEMARK_FORMAT_SERVING=patch``, the way back for every format.

``spark.sql`` statements on Delta/Iceberg tables (``delta.`path```, ``VERSION AS OF``,
``DESCRIBE HISTORY``, ``CREATE TABLE … USING delta AS SELECT``) are served by
``tables._sql``: Spark has no Python extension point for SQL syntax.

Every other call — local paths, tables, JDBC, and any path when S3A is present — is Spark's
own, untouched. Formats: those lakemark reads (parquet, json, csv, orc, avro, text, xml) and
writes (parquet, json, csv, delta); an ORC write needs S3A and is refused naming it (the folder
sink writes ORC only through Spark), as is any other format on ``s3://``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, UnsupportedError
from ._recorded import Record, option_text, record_option, record_options, recording

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["install", "is_s3_path"]

log = logging.getLogger("lakemark.spark_io")

_S3 = ("s3://", "s3a://", "s3n://")
_STATE = "_lakemark_io"
_installed = False


def is_s3_path(path: Any) -> bool:
    """Whether ``path`` (or every path of a list) is an S3 URI."""
    if isinstance(path, str):
        return path.lower().startswith(_S3)
    if isinstance(path, (list, tuple)) and path:
        return all(isinstance(p, str) and p.lower().startswith(_S3) for p in path)
    return False


def _mapped(path: Any) -> Any:
    """``path`` (a string or a list) with every mapped S3 URI replaced by its local folder."""
    from .storage import mapped_path

    if isinstance(path, str):
        return mapped_path(path) or path
    if isinstance(path, (list, tuple)):
        return [mapped_path(p) or p if isinstance(p, str) else p for p in path]
    return path


def _s3_uri(path: str) -> str:
    """``s3a://b/k`` and ``s3n://b/k`` as the ``s3://b/k`` lakemark's storage layer takes."""
    scheme, _, rest = path.partition("://")
    return "s3://" + rest


def _state(obj: Any) -> dict[str, Any]:
    state: dict[str, Any] | None = obj.__dict__.get(_STATE)
    if state is None:
        state = {"format": None, "options": {}, "schema": None, "mode": None, "partition": []}
        obj.__dict__[_STATE] = state
    return state


def _no_s3a(spark: SparkSession) -> bool:
    from .sinks._spark_writer import has_s3a

    return not has_s3a(spark)


# ------------------------------------------------------------------------------------ reads

def _read(spark: SparkSession, paths: Iterable[str], fmt: str, options: Mapping[str, str],
          schema: Any) -> DataFrame:
    from .planning import plan_everything
    from .sources import read_files
    from .storage import list_files

    opts = {k: v for k, v in options.items() if k.lower() not in ("path", "mode", "basepath")}
    mode = next((v for k, v in options.items() if k.lower() == "mode"), "PERMISSIVE").upper()
    frames = []
    for path in paths:
        listing = list_files(_s3_uri(path), recurse=True)
        files = plan_everything(listing.files).files
        frames.append(read_files(spark, files, root=listing.root, format=fmt, options=opts,
                                 schema=schema, mode=mode))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out


def _lakemark_delta(spark: SparkSession) -> bool:
    """Whether ``format("delta")`` in this session is lakemark's (see lakemark.tables): it is
    registered here on first use unless Delta's own jars are on the classpath."""
    from .tables import register

    return register(spark)


def driver_endpoint() -> str:
    """The driver's S3 endpoint settings as the delta source's hidden option (no secrets)."""
    import json
    import os

    keys = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION")
    return json.dumps({k: os.environ[k] for k in keys if os.environ.get(k)})


def _served(spark: SparkSession, fmt: str, op: str) -> bool:
    """Whether lakemark's Python data source serves ``op`` (``read``/``write``) of ``fmt``
    here (the serving switch, :func:`lakemark.datasources.serving`)."""
    from .datasources import apply_serving

    return apply_serving(spark, fmt, op)


def _delta_load(reader: Any, original: Callable[..., DataFrame], path: str,
                args: tuple[Any, ...], kwargs: dict[str, Any]) -> DataFrame:
    """``format("delta")``: Spark's Parquet reader on the snapshot's files where the JVM can
    open them, else lakemark's data source with the driver's endpoint settings. Delta reads
    are served by ``patch`` by default: the data source reads a 1 GiB table at ~0.5x Spark's
    Parquet reader (bench/README.md section 10)."""
    from .tables import FS_OPTION, READER_OPTION, TZ_OPTION, fast_read

    state = _state(reader)
    options = {k: v for k, v in state["options"].items()}
    options.update({k: option_text(v) for k, v in kwargs.items()
                    if k not in ("path", "format", "schema") and v is not None})
    # a timestampAsOf without a zone is in the session's time zone, as Delta reads it
    zone = str(reader._spark.conf.get("spark.sql.session.timeZone") or "UTC")
    options[TZ_OPTION] = zone
    reader._jreader = reader._jreader.option(TZ_OPTION, zone)
    forced = {k.lower(): v for k, v in options.items()}.get(READER_OPTION.lower(), "")
    if forced.lower() not in ("", "auto", "datasource", "parquet"):
        raise ConfigError(f"option {READER_OPTION} must be auto, parquet or datasource, not "
                          f"{forced!r}")
    if state["schema"] is None and kwargs.get("schema") is None and \
            forced.lower() != "datasource" and not _served(reader._spark, "delta", "read"):
        frame = fast_read(reader._spark, path, options)
        if frame is not None:
            return frame
    reader._jreader = reader._jreader.option(FS_OPTION, driver_endpoint())
    if _served(reader._spark, "delta", "read"):
        from .datasources._classic import lakemark_errors

        with lakemark_errors():  # lakemark's error raised in the planning worker, as itself
            return original(reader, *args, **kwargs)
    return original(reader, *args, **kwargs)


def _lakemark_iceberg(spark: SparkSession) -> bool:
    """Whether ``format("iceberg")`` in this session is lakemark's (no Iceberg runtime jar)."""
    from .tables import lakemark_iceberg

    return lakemark_iceberg(spark)


def _iceberg_load(reader: Any, table: str, named: dict[str, Any]) -> DataFrame:
    from .tables import load_iceberg

    state = _state(reader)
    options = dict(state["options"])
    options.update({k: option_text(v) for k, v in named.items()
                    if k not in ("path", "format", "schema") and v is not None})
    schema = named.get("schema") or state["schema"]
    if schema is None and _served(reader._spark, "iceberg", "read"):
        from .datasources._classic import load

        return load(reader._spark, "iceberg", table, options, driver_endpoint())
    return load_iceberg(reader._spark, table, options, schema)


def _iceberg_table_name(spark: SparkSession, name: Any) -> bool:
    """Whether ``spark.table(name)`` names a table of a Spark catalog with Iceberg's plugin
    that lakemark serves (no Iceberg runtime jar in the session)."""
    from .catalog._iceberg_spark import is_iceberg_plugin

    if not isinstance(name, str) or len(name.split(".")) != 3:
        return False
    try:
        plugin = spark.conf.get(f"spark.sql.catalog.{name.split('.')[0]}", None)
    except Exception:  # a stopped session
        return False
    return is_iceberg_plugin(plugin) and _lakemark_iceberg(spark)


def _table_call(original: Callable[..., DataFrame], reader_of: Callable[[Any], Any]
                ) -> Callable[..., DataFrame]:
    """``spark.table(name)`` / ``spark.read.table(name)``: a catalog-qualified Iceberg name is
    read by lakemark's Iceberg support, resolved as ``load(name)`` resolves it."""
    def method(self: Any, tableName: str, *args: Any, **kwargs: Any) -> DataFrame:  # noqa: N803
        reader = reader_of(self)
        if _iceberg_table_name(reader._spark, tableName):
            return _iceberg_load(reader, tableName, {})
        return original(self, tableName, *args, **kwargs)
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


def _iceberg_save(writer: Any, table: str, state: dict[str, Any], named: dict[str, Any]) -> None:
    from .tables import save_iceberg

    mode, parts, options = _save_arguments(state, named)
    if _served(writer._spark, "iceberg", "write"):
        from .datasources._classic import save

        return save(writer._df, "iceberg", table, mode, parts, options, driver_endpoint())
    save_iceberg(writer._df, table, mode=mode, partition_by=parts, options=options)


def _reader_call(fmt_of: Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], str | None],
                 original: Callable[..., DataFrame],
                 positional: tuple[str, ...]) -> Callable[..., DataFrame]:
    """A DataFrameReader method that reads S3 paths itself when the session has no S3A."""
    def method(self: Any, *args: Any, **kwargs: Any) -> DataFrame:
        named = dict(zip(positional, args))
        named.update(kwargs)
        key = "path" if "path" in named else "paths"
        path: Any = named.get(key)
        local = _mapped(path)
        state = _state(self)
        if isinstance(path, str) and str(fmt_of(state, args, named) or "").lower() == "iceberg" \
                and _lakemark_iceberg(self._spark):
            return _iceberg_load(self, path, named)
        if isinstance(local, str) and str(fmt_of(state, args, named) or "").lower() == "delta" \
                and _lakemark_delta(self._spark):
            if local != path:  # a mapped bucket: the table in its local folder
                args, kwargs = (), {**named, key: local}
            return _delta_load(self, original, local, args, kwargs)
        if local != path:  # a mapped bucket: Spark reads the local folder
            named[key] = local
            return original(self, **named)
        if not is_s3_path(path) or not _no_s3a(self._spark):
            return original(self, *args, **kwargs)
        fmt = fmt_of(state, args, named)
        if not fmt:
            raise ConfigError(f"reading {path}: no format given (use .format(...) or "
                              "spark.read.parquet/json/csv/…)")
        options = dict(state["options"])
        schema = named.get("schema") or state["schema"]
        for key, value in named.items():
            if key not in ("path", "paths", "schema", "format") and value is not None:
                options[key] = option_text(value)
        paths = [path] if isinstance(path, str) else list(path)
        return _read(self._spark, paths, fmt.lower(), options, schema)
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


def _parquet_call(original: Callable[..., DataFrame]) -> Callable[..., DataFrame]:
    """``parquet(*paths, **options)``: paths are positional."""
    def method(self: Any, *paths: Any, **options: Any) -> DataFrame:
        local = _mapped(list(paths))
        if local != list(paths):  # a mapped bucket: Spark reads the local folder
            return original(self, *local, **options)
        if not is_s3_path(list(paths)) or not _no_s3a(self._spark):
            return original(self, *paths, **options)
        merged = dict(_state(self)["options"])
        merged.update({k: option_text(v) for k, v in options.items() if v is not None})
        return _read(self._spark, list(paths), "parquet", merged, _state(self)["schema"])
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


# ----------------------------------------------------------------------------------- writes

_MODES = {"append": "append", "overwrite": "overwrite", "ignore": "ignore",
          "error": "error", "errorifexists": "error", "default": "error"}


def _has_files(uri: str) -> bool:
    from .storage import list_files

    try:
        return bool(list_files(uri, recurse=True).files)
    except Exception:  # noqa: BLE001 - nothing there yet
        return False


def _write(df: DataFrame, path: str, fmt: str, mode: str | None, partition_by: list[str],
           options: Mapping[str, str]) -> None:
    from .sinks import write_target

    if fmt.lower() not in ("parquet", "json", "csv", "orc", "delta"):
        raise UnsupportedError(f"writing {path}: format {fmt!r} cannot be written to S3 "
                               "without the S3A connector (lakemark writes parquet, json, "
                               "csv, orc, delta)")
    uri = _s3_uri(path)
    how = _MODES.get((mode or "errorifexists").lower())
    if how is None:
        raise ConfigError(f"writing {path}: unknown save mode {mode!r} (append, overwrite, "
                          "ignore, error/errorifexists)")
    if how in ("error", "ignore") and _has_files(uri):
        if how == "ignore":
            log.info("writing %s skipped: it exists and the save mode is 'ignore'", path)
            return
        raise ConfigError(f"[PATH_ALREADY_EXISTS] Path {path} already exists. Set mode as "
                          "\"overwrite\" to overwrite the existing path.")
    write_target(df.sparkSession, df, uri, format=fmt.lower(), mode=(
        "overwrite" if how == "overwrite" else "append"), partition_by=partition_by,
        options=dict(options))


def _delta_write(spark: SparkSession, fmt: str | None, state: dict[str, Any],
                 named: dict[str, Any]) -> bool:
    """Whether a ``save`` is lakemark's Delta write: format ``delta``, or no format at all but
    Delta's ``txnAppId``/``txnVersion`` options (which only a Delta table can honour: Spark's
    default Parquet writer would silently ignore them and duplicate a retried write)."""
    if fmt is not None and fmt.lower() != "delta":
        return False
    given = {k.lower(): str(v) for k, v in [*state["options"].items(), *named.items()]}
    if given.get("lakemark.writer", "").lower() == "datasource":
        if named.get("partitionBy") or state["partition"]:
            # Spark would refuse it with "partitioning ... do not match the existing table's":
            # its Python data source API cannot declare or receive partition columns
            raise UnsupportedError("format('delta') with lakemark.writer=datasource cannot "
                                   "take partitionBy (Spark's Python data source writer is "
                                   "given no partition columns); write without that option")
        return False  # the data source's own writer (lakemark.tables._delta_write)
    if fmt is None:
        keys = {k.lower() for k in [*state["options"], *named]}
        if not keys & {"txnappid", "txnversion"}:
            return False
    return _lakemark_delta(spark)


def _delta_save(writer: Any, path: str, state: dict[str, Any], named: dict[str, Any]) -> None:
    from .tables import save_delta
    from .tables._delta_write import takes_options

    mode, parts, options = _save_arguments(state, named)
    if _served(writer._spark, "delta", "write") and takes_options(options):
        from .datasources._classic import save

        return save(writer._df, "delta", path, mode, parts, options, driver_endpoint())
    save_delta(writer._df, path, mode=mode, partition_by=parts, options=options)


def _save_arguments(state: dict[str, Any], named: dict[str, Any]
                    ) -> tuple[str | None, list[str], dict[str, str]]:
    """The mode, partition columns and options of a ``save`` call: its own arguments over what
    the writer's builder methods (``mode``, ``partitionBy``, ``option``) recorded."""
    parts = named.get("partitionBy") or state["partition"]
    if isinstance(parts, str):
        parts = [parts]
    options = dict(state["options"])
    options.update({k: option_text(v) for k, v in named.items()
                    if k not in ("path", "mode", "partitionBy", "format") and v is not None})
    return named.get("mode") or state["mode"], list(parts or ()), options


def _writer_call(fmt_of: Callable[[dict[str, Any], dict[str, Any]], str | None],
                 original: Callable[..., None], positional: tuple[str, ...]) -> Callable[..., None]:
    """A DataFrameWriter method that writes S3 paths itself when the session has no S3A."""
    def method(self: Any, *args: Any, **kwargs: Any) -> None:
        named = dict(zip(positional, args))
        named.update(kwargs)
        path: Any = named.get("path")
        local = _mapped(path)
        state = _state(self)
        if isinstance(path, str) and str(fmt_of(state, named) or "").lower() == "iceberg" \
                and _lakemark_iceberg(self._spark):
            _iceberg_save(self, path, state, named)
            return None
        if isinstance(local, str) and _delta_write(self._spark, fmt_of(state, named), state,
                                                   named):
            _delta_save(self, local, state, named)
            return None
        if local != path:  # a mapped bucket: Spark writes the local folder
            named["path"] = local
            return original(self, **named)
        if not is_s3_path(path) or not _no_s3a(self._spark):
            return original(self, *args, **kwargs)
        fmt = fmt_of(state, named) or "parquet"  # Spark's default source
        mode = named.get("mode") or state["mode"]
        parts = named.get("partitionBy") or state["partition"]
        if isinstance(parts, str):
            parts = [parts]
        options = dict(state["options"])
        for key, value in named.items():
            if key not in ("path", "mode", "partitionBy", "format") and value is not None:
                options[key] = option_text(value)
        _write(self._df, path, fmt, mode, list(parts), options)
        return None
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


# ------------------------------------------------------------------------------ installation

def _recording(original: Callable[..., Any], record: Record) -> Any:
    return recording(original, record, _state)


def _set(key: str) -> Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], None]:
    def record(state: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        value = args[0] if args else next(iter(kwargs.values()), None)
        state[key] = value
    return record


def _partition(state: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    cols: list[str] = []
    for a in args:
        cols.extend([a] if isinstance(a, str) else list(a))
    state["partition"] = cols


def install() -> None:
    """Wrap pyspark's reader and writer once per process (module docstring)."""
    global _installed
    if _installed:
        return
    try:
        from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return
    R, W = DataFrameReader, DataFrameWriter
    R.format = _recording(R.format, _set("format"))  # type: ignore[method-assign]
    R.schema = _recording(R.schema, _set("schema"))  # type: ignore[method-assign]
    R.option = _recording(R.option, record_option)  # type: ignore[method-assign]
    R.options = _recording(R.options, record_options)  # type: ignore[method-assign]

    def given(kind: str) -> Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], str]:
        return lambda _state, _args, _named: kind

    def load_format(state: dict[str, Any], _args: tuple[Any, ...],
                    named: dict[str, Any]) -> str | None:
        return named.get("format") or state["format"] or "parquet"

    R.load = _reader_call(load_format, R.load, ("path", "format", "schema"))  # type: ignore[method-assign]
    R.json = _reader_call(given("json"), R.json, ("path", "schema"))  # type: ignore[method-assign]
    R.csv = _reader_call(given("csv"), R.csv, ("path", "schema"))  # type: ignore[method-assign]
    R.orc = _reader_call(given("orc"), R.orc, ("path",))  # type: ignore[method-assign]
    R.text = _reader_call(given("text"), R.text, ("paths",))  # type: ignore[method-assign]
    R.parquet = _parquet_call(R.parquet)  # type: ignore[method-assign]
    R.table = _table_call(R.table, lambda r: r)  # type: ignore[method-assign]
    from pyspark.sql import SparkSession

    SparkSession.table = _table_call(SparkSession.table,  # type: ignore[method-assign]
                                     lambda s: s.read)

    W.format = _recording(W.format, _set("format"))  # type: ignore[method-assign]
    W.mode = _recording(W.mode, _set("mode"))  # type: ignore[method-assign]
    W.option = _recording(W.option, record_option)  # type: ignore[method-assign]
    W.options = _recording(W.options, record_options)  # type: ignore[method-assign]
    W.partitionBy = _recording(W.partitionBy, _partition)  # type: ignore[method-assign]

    def wgiven(kind: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
        return lambda _state, _named: kind

    def save_format(state: dict[str, Any], named: dict[str, Any]) -> str | None:
        return named.get("format") or state["format"]

    W.save = _writer_call(save_format, W.save, ("path", "format", "mode", "partitionBy"))  # type: ignore[method-assign]
    W.parquet = _writer_call(wgiven("parquet"), W.parquet, ("path", "mode", "partitionBy"))  # type: ignore[method-assign]
    W.json = _writer_call(wgiven("json"), W.json, ("path", "mode"))  # type: ignore[method-assign]
    W.csv = _writer_call(wgiven("csv"), W.csv, ("path", "mode"))  # type: ignore[method-assign]
    W.orc = _writer_call(wgiven("orc"), W.orc, ("path", "mode", "partitionBy"))  # type: ignore[method-assign]
    W.text = _writer_call(wgiven("text"), W.text, ("path",))  # type: ignore[method-assign]
    from .tables._iceberg_v2 import install_writer_v2

    install_writer_v2()  # df.writeTo(…) on Iceberg tables
    from .tables._sql import install_sql

    install_sql()  # spark.sql on delta.`path`, time travel, DESCRIBE HISTORY, CTAS
    _installed = True
