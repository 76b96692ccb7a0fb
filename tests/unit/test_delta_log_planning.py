"""Planning a Delta table source's range of commits (``lakemark.planning.delta_log``): pure,
property-tested. Commits are generated as the log would hold them and parsed from JSON."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError, SourceError, UnsupportedError
from lakemark.planning.delta_log import (
    ChangeCommitError,
    Commit,
    TableOptions,
    VersionRange,
    commit_file_name,
    parse_commit,
    parse_table_options,
    partition_value,
    plan_commits,
    plan_range,
)

# A commit's shape: (kind, files) with kind append | optimize | delete | update-cdc
_KINDS = st.sampled_from(["append", "append", "append", "optimize", "delete", "update-cdc"])


def _commit_lines(version: int, kind: str, files: int) -> list[str]:
    lines = [json.dumps({"commitInfo": {"timestamp": 1000 + version, "operation": kind}})]
    for i in range(files):
        path = f"v{version}-{i}.parquet"
        if kind in ("append", "update-cdc"):
            lines.append(json.dumps({"add": {"path": path, "size": 10, "dataChange": True,
                                             "partitionValues": {"p": str(i % 2)},
                                             "stats": json.dumps({"numRecords": 3})}}))
        if kind == "optimize":
            lines.append(json.dumps({"add": {"path": path, "size": 10, "dataChange": False,
                                             "partitionValues": {}}}))
            lines.append(json.dumps({"remove": {"path": f"old-{path}", "dataChange": False}}))
        if kind in ("delete", "update-cdc"):
            lines.append(json.dumps({"remove": {"path": f"gone-{path}", "size": 5,
                                                "dataChange": True}}))
        if kind == "update-cdc":
            lines.append(json.dumps({"cdc": {"path": f"_change_data/{path}", "size": 4,
                                             "dataChange": False, "partitionValues": {}}}))
    return lines


@st.composite
def _logs(draw: st.DrawFn) -> list[Commit]:
    shapes = draw(st.lists(st.tuples(_KINDS, st.integers(1, 3)), min_size=0, max_size=12))
    return [parse_commit(v, _commit_lines(v, kind, n)) for v, (kind, n) in enumerate(shapes)]


def _paths(plan_files) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.file.path for f in plan_files]


@settings(max_examples=100, deadline=None)
@given(_logs())
def test_skipping_takes_every_appended_file_once_and_skips_exactly_the_change_commits(
        log: list[Commit]) -> None:
    plan = plan_commits(log, TableOptions(skip_change_commits=True), cdf_at_start=False)
    expected = [f"v{c.version}-{i}.parquet" for c in log if not c.removes_data
                for i in range(len(c.adds)) if c.adds[i].data_change]
    assert _paths(plan.files) == expected
    assert plan.skipped == tuple(c.version for c in log if c.removes_data)
    assert all(f.change_type is None for f in plan.files)


@settings(max_examples=100, deadline=None)
@given(_logs(), st.data())
def test_a_range_split_in_two_plans_the_same_files(log: list[Commit], data: st.DataObject
                                                   ) -> None:
    cut = data.draw(st.integers(0, len(log)))
    for options in (TableOptions(skip_change_commits=True),
                    TableOptions(read_change_feed=True)):
        whole = plan_commits(log, options, cdf_at_start=True)
        parts = plan_commits(log[:cut], options, cdf_at_start=True).files + \
            plan_commits(log[cut:], options, cdf_at_start=True).files
        assert whole.files == parts


@settings(max_examples=100, deadline=None)
@given(_logs())
def test_append_only_refuses_the_first_change_commit(log: list[Commit]) -> None:
    first = next((c for c in log if c.removes_data), None)
    if first is None:
        assert len(plan_commits(log, TableOptions(), cdf_at_start=False).files) == \
            sum(1 for c in log for f in c.adds if f.data_change)
        return
    with pytest.raises(ChangeCommitError) as info:
        plan_commits(log, TableOptions(), cdf_at_start=False, table="/lake/t")
    message = str(info.value)
    assert "\n" not in message and f"version {first.version}" in message
    assert "/lake/t" in message and "skipChangeCommits=true" in message


@settings(max_examples=100, deadline=None)
@given(_logs())
def test_change_feed_uses_cdc_files_else_adds_and_removes(log: list[Commit]) -> None:
    plan = plan_commits(log, TableOptions(read_change_feed=True), cdf_at_start=True)
    for change in plan.files:
        commit = log[change.version]
        if commit.cdcs:
            assert change.change_type is None and change.file in commit.cdcs
        elif change.change_type == "delete":
            assert change.file in commit.removes
        else:
            assert change.change_type == "insert" and change.file in commit.adds
    assert [f.version for f in plan.files] == sorted(f.version for f in plan.files)


def test_change_feed_refuses_a_rewrite_made_while_the_feed_was_off() -> None:
    log = [parse_commit(0, _commit_lines(0, "delete", 1))]
    with pytest.raises(ChangeCommitError, match="version 0 .*change data feed was off"):
        plan_commits(log, TableOptions(read_change_feed=True), cdf_at_start=False)
    # ... unless a metaData action in range turned it on first
    turned_on = json.dumps({"metaData": {"configuration": {
        "delta.enableChangeDataFeed": "true"}}})
    log = [parse_commit(0, [turned_on]), parse_commit(1, _commit_lines(1, "delete", 1))]
    plan = plan_commits(log, TableOptions(read_change_feed=True), cdf_at_start=False)
    assert [f.change_type for f in plan.files] == ["delete"]


def test_deletion_vectors_on_added_files_are_refused() -> None:
    line = json.dumps({"add": {"path": "a.parquet", "size": 1, "dataChange": True,
                               "deletionVector": {"storageType": "u"}}})
    with pytest.raises(UnsupportedError, match="deletion vector"):
        plan_commits([parse_commit(3, [line])], TableOptions(), cdf_at_start=False)


@given(st.one_of(st.none(), st.integers(0, 50)), st.integers(0, 50))
def test_ranges_follow_the_bookmark(previous: int | None, latest: int) -> None:
    if previous is not None and previous > latest:
        with pytest.raises(SourceError, match="replaced"):
            plan_range(previous, latest)
        return
    rng = plan_range(previous, latest)
    assert rng.to_version == latest
    if previous is None:
        assert rng.snapshot and not rng.empty
    else:
        assert rng.from_version == previous + 1 and rng.empty == (previous == latest)
    assert VersionRange.from_json(rng.to_json()) == rng


def test_starting_version() -> None:
    assert plan_range(None, 9, "latest").empty
    assert plan_range(None, 9, 4) == VersionRange(4, 9)
    with pytest.raises(ConfigError, match="past"):
        plan_range(None, 9, 12)


def test_options() -> None:
    assert parse_table_options({"READCHANGEFEED": "True", "skipChangeCommits": "false"}) == \
        TableOptions(read_change_feed=True)
    assert parse_table_options({"startingVersion": "latest"}).starting_version == "latest"
    with pytest.raises(ConfigError, match="unknown option 'ignoreChanges'"):
        parse_table_options({"ignoreChanges": "true"})
    with pytest.raises(ConfigError, match="true or false"):
        parse_table_options({"skipChangeCommits": "maybe"})
    assert commit_file_name(7) == "00000000000000000007.json"


def test_partition_values() -> None:
    assert partition_value("12", "long") == 12
    assert partition_value(None, "long") is None
    assert partition_value("", "integer") is None
    assert partition_value("", "string") == ""
    assert partition_value("2024-05-01", "date") == dt.date(2024, 5, 1)
    assert partition_value("2024-05-01 10:00:00", "timestamp") == \
        dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)
    assert partition_value("1.50", "decimal") == Decimal("1.50")
    assert partition_value("true", "boolean") is True
    with pytest.raises(SourceError, match="not a valid long"):
        partition_value("x", "long")
