"""The Hudi tables the tests write (tests/hudi_tables.py) are read by hudi-rs as Hudi tables,
and the source's plan of a range reads the same rows as hudi-rs's own incremental query.

No Spark: the planned base files are read with pyarrow and filtered as the source filters
them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hudi_tables import HudiTableWriter  # noqa: E402

hudi = pytest.importorskip("hudi")

from lakemark.planning.hudi import pin_instant, plan_instants  # noqa: E402
from lakemark.sources.hudi import _details, _snapshot_files, _target, _timeline  # noqa: E402


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[int, str]]:
    if not batches:
        return []
    table = pa.Table.from_batches(batches)
    return sorted(zip(table["id"].to_pylist(), table["_hoodie_commit_time"].to_pylist()))


def _incremental(table: object, start: str, end: str) -> list[tuple[int, str]]:
    options = hudi.HudiReadOptions().with_query_type(hudi.HudiQueryType.Incremental) \
        .with_start_timestamp(start).with_end_timestamp(end)
    return _rows(table.read(options))  # type: ignore[attr-defined]


def _planned(root: Path, after: str | None, skip: bool = False) -> list[tuple[int, str]]:
    target = _target(str(root))
    timeline = _timeline(target)
    pinned, _ = pin_instant(timeline)
    rng = plan_instants(target.root, timeline, after, pinned,
                        _details(target, timeline, after, pinned), bookmark=after,
                        skip_change_commits=skip)
    out: list[tuple[int, str]] = []
    for f in rng.files:
        data = pq.read_table(root / f.path)
        data = data.filter(pc.is_in(data["_hoodie_commit_time"], pa.array(f.commits)))
        out += zip(data["id"].to_pylist(), data["_hoodie_commit_time"].to_pylist())
    return sorted(out)


def test_hudi_rs_reads_the_fixture_and_agrees_with_the_plan(tmp_path: Path) -> None:
    root = tmp_path / "events"
    w = HudiTableWriter(root)
    c1 = w.insert([{"id": 1, "name": "a", "day": "2026-01-01"},
                   {"id": 2, "name": "b", "day": "2026-01-02"}])
    c2 = w.insert([{"id": 3, "name": "c", "day": "2026-01-01"}], merge_into=True)
    c3 = w.cluster("day=2026-01-01")
    c4 = w.insert([{"id": 4, "name": "d", "day": "2026-01-01"}], merge_into=True)
    w.clean(c1)
    pending = w.insert([{"id": 9, "name": "z", "day": "2026-01-09"}], state="inflight")
    w.rollback(pending)
    table = hudi.HudiTableBuilder.from_base_uri(str(root)).build()
    assert (table.table_type, table.is_mor, table.table_name) == ("COPY_ON_WRITE", False,
                                                                  "events")
    assert table.get_schema().names == ["id", "name", "day"]
    timeline = table.get_timeline()
    assert [i.timestamp for i in timeline.get_completed_commits()] == [c1, c2, c4]
    assert [i.timestamp for i in timeline.get_completed_replacecommits()] == [c3]
    snapshot = _rows(table.read())
    assert snapshot == [(1, c1), (2, c1), (3, c2), (4, c4)]
    assert [r["id"] for r in w.rows()] == [1, 2, 3, 4]
    # Time travel, and the snapshot files the source's first run reads.
    as_of = hudi.HudiReadOptions().with_as_of_timestamp(c2)
    assert _rows(table.read(as_of)) == [(1, c1), (2, c1), (3, c2)]
    files = _snapshot_files(table, str(root), c4)
    assert sorted(f.path.split("/")[0] for f in files) == ["day=2026-01-01", "day=2026-01-02"]
    # Incremental: hudi-rs's own query and the source's plan read the same rows.
    assert _incremental(table, c1, c4) == [(3, c2), (4, c4)]
    assert _planned(root, c1) == [(3, c2), (4, c4)]
    assert _planned(root, c2) == _incremental(table, c2, c4) == [(4, c4)]
    assert _planned(root, None) == snapshot


def test_updates_are_refused_or_skipped_and_mor_tables_refused(tmp_path: Path) -> None:
    from lakemark.errors import UnsupportedError
    from lakemark.planning.hudi import HudiChangeError
    from lakemark.sources.hudi import _open

    root = tmp_path / "events"
    w = HudiTableWriter(root)
    c1 = w.insert([{"id": 1, "name": "a", "day": "2026-01-01"}])
    c2 = w.upsert([{"id": 1, "name": "A", "day": "2026-01-01"}])
    c3 = w.insert([{"id": 2, "name": "b", "day": "2026-01-01"}], merge_into=True)
    table = hudi.HudiTableBuilder.from_base_uri(str(root)).build()
    # hudi-rs's incremental query returns the updated row; a reader of inserts cannot.
    assert _incremental(table, c1, c3) == [(1, c2), (2, c3)]
    with pytest.raises(HudiChangeError, match=f"instant {c2} .upsert. updates, deletes"):
        _planned(root, c1)
    assert _planned(root, c1, skip=True) == [(2, c3)]
    mor = HudiTableWriter(tmp_path / "mor", table_type="MERGE_ON_READ")
    mor.insert([{"id": 1, "name": "a", "day": "2026-01-01"}])
    with pytest.raises(UnsupportedError, match="is a MERGE_ON_READ table: lakemark's Hudi "
                                               "source reads copy-on-write tables only"):
        _open(_target(str(tmp_path / "mor")))
    v8 = HudiTableWriter(tmp_path / "v8", version=8)
    v8.insert([{"id": 1, "name": "a", "day": "2026-01-01"}])
    with pytest.raises(UnsupportedError, match="has table version 8: lakemark's Hudi source "
                                               "reads table versions 5 and 6"):
        _open(_target(str(tmp_path / "v8")))


def test_virtual_key_tables_and_a_missing_extra_are_refused_by_name(tmp_path: Path,
                                                                   monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lakemark.errors import ConfigError, UnsupportedError
    from lakemark.sources.hudi import _open

    virtual = HudiTableWriter(tmp_path / "v", extra_properties={
        "hoodie.populate.meta.fields": "false"})
    virtual.insert([{"id": 1, "name": "a", "day": "2026-01-01"}])
    with pytest.raises(UnsupportedError, match="hoodie.populate.meta.fields=false"):
        _open(_target(str(tmp_path / "v")))
    monkeypatch.setitem(sys.modules, "hudi", None)  # as if the package were not installed
    with pytest.raises(ConfigError, match=r"pip install 'lakemark\[hudi\]'"):
        _open(_target(str(tmp_path / "v")))


def test_a_replayed_range_must_take_what_the_earlier_attempt_took() -> None:
    from lakemark.errors import SourceError
    from lakemark.planning.hudi import InstantRange
    from lakemark.sources.hudi import _as_recorded

    recorded = {"after": "1", "through": "3", "mode": "instants", "take": ["2", "3"],
                "known_undo": ["4"]}
    same = _as_recorded(InstantRange("/t", "1", "3", take=("2", "3"), known=("4", "5")),
                        recorded, "/t")
    assert same.known == ("4",)  # not the rollback completed since the earlier attempt
    with pytest.raises(SourceError, match="Hudi table /t: this attempt must replay the "
                                          "instants an earlier attempt read, but 2 no longer"):
        _as_recorded(InstantRange("/t", "1", "3", take=("3",)), recorded, "/t")
