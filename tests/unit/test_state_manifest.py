"""The typed manifest: one serialisation, versioned; entries of older lakemarks read back."""

from __future__ import annotations

import pytest

from lakemark.errors import StateError
from lakemark.planning import FileEntry
from lakemark.state.manifest import (MANIFEST_VERSION, SinkManifest, SinkToken, SourceManifest,
                                     manifest_from_json)
from lakemark.state.sqlite import SQLiteStore

#: Entries as lakemark wrote them before manifests were typed (version 1: no manifest_version).
V1_FILES = {
    "kind": "files", "source": "/in", "format": "json", "bookmark_option": "enable",
    "options": {"recurse": True, "exclusions": [], "maxBand": 900000, "maxFilesInBand": None,
                "boundedFiles": None, "boundedSize": None},
    "listed_at_ms": 5, "listed_files": 2,
    "listing": {"mode": "full", "start_after": {}, "incremental": False, "requests": 1},
    "planned_files": 2, "planned_bytes": 10, "pending_files": 0, "previous_state": None,
    "next_state": {"kind": "files", "high": 5}, "replay": {"case": "first-attempt"},
}
V1_SINK = {"kind": "sink", "ctx": "t", "target": "/out", "format": "delta", "mode": "append",
           "partition_by": [], "token": {"app_id": "j/t", "version": 3},
           "token_source": None, "status": "committed", "rows": 4, "files": 1, "bytes": 9,
           "skipped": False, "table_version": 0}
V1_JDBC = {"kind": "jdbc", "source": "jdbc:postgresql://h/db hr.emp", "dbtable": "hr.emp",
           "key_source": None, "range": {"keys": ["id"], "after": None, "through": [3]},
           "previous_state": None, "next_state": {"kind": "jdbc"}, "planned_files": 0}


@pytest.mark.parametrize("entry", [V1_FILES, V1_SINK, V1_JDBC], ids=["files", "sink", "jdbc"])
def test_an_older_entry_reads_typed_and_writes_back_the_same(entry: dict) -> None:
    record = manifest_from_json(entry)
    again = record.to_json()
    assert again.pop("manifest_version") == MANIFEST_VERSION
    assert again == entry
    assert manifest_from_json(record.to_json()) == record


def test_records_expose_their_fields() -> None:
    files = manifest_from_json(V1_FILES)
    assert isinstance(files, SourceManifest) and files.next_state == {"kind": "files", "high": 5}
    sink = manifest_from_json(V1_SINK)
    assert isinstance(sink, SinkManifest) and sink.token == SinkToken("j/t", 3)
    jdbc = manifest_from_json(V1_JDBC)
    assert isinstance(jdbc, SourceManifest) and jdbc.range == V1_JDBC["range"]
    assert jdbc.extra == {"dbtable": "hr.emp", "key_source": None}


def test_a_new_sink_entry_has_its_core_keys() -> None:
    doc = SinkManifest(ctx="t", target="/out", format="delta", mode="append",
                       status="nothing-to-write", rows=0).to_json()
    assert doc == {"kind": "sink", "ctx": "t", "target": "/out", "format": "delta",
                   "mode": "append", "partition_by": [], "token": None,
                   "status": "nothing-to-write", "rows": 0, "manifest_version": MANIFEST_VERSION}


def test_an_entry_of_a_newer_lakemark_or_with_a_bad_token_is_refused() -> None:
    with pytest.raises(StateError, match="newer"):
        manifest_from_json({**V1_FILES, "manifest_version": MANIFEST_VERSION + 1})
    with pytest.raises(StateError, match="token"):
        manifest_from_json({**V1_SINK, "token": {"app_id": "x"}})


def test_a_state_store_with_older_entries_replays_them_typed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = SQLiteStore(tmp_path / "s.db")
    r = store.begin_run("j", "enable", host="h", pid=1, lease_timeout_s=60)
    store.record_plan(r.run_id, "src", V1_FILES, [FileEntry(path="/in/a", mtime=1, size=5)])
    store.record_plan(r.run_id, "sink:t", V1_SINK, [])
    store.close()
    store = SQLiteStore(tmp_path / "s.db")
    kinds = {i.ctx: type(i.manifest).__name__ for i in store.run_inputs(r.run_id)}
    assert kinds == {"src": "SourceManifest", "sink:t": "SinkManifest"}
    store.close()
