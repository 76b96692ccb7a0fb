"""``format("delta")`` reads against the Delta protocol (issue 20): a table in the exact shape
Spark with Delta's jars writes it (commitInfo, protocol and metaData actions,
``part-00000-<uuid>-c000.snappy.parquet`` files in partition folders, stats JSON, a checkpoint
at version 10 with ``_last_checkpoint``), generated here from the protocol specification
(delta-io PROTOCOL.md), read and time-travelled across the checkpoint; and every reader feature
lakemark cannot honour refused with one error naming the table and the feature."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark.errors import UnsupportedError
from lakemark.tables._delta_snapshot import load_snapshot

SCHEMA = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "amount", "type": "double", "nullable": True, "metadata": {}},
    {"name": "day", "type": "date", "nullable": True, "metadata": {}},
]}
T0 = 1_714_521_600_000  # 2024-05-01T00:00:00Z, in ms; commit v is at T0 + v minutes
STRING_MAP = pa.map_(pa.string(), pa.string())
CHECKPOINT = pa.schema([
    ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64()),
                       ("lastUpdated", pa.int64())])),
    ("add", pa.struct([("path", pa.string()), ("partitionValues", STRING_MAP),
                       ("size", pa.int64()), ("modificationTime", pa.int64()),
                       ("dataChange", pa.bool_()), ("stats", pa.string()),
                       ("tags", STRING_MAP)])),
    ("remove", pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()),
                          ("dataChange", pa.bool_()), ("extendedFileMetadata", pa.bool_()),
                          ("partitionValues", STRING_MAP), ("size", pa.int64())])),
    ("metaData", pa.struct([("id", pa.string()), ("name", pa.string()),
                            ("description", pa.string()),
                            ("format", pa.struct([("provider", pa.string()),
                                                  ("options", STRING_MAP)])),
                            ("schemaString", pa.string()),
                            ("partitionColumns", pa.list_(pa.string())),
                            ("configuration", STRING_MAP), ("createdTime", pa.int64())])),
    ("protocol", pa.struct([("minReaderVersion", pa.int32()),
                            ("minWriterVersion", pa.int32())])),
])


class SparkShapedTable:
    """Writes commits the way Spark with Delta Lake 3.x does, one JSON file per version."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "_delta_log"
        self.log.mkdir(parents=True)
        self.version = -1
        self.live: dict[str, dict[str, Any]] = {}
        self.txn: dict[str, Any] | None = None
        self.protocol = {"minReaderVersion": 1, "minWriterVersion": 2}
        self.metadata = {
            "id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps(SCHEMA), "partitionColumns": ["day"],
            "configuration": {}, "createdTime": T0}

    def _file(self, day: str, ids: list[int], when: int) -> dict[str, Any]:
        name = f"day={day}/part-00000-{uuid.uuid4()}-c000.snappy.parquet"
        (self.root / f"day={day}").mkdir(exist_ok=True)
        amounts = [i * 1.5 for i in ids]
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                                 "amount": pa.array(amounts, pa.float64())}),
                       self.root / name, compression="snappy")
        stats = {"numRecords": len(ids), "minValues": {"id": min(ids), "amount": min(amounts)},
                 "maxValues": {"id": max(ids), "amount": max(amounts)},
                 "nullCount": {"id": 0, "amount": 0}}
        return {"path": name, "partitionValues": {"day": day},
                "size": (self.root / name).stat().st_size, "modificationTime": when,
                "dataChange": True, "stats": json.dumps(stats)}

    def commit(self, files: dict[str, list[int]], *, replace_day: str | None = None,
               app: tuple[str, int] | None = None) -> None:
        self.version += 1
        when = T0 + self.version * 60_000
        actions: list[dict[str, Any]] = []
        mode = "Overwrite" if replace_day else "Append"
        info = {"timestamp": when, "operation": "WRITE",
                "operationParameters": {"mode": mode, "partitionBy": '["day"]'},
                "isolationLevel": "Serializable", "isBlindAppend": replace_day is None,
                "operationMetrics": {"numFiles": str(len(files))},
                "engineInfo": "Apache-Spark/3.5.1 Delta-Lake/3.2.0",
                "txnId": str(uuid.uuid4())}
        if self.version > 0:
            info["readVersion"] = self.version - 1
        actions.append({"commitInfo": info})
        if self.version == 0:
            actions += [{"protocol": self.protocol}, {"metaData": self.metadata}]
        if app:
            self.txn = {"appId": app[0], "version": app[1], "lastUpdated": when}
            actions.append({"txn": self.txn})
        if replace_day:
            for path, add in list(self.live.items()):
                if add["partitionValues"]["day"] == replace_day:
                    del self.live[path]
                    actions.append({"remove": {
                        "path": path, "deletionTimestamp": when, "dataChange": True,
                        "extendedFileMetadata": True, "partitionValues": add["partitionValues"],
                        "size": add["size"]}})
        for day, ids in files.items():
            add = self._file(day, ids, when)
            self.live[add["path"]] = add
            actions.append({"add": add})
        log = self.log / f"{self.version:020d}.json"
        log.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions))
        # commit files carry their commit time (timestampAsOf uses it, as Delta does)
        os.utime(log, (when / 1000, when / 1000))

    def checkpoint(self) -> None:
        """A classic single-part checkpoint of the current version, and _last_checkpoint."""
        rows: list[dict[str, Any]] = [{"protocol": self.protocol}, {
            "metaData": {**self.metadata, "name": None, "description": None,
                         "format": {"provider": "parquet", "options": []},
                         "configuration": []}}]
        if self.txn:
            rows.append({"txn": self.txn})
        for add in self.live.values():
            rows.append({"add": {**add, "partitionValues": list(add["partitionValues"].items()),
                                 "tags": None}})
        table = pa.Table.from_pylist(
            [{name: row.get(name) for name in CHECKPOINT.names} for row in rows],
            schema=CHECKPOINT)
        target = self.log / f"{self.version:020d}.checkpoint.parquet"
        pq.write_table(table, target, compression="snappy")
        (self.log / "_last_checkpoint").write_text(json.dumps({
            "version": self.version, "size": table.num_rows,
            "sizeInBytes": target.stat().st_size, "numOfAddFiles": len(self.live)}))


