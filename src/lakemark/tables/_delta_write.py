"""The ``delta`` format's writer through Spark's Python data source API: executors write
Parquet with pyarrow, the driver commits once.

One writer for both ways Spark calls it: lakemark's ``delta`` data source
(:class:`._delta_source.DeltaDataSource`, e.g. from a Spark Connect client or with option
``lakemark.writer=datasource``) and the ``delta`` source of ``LAKEMARK_FORMAT_SERVING=
datasource`` (:mod:`lakemark.datasources.delta`). The driver checks everything before a task
runs — save mode (the script's, from the hidden option
:data:`lakemark.datasources.SAVE_MODE_OPTION` lakemark's writer hook sets; without it, what
Spark passed: ``append``/``overwrite``): ``errorifexists`` refuses an existing table,
``ignore`` then writes nothing; ``txnAppId``/``txnVersion`` (a version the table already
recorded writes nothing, whatever the mode); schema against the table (``mergeSchema`` adds
new columns first, as lakemark's sink does; ``overwriteSchema`` with ``overwrite`` replaces
schema and partitioning); ``partitionBy`` (hidden option
:data:`lakemark.datasources.PARTITION_OPTION`: a new table's partition columns, an existing
table's must match; without it a new table is unpartitioned and an existing one keeps its
own). ``replaceWhere`` comes as a hidden option too (:data:`REPLACE_WHERE_OPTION`). Each task
writes its rows straight to their final names with the sink's Arrow writer (one file per task
and partition, with Delta statistics) and returns the file list; :meth:`DeltaWriter.commit`
adds them all in one Delta commit (the sink's conflict handling), :meth:`DeltaWriter.abort`
deletes them. Other Delta options are refused by name.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from ..datasources._options import (
    DRIVER_PID_OPTION,
    PARTITION_OPTION,
    REPLACE_WHERE_OPTION,
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
    from pyspark.sql.types import StructType

__all__ = ["DeltaWriter", "takes_options"]

log = logging.getLogger("lakemark.tables")

#: Writer options this source honours (lower case); hidden ``lakemark.*`` options aside.
_ALLOWED = {"path", "txnappid", "txnversion", "usermetadata", "compression", "mergeschema",
            "overwriteschema"}
#: Delta's spelling of options Spark hands over in lower case, for the refusal message.
_NAMES = {"replacewhere": "replaceWhere", "partitionoverwritemode": "partitionOverwriteMode",
          "datachange": "dataChange", "maxrecordsperfile": "maxRecordsPerFile",
          "optimizewrite": "optimizeWrite"}
_HIDDEN = {SAVE_MODE_OPTION.lower(), PARTITION_OPTION.lower(), ZONE_OPTION.lower(),
           SPARK_CATALOG_OPTION.lower(), REPLACE_WHERE_OPTION.lower(),
           DRIVER_PID_OPTION.lower()}


def takes_options(options: Any) -> bool:
    """Whether this writer takes every option of a ``save`` (``replaceWhere`` once the driver's
    hook planned it): where it does not, the wrapper writes with the sink, which passes the
    other options on to Spark's writer as it did before this writer was the default."""
    return all(str(k).lower() in _ALLOWED or str(k).lower() in _HIDDEN
               or str(k).lower() == "replacewhere" or str(k).lower().startswith("lakemark.")
               for k in options)


@dataclass
class _Files(WriterCommitMessage):  # type: ignore[misc]
    """What one task wrote: the sink's file rows (path, size, rows, stats, …)."""

    files: list[dict[str, Any]] = field(default_factory=list)


