"""Writing small Apache Hudi copy-on-write tables for tests, without Hudi's jars.

Nothing installed here writes Hudi tables (the ``hudi`` package reads only), so the tests make
their own: Parquet base files with Hudi's five meta columns, and the ``.hoodie/`` folder of a
table of version 6 (Hudi 0.14/0.15) — ``hoodie.properties`` and an active timeline of
``<instant>.<action>[.requested|.inflight]`` files, commit metadata as JSON. The shapes follow
Hudi's published layout; ``tests/unit/test_hudi_fixture.py`` checks that hudi-rs reads what
this writes (snapshot and incremental) before any other test relies on it.

:class:`HudiTableWriter` keeps the table's live file groups in memory and writes, per call,
one instant: inserts into new file groups or merged into an existing one (Hudi's small-file
handling), upserts that rewrite a file group, deletes, ``insert_overwrite`` and clustering
``replacecommit`` s, and ``clean`` / ``rollback`` instants (their Avro metadata written with
fastavro), or an instant left pending (requested or inflight).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
        "_hoodie_partition_path", "_hoodie_file_name"]
#: The data columns of the fixture tables.
DATA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("day", pa.string())])
SCHEMA = pa.schema([(m, pa.string()) for m in META] + list(DATA))

_AVRO_SCHEMA = {
    "type": "record", "name": "events_record", "namespace": "hoodie.events",
    "fields": [{"name": "id", "type": "long"},
               {"name": "name", "type": ["null", "string"], "default": None},
               {"name": "day", "type": "string"}],
}
# The parts of Hudi's rollback / clean metadata records the reader looks at.
_ROLLBACK_AVRO = {
    "type": "record", "name": "HoodieRollbackMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "startRollbackTime", "type": "string"},
               {"name": "timeTakenInMillis", "type": "long"},
               {"name": "totalFilesDeleted", "type": "int"},
               {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
               {"name": "version", "type": ["int", "null"], "default": 1}],
}
_CLEAN_AVRO = {
    "type": "record", "name": "HoodieCleanMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "startCleanTime", "type": "string"},
               {"name": "timeTakenInMillis", "type": "long"},
               {"name": "totalFilesDeleted", "type": "int"},
               {"name": "earliestCommitToRetain", "type": "string"},
               {"name": "version", "type": ["int", "null"], "default": 2}],
}


@dataclass
class FileGroup:
    """A live file group: its id, partition, rows (with meta columns) and latest slice."""

    file_id: str
    partition: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    commit: str = "null"
    path: str = ""


class HudiTableWriter:
    """A copy-on-write Hudi table (version 6) at ``root``, written one instant per call."""

    def __init__(self, root: str | Path, *, name: str = "events",
                 table_type: str = "COPY_ON_WRITE", version: int = 6,
                 start: dt.datetime | None = None, extra_properties: dict[str, str] | None = None
                 ) -> None:
        self.root = Path(root)
        self.name = name
        self.groups: dict[str, FileGroup] = {}
        self._clock = start or dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
        self._task = 0
        hoodie = self.root / ".hoodie"
        for sub in ("", ".aux", ".temp", "archived", ".schema"):
            (hoodie / sub).mkdir(parents=True, exist_ok=True)
        props = {
            "hoodie.table.name": name,
            "hoodie.table.type": table_type,
            "hoodie.table.version": str(version),
            "hoodie.timeline.layout.version": "1",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.partition.fields": "day",
            "hoodie.table.precombine.field": "id",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.partitionpath.urlencode": "false",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.populate.meta.fields": "true",
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.metadata.partitions": "",
            "hoodie.table.create.schema": json.dumps(_AVRO_SCHEMA),
            "hoodie.table.checksum": "1",
            "hoodie.database.name": "",
        }
        props.update(extra_properties or {})
        text = "#Properties saved on " + self._clock.strftime("%a %b %d %H:%M:%S UTC %Y") + "\n"
        text += "".join(f"{k}={v.replace(':', chr(92) + ':')}\n" for k, v in props.items())
        (hoodie / "hoodie.properties").write_text(text, encoding="utf-8")

    # ------------------------------------------------------------------ instants

    def next_instant(self) -> str:
        """A new instant time (``yyyyMMddHHmmssSSS``, UTC), later than every earlier one."""
        self._clock += dt.timedelta(seconds=1)
        return self._clock.strftime("%Y%m%d%H%M%S") + f"{self._clock.microsecond // 1000:03d}"

    def _timeline(self, instant: str, action: str, metadata: bytes | None,
                  *, state: str = "completed") -> None:
        hoodie = self.root / ".hoodie"
        inflight = f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight"
        (hoodie / f"{instant}.{action}.requested").write_bytes(b"")
        if state == "requested":
            return
        (hoodie / inflight).write_bytes(b"")
        if state == "inflight":
            return
        assert metadata is not None
        (hoodie / f"{instant}.{action}").write_bytes(metadata)

    # ------------------------------------------------------------------ data files

    def _write_slice(self, group: FileGroup, instant: str) -> dict[str, Any]:
        self._task += 1
        name = f"{group.file_id}_0-{self._task}-{self._task * 2}_{instant}.parquet"
        rel = f"{group.partition}/{name}"
        folder = self.root / group.partition
        folder.mkdir(parents=True, exist_ok=True)
        marker = folder / ".hoodie_partition_metadata"
        if not marker.exists():
            marker.write_text(f"#partition metadata\ncommitTime={instant}\npartitionDepth=1\n",
                              encoding="utf-8")
        for seq, row in enumerate(group.rows):
            if row["_hoodie_commit_time"] == instant:
                row["_hoodie_commit_seqno"] = f"{instant}_0_{seq}"
                row["_hoodie_file_name"] = name
        pq.write_table(pa.Table.from_pylist(group.rows, schema=SCHEMA), folder / name)
        group.path = rel
        return {"fileId": group.file_id, "path": rel, "prevCommit": group.commit,
                "fileSizeInBytes": (folder / name).stat().st_size}

    def _stat(self, base: dict[str, Any], inserts: int, updates: int, deletes: int,
              partition: str) -> dict[str, Any]:
        return {**base, "cdcStats": None, "numWrites": inserts + updates, "numDeletes": deletes,
                "numUpdateWrites": updates, "numInserts": inserts,
                "totalWriteBytes": base["fileSizeInBytes"], "totalWriteErrors": 0,
                "tempPath": None, "partitionPath": partition, "totalLogRecords": 0,
                "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0,
                "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
                "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "minEventTime": None,
                "maxEventTime": None, "runtimeStats": {"totalScanTime": 0,
                                                       "totalUpsertTime": 1,
                                                       "totalCreateTime": 1}}

    @staticmethod
    def _metadata(stats: dict[str, list[dict[str, Any]]], operation: str,
                  replaced: dict[str, list[str]] | None = None) -> bytes:
        body: dict[str, Any] = {"partitionToWriteStats": stats, "compacted": False,
                                "extraMetadata": {"schema": json.dumps(_AVRO_SCHEMA)},
                                "operationType": operation}
        if replaced is not None:
            body["partitionToReplaceFileIds"] = replaced
        return json.dumps(body, indent=2).encode("utf-8")

    def _meta_row(self, row: dict[str, Any], instant: str) -> dict[str, Any]:
        partition = f"day={row['day']}"
        return {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": "",
                "_hoodie_record_key": str(row["id"]), "_hoodie_partition_path": partition,
                "_hoodie_file_name": "", "id": int(row["id"]), "name": row.get("name"),
                "day": row["day"]}

    def _find(self, key: int) -> FileGroup | None:
        return next((g for g in self.groups.values()
                     if any(r["id"] == key for r in g.rows)), None)

    # ------------------------------------------------------------------ writes

    def insert(self, rows: list[dict[str, Any]], *, merge_into: bool = False,
               operation: str = "INSERT", state: str = "completed") -> str:
        """Insert ``rows`` (``id``, ``name``, ``day``) in one commit: per partition a new file
        group, or with ``merge_into`` a new slice of the partition's first live group (old rows
        carried over, as Hudi's small-file handling does). Returns the instant."""
        instant = self.next_instant()
        stats: dict[str, list[dict[str, Any]]] = {}
        by_partition: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_partition.setdefault(f"day={row['day']}", []).append(self._meta_row(row, instant))
        for partition, new in by_partition.items():
            group = next((g for g in self.groups.values() if g.partition == partition), None) \
                if merge_into else None
            if group is None:
                group = FileGroup(f"{uuid.uuid4()}-0", partition)
            if state == "completed":
                group.rows = group.rows + new
                base = self._write_slice(group, instant)
                group.commit = instant
                self.groups[group.file_id] = group
            else:
                base = {"fileId": group.file_id, "path": "", "prevCommit": group.commit,
                        "fileSizeInBytes": 0}
            stats.setdefault(partition, []).append(self._stat(base, len(new), 0, 0, partition))
        self._timeline(instant, "commit", self._metadata(stats, operation), state=state)
        return instant

    def upsert(self, rows: list[dict[str, Any]]) -> str:
        """Update rows by ``id`` (each must exist) in one commit rewriting their file groups."""
        instant = self.next_instant()
        stats: dict[str, list[dict[str, Any]]] = {}
        touched: dict[str, int] = {}
        for row in rows:
            group = self._find(int(row["id"]))
            assert group is not None, row
            group.rows = [self._meta_row(row, instant) if r["id"] == row["id"] else r
                          for r in group.rows]
            touched[group.file_id] = touched.get(group.file_id, 0) + 1
        for file_id, count in touched.items():
            group = self.groups[file_id]
            base = self._write_slice(group, instant)
            group.commit = instant
            stats.setdefault(group.partition, []).append(
                self._stat(base, 0, count, 0, group.partition))
        self._timeline(instant, "commit", self._metadata(stats, "UPSERT"))
        return instant

    def delete(self, ids: list[int]) -> str:
        """Delete rows by ``id`` in one commit rewriting their file groups."""
        instant = self.next_instant()
        stats: dict[str, list[dict[str, Any]]] = {}
        for key in ids:
            group = self._find(key)
            assert group is not None, key
            group.rows = [r for r in group.rows if r["id"] != key]
            base = self._write_slice(group, instant)
            group.commit = instant
            stats.setdefault(group.partition, []).append(
                self._stat(base, 0, 0, 1, group.partition))
        self._timeline(instant, "commit", self._metadata(stats, "DELETE"))
        return instant

    def cluster(self, partition: str) -> str:
        """A clustering ``replacecommit``: the partition's groups rewritten into one new group,
        rows unchanged (their commit times preserved, Hudi's default)."""
        instant = self.next_instant()
        old = [g for g in self.groups.values() if g.partition == partition]
        group = FileGroup(f"{uuid.uuid4()}-0", partition,
                          rows=[dict(r) for g in old for r in g.rows])
        base = self._write_slice(group, instant)
        group.commit = instant
        for g in old:
            del self.groups[g.file_id]
        self.groups[group.file_id] = group
        stats = {partition: [self._stat(base, len(group.rows), 0, 0, partition)]}
        self._timeline(instant, "replacecommit",
                       self._metadata(stats, "CLUSTER", {partition: [g.file_id for g in old]}))
        return instant

    def insert_overwrite(self, rows: list[dict[str, Any]]) -> str:
        """An ``insert_overwrite`` ``replacecommit``: the rows' partitions replaced by them."""
        instant = self.next_instant()
        partitions = {f"day={r['day']}" for r in rows}
        replaced = {p: [g.file_id for g in self.groups.values() if g.partition == p]
                    for p in partitions}
        for ids in replaced.values():
            for file_id in ids:
                del self.groups[file_id]
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition in sorted(partitions):
            group = FileGroup(f"{uuid.uuid4()}-0", partition,
                              rows=[self._meta_row(r, instant) for r in rows
                                    if f"day={r['day']}" == partition])
            base = self._write_slice(group, instant)
            group.commit = instant
            self.groups[group.file_id] = group
            stats[partition] = [self._stat(base, len(group.rows), 0, 0, partition)]
        self._timeline(instant, "replacecommit",
                       self._metadata(stats, "INSERT_OVERWRITE", replaced))
        return instant

    @staticmethod
    def _avro(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
        import fastavro

        out = io.BytesIO()
        fastavro.writer(out, fastavro.parse_schema(schema), [record])
        return out.getvalue()

    def clean(self, earliest_retained: str) -> str:
        """A ``clean`` instant (no file is removed by it here)."""
        instant = self.next_instant()
        self._timeline(instant, "clean", self._avro(_CLEAN_AVRO, {
            "startCleanTime": instant, "timeTakenInMillis": 1, "totalFilesDeleted": 0,
            "earliestCommitToRetain": earliest_retained, "version": 2}))
        return instant

    def rollback(self, target: str) -> str:
        """A ``rollback`` instant of instant ``target``: its timeline files removed (a
        completed commit's rows are not removed from the in-memory groups: callers roll back
        pending instants, or test the refusal)."""
        instant = self.next_instant()
        hoodie = self.root / ".hoodie"
        for path in hoodie.glob(f"{target}.*"):
            path.unlink()
        self._timeline(instant, "rollback", self._avro(_ROLLBACK_AVRO, {
            "startRollbackTime": instant, "timeTakenInMillis": 1, "totalFilesDeleted": 0,
            "commitsRollback": [target], "version": 1}))
        return instant

    def rows(self) -> list[dict[str, Any]]:
        """The table's live rows (data columns only), by ``id``."""
        out = [{k: r[k] for k in DATA.names} for g in self.groups.values() for r in g.rows]
        return sorted(out, key=lambda r: r["id"])
