"""The ``iceberg`` Python data source: reads of a snapshot and writes with one commit per write.

A table is named as ``load``/``save`` name it today (:func:`lakemark.tables._iceberg.
resolve_name`): ``db.table`` in lakemark's catalog (option ``iceberg_catalog``, else
``LAKEMARK_ICEBERG_CATALOG``, else the default), or ``cat.db.table`` of a Spark catalog with
Iceberg's plugin, whose ``spark.sql.catalog.cat.*`` settings lakemark's hook hands over in the
hidden option :data:`~lakemark.datasources.SPARK_CATALOG_OPTION` (Spark's Python workers cannot
read the session's settings).

Reads (:class:`IcebergReader`): the snapshot is the current one, or the one ``snapshot-id`` or
``as-of-timestamp`` (ms since the epoch) selects, as today; the filters Spark pushes become a
pyiceberg row filter that prunes data files by partition values and column statistics; the
files are planned on the driver into tasks and read with pyarrow in the Python workers
(:mod:`._iceberg_read`: by field id or the table's name mapping, so renamed or added columns
read right; pyiceberg's Arrow scan where the schema has nested columns).
Delete files are refused as today.

Writes (:class:`IcebergWriter`): save modes as today (``errorifexists`` refuses an existing
table, ``ignore`` then writes nothing), ``txnAppId``/``txnVersion`` (recorded in the snapshot
summary; a version already recorded writes nothing), ``mergeSchema``; tasks write Parquet
files into the table's ``data`` folder with the sink's Arrow writer and the driver's
``commit`` adds them in one Iceberg commit (:func:`lakemark.sinks._iceberg._commit`: the
sink's race and token checks). ``partitionBy`` gives a new table its partition fields (column
names or ``years``/``months``/``days``/``hours``/``truncate`` transforms, as the sink takes
them; an existing table keeps its own): each file holds one partition value, in a folder as
the sink writes it (:mod:`._iceberg_folders`).
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from ..errors import ConfigError, UnsupportedError
from ._iceberg_folders import folder_array, folder_kind, folder_name
from ._options import (
    PARTITION_OPTION,
    SAVE_MODE_OPTION,
    SPARK_CATALOG_OPTION,
    ZONE_OPTION,
    flag,
    lower_options,
    partition_by,
    save_mode,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.io import FileIO
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata
    from pyspark.sql.datasource import DataSourceWriter, Filter
    from pyspark.sql.types import StructType

    from ..catalog._iceberg import CatalogChoice

__all__ = ["IcebergReader", "IcebergSource", "IcebergWriter", "resolve"]

log = logging.getLogger("lakemark.datasources")

_READ = ("snapshot-id", "as-of-timestamp", "iceberg_catalog")
_WRITE = ("compression", "mergeschema", "txnappid", "txnversion", "iceberg_catalog")
_HIDDEN = {SAVE_MODE_OPTION.lower(), PARTITION_OPTION.lower(), ZONE_OPTION.lower(),
           SPARK_CATALOG_OPTION.lower()}
#: Bytes of data files per read task, before there are enough tasks for every core.
TASK_BYTES = 128 * 1024 * 1024


def resolve(table: str, options: dict[str, str]) -> tuple[str, CatalogChoice]:
    """``(name, catalog)`` as :func:`lakemark.tables._iceberg.resolve_name` resolves it, from
    the options alone (the Spark catalog's settings come in :data:`SPARK_CATALOG_OPTION`)."""
    from ..catalog._iceberg_spark import spark_catalog_spec

    lower = lower_options(options)
    catalog = lower.get("iceberg_catalog", ("", None))[1]
    raw = lower.get(SPARK_CATALOG_OPTION.lower())
    parts = table.split(".")
    if raw is None or len(parts) != 3:
        return table, catalog
    conf = {str(k): str(v) for k, v in json.loads(raw[1]).items()}
    if len(conf) == 1:  # only the plugin: lakemark's own catalog
        return ".".join(parts[1:]), catalog
    return table, spark_catalog_spec(parts[0], conf)


def _apply_env(options: Any) -> None:
    """The driver's S3 endpoint and Iceberg catalog settings (hidden option, JSON) into this
    Python worker's environment; an empty value unsets one (workers are reused)."""
    from ..tables import FS_OPTION

    raw = options.get(FS_OPTION)
    for key, value in (json.loads(raw) if raw else {}).items():
        if value:
            os.environ[str(key)] = str(value)
        else:
            os.environ.pop(str(key), None)


def _table_name(options: Any) -> str:
    path = options.get("path") or ""
    if not path:
        raise ConfigError("format 'iceberg' needs a table name: .load(name) / .save(name)")
    return str(path)


def _snapshot_id(table: str, iceberg: Table, options: dict[str, str]) -> int | None:
    """The snapshot a read is of: ``snapshot-id``, ``as-of-timestamp`` or the current one."""
    from ..tables._iceberg import _option, snapshot_of

    snapshot_id, as_of = _option(options, "snapshot-id"), _option(options, "as-of-timestamp")
    if snapshot_id is not None and as_of is not None:
        raise ConfigError(f"reading Iceberg table {table}: give snapshot-id or as-of-timestamp, "
                          "not both")
    return snapshot_of(table, iceberg, snapshot_id, as_of)


class _Files(InputPartition):  # type: ignore[misc]
    """The file scan tasks one Spark task reads."""

    def __init__(self, index: int, tasks: list[Any]) -> None:
        super().__init__(index)
        self.tasks = tasks


def _group(tasks: Sequence[Any], parallelism: int) -> list[list[Any]]:
    """Tasks in groups of balanced size (largest first onto the lightest group)."""
    total = sum(max(int(t.file.file_size_in_bytes), 1) for t in tasks)
    count = min(len(tasks), max(parallelism, -(-total // TASK_BYTES), 1))
    groups: list[list[Any]] = [[] for _ in range(count)]
    loads = [0] * count
    for t in sorted(tasks, key=lambda t: -int(t.file.file_size_in_bytes)):
        i = loads.index(min(loads))
        groups[i].append(t)
        loads[i] += max(int(t.file.file_size_in_bytes), 1)
    return [g for g in groups if g]


class IcebergReader(DataSourceReader):  # type: ignore[misc]
    """Reads one snapshot (module docstring); pickled with the table's metadata."""

    def __init__(self, name: str, metadata: TableMetadata, io: FileIO, snapshot_id: int | None,
                 schema: StructType) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.name = name
        self.metadata = metadata
        self.io = io
        self.snapshot_id = snapshot_id
        self.arrow_schema: pa.Schema = to_arrow_schema(schema, timezone="UTC")
        self.filters: list[Any] = []

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Keep the filters for pruning files and hand every one back: Spark still checks
        the rows (pruning is by whole files)."""
        self.filters = list(filters)
        yield from filters

    def _scan_schema(self) -> Any:
        snapshot = self.metadata.snapshot_by_id(self.snapshot_id) if self.snapshot_id else None
        if snapshot is not None and snapshot.schema_id is not None:
            for schema in self.metadata.schemas:
                if schema.schema_id == snapshot.schema_id:
                    return schema
        return self.metadata.schema()

    def partitions(self) -> Sequence[InputPartition]:
        from pyiceberg.table import DataScan

        from ..sources.iceberg import _delete_files_error
        from ._iceberg_filters import row_filter

        if self.snapshot_id is None:
            return []
        schema = self._scan_schema()
        scan = DataScan(self.metadata, self.io, row_filter=row_filter(
            self.filters, [f.name for f in schema.fields]), snapshot_id=self.snapshot_id)
        try:
            tasks = list(scan.plan_files())
        except ValueError as exc:  # pyiceberg refuses equality delete files when planning
            if "equality delete" not in str(exc):
                raise
            raise _delete_files_error(self.name, self.snapshot_id, 1) from None
        deletes = sum(len(t.delete_files) for t in tasks)
        if deletes:
            raise _delete_files_error(self.name, self.snapshot_id, deletes)
        return [_Files(i, g) for i, g in enumerate(_group(tasks, os.cpu_count() or 2))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """One task: its files read with pyarrow by field id (:mod:`._iceberg_read`), as the
        Spark schema's types."""
        from ._iceberg_read import read_tasks

        tasks = partition.tasks if isinstance(partition, _Files) else []
        if not tasks:
            return
        yield from read_tasks(self.metadata, self.io, self._scan_schema(), tasks,
                              self.arrow_schema)


@dataclass
class _Written(WriterCommitMessage):  # type: ignore[misc]
    """What one task wrote: the sink's file rows (path relative to the data folder, …)."""

    files: list[dict[str, Any]] = field(default_factory=list)


class IcebergWriter(DataSourceArrowWriter):  # type: ignore[misc]
    """One write of a DataFrame to an Iceberg table (module docstring)."""

    def __init__(self, table: str, options: dict[str, str], schema: StructType,
                 overwrite: bool) -> None:
        from ..catalog._iceberg import load_iceberg_catalog, parse_table_name, \
            resolve_iceberg_catalog, spec_for_table
        from ..sinks import TXN_APP_ID, TXN_VERSION, token_from_options
        from ..sinks._arrow_writer import ArrowWriteSpec
        from ..sinks._iceberg import _arrow_codec, _differences, _open, _partition_fields, \
            _table_location, _table_root, _token_committed
        from ..sinks._iceberg_partition import check_partition_schema
        from ..sinks._location import check_target, resolve_target
        from ..sinks._schema import arrow_schema, delta_schema, kinds_of

        what = f"Iceberg table {table}"
        lower = lower_options(options)
        unknown = sorted(k for low, (k, _) in lower.items()
                         if low not in _WRITE and low not in _HIDDEN and low != "path"
                         and not low.startswith("lakemark."))
        if unknown:
            raise ConfigError(f"option(s) {', '.join(unknown)} are not supported for Iceberg "
                              f"target {table}; supported: compression, mergeSchema, "
                              "txnAppId, txnVersion")
        how = save_mode(what, options, overwrite)
        parts = partition_by(what, options)
        self.merge = flag(what, options, "mergeSchema")
        self.overwrite = how == "overwrite"
        txn = {TXN_APP_ID: lower["txnappid"][1]} if "txnappid" in lower else {}
        if "txnversion" in lower:
            txn[TXN_VERSION] = lower["txnversion"][1]
        self.token = token_from_options(None, txn, format="iceberg",
                                        mode="overwrite" if self.overwrite else "append")
        name_text, choice = resolve(table, options)
        self.name = parse_table_name(name_text)
        self.spec_choice = spec_for_table(resolve_iceberg_catalog(choice), self.name)
        catalog = load_iceberg_catalog(self.spec_choice)
        current = _open(catalog, self.name)
        self.skipped = ""
        if current is not None and _token_committed(current, self.token):
            self.skipped = "it already recorded this txnAppId at a txnVersion as high"
        elif current is not None and how == "ignore":
            self.skipped = "it exists and the save mode is 'ignore'"
        elif current is not None and how == "error":
            raise ConfigError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Iceberg table {table} already "
                              "exists. Set mode as \"append\" or \"overwrite\".")
        fields = _partition_fields(current, self.name, parts)
        bucket = next((f for f in fields if f.transform == "bucket"), None)
        if bucket is not None:  # as the sink says it (partition_transforms)
            raise UnsupportedError(f"writing {what}: partition field {bucket.text()}: bucket "
                                   "partitions are not supported yet")
        missing = [f.column for f in fields if f.column not in schema.fieldNames()]
        if missing:
            from ..errors import SinkError

            raise SinkError(f"partition column(s) {', '.join(missing)} of Iceberg table "
                            f"{self.name} are not in the DataFrame (nothing was written)",
                            target=table)
        if current is None:
            check_partition_schema(parts, schema, str(self.name))
        self.fields = tuple(fields)
        # one folder column per field, as lakemark's sink writes them: the source column
        # stays in the file, so add_files reads each file's partition value from it
        folders: list[str] = []
        for f in fields:
            folders.append(folder_name(f, schema.fieldNames(), folders))
        self.folders = tuple(zip(fields, folders))
        frame = arrow_schema(schema, target=table)
        if current is not None and not self.skipped:
            differences = _differences(current, frame, self.merge)
            if differences:
                from ..errors import SinkError

                raise SinkError(f"the DataFrame does not match the schema of Iceberg table "
                                f"{self.name} (nothing was written): " + "; ".join(differences),
                                target=table)
        self.frame = frame
        self.location = _table_location(catalog, self.name, current)
        self.data = resolve_target(_table_root(self.location, str(self.name)).rstrip("/")
                                   + "/data")
        if self.data.is_s3 and current is None:
            check_target(self.data, self.data.filesystem())
        self.write_id = uuid.uuid4().hex
        kinds = kinds_of(delta_schema(schema, target=table))
        kinds.update({folder: folder_kind(f, kinds[f.column]) for f, folder in self.folders})
        zone_name = lower.get(ZONE_OPTION.lower(), ("", "UTC"))[1]
        self.spec = ArrowWriteSpec(
            fs_config=self.data.fs_config, root=self.data.fs_path, write_id=self.write_id,
            format="parquet", partition_cols=tuple(f for _, f in self.folders),
            kinds=tuple(kinds.items()),
            session_tz=zone_name, compression=_arrow_codec(table, {
                k: v for k, v in options.items() if k.lower() == "compression"}))

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """One task: its rows as Parquet files in the table's data folder."""
        from ..sinks._arrow_writer import write_task

        if self.skipped:
            return _Written()
        files: list[dict[str, Any]] = []
        for batch in write_task(self.spec, self._with_folders(iterator)):
            files.extend(batch.to_pylist())
        return _Written(files)

    def _with_folders(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Each batch with its timestamps in UTC (Iceberg's only zone; Spark hands them in the
        session's) and its folder columns (:mod:`._iceberg_folders`)."""
        from ._iceberg_folders import in_utc

        for batch in batches:
            batch = in_utc(batch)
            for f, folder in self.folders:
                batch = batch.append_column(folder, folder_array(f, batch.column(f.column)))
            yield batch

    @staticmethod
    def _all(messages: list[WriterCommitMessage | None]) -> list[dict[str, Any]]:
        return [f for m in messages if isinstance(m, _Written) for f in m.files]

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """The driver: every task's files in one Iceberg commit."""
        from ..catalog._iceberg import load_iceberg_catalog
        from ..sinks._iceberg import APP_ID_KEY, APP_VERSION_KEY, WRITE_ID_KEY, _Change, \
            _commit, _file_uri, _open

        if self.skipped:
            log.info("writing Iceberg table %s skipped: %s (nothing written)", self.name,
                     self.skipped)
            return
        files = self._all(messages)
        properties = {WRITE_ID_KEY: self.write_id}
        if self.token is not None:
            properties.update({APP_ID_KEY: self.token.app_id,
                               APP_VERSION_KEY: str(self.token.version)})
        catalog = load_iceberg_catalog(self.spec_choice)
        try:
            snapshot, skipped = _commit(
                catalog, self.name, _open(catalog, self.name), self.frame, self.location,
                [_file_uri(self.data, f["path"]) for f in files], properties, self.token,
                self.write_id, _Change(self.overwrite, self.merge, self.fields))
        except BaseException:
            self.abort(messages)
            raise
        if skipped:
            self.abort(messages)
        log.info("wrote Iceberg table %s snapshot %s: %d row(s) in %d file(s)", self.name,
                 snapshot, sum(int(f["rows"]) for f in files), len(files))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """The driver, after a failed task or commit: this write's files are deleted."""
        from ..sinks._location import delete_files, sweep_write

        fs = self.data.filesystem()
        delete_files(self.data, fs, [f["path"] for f in self._all(messages)])
        sweep_write(self.data, fs, self.write_id)


class IcebergSource(DataSource):  # type: ignore[misc]
    """The ``iceberg`` format name: :class:`IcebergReader` and :class:`IcebergWriter`."""

    @classmethod
    def name(cls) -> str:
        return "iceberg"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the opened table (its catalog holds what cannot be pickled) but with
        what the read needs of it: Spark calls ``schema()`` and ``reader()`` in two Python
        workers, and the read is of the snapshot resolved at ``load`` (as the wrapper's file
        list is), with one catalog round trip and no second look at its manifests."""
        state = {k: v for k, v in self.__dict__.items() if k != "_cached"}
        cached = self.__dict__.get("_cached")
        if cached is not None:
            table, iceberg, snapshot_id = cached
            state["_planned"] = (table, iceberg.metadata, iceberg.io, snapshot_id)
        return state

    def _opened(self) -> tuple[str, Table, int | None]:
        cached: tuple[str, Table, int | None] | None = getattr(self, "_cached", None)
        if cached is None:
            from ..sources.iceberg import _delete_file_count, _delete_files_error, open_table

            _apply_env(self.options)
            table = _table_name(self.options)
            options = {k: v for k, v in self.options.items()
                       if k.lower() != "path" and k.lower() not in _HIDDEN
                       and not k.lower().startswith("lakemark.")}
            unknown = sorted(k for k in options if k.lower() not in _READ)
            if unknown:
                raise ConfigError(f"option(s) {', '.join(unknown)} are not supported reading "
                                  f"Iceberg table {table}; supported: {', '.join(_READ)}")
            name, catalog = resolve(table, dict(self.options))
            iceberg = open_table(name, catalog)
            cached = (table, iceberg, _snapshot_id(table, iceberg, options))
            if cached[2] is not None:  # refused at load, as the wrapper refuses it
                count = _delete_file_count(iceberg, cached[2])
                if count:
                    raise _delete_files_error(table, cached[2], count)
            self._cached = cached
        return cached

    def schema(self) -> StructType:
        from ..sources.iceberg import spark_schema

        _, iceberg, snapshot_id = self._opened()
        schema: StructType = spark_schema(iceberg, snapshot_id)
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        planned: tuple[str, TableMetadata, FileIO, int | None] | None = \
            self.__dict__.get("_planned")
        if planned is not None and "_cached" not in self.__dict__:
            _apply_env(self.options)  # partitions() reads the manifests in this worker
            return IcebergReader(*planned, schema)
        table, iceberg, snapshot_id = self._opened()
        return IcebergReader(table, iceberg.metadata, iceberg.io, snapshot_id, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        _apply_env(self.options)
        return IcebergWriter(_table_name(self.options), dict(self.options), schema, overwrite)
