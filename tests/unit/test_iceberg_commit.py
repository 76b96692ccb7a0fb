"""The Iceberg sink's commit step on a real SQLite SQL catalog (no JVM; pyarrow writes the
Parquet files Spark would): a commit that loses a race re-checks its token, appends merge
manifests, and parsed metadata is reused only for the metadata file it was read from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.types import StringType

from lakemark.catalog._iceberg import (
    load_iceberg_catalog,
    parse_table_name,
    resolve_iceberg_catalog,
)
from lakemark.errors import SourceError
from lakemark.planning.iceberg import plan_snapshots
from lakemark.sinks import IdempotencyToken
from lakemark.sinks._iceberg import (
    APP_ID_KEY,
    APP_VERSION_KEY,
    MANIFEST_MERGE_KEY,
    WRITE_ID_KEY,
    _commit,
    _open,
)
from lakemark.sources.iceberg import snapshot_infos, table_files

SCHEMA = pa.schema([("id", pa.int64())])
NAME = parse_table_name("db.events")


class Table:
    """``db.events`` in a SQLite catalog under ``tmp``; each write is one Parquet file."""

    def __init__(self, tmp: Path) -> None:
        self.uri = f"sqlite:///{tmp / 'catalog.db'}"
        self.root = tmp / "warehouse" / "db.db" / "events"
        (self.root / "data").mkdir(parents=True)
        self.files = 0

    def catalog(self) -> Any:
        return load_iceberg_catalog(resolve_iceberg_catalog(self.uri, env={}))

    def file(self, ids: range) -> str:
        path = self.root / "data" / f"part-{self.files:04d}.parquet"
        self.files += 1
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}, schema=SCHEMA), path)
        return path.as_uri()

    def commit(self, ids: range, version: int, *, base: Any = None,
               write_id: str | None = None) -> tuple[int | None, bool]:
        """One sink commit of ``ids`` with token ``("app", version)`` in the snapshot summary,
        as ``write_iceberg`` makes it; against ``base`` (a table loaded earlier) instead of the
        current table when given."""
        catalog = self.catalog()
        current = base if base is not None else _open(catalog, NAME)
        write_id = write_id or f"w{self.files}"
        summary = {WRITE_ID_KEY: write_id, APP_ID_KEY: "app", APP_VERSION_KEY: str(version)}
        return _commit(catalog, NAME, current, SCHEMA, self.root.as_uri(), [self.file(ids)],
                       summary, IdempotencyToken("app", version), write_id)

    def ids(self) -> list[int]:
        table = _open(self.catalog(), NAME)
        return sorted(table.scan().to_arrow().column("id").to_pylist())


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(tmp_path)


def test_a_commit_that_loses_a_race_checks_the_token_again(table: Table) -> None:
    table.commit(range(0, 2), 1)
    stale = _open(table.catalog(), NAME)
    _, skipped = table.commit(range(2, 4), 2)  # the racer commits token 2 first
    assert not skipped
    snapshot, skipped = table.commit(range(10, 12), 2, base=stale)  # the same token, stale
    assert skipped and snapshot == _open(table.catalog(), NAME).current_snapshot().snapshot_id
    assert table.ids() == [0, 1, 2, 3]
    _, skipped = table.commit(range(4, 6), 3, base=stale)  # a new token: retried, appended once
    assert not skipped
    assert table.ids() == [0, 1, 2, 3, 4, 5]
    versions = [s.summary[APP_VERSION_KEY] for s in _open(table.catalog(), NAME).snapshots()]
    assert versions == ["1", "2", "3"]


def test_appends_merge_manifests_and_each_snapshot_still_lists_its_own_files(
        table: Table) -> None:
    table.commit(range(0, 1), 1)
    first = _open(table.catalog(), NAME)
    assert first.properties[MANIFEST_MERGE_KEY] == "true"  # set on create
    with first.transaction() as tx:
        tx.set_properties({"commit.manifest.min-count-to-merge": "3"})
    for run in range(2, 10):
        table.commit(range(run * 10, run * 10 + 1), run)
    current = _open(table.catalog(), NAME)
    lengths = [len(s.manifests(current.io)) for s in current.snapshots()]
    assert max(lengths) <= 3, lengths  # without merging: 1, 2, …, 9
    assert table.ids() == [0] + [run * 10 for run in range(2, 10)]
    snapshots = current.snapshots()
    rng = plan_snapshots("db.events", snapshot_infos(current), snapshots[2].snapshot_id,
                         snapshots[-1].snapshot_id)
    # The run plans on the pinned snapshot's ancestry down to the bookmark only: same range.
    chain = snapshot_infos(current, snapshots[-1].snapshot_id, snapshots[2].snapshot_id)
    assert [s.snapshot_id for s in chain] == [s.snapshot_id for s in snapshots[2:]][::-1]
    assert plan_snapshots("db.events", chain, snapshots[2].snapshot_id,
                          snapshots[-1].snapshot_id) == rng
    files = table_files(current, rng)  # the files the snapshots after the third one added
    assert [Path(f.path).name for f in files] == [f"part-{i:04d}.parquet" for i in range(3, 9)]


def test_each_snapshots_new_files_are_read_from_a_merged_manifest_without_decoding_it_all(
        table: Table) -> None:
    """lakemark's own manifest reading (fastavro, stopping at the manifest list's added count)
    finds for every snapshot the files pyiceberg's full decoding finds, and reads a merged
    manifest only up to its new entries."""
    from pyiceberg.manifest import ManifestEntryStatus

    from lakemark.planning.iceberg_manifests import entries_added_by, manifests_added_by
    from lakemark.sources._iceberg_manifests import manifest_entries, manifest_list

    table.commit(range(0, 1), 1)
    with _open(table.catalog(), NAME).transaction() as tx:
        tx.set_properties({"commit.manifest.min-count-to-merge": "3"})
    for run in range(2, 10):
        table.commit(range(run, run + 1), run)
    current = _open(table.catalog(), NAME)
    decoded_of_merged: list[tuple[int, int]] = []
    for snapshot in current.snapshots():
        expected = sorted(
            e.data_file.file_path for m in snapshot.manifests(current.io)
            for e in m.fetch_manifest_entry(current.io)
            if e.status == ManifestEntryStatus.ADDED and e.snapshot_id == snapshot.snapshot_id)
        found = []
        for manifest in manifests_added_by(manifest_list(current.io, snapshot.manifest_list),
                                           snapshot.snapshot_id):
            decoded = 0

            def counted(entries: Any) -> Any:
                nonlocal decoded
                for entry in entries:
                    decoded += 1
                    yield entry

            found += [e.file_path for e in entries_added_by(
                counted(manifest_entries(current.io, manifest)), manifest,
                snapshot.snapshot_id)]
            total = len(list(manifest_entries(current.io, manifest)))
            if total > 1:
                decoded_of_merged.append((decoded, total))
        assert sorted(found) == expected and len(expected) == 1
    assert decoded_of_merged and max(total for _, total in decoded_of_merged) >= 3
    assert all(decoded == 1 for decoded, _ in decoded_of_merged), decoded_of_merged


def test_metadata_is_reused_only_for_the_file_it_was_read_from(table: Table) -> None:
    table.commit(range(0, 2), 1)
    loaded = table.catalog().load_table(NAME.identifier)
    again = table.catalog().load_table(NAME.identifier)  # another catalog object, same process
    assert again.metadata is loaded.metadata  # not parsed again
    plain = SqlCatalog("lakemark", uri=table.uri,
                       warehouse=(table.root.parents[1]).as_uri())  # another writer
    plain.load_table(NAME.identifier).add_files([table.file(range(7, 8))])
    after = table.catalog().load_table(NAME.identifier)
    assert after.metadata_location != loaded.metadata_location
    assert len(after.snapshots()) == 2 and after.metadata is not loaded.metadata
    assert table.ids() == [0, 1, 7]


def test_an_unreadable_manifest_list_is_refused_naming_the_file(tmp_path: Path) -> None:
    from pyiceberg.io.pyarrow import PyArrowFileIO

    from lakemark.sources._iceberg_manifests import manifest_list

    bad = tmp_path / "snap-1.avro"
    bad.write_bytes(b"not avro at all")
    with pytest.raises(SourceError, match=r"cannot read Iceberg manifest list .*snap-1\.avro"):
        manifest_list(PyArrowFileIO(), bad.as_uri())
    with pytest.raises(SourceError, match=r"manifest list .*missing\.avro"):
        manifest_list(PyArrowFileIO(), (tmp_path / "missing.avro").as_uri())


def test_the_light_metadata_reader_agrees_with_pyiceberg(table: Table) -> None:
    """What an incremental run reads of the metadata JSON without pyiceberg's model (current
    snapshot, each snapshot's parent, operation, time and manifest list, the schema as of each
    snapshot) is what pyiceberg parses; a shape it does not take is left to pyiceberg."""
    from lakemark.catalog._iceberg_light import load_light, parse_light
    from lakemark.sources.iceberg import open_light, spark_schema

    table.commit(range(0, 2), 1)
    catalog = table.catalog()
    with _open(catalog, NAME).update_schema() as update:
        update.add_column("note", StringType())
    table.commit(range(2, 4), 2)
    current = catalog.load_table(NAME.identifier)
    light = load_light(catalog, NAME.identifier)
    assert light is not None and light.metadata_location == current.metadata_location
    assert light.current_snapshot_id == current.current_snapshot().snapshot_id
    assert snapshot_infos(light) == snapshot_infos(current)
    last = current.current_snapshot().snapshot_id
    assert snapshot_infos(light, last, None) == snapshot_infos(current, last, None)
    for snapshot in current.snapshots():
        assert light.snapshots[snapshot.snapshot_id].manifest_list == snapshot.manifest_list
        assert spark_schema(light, snapshot.snapshot_id) == spark_schema(current,
                                                                          snapshot.snapshot_id)
    assert [f.name for f in spark_schema(light, None).fields] == ["id", "note"]
    first = current.snapshots()[0].snapshot_id
    assert [f.name for f in spark_schema(light, first).fields] == ["id"]
    rng = plan_snapshots("db.events", snapshot_infos(light, last, first), first, last)
    assert table_files(light, rng) == table_files(current, rng)
    doc = json.loads(Path(current.metadata_location.removeprefix("file://")).read_text())
    assert parse_light("m", json.dumps(doc), lambda p: current.io) is not None
    assert parse_light("m", json.dumps({**doc, "format-version": 1}),
                       lambda p: current.io) is None
    moved = {**doc, "refs": {"main": {"snapshot-id": first, "type": "branch"}}}
    assert parse_light("m", json.dumps(moved), lambda p: current.io) is None
    broken = {**doc, "snapshots": [{k: v for k, v in s.items() if k != "manifest-list"}
                                   for s in doc["snapshots"]]}
    odd = parse_light("m.metadata.json", json.dumps(broken), lambda p: current.io)
    assert odd is not None and first in odd.snapshots
    with pytest.raises(SourceError, match=rf"m\.metadata\.json: snapshot {first} .*manifest-list"):
        odd.snapshots[first]
    assert parse_light("m", "{not json", lambda p: current.io) is None
    with pytest.raises(SourceError, match=r"Iceberg table db\.nothing does not exist"):
        open_light("db.nothing", table.uri)
