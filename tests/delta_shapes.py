"""Delta tables in the shapes Spark with Delta Lake's jars writes them, generated from the
protocol (delta-io PROTOCOL.md) and from what Delta-Spark's own tables on disk look like — no
bytes or code taken from them. Used by tests/spark/test_delta_spark_shapes.py.

:class:`SparkLog` writes one table commit by commit and remembers the rows live at each version,
so a test can compare every read (latest, ``versionAsOf``, ``timestampAsOf``, incremental) with
the exact expected rows. The shapes it can write:

* commit files with ``commitInfo`` first (``inCommitTimestamp`` in it when in-commit timestamps
  are on), ``protocol``/``metaData`` in version 0, ``txn``, ``add``/``remove`` with stats JSON,
  ``cdc`` actions whose files sit in ``_change_data/``;
* a ``<version>.crc`` checksum file next to every commit;
* data files ``part-00000-<uuid>.c000.snappy.parquet`` in Hive-escaped partition folders
  (``__HIVE_DEFAULT_PARTITION__`` for null; a space, ``}`` or ``é`` stay as they are, ``:``,
  ``/``, ``%`` become ``%3A``, ``%2F``, ``%25``), named in the log by the URL-encoded relative
  path; timestamps stored as INT96 (Spark's default Parquet timestamp type);
* classic checkpoints in several parts (``<v>.checkpoint.<part>.<parts>.parquet``) with
  ``stats_parsed`` and ``partitionValues_parsed`` and tombstones, ``_last_checkpoint`` with
  ``parts`` and a ``checksum``;
* v2 checkpoints: a top-level ``<v>.checkpoint.<uuid>.json`` with ``checkpointMetadata``, the
  non-file actions and ``sidecar`` actions, the file actions in ``_delta_log/_sidecars/``;
* log compaction files ``<x>.<y>.compacted.json``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["SparkLog", "hive_escape", "T0"]

T0 = 1_714_521_600_000  # 2024-05-01T00:00:00Z in ms
STRING_MAP = pa.map_(pa.string(), pa.string())
_HIVE_ESCAPED = set('"#%\'*/:=?\\{[]^\x7f') | {chr(c) for c in range(1, 32)}
_ARROW = {"long": pa.int64(), "integer": pa.int32(), "string": pa.string(),
          "double": pa.float64(), "date": pa.date32(), "timestamp": pa.timestamp("us", "UTC"),
          "timestamp_ntz": pa.timestamp("us"), "boolean": pa.bool_()}


def hive_escape(value: str | None) -> str:
    """A partition value as Spark names its folder (Hive's escaping)."""
    if value is None or value == "":
        return "__HIVE_DEFAULT_PARTITION__"
    return "".join(f"%{ord(c):02X}" if c in _HIVE_ESCAPED else c for c in value)


def _serial(value: Any) -> str | None:
    """A partition value as the log serialises it."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    return str(value)


def _stat(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        text = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") if value.tzinfo \
            else value.strftime("%Y-%m-%dT%H:%M:%S.")
        return text + f"{value.microsecond // 1000:03d}" + ("Z" if value.tzinfo else "")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


@dataclass
class _Live:
    add: dict[str, Any]
    rows: list[dict[str, Any]]


@dataclass
class SparkLog:
    """One table written the way Delta-Spark writes it (module documentation)."""

    root: Path
    fields: list[tuple[str, str]]  # (name, Delta type), partition columns included
    partition_columns: list[str]
    protocol: dict[str, Any]
    configuration: dict[str, str] = field(default_factory=dict)
    generated: dict[str, str] = field(default_factory=dict)  # column -> generation expression
    int96: bool = True
    in_commit_timestamps: bool = False
    version: int = -1
    live: dict[str, _Live] = field(default_factory=dict)
    tombstones: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshots: list[list[dict[str, Any]]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    txns: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.log = self.root / "_delta_log"
        self.log.mkdir(parents=True)
        self.metadata = {
            "id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps({"type": "struct", "fields": [
                {"name": n, "type": t, "nullable": True,
                 "metadata": ({"delta.generationExpression": self.generated[n]}
                              if n in self.generated else {})} for n, t in self.fields]}),
            "partitionColumns": list(self.partition_columns),
            "configuration": dict(self.configuration), "createdTime": T0}

    # ------------------------------------------------------------------------ data files

    def _data_file(self, folder: str, rows: list[dict[str, Any]], prefix: str = "part"
                   ) -> tuple[str, int]:
        data = [(n, t) for n, t in self.fields if n not in self.partition_columns]
        table = pa.table({n: pa.array([r.get(n) for r in rows], _ARROW[t]) for n, t in data}
                         | ({"_change_type": pa.array([r["_change_type"] for r in rows])}
                            if prefix == "cdc" else {}))
        name = f"{prefix}-00000-{uuid.uuid4()}.c000.snappy.parquet"
        relative = f"{folder}/{name}" if folder else name
        (self.root / relative).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, self.root / relative, compression="snappy",
                       use_deprecated_int96_timestamps=self.int96)
        return relative, (self.root / relative).stat().st_size

    def _folder(self, partition: dict[str, Any]) -> str:
        return "/".join(f"{c}={hive_escape(_serial(partition.get(c)))}"
                        for c in self.partition_columns)

    def _add(self, partition: dict[str, Any], rows: list[dict[str, Any]], when: int
             ) -> dict[str, Any]:
        relative, size = self._data_file(self._folder(partition), rows)
        data = [n for n, _ in self.fields if n not in self.partition_columns]
        present = {n: [r[n] for r in rows if r.get(n) is not None] for n in data}
        stats = {"numRecords": len(rows),
                 "minValues": {n: _stat(min(v)) for n, v in present.items() if v},
                 "maxValues": {n: _stat(max(v)) for n, v in present.items() if v},
                 "nullCount": {n: len(rows) - len(v) for n, v in present.items()}}
        return {"path": quote(relative, safe="/"),
                "partitionValues": {c: _serial(partition.get(c))
                                    for c in self.partition_columns},
                "size": size, "modificationTime": when, "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":"))}

    # --------------------------------------------------------------------------- commits

    def commit(self, adds: list[tuple[dict[str, Any], list[dict[str, Any]]]] = (),  # type: ignore[assignment]
               *, remove: list[str] = (), cdc: list[tuple[dict[str, Any],  # type: ignore[assignment]
                                                          list[dict[str, Any]]]] = (),
               operation: str = "WRITE", app: tuple[str, int] | None = None,
               mtime_ms: int | None = None, extra: list[dict[str, Any]] = ()  # type: ignore[assignment]
               ) -> int:
        """Commit the next version: files added (partition values, rows), live files removed
        (by their log path), change-data files; returns the version. Its commit time is
        ``T0 + version`` minutes (the file's mtime unless ``mtime_ms`` says otherwise)."""
        self.version += 1
        when = T0 + self.version * 60_000
        info: dict[str, Any] = {}
        if self.in_commit_timestamps:
            info["inCommitTimestamp"] = when
        info.update({"timestamp": when, "operation": operation,
                     "operationParameters": {"mode": "Append"},
                     "isolationLevel": "Serializable", "isBlindAppend": not remove,
                     "operationMetrics": {"numFiles": str(len(adds))},
                     "engineInfo": "Apache-Spark/3.5.3 Delta-Lake/3.3.0",
                     "txnId": str(uuid.uuid4())})
        if self.version:
            info["readVersion"] = self.version - 1
        actions: list[dict[str, Any]] = [{"commitInfo": info}]
        if self.version == 0:
            actions += [{"protocol": self.protocol}, {"metaData": self.metadata}]
        if app:
            self.txns[app[0]] = {"appId": app[0], "version": app[1], "lastUpdated": when}
            actions.append({"txn": self.txns[app[0]]})
        actions += extra
        for path in remove:
            gone = self.live.pop(path).add
            tomb = {"path": path, "deletionTimestamp": when, "dataChange": True,
                    "extendedFileMetadata": True, "partitionValues": gone["partitionValues"],
                    "size": gone["size"]}
            self.tombstones[path] = tomb
            actions.append({"remove": tomb})
        for partition, rows in adds:
            add = self._add(partition, rows, when)
            self.live[add["path"]] = _Live(add, [dict(r, **partition) for r in rows])
            actions.append({"add": add})
        for partition, rows in cdc:
            relative, size = self._data_file("_change_data/" + self._folder(partition), rows,
                                             "cdc")
            actions.append({"cdc": {"path": quote(relative, safe="/"), "size": size,
                                    "dataChange": False, "partitionValues": {
                                        c: _serial(partition.get(c))
                                        for c in self.partition_columns}}})
        log = self.log / f"{self.version:020d}.json"
        log.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions))
        stamp = (mtime_ms if mtime_ms is not None else when) / 1000
        os.utime(log, (stamp, stamp))
        self._crc()
        self.snapshots.append([r for live in self.live.values() for r in live.rows])
        self.times.append(when)
        return self.version

    def _crc(self) -> None:
        """The version checksum file Delta-Spark writes after each commit."""
        (self.log / f"{self.version:020d}.crc").write_text(json.dumps({
            "txnId": str(uuid.uuid4()),
            "tableSizeBytes": sum(x.add["size"] for x in self.live.values()),
            "numFiles": len(self.live), "numMetadata": 1, "numProtocol": 1,
            "setTransactions": list(self.txns.values()), "domainMetadata": [],
            "metadata": self.metadata, "protocol": self.protocol,
            "allFiles": [x.add for x in self.live.values()]}))

    def rows_at(self, version: int) -> list[dict[str, Any]]:
        return self.snapshots[version]

    # ----------------------------------------------------------------------- checkpoints

    def _checkpoint_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(non-file actions, file actions) of the current version, as checkpoint rows."""
        meta = {**self.metadata, "name": None, "description": None,
                "format": {"provider": "parquet", "options": []},
                "configuration": list(self.metadata["configuration"].items())}
        others: list[dict[str, Any]] = [{"protocol": self.protocol}, {"metaData": meta}]
        others += [{"txn": t} for t in self.txns.values()]
        files: list[dict[str, Any]] = []
        for live in self.live.values():
            add = live.add
            stats = json.loads(add["stats"])
            files.append({"add": {
                **add, "partitionValues": list(add["partitionValues"].items()), "tags": None,
                "deletionVector": add.get("deletionVector"),
                "stats_parsed": self._stats_parsed(stats),
                "partitionValues_parsed": {c: add["partitionValues"][c]
                                           for c in self.partition_columns} or None}})
        for tomb in self.tombstones.values():
            files.append({"remove": {**tomb, "partitionValues": list(
                tomb["partitionValues"].items())}})
        return others, files

    def _data_fields(self) -> list[tuple[str, str]]:
        return [(n, t) for n, t in self.fields if n not in self.partition_columns]

    def _stats_parsed(self, stats: dict[str, Any]) -> dict[str, Any]:
        def parse(name: str, kind: str, value: Any) -> Any:
            if value is None:
                return None
            if kind == "timestamp":
                return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            if kind == "timestamp_ntz":
                return dt.datetime.fromisoformat(value)
            if kind == "date":
                return dt.date.fromisoformat(value)
            return value
        return {"numRecords": stats["numRecords"],
                "minValues": {n: parse(n, t, stats["minValues"].get(n))
                              for n, t in self._data_fields()},
                "maxValues": {n: parse(n, t, stats["maxValues"].get(n))
                              for n, t in self._data_fields()},
                "nullCount": {n: stats["nullCount"].get(n) for n, _ in self._data_fields()}}

    def _file_schema(self) -> pa.Schema:
        values = pa.struct([(n, _ARROW[t]) for n, t in self._data_fields()])
        counts = pa.struct([(n, pa.int64()) for n, _ in self._data_fields()])
        parsed = pa.struct([(c, _ARROW["string"]) for c in self.partition_columns])
        vector = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()),
                            ("offset", pa.int32()), ("sizeInBytes", pa.int32()),
                            ("cardinality", pa.int64())])
        add = [("path", pa.string()), ("partitionValues", STRING_MAP), ("size", pa.int64()),
               ("modificationTime", pa.int64()), ("dataChange", pa.bool_()),
               ("tags", STRING_MAP), ("deletionVector", vector), ("stats", pa.string()),
               ("stats_parsed", pa.struct([("numRecords", pa.int64()),
                                           ("minValues", values), ("maxValues", values),
                                           ("nullCount", counts)]))]
        if self.partition_columns:
            add.append(("partitionValues_parsed", parsed))
        return pa.schema([
            ("add", pa.struct(add)),
            ("remove", pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()),
                                  ("dataChange", pa.bool_()),
                                  ("extendedFileMetadata", pa.bool_()),
                                  ("partitionValues", STRING_MAP), ("size", pa.int64())]))])

    def _other_schema(self) -> pa.Schema:
        features = pa.list_(pa.string())
        return pa.schema([
            ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64()),
                               ("lastUpdated", pa.int64())])),
            ("metaData", pa.struct([
                ("id", pa.string()), ("name", pa.string()), ("description", pa.string()),
                ("format", pa.struct([("provider", pa.string()), ("options", STRING_MAP)])),
                ("schemaString", pa.string()), ("partitionColumns", pa.list_(pa.string())),
                ("configuration", STRING_MAP), ("createdTime", pa.int64())])),
            ("protocol", pa.struct([("minReaderVersion", pa.int32()),
                                    ("minWriterVersion", pa.int32()),
                                    ("readerFeatures", features),
                                    ("writerFeatures", features)]))])

    def _write_parquet(self, rows: list[dict[str, Any]], schema: pa.Schema, target: Path
                       ) -> None:
        table = pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows],
                                     schema=schema)
        pq.write_table(table, target, compression="snappy",
                       use_deprecated_int96_timestamps=self.int96)

    def _last_checkpoint(self, body: dict[str, Any]) -> None:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        body["checksum"] = hashlib.md5(text.encode()).hexdigest()
        (self.log / "_last_checkpoint").write_text(json.dumps(body))

    def checkpoint(self, parts: int = 1) -> None:
        """A classic checkpoint of the current version in ``parts`` parts (non-file actions
        in the first, the file actions spread over all)."""
        others, files = self._checkpoint_rows()
        schema = pa.schema(list(self._other_schema()) + list(self._file_schema()))
        chunks: list[list[dict[str, Any]]] = [list(others)] + [[] for _ in range(parts - 1)]
        for i, row in enumerate(files):
            chunks[i % parts].append(row)
        total = 0
        for number, chunk in enumerate(chunks, 1):
            name = (f"{self.version:020d}.checkpoint.parquet" if parts == 1 else
                    f"{self.version:020d}.checkpoint.{number:010d}.{parts:010d}.parquet")
            self._write_parquet(chunk, schema, self.log / name)
            total += (self.log / name).stat().st_size
        body: dict[str, Any] = {"version": self.version, "size": len(others) + len(files),
                                "sizeInBytes": total, "numOfAddFiles": len(self.live)}
        if parts > 1:
            body["parts"] = parts
        self._last_checkpoint(body)

    def checkpoint_v2(self, sidecars: int = 2) -> None:
        """A v2 checkpoint of the current version: a top-level JSON checkpoint and the file
        actions in ``sidecars`` sidecar files."""
        others, files = self._checkpoint_rows()
        folder = self.log / "_sidecars"
        folder.mkdir(exist_ok=True)
        schema = self._file_schema()
        sidecar_actions = []
        for number in range(sidecars):
            chunk = files[number::sidecars]
            name = (f"{self.version:020d}.checkpoint.{number + 1:010d}.{sidecars:010d}."
                    f"{uuid.uuid4()}.parquet")
            self._write_parquet(chunk, schema, folder / name)
            sidecar_actions.append({"sidecar": {"path": name,
                                                "sizeInBytes": (folder / name).stat().st_size,
                                                "modificationTime": T0}})
        plain = [{"protocol": self.protocol}, {"metaData": self.metadata}] + \
            [{"txn": t} for t in self.txns.values()]
        top = [{"checkpointMetadata": {"version": self.version, "tags": {}}}] + plain + \
            sidecar_actions
        name = f"{self.version:020d}.checkpoint.{uuid.uuid4()}.json"
        (self.log / name).write_text("".join(json.dumps(a) + "\n" for a in top))
        self._last_checkpoint({
            "version": self.version, "size": len(top) + len(files),
            "sizeInBytes": (self.log / name).stat().st_size, "numOfAddFiles": len(self.live),
            "v2Checkpoint": {"path": name, "sizeInBytes": (self.log / name).stat().st_size,
                             "modificationTime": T0, "nonFileActions": plain + [top[0]],
                             "sidecarFiles": [s["sidecar"] for s in sidecar_actions]}})

    def compact(self, first: int, last: int, added: list[str]) -> None:
        """A log compaction file for commits ``first`` .. ``last``: the reconciled actions
        (``added``: the log paths of files added in the range still live at ``last``)."""
        actions = [{"add": self.live[p].add} for p in added if p in self.live]
        actions += [{"remove": t} for t in self.tombstones.values()]
        (self.log / f"{first:020d}.{last:020d}.compacted.json").write_text(
            "".join(json.dumps(a) + "\n" for a in actions))
