"""Delta time travel resolved by Delta on Spark's documented rules (issue 32), on the pure
planner: bounds, the earliest recreatable version after log clean-up, timestamps as Spark
casts them, the ``@v`` path suffix."""

from __future__ import annotations

import datetime as dt

import pytest

from lakemark.errors import ConfigError, SourceError
from lakemark.planning.delta_time_travel import (
    LogListing,
    TimeTravel,
    check_version,
    commit_times,
    earliest_recreatable,
    parse_log_names,
    parse_timestamp,
    requested,
    split_path,
    version_at,
)

UTC = dt.UTC


def _names(*versions: int) -> list[tuple[str, int]]:
    return [(f"{v:020d}.json", 1_000 * (v + 1)) for v in versions]


def test_listing_counts_complete_checkpoints_only() -> None:
    listing = parse_log_names(_names(3, 4) + [
        (f"{2:020d}.checkpoint.parquet", 7),
        (f"{3:020d}.checkpoint.0000000001.0000000002.parquet", 8),  # one part of two
        (f"{4:020d}.checkpoint.0000000001.0000000002.parquet", 9),
        (f"{4:020d}.checkpoint.0000000002.0000000002.parquet", 10),
        (f"{1:020d}.checkpoint.12345678-1234-1234-1234-123456789012.json", 5),
        ("_last_checkpoint", 11), (f"{4:020d}.crc", 12),
        (f"{0:020d}.{3:020d}.compacted.json", 13)])
    assert dict(listing.commits) == {3: 4000, 4: 5000}
    assert dict(listing.checkpoints) == {1: 5, 2: 7, 4: 10}


def test_earliest_recreatable_version() -> None:
    full = LogListing({v: v for v in range(6)}, {})
    assert earliest_recreatable(full, 5) == 0
    # commits 0..2 cleaned up after a checkpoint at 3 (commit 3 kept): 3
    cleaned = LogListing({v: v for v in range(3, 6)}, {3: 3})
    assert earliest_recreatable(cleaned, 5) == 3
    # a checkpoint at 2 and commits 3.. kept: 2 (its commit file gone)
    assert earliest_recreatable(LogListing({3: 1, 4: 1, 5: 1}, {2: 1, 4: 1}), 5) == 2
    # an older checkpoint before a gap in the commits cannot rebuild anything later
    assert earliest_recreatable(LogListing({0: 1, 4: 1, 5: 1}, {1: 1, 3: 1}), 5) == 3


def test_commit_times_are_made_strictly_increasing_like_delta() -> None:
    listing = LogListing({0: 5_000, 1: 5_000, 2: 4_000, 3: 9_000}, {})
    assert commit_times(listing, 0, 3) == [5_000, 5_001, 5_002, 9_000]
    # a cleaned-up commit takes its checkpoint's time
    assert commit_times(LogListing({3: 9_000}, {2: 7_000}), 2, 3) == [7_000, 9_000]
    # in-commit timestamps from version 2 on
    ict = {2: 20_000, 3: 30_000}
    assert commit_times(listing, 0, 3, in_commit=ict.get, in_commit_from=2) == \
        [5_000, 5_001, 20_000, 30_000]


def _at(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, UTC)


def test_timestamp_resolves_to_the_last_commit_at_or_before_it() -> None:
    times = [10_000, 20_000, 30_000]
    assert version_at("/t", _at(10_000), times, 0) == 0
    assert version_at("/t", _at(19_999), times, 0) == 0
    assert version_at("/t", _at(20_000), times, 0) == 1
    assert version_at("/t", _at(30_000), times, 0) == 2
    assert version_at("/t", _at(25_000), times, 4) == 5  # offsets by the earliest version


def test_timestamp_before_the_earliest_version_is_refused_naming_it() -> None:
    with pytest.raises(SourceError) as caught:
        version_at("/t", _at(9_999), [10_000, 20_000], 3, "1970-01-01 00:00:09.999")
    text = str(caught.value)
    assert "is before the earliest version available to this table (version 3" in text
    assert "1970-01-01 00:00:10.000 UTC" in text and "/t" in text