def _spark_shaped(root: Path) -> SparkShapedTable:
    table = SparkShapedTable(root)
    for v in range(12):  # versions 0..11; checkpoint after version 10
        day = f"2024-05-0{v % 3 + 1}"
        if v == 7:
            table.commit({day: [700, 701]}, replace_day=day)  # replaces day v%3+1 = 2024-05-02
        else:
            table.commit({day: [v * 10, v * 10 + 1]}, app=("ingest", v) if v % 5 == 0 else None)
        if v == 10:
            table.checkpoint()
    return table


def _expected(version: int) -> list[int]:
    ids: dict[str, list[int]] = {}
    for v in range(version + 1):
        day = f"2024-05-0{v % 3 + 1}"
        if v == 7:
            ids[day] = [700, 701]
        else:
            ids.setdefault(day, []).extend([v * 10, v * 10 + 1])
    return sorted(i for day in ids.values() for i in day)


def _snapshot_ids(root: Path, **options: str) -> list[int]:
    snap = load_snapshot(str(root), options)
    return sorted(i for ref in snap.files
                  for i in pq.read_table(snap.file_uri(ref)).column("id").to_pylist())


def test_a_table_in_spark_delta_shape_reads_and_time_travels_across_its_checkpoint(
        spark, tmp_path):  # type: ignore[no-untyped-def]
    root = tmp_path / "spark_table"
    _spark_shaped(root)
    assert DeltaTable(str(root)).version() == 11  # deltalake agrees with the shape
    df = spark.read.format("delta").load(str(root))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("id", "bigint"), ("amount", "double"), ("day", "date")]
    assert sorted(r.id for r in df.collect()) == _expected(11)
    assert sorted(r.id for r in df.where("day = date'2024-05-02'").collect()) == [
        100, 101, 700, 701]
    old = spark.read.format("delta").option("versionAsOf", 5).load(str(root))
    assert sorted(r.id for r in old.collect()) == _expected(5)
    for version in (0, 6, 7, 9, 10, 11):
        assert _snapshot_ids(root, versionAsOf=str(version)) == _expected(version)
    stamp = dt.datetime.fromtimestamp((T0 + 8 * 60_000 + 30_000) / 1000, dt.UTC)
    assert _snapshot_ids(root, timestampAsOf=stamp.isoformat()) == _expected(8)
    # with the commits before the checkpoint cleaned up (log retention), the checkpoint alone
    # gives versions 10 and 11; earlier versions are a clear error
    for v in range(10):
        (root / "_delta_log" / f"{v:020d}.json").unlink()
    assert _snapshot_ids(root) == _expected(11)
    assert _snapshot_ids(root, versionAsOf="10") == _expected(10)
    assert DeltaTable(str(root)).transaction_version("ingest") == 10
    with pytest.raises(Exception, match=r"to version 5\. Available versions: \[10, 11\]"):
        load_snapshot(str(root), {"versionAsOf": "5"})


