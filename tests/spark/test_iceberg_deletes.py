"""Iceberg tables with delete files (format version 2 row-level deletes) are refused, never read
with wrong rows: ``spark.read.format("iceberg")`` and ``Job.read_table`` fail with one line
naming the table and the snapshot.

pyiceberg 0.12 writes no delete files (its deletes are copy-on-write; merge-on-read falls back
to it), so the test commits them itself in the shape the table spec gives them: a Parquet
position delete file (``file_path``, ``pos``) or equality delete file (the equality columns),
listed in a manifest whose content is ``deletes``, in a new snapshot with operation
``delete``. pyiceberg's own scan applying the position deletes checks the shape.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark import Job
from lakemark.errors import SourceError

pytestmark = pytest.mark.spark


def _parquet_with_ids(path: str, table: pa.Table, ids: dict[str, int]) -> int:
    schema = pa.schema([f.with_metadata({b"PARQUET:field_id": str(ids[f.name]).encode()})
                        for f in table.schema])
    pq.write_table(table.cast(schema), path)
    return Path(path).stat().st_size


def commit_delete_file(table: Any, rows: pa.Table, *, equality_ids: list[int] | None = None
                       ) -> int:
    """Commit ``rows`` as one delete file of ``table`` in a new ``delete`` snapshot: position
    deletes (``file_path``, ``pos``; reserved field ids) or, with ``equality_ids``, equality
    deletes on those fields. The new snapshot's id."""
    from pyiceberg.manifest import (
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestContent,
        ManifestEntry,
        ManifestEntryStatus,
        ManifestWriterV2,
        write_manifest_list,
    )
    from pyiceberg.table.snapshots import Operation, Snapshot, Summary
    from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate
    from pyiceberg.typedef import Record

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    parent = table.current_snapshot()
    snapshot_id = int(uuid.uuid4().int % (1 << 62))
    sequence = table.metadata.next_sequence_number()
    root = table.location().removeprefix("file://")
    path = f"{root}/data/deletes-{snapshot_id}.parquet"
    if equality_ids is None:
        ids = {"file_path": 2147483546, "pos": 2147483545}
        content = DataFileContent.POSITION_DELETES
    else:
        ids = {table.schema().find_column_name(i): i for i in equality_ids}
        content = DataFileContent.EQUALITY_DELETES
    size = _parquet_with_ids(path, rows, ids)
    delete_file = DataFile.from_args(
        content=content, file_path="file://" + path, file_format=FileFormat.PARQUET,
        partition=Record(), record_count=rows.num_rows, file_size_in_bytes=size,
        equality_ids=equality_ids, _table_format_version=2)
    manifest_path = f"{root}/metadata/deletes-{snapshot_id}-m0.avro"
    with DeleteManifestWriter(table.spec(), table.schema(), table.io.new_output(manifest_path),
                              snapshot_id, "deflate") as writer:
        writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                                 snapshot_id=snapshot_id, data_file=delete_file))
    manifests = [*parent.manifests(table.io), writer.to_manifest_file()]
    list_path = f"{root}/metadata/snap-{snapshot_id}-deletes.avro"
    with write_manifest_list(2, table.io.new_output(list_path), snapshot_id,
                             parent.snapshot_id, sequence, "deflate") as manifest_list:
        manifest_list.add_manifests(manifests)
    snapshot = Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id,
                        sequence_number=sequence, timestamp_ms=int(time.time() * 1000),
                        manifest_list="file://" + list_path,
                        summary=Summary(operation=Operation.DELETE),
                        schema_id=table.schema().schema_id)
    with table.transaction() as tx:
        tx._apply((AddSnapshotUpdate(snapshot=snapshot),
                   SetSnapshotRefUpdate(ref_name="main", type="branch",
                                        snapshot_id=snapshot_id)),
                  (AssertRefSnapshotId(ref="main", snapshot_id=parent.snapshot_id),))
    return snapshot_id


@pytest.fixture
def catalog(tmp_path: Path) -> tuple[str, SqlCatalog]:
    uri = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    (tmp_path / "iceberg" / "warehouse").mkdir(parents=True)
    sql = SqlCatalog("lakemark", uri=uri, warehouse=(tmp_path / "iceberg" / "warehouse").as_uri())
    sql.create_namespace("db")
    return uri, sql


def test_tables_with_delete_files_are_refused_in_one_line(
        spark: Any, catalog: tuple[str, SqlCatalog], tmp_path: Path) -> None:
    uri, sql = catalog
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})
    for kind in ("position", "equality"):
        table = sql.create_table(f"db.{kind}", data.schema,
                                 properties={"format-version": "2"})
        table.append(data)
        state = f"sqlite:///{tmp_path / f'{kind}.db'}"
        with Job("before", state=state) as job:  # bookmarked before the deletes
            assert job.read_table(f"db.{kind}", format="iceberg", ctx="src",
                                  options={"iceberg_catalog": uri}).count() == 3
        if kind == "position":
            first = next(iter(table.scan().plan_files())).file.file_path
            rows = pa.table({"file_path": [first], "pos": pa.array([1], pa.int64())})
            snapshot = commit_delete_file(table, rows)
            table = sql.load_table(f"db.{kind}")
            assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 3]
        else:
            rows = pa.table({"id": pa.array([2], pa.int64())})
            snapshot = commit_delete_file(table, rows, equality_ids=[1])
        expected = rf"^Iceberg table db\.{kind} has 1 delete file\(s\) \(row-level deletes\) " \
                   rf"at snapshot {snapshot}: .*compact the table"
        with pytest.raises(SourceError, match=expected) as err:
            spark.read.format("iceberg").option("iceberg_catalog", uri).load(f"db.{kind}")
        assert "\n" not in str(err.value)
        with Job("fresh", state=state) as job, pytest.raises(SourceError, match=expected):
            job.read_table(f"db.{kind}", format="iceberg", ctx="src",
                           options={"iceberg_catalog": uri})
        with Job("before", state=state) as job, pytest.raises(
                SourceError, match=rf"snapshot {snapshot} \(delete\) changes .*"
                                   r"streaming-skip-delete-snapshots=true"):
            job.read_table(f"db.{kind}", format="iceberg", ctx="src",
                           options={"iceberg_catalog": uri})