class DeltaWriter(DataSourceArrowWriter):  # type: ignore[misc]
    """One write of a DataFrame to a Delta table (module docstring)."""

    def __init__(self, path: str, options: dict[str, str], schema: StructType,
                 overwrite: bool) -> None:
        from ..errors import ConfigError, SinkError, UnsupportedError
        from ..planning.delta_history import write_record
        from ..sinks import TXN_APP_ID, TXN_VERSION, token_from_options
        from ..sinks._arrow_writer import ArrowWriteSpec, check_compression
        from ..sinks._delta import _add_new_columns, _already_committed, _fit
        from ..sinks._location import check_new_table_location, check_target, open_delta, \
            resolve_target
        from ..sinks._schema import check_partition_kinds, delta_schema, kinds_of

        what = f"Delta table {path}"
        lower = lower_options(options)
        unknown = sorted(_NAMES.get(low, k) for low, (k, _) in lower.items()
                         if low not in _ALLOWED and low not in _HIDDEN
                         and not low.startswith("lakemark."))
        if unknown:
            raise UnsupportedError(f"writing {what} through the delta data source: option(s) "
                                   f"{', '.join(unknown)} are not supported (nothing was "
                                   "written)")
        how = save_mode(what, options, overwrite)
        parts = partition_by(what, options)
        merge = flag(what, options, "mergeSchema")
        overwrite_schema = flag(what, options, "overwriteSchema")
        if overwrite_schema and how != "overwrite":
            raise ConfigError(f"writing {what}: option overwriteSchema needs mode('overwrite')")
        txn = {TXN_APP_ID: lower["txnappid"][1]} if "txnappid" in lower else {}
        if "txnversion" in lower:
            txn[TXN_VERSION] = lower["txnversion"][1]
        self.mode = "overwrite" if how == "overwrite" else "append"
        planned = json.loads(lower[REPLACE_WHERE_OPTION.lower()][1]) \
            if REPLACE_WHERE_OPTION.lower() in lower else None
        self.filters: list[tuple[str, str, Any]] | None = None
        self.removes: list[tuple[str, int]] = []
        if planned is not None:  # checked and planned by the driver (spark_io's hook)
            if how != "overwrite" or overwrite_schema:
                raise ConfigError(f"writing {what}: option replaceWhere needs "
                                  "mode('overwrite') and cannot be combined with "
                                  "overwriteSchema")
            if planned["filters"] is None:  # rows replaced: adds and removes in one commit
                self.mode = "append"
                self.removes = [(str(p), int(n)) for p, n in planned["removes"]]
            else:
                self.filters = [(str(c), str(o), v) for c, o, v in planned["filters"]]
        pid = lower.get(DRIVER_PID_OPTION.lower(), ("", ""))[1]
        self.driver_pid = int(pid) if pid.isdigit() else None
        self.token = token_from_options(None, txn, format="delta", mode=self.mode)
        codec = lower.get("compression", ("", "snappy"))[1].lower()
        if not check_compression("parquet", codec):
            raise UnsupportedError(f"writing {what}: unsupported Parquet compression {codec!r}")
        self.target = resolve_target(path)
        fs = self.target.filesystem()
        check_target(self.target, fs)
        table = open_delta(self.target)
        self.skipped = ""
        if table is not None and _already_committed(table, self.token):
            # before the save mode: a retried job's write is a no-op, whatever its mode
            self.skipped = (f"it already recorded txnAppId {self.token.app_id!r} at a "
                            f"txnVersion >= {self.token.version}" if self.token else "")
        elif table is not None and how == "ignore":
            self.skipped = "it exists and the save mode is 'ignore'"
        elif table is not None and how == "error":
            raise SinkError(f"Delta table {self.target.root} already exists (save mode "
                            "'errorifexists'); write with mode('append') or mode('overwrite')")
        frame = delta_schema(schema, target=self.target.root)
        self.overwrite_schema = overwrite_schema and table is not None
        self.merge = merge
        if table is None:
            check_new_table_location(self.target, fs)
            partitions, table_schema = list(parts), frame
        elif self.skipped:
            partitions, table_schema = list(table.metadata().partition_columns), table.schema()
        elif overwrite_schema:
            existing = list(table.metadata().partition_columns)
            partitions = list(parts) or (existing if set(existing) <= set(schema.fieldNames())
                                         else [])
            table_schema = frame
        else:
            if merge:  # new columns first, in their own commit, as lakemark's sink does
                table = _add_new_columns(self.target, table, frame, parts)
            partitions = _fit(self.target, table, frame, parts, merge=merge)
            table_schema = table.schema()
        kinds = kinds_of(table_schema)
        check_partition_kinds(kinds, partitions, target=self.target.root)
        self.partitions = partitions
        self.frame_json = frame.to_json()
        self.schema_json = table_schema.to_json()
        info = write_record(how, list(parts), planned["expr"] if planned else None)
        if "usermetadata" in lower:
            info["userMetadata"] = lower["usermetadata"][1]
        self.commit_info = info
        self.write_id = uuid.uuid4().hex
        zone_name = lower.get(ZONE_OPTION.lower(), ("", "UTC"))[1]
        self.spec = ArrowWriteSpec(
            fs_config=self.target.fs_config, root=self.target.fs_path, write_id=self.write_id,
            format="parquet", partition_cols=tuple(partitions),
            kinds=tuple((k, v) for k, v in kinds.items() if k in set(schema.fieldNames())),
            session_tz=zone_name, delta_stats=True, compression=codec)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """One task: its rows as Parquet files under the table (none when skipped)."""
        from ..sinks._arrow_writer import write_task

        if self.skipped:
            return _Files()
        files: list[dict[str, Any]] = []
        for batch in write_task(self.spec, iterator):
            files.extend(batch.to_pylist())
        return _Files(files)

    @staticmethod
    def _all(messages: list[WriterCommitMessage | None]) -> list[dict[str, Any]]:
        return [f for m in messages if isinstance(m, _Files) for f in m.files]

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """The driver: every task's files in one Delta commit."""
        from deltalake import Schema

        from .._fault import fault_point
        from ..sinks._delta import _commit
        from ..sinks._location import open_delta
        from ..sinks._model import DataFile

        if self.skipped:
            log.info("writing Delta table %s skipped: %s (nothing written)", self.target.root,
                     self.skipped)
            return
        fault_point("mid-write", driver=self.driver_pid)  # crash tests: files, no commit
        files = [DataFile(path=f["path"], size=f["size"], rows=f["rows"], mtime_ms=f["mtime"],
                          partition_values=json.loads(f["partition_values"]),
                          stats=f["stats"]) for f in self._all(messages)]
        try:
            version, skipped = _commit(
                self.target, open_delta(self.target), Schema.from_json(self.schema_json),
                Schema.from_json(self.frame_json), self.partitions, files, self.mode,
                self.token, self.write_id, self.commit_info, merge=self.merge,
                overwrite_schema=self.overwrite_schema, partition_filters=self.filters,
                removes=self.removes)
        except BaseException:
            self.abort(messages)
            raise
        if skipped:  # a racing writer recorded the same token first: ours are not needed
            self.abort(messages)
            log.info("writing Delta table %s skipped: another writer recorded the same "
                     "txnAppId/txnVersion (nothing written)", self.target.root)
        else:
            log.info("wrote Delta table %s version %s: %d row(s) in %d file(s)",
                     self.target.root, version, sum(f.rows for f in files), len(files))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """The driver, after a failed task or commit: this write's files are deleted."""
        from ..sinks._location import delete_files, sweep_write

        fs = self.target.filesystem()
        delete_files(self.target, fs, [f["path"] for f in self._all(messages)])
        sweep_write(self.target, fs, self.write_id)