def _with_protocol(root: Path, protocol: dict[str, Any],
                   configuration: dict[str, str] | None = None, mapped: bool = False) -> None:
    write_deltalake(str(root), pa.table({"a": pa.array([1, 2], pa.int64())}))
    log = root / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    for action in actions:
        if "protocol" in action:
            action["protocol"] = protocol
        if "metaData" in action and configuration:
            action["metaData"]["configuration"] = configuration
            if mapped:
                schema = json.loads(action["metaData"]["schemaString"])
                for i, fld in enumerate(schema["fields"], 1):
                    fld["metadata"] = {"delta.columnMapping.id": i,
                                       "delta.columnMapping.physicalName": f"col-{uuid.uuid4()}"}
                action["metaData"]["schemaString"] = json.dumps(schema)
    log.write_text("".join(json.dumps(a) + "\n" for a in actions))


def _with_deletion_vector(root: Path) -> None:
    _with_protocol(root, {"minReaderVersion": 3, "minWriterVersion": 7,
                          "readerFeatures": ["deletionVectors"],
                          "writerFeatures": ["deletionVectors"]},
                   {"delta.enableDeletionVectors": "true"})
    log = root / "_delta_log"
    add = next(json.loads(x)["add"] for x in (log / f"{0:020d}.json").read_text().splitlines()
               if '"add"' in x)
    vector = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1,
              "sizeInBytes": 36, "cardinality": 1}
    (log / f"{1:020d}.json").write_text(
        json.dumps({"remove": {"path": add["path"], "deletionTimestamp": T0,
                               "dataChange": True}}) + "\n"
        + json.dumps({"add": {**add, "deletionVector": vector}}) + "\n")


CASES = {
    "deletion vectors": (_with_deletion_vector, "deletion vectors"),
    "column mapping by name": (lambda r: _with_protocol(
        r, {"minReaderVersion": 2, "minWriterVersion": 5},
        {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "1"},
        mapped=True), "column mapping"),
    "column mapping by id": (lambda r: _with_protocol(
        r, {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["columnMapping"],
            "writerFeatures": ["columnMapping"]},
        {"delta.columnMapping.mode": "id", "delta.columnMapping.maxColumnId": "1"},
        mapped=True), "column mapping"),
    "reader protocol 4": (lambda r: _with_protocol(
        r, {"minReaderVersion": 4, "minWriterVersion": 2}), "reader protocol version 4"),
    "unknown reader feature": (lambda r: _with_protocol(
        r, {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["futureThing"],
            "writerFeatures": ["futureThing"]}), "futureThing"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_features_the_reader_cannot_honour_are_refused_by_name(tmp_path, case):  # type: ignore[no-untyped-def]
    build, feature = CASES[case]
    root = tmp_path / "t"
    build(root)
    with pytest.raises(UnsupportedError) as error:
        load_snapshot(str(root))
    message = str(error.value)
    assert feature in message and str(root) in message
    assert "\n" not in message


def test_a_refused_feature_fails_a_spark_read_before_any_row(spark, tmp_path):  # type: ignore[no-untyped-def]
    root = tmp_path / "t"
    _with_deletion_vector(root)
    with pytest.raises(Exception, match="deletion vectors"):
        spark.read.format("delta").load(str(root)).collect()
    shutil.rmtree(root)


def test_the_table_source_refuses_the_same_features_by_name(spark, tmp_path):  # type: ignore[no-untyped-def]
    from lakemark import Job

    for number, case in enumerate(sorted(CASES)):
        build, feature = CASES[case]
        root = tmp_path / f"t{number}"
        build(root)
        with pytest.raises(UnsupportedError) as error, \
                Job("j", state=f"sqlite:///{tmp_path}/s{number}.db", spark=spark) as job:
            job.read_table(str(root), ctx="src")
        message = str(error.value)
        assert feature in message and str(root) in message and "\n" not in message, case
