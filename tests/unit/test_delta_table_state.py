"""What a Delta table source carries between runs (``lakemark.planning.delta_table_state``):
pure and property-tested. Logs are generated as commit JSON lines (appends, schema changes,
change-feed toggles, protocol upgrades, deletes) and parsed as the source parses them."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError, SourceError, UnsupportedError
from lakemark.planning.delta_log import (
    Commit,
    MetaData,
    Protocol,
    TableOptions,
    parse_commit,
)
from lakemark.planning.delta_table_state import (
    TableState,
    advance,
    check_readable,
    commit_digest,
    find_latest,
    last_checkpoint_version,
    plan_table_range,
)

TABLE_ID = "6f1c0a52-0000-4000-8000-000000000001"


def _schema(columns: int) -> str:
    fields = [{"name": "id", "type": "long", "nullable": True, "metadata": {}},
              {"name": "p", "type": "string", "nullable": True, "metadata": {}}]
    fields += [{"name": f"c{i}", "type": "double", "nullable": True, "metadata": {}}
               for i in range(columns)]
    return json.dumps({"type": "struct", "fields": fields})


def _metadata(columns: int, cdf: bool, table_id: str = TABLE_ID) -> str:
    return json.dumps({"metaData": {
        "id": table_id, "format": {"provider": "parquet", "options": {}},
        "schemaString": _schema(columns), "partitionColumns": ["p"],
        "configuration": {"delta.enableChangeDataFeed": str(cdf).lower()}}})


def _protocol(reader: int, writer: int, features: tuple[str, ...] = ()) -> str:
    action: dict[str, object] = {"minReaderVersion": reader, "minWriterVersion": writer}
    if reader >= 3:
        action["readerFeatures"] = list(features)
        action["writerFeatures"] = list(features)
    return json.dumps({"protocol": action})


def _add(version: int, i: int) -> str:
    return json.dumps({"add": {"path": f"p=a/v{version}-{i}.parquet", "size": 10,
                               "partitionValues": {"p": "a"}, "dataChange": True,
                               "stats": json.dumps({"numRecords": 2})}})


# A commit of the generated logs: (kind, files); kinds change the metadata or protocol too.
_KINDS = st.sampled_from(["append", "append", "append", "add-column", "cdf-on", "cdf-off",
                          "upgrade", "delete"])


def _lines(version: int, kind: str, files: int, columns: int, cdf: bool) -> list[str]:
    lines = [json.dumps({"commitInfo": {"timestamp": 1000 + version, "operation": kind}})]
    if kind in ("add-column", "cdf-on", "cdf-off"):
        lines.append(_metadata(columns, cdf))
    if kind == "upgrade":
        lines.append(_protocol(3, 7, ("deletionVectors", "timestampNtz")))
    if kind == "delete":
        lines.append(json.dumps({"remove": {"path": f"p=a/gone-{version}.parquet",
                                            "dataChange": True, "partitionValues": {"p": "a"}}}))
    lines += [_add(version, i) for i in range(files)]
    return lines


@st.composite
def _logs(draw: st.DrawFn) -> list[Commit]:
    """Version 0 creates the table; then 0..15 generated commits."""
    shapes = draw(st.lists(st.tuples(_KINDS, st.integers(0, 2)), max_size=15))
    log = [parse_commit(0, [_protocol(1, 2), _metadata(0, False), _add(0, 0)])]
    columns, cdf = 0, False
    for version, (kind, files) in enumerate(shapes, start=1):
        columns += kind == "add-column"
        cdf = True if kind == "cdf-on" else False if kind == "cdf-off" else cdf
        log.append(parse_commit(version, _lines(version, kind, files, columns, cdf)))
    return log


def _state_at(log: list[Commit], version: int) -> TableState:
    """The table at ``version`` from scratch: the last metaData and protocol at or before it
    (what opening the table there gives)."""
    metadata = next(c.metadata for c in reversed(log[:version + 1]) if c.metadata)
    protocol = next(c.protocol for c in reversed(log[:version + 1]) if c.protocol)
    return TableState.of(metadata, protocol)


def _carry(state: TableState) -> TableState:
    """Through the state store: JSON out and back."""
    carried = TableState.from_element(json.loads(json.dumps(state.to_element())))
    assert carried == state
    return carried


@settings(max_examples=150, deadline=None)
@given(_logs(), st.data())
def test_runs_chained_through_the_carried_state_plan_what_one_run_plans(
        log: list[Commit], data: st.DataObject) -> None:
    """Any sequence of runs, each starting from the state the one before carried (no snapshot
    loaded), takes the same files as one run over the whole log, and each ends with the table
    as it is at its pinned version."""
    options = TableOptions(skip_change_commits=True)
    cuts = sorted(data.draw(st.lists(st.integers(1, len(log)), max_size=4)))
    start = _state_at(log, 0)
    whole, final = plan_table_range(start, log[1:], options)
    assert final == _state_at(log, len(log) - 1)
    files, state, at = [], start, 1
    for cut in [*cuts, len(log)]:
        plan, state = plan_table_range(_carry(state), log[at:cut], options)
        assert state == _state_at(log, max(cut - 1, 0))
        files += plan.files
        at = cut
    assert files == list(whole.files)
    assert [f.file.path for f in files] == [
        f"p=a/v{c.version}-{i}.parquet" for c in log[1:] if not c.removes_data
        for i in range(len(c.adds))]


@settings(max_examples=100, deadline=None)
@given(_logs())
def test_the_change_feed_follows_its_setting_through_the_range(log: list[Commit]) -> None:
    """With readChangeFeed, a delete is read while the feed is on (as the range's metaData
    actions leave it) and refused, naming its version, while it is off."""
    start = _state_at(log, 0)
    options = TableOptions(read_change_feed=True)
    refused = next((c.version for c in log[1:]
                    if c.removes_data and not _state_at(log, c.version).cdf), None)
    if not _state_at(log, len(log) - 1).cdf:
        with pytest.raises(ConfigError, match="readChangeFeed=true needs it"):
            plan_table_range(start, log[1:], options, table="/lake/t")
    elif refused is not None:
        with pytest.raises(SourceError, match=f"version {refused} .*feed was off"):
            plan_table_range(start, log[1:], options, table="/lake/t")
    else:
        plan, _ = plan_table_range(start, log[1:], options, table="/lake/t")
        assert [f.version for f in plan.files if f.change_type == "delete"] == [
            c.version for c in log[1:] if c.removes_data]


def test_a_schema_change_in_the_range_gives_the_new_schema_and_partition_types() -> None:
    log = [parse_commit(0, [_protocol(1, 2), _metadata(0, False)]),
           parse_commit(1, [_add(1, 0)]),
           parse_commit(2, [_metadata(2, False), _add(2, 0)])]
    plan, state = plan_table_range(_state_at(log, 0), log[1:], TableOptions())
    assert [f["name"] for f in json.loads(state.schema_json)["fields"]] == [
        "id", "p", "c0", "c1"]
    assert state.column_types() == {"id": "long", "p": "string", "c0": "double",
                                    "c1": "double"}
    assert [f.version for f in plan.files] == [1, 2]


def test_a_metadata_action_with_another_table_id_is_a_replaced_table() -> None:
    log = [parse_commit(0, [_protocol(1, 2), _metadata(0, False)]),
           parse_commit(1, [_metadata(0, False, table_id="another"), _add(1, 0)])]
    with pytest.raises(SourceError, match=r"/lake/t was replaced at version 1 .*reset the ctx"):
        plan_table_range(_state_at(log, 0), log[1:], TableOptions(), table="/lake/t")


@pytest.mark.parametrize(("action", "message"), [
    (_protocol(4, 7), "needs reader protocol version 4 \\(since version 3\\)"),
    (_protocol(3, 7, ("columnMapping",)), "uses column mapping .*since version 3"),
    (_protocol(3, 7, ("variantType",)), "reader feature\\(s\\) variantType \\(since version 3"),
    (_protocol(3, 7, ("catalogManaged",)), "reader feature\\(s\\) catalogManaged"),
    (json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
                              "writerFeatures": ["coordinatedCommits-preview"]}}),
     "coordinatedCommits-preview \\(since version 3\\): its newest commits are kept"),
])
def test_a_protocol_upgrade_in_the_range_is_refused_naming_version_and_feature(
        action: str, message: str) -> None:
    log = [parse_commit(0, [_protocol(1, 2), _metadata(0, False)]),
           parse_commit(1, [_add(1, 0)]), parse_commit(2, [_add(2, 0)]),
           parse_commit(3, [action, _add(3, 0)])]
    with pytest.raises(UnsupportedError, match=message):
        plan_table_range(_state_at(log, 0), log[1:], TableOptions(), table="/lake/t")
    # the runs before the upgrade are fine
    plan, _ = plan_table_range(_state_at(log, 0), log[1:3], TableOptions(), table="/lake/t")
    assert len(plan.files) == 2


def test_column_mapping_switched_on_by_a_metadata_action_is_refused() -> None:
    mapped = json.loads(_metadata(0, False))
    mapped["metaData"]["configuration"]["delta.columnMapping.mode"] = "name"
    log = [parse_commit(0, [_protocol(2, 5), _metadata(0, False)]),
           parse_commit(1, [json.dumps(mapped)])]
    with pytest.raises(UnsupportedError, match="column mapping \\(mode name\\) \\(since "
                                               "version 1\\)"):
        advance(_state_at(log, 0), log[1:], "/lake/t")


def test_files_written_under_other_partition_columns_are_refused() -> None:
    repartitioned = json.loads(_metadata(0, False))
    repartitioned["metaData"]["partitionColumns"] = ["id"]
    log = [parse_commit(0, [_protocol(1, 2), _metadata(0, False)]),
           parse_commit(1, [_add(1, 0)]),
           parse_commit(2, [json.dumps(repartitioned),
                            json.dumps({"remove": {"path": "p=a/v1-0.parquet",
                                                   "dataChange": True}})])]
    with pytest.raises(SourceError, match=r"file p=a/v1-0.parquet of version 1 is "
                                          r"partitioned by \[p\] but the table now is by \[id\]"):
        plan_table_range(_state_at(log, 0), log[1:], TableOptions(skip_change_commits=True))


def test_the_carried_state_reads_back_or_says_there_is_none() -> None:
    state = TableState("id-1", _schema(1), ("p",), True, "none",
                       Protocol(3, 7, ("deletionVectors",), ("deletionVectors",)))
    assert _carry(state) == state
    # an element written before the state was carried, or a damaged one
    assert TableState.from_element({"kind": "delta-table", "version": 3, "table_id": "x"}) \
        is None
    assert TableState.from_element({"schema": "{}", "protocol": {"min_reader_version": "x"}}) \
        is None
    assert TableState.of(MetaData("i", _schema(0)), Protocol()).cdf is False


# --------------------------------------------------------------------------- the pin

def _probe(present: Callable[[int], bool]) -> tuple[Callable[[int], bool], list[int]]:
    calls: list[int] = []

    def exists(version: int) -> bool:
        calls.append(version)
        return present(version)
    return exists, calls


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 3000), st.integers(0, 2000),
       st.one_of(st.none(), st.integers(-5, 9000)))
def test_probing_finds_the_latest_version_in_logarithmic_checks(
        cleaned: int, after: int, new: int, hint: int | None) -> None:
    """Versions below ``cleaned`` are gone (log cleanup), the bookmark is at ``known``, the
    table at ``latest``; ``hint`` is whatever ``_last_checkpoint`` says (stale, missing,
    or nonsense)."""
    known = cleaned + after
    latest = known + new
    exists, calls = _probe(lambda v: cleaned <= v <= latest)
    assert find_latest(exists, known, hint) == latest
    start = hint if hint is not None and known < hint <= latest else known
    assert len(calls) <= 2 * (latest - start + 1).bit_length() + 2


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 100), st.integers(0, 300), st.lists(st.booleans(), max_size=40))
def test_a_commit_made_while_probing_is_taken_or_left_whole(
        known: int, new: int, writes: list[bool]) -> None:
    """A writer commits the next version between some of the checks: the answer is a version
    that existed when it was checked, no older than the table was when probing began."""
    latest = [known + new]
    moves = iter(writes)

    def present(version: int) -> bool:
        if next(moves, False):
            latest[0] += 1
        return version <= latest[0]
    exists, calls = _probe(present)
    found = find_latest(exists, known)
    assert known + new <= found <= latest[0]


def test_last_checkpoint_is_a_hint_only() -> None:
    assert last_checkpoint_version('{"version":1000,"size":1003,"sizeInBytes":9}') == 1000
    assert last_checkpoint_version(None) is None
    assert last_checkpoint_version("") is None
    assert last_checkpoint_version("{not json") is None
    assert last_checkpoint_version('{"version":-1}') is None
    assert last_checkpoint_version('{"version":true}') is None
    assert last_checkpoint_version("[3]") is None


def test_readable_checks_keep_the_format_reader_wording() -> None:
    with pytest.raises(UnsupportedError, match="^Delta table /t needs reader protocol version "
                                               "4; lakemark reads versions 1 to 3$"):
        check_readable(TableState(None, "{}", protocol=Protocol(4, 7)), "/t")
    check_readable(TableState(None, "{}", protocol=Protocol(3, 7, ("deletionVectors",))), "/t")


def test_a_commit_file_that_is_not_json_is_named() -> None:
    for bad, why in (('{"add": {}}', "missing 'path'"), ("{truncated", "Expecting"),
                     ("[1]", "not a JSON object")):
        with pytest.raises(SourceError, match="00000000000000000012.json holds a line that "
                                              f"is not a well-formed Delta action \\({why}"):
            parse_commit(12, ['{"commitInfo": {}}', bad])
    assert commit_digest("a\n") != commit_digest("a")
