"""The ``delta`` data source's own writer: executors write Parquet with pyarrow, the driver
commits once.

lakemark's hook on ``DataFrameWriter.save`` (:mod:`._delta_save`) serves writes from a Python
driver, with every save mode and option; this writer serves ``format("delta")`` where that hook
is absent (e.g. a Spark Connect client, whose writer class lakemark does not wrap). Spark's
Python data source API gives it ``append`` or ``overwrite`` and no ``partitionBy``, so:

* an existing table keeps its partition columns; a new table is created unpartitioned;
* ``txnAppId``/``txnVersion`` (skipped when already recorded: the tasks write nothing and the
  commit records nothing) and ``userMetadata`` are honoured; other Delta options are refused;
* each task writes its rows straight to their final names (the sink's Arrow writer: one file per
  task and partition, with Delta statistics) and returns the file list; :meth:`commit` commits
  every file in one Delta commit with the sink's conflict handling, :meth:`abort` deletes them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["DeltaWriter"]

log = logging.getLogger("lakemark.tables")

_ALLOWED = {"path", "txnappid", "txnversion", "usermetadata", "compression"}


@dataclass
class _Files(WriterCommitMessage):  # type: ignore[misc]
    files: list[dict[str, Any]] = field(default_factory=list)


class DeltaWriter(DataSourceArrowWriter):  # type: ignore[misc]
    """One write of a DataFrame to a Delta table (planned on the driver, see module doc)."""

    def __init__(self, path: str, options: dict[str, str], schema: StructType,
                 overwrite: bool) -> None:
        from ..errors import UnsupportedError
        from ..sinks import TXN_APP_ID, TXN_VERSION, token_from_options
        from ..sinks._arrow_writer import ArrowWriteSpec, check_compression
        from ..sinks._delta import _already_committed, _fit
        from ..sinks._location import check_new_table_location, check_target, open_delta, \
            resolve_target
        from ..sinks._schema import check_partition_kinds, delta_schema, kinds_of

        lower = {k.lower(): (k, v) for k, v in options.items() if not k.lower().startswith(
            "lakemark.")}
        unknown = sorted(k for low, (k, _) in lower.items() if low not in _ALLOWED)
        if unknown:
            raise UnsupportedError(f"writing Delta table {path} through the data source: "
                                   f"option(s) {', '.join(unknown)} are not supported here")
        txn = {TXN_APP_ID: lower["txnappid"][1]} if "txnappid" in lower else {}
        if "txnversion" in lower:
            txn[TXN_VERSION] = lower["txnversion"][1]
        self.token = token_from_options(None, txn)
        self.user_metadata = lower.get("usermetadata", ("", None))[1]
        codec = lower.get("compression", ("", "snappy"))[1].lower()
        if not check_compression("parquet", codec):
            raise UnsupportedError(f"unsupported Parquet compression {codec!r}")
        self.target = resolve_target(path)
        fs = self.target.filesystem()
        check_target(self.target, fs)
        table = open_delta(self.target)
        frame = delta_schema(schema, target=self.target.root)
        self.mode = "overwrite" if overwrite else "append"
        self.skipped = table is not None and _already_committed(table, self.token)
        if table is None:
            check_new_table_location(self.target, fs)
            partitions: list[str] = []
            table_schema = frame
        else:
            partitions = _fit(self.target, table, frame, [])
            table_schema = table.schema()
        kinds = kinds_of(table_schema)
        check_partition_kinds(kinds, partitions, target=self.target.root)
        self.partitions = partitions
        self.frame_json = frame.to_json()
        self.schema_json = table_schema.to_json()
        self.write_id = uuid.uuid4().hex
        self.spec = ArrowWriteSpec(
            fs_config=self.target.fs_config, root=self.target.fs_path, write_id=self.write_id,
            format="parquet", partition_cols=tuple(partitions),
            kinds=tuple((k, v) for k, v in kinds.items() if k in set(schema.fieldNames())),
            session_tz="UTC", delta_stats=True, compression=codec)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        from ..sinks._arrow_writer import write_task

        if self.skipped:
            return _Files()
        files: list[dict[str, Any]] = []
        for batch in write_task(self.spec, iterator):
            files.extend(batch.to_pylist())
        return _Files(files)

    def _all(self, messages: list[WriterCommitMessage | None]) -> list[dict[str, Any]]:
        return [f for m in messages if isinstance(m, _Files) for f in m.files]

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        from deltalake import Schema

        from ..sinks._delta import _commit
        from ..sinks._location import open_delta
        from ..sinks._model import DataFile

        if self.skipped:
            log.info("writing Delta table %s skipped: it already recorded txnAppId %r at a "
                     "txnVersion >= %s (nothing written)", self.target.root,
                     self.token.app_id if self.token else "", self.token.version
                     if self.token else "")
            return
        files = [DataFile(path=f["path"], size=f["size"], rows=f["rows"], mtime_ms=f["mtime"],
                          partition_values=json.loads(f["partition_values"]),
                          stats=f["stats"]) for f in self._all(messages)]
        try:
            _commit(self.target, open_delta(self.target), Schema.from_json(self.schema_json),
                    Schema.from_json(self.frame_json), self.partitions, files, self.mode,
                    self.token, self.write_id,
                    {"userMetadata": self.user_metadata} if self.user_metadata else None)
        except BaseException:
            self.abort(messages)
            raise

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        from ..sinks._location import delete_files, sweep_write

        fs = self.target.filesystem()
        delete_files(self.target, fs, [f["path"] for f in self._all(messages)])
        sweep_write(self.target, fs, self.write_id)