def test_timestamp_after_the_latest_commit_is_refused() -> None:
    with pytest.raises(SourceError, match=r"is after the latest version available to this "
                       r"table \(version 1, committed 1970-01-01 00:00:20.000 UTC\).*"
                       r"versionAsOf 1"):
        version_at("/t", _at(20_000) + dt.timedelta(microseconds=1), [10_000, 20_000], 0)


@pytest.mark.parametrize("version", [-1, 6, 2])
def test_version_outside_the_available_range_is_refused(version: int) -> None:
    with pytest.raises(SourceError, match=rf"Cannot time travel Delta table /t to version "
                       rf"{version}\. Available versions: \[3, 5\]\."):
        check_version("/t", version, 3, 5)
    assert check_version("/t", 4, 3, 5) == 4


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-05-01", dt.datetime(2024, 5, 1, tzinfo=UTC)),
    ("2024-05", dt.datetime(2024, 5, 1, tzinfo=UTC)),
    ("2024-05-01 12:30", dt.datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
    ("2024-05-01T12:30:05.1234567", dt.datetime(2024, 5, 1, 12, 30, 5, 123456, tzinfo=UTC)),
    ("2024-05-01T12:30:05Z", dt.datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)),
    ("2024-05-01 14:30:05+02:00", dt.datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)),
    ("2024-05-01 12:30:05 UTC", dt.datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)),
    ("2024-05-01 14:30:05 Europe/Paris", dt.datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)),
])
def test_timestamps_parse_as_spark_casts_them(text: str, expected: dt.datetime) -> None:
    assert parse_timestamp(text) == expected


def test_a_timestamp_without_zone_is_in_the_session_zone() -> None:
    assert parse_timestamp("2024-05-01 14:00:00", "Europe/Paris") == \
        dt.datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_timestamp("2024-05-01 14:00:00", "+05:30") == \
        dt.datetime(2024, 5, 1, 8, 30, tzinfo=UTC)


@pytest.mark.parametrize("text", ["yesterday", "2024-13-01", "2024-05-01 25:00", "1",
                                  "2024-05-01 12:00 Mars/Olympus", ""])
def test_malformed_timestamps_are_refused_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match=r"option timestampAsOf: the provided timestamp "
                       r".* cannot be converted to a valid timestamp"):
        requested({"timestampAsOf": text})


def test_options() -> None:
    assert requested({}) == TimeTravel()
    assert requested({"VERSIONASOF": " 3 "}) == TimeTravel(version=3)
    assert requested({"versionAsOf": "-1"}) == TimeTravel(version=-1)  # refused by the range
    with pytest.raises(ConfigError, match="option versionAsOf must be a whole number"):
        requested({"versionAsOf": "1.5"})
    with pytest.raises(ConfigError, match="either option timestampAsOf or option versionAsOf"):
        requested({"versionAsOf": "1", "timestampAsOf": "2024-01-01"})
    with pytest.raises(ConfigError, match="multiple formats"):
        requested({"versionAsOf": "1"}, at_path=TimeTravel(version=2))


def test_path_suffixes() -> None:
    assert split_path("/lake/t@v12") == ("/lake/t", TimeTravel(version=12))
    assert split_path("s3://b/t@V0") == ("s3://b/t", TimeTravel(version=0))
    path, wanted = split_path("/lake/t@20240501123005123", "UTC") or ("", TimeTravel())
    assert path == "/lake/t"
    assert wanted.timestamp == dt.datetime(2024, 5, 1, 12, 30, 5, 123000, tzinfo=UTC)
    assert split_path("/lake/t") is None and split_path("/lake/t@x") is None
    with pytest.raises(ConfigError, match="yyyyMMddHHmmssSSS"):
        split_path("/lake/t@20241301123005123")


@pytest.mark.parametrize(("key", "named"), [("readChangeFeed", "readChangeFeed"),
                                            ("READCHANGEFEED", "readChangeFeed"),
                                            ("readChangeData", "readChangeData")])
def test_a_change_feed_read_is_refused_naming_the_option(key: str, named: str) -> None:
    with pytest.raises(ConfigError, match=f"^option {named}: .*change data feed"):
        requested({key: "True"})
    assert requested({key: "false"}) == requested({})
