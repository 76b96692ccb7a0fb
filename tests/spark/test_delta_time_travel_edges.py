"""Delta time-travel edges as Delta on Spark gives them (issue 32), through
``spark.read.format("delta")`` on both read paths: a time before the first commit or after the
latest refused naming the bound, a version out of range, both options, malformed values, the
``@v`` path suffix, the session time zone, and a table whose early commits were cleaned up
after a checkpoint. Commit times are set on the commit files (no sleeping, no clock)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark.tables import READER_OPTION, register

PATHS = ["parquet", "datasource"]
UTC = dt.UTC
#: The commit times given to versions 0, 1, 2, 3.
TIMES = [dt.datetime(2024, 5, 1, 10, tzinfo=UTC) + dt.timedelta(hours=h) for h in range(4)]


@pytest.fixture(autouse=True)
def _registered(spark):  # type: ignore[no-untyped-def]
    assert register(spark)


def _read(spark, path, how, **options):  # type: ignore[no-untyped-def]
    reader = spark.read.format("delta").option(READER_OPTION, how)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def _commit_file(table: Path, version: int) -> Path:
    return table / "_delta_log" / f"{version:020d}.json"


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """Versions 0..3 holding 1, 2, 3, 4 rows, committed at :data:`TIMES`."""
    path = tmp_path / "t"
    for version in range(4):
        write_deltalake(str(path), pa.table({"a": pa.array([version], pa.int64())}),
                        mode="append")
    for version, when in enumerate(TIMES):
        os.utime(_commit_file(path, version), (when.timestamp(), when.timestamp()))
    return path


@pytest.fixture
def utc_session(spark) -> Iterator[None]:  # type: ignore[no-untyped-def]
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield
    spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("how", PATHS)
def test_timestamps_inside_the_history(spark, table, how, utc_session):  # type: ignore[no-untyped-def]
    assert _read(spark, table, how, timestampAsOf="2024-05-01 10:00:00").count() == 1
    assert _read(spark, table, how, timestampAsOf="2024-05-01 11:59:59.999").count() == 2
    assert _read(spark, table, how, timestampAsOf="2024-05-01T12:00:00Z").count() == 3
    assert _read(spark, table, how, timestampAsOf="2024-05-01 13:00:00").count() == 4


@pytest.mark.parametrize("how", PATHS)
def test_a_timestamp_before_the_first_commit_is_refused(spark, table, how, utc_session):  # type: ignore[no-untyped-def]
    with pytest.raises(Exception, match=r"is before the earliest version available to this "
                       r"table \(version 0, committed 2024-05-01 10:00:00.000 UTC\)"):
        _read(spark, table, how, timestampAsOf="2024-05-01 09:59:59").count()


@pytest.mark.parametrize("how", PATHS)
def test_a_timestamp_after_the_latest_commit_is_refused(spark, table, how, utc_session):  # type: ignore[no-untyped-def]
    with pytest.raises(Exception, match=r"is after the latest version available to this "
                       r"table \(version 3, committed 2024-05-01 13:00:00.000 UTC\)"):
        _read(spark, table, how, timestampAsOf="2024-05-01 13:00:00.001").count()


@pytest.mark.parametrize("how", PATHS)
@pytest.mark.parametrize("version", ["4", "-1"])
def test_a_version_out_of_range_is_refused(spark, table, how, version):  # type: ignore[no-untyped-def]
    with pytest.raises(Exception, match=rf"Cannot time travel Delta table \S+ to version "
                       rf"{version}\. Available versions: \[0, 3\]"):
        _read(spark, table, how, versionAsOf=version).count()
    assert _read(spark, table, how, versionAsOf="3").count() == 4


@pytest.mark.parametrize("how", PATHS)
def test_both_options_and_malformed_values_are_refused(spark, table, how):  # type: ignore[no-untyped-def]
    with pytest.raises(Exception, match="either option timestampAsOf or option versionAsOf"):
        _read(spark, table, how, versionAsOf=1, timestampAsOf="2024-05-01 12:00:00").count()
    with pytest.raises(Exception, match="'2024-05-01 noon' cannot be converted to a valid"):
        _read(spark, table, how, timestampAsOf="2024-05-01 noon").count()
    with pytest.raises(Exception, match="option versionAsOf must be a whole number"):
        _read(spark, table, how, versionAsOf="one").count()


@pytest.mark.parametrize("how", PATHS)
def test_the_path_suffix_forms(spark, table, how, utc_session):  # type: ignore[no-untyped-def]
    assert _read(spark, f"{table}@v1", how).count() == 2
    assert _read(spark, f"{table}@20240501113000000", how).count() == 2
    with pytest.raises(Exception, match="multiple formats"):
        _read(spark, f"{table}@v1", how, versionAsOf=2).count()
    with pytest.raises(Exception, match=r"to version 9\. Available versions: \[0, 3\]"):
        _read(spark, f"{table}@v9", how).count()


@pytest.mark.parametrize("how", PATHS)
def test_a_timestamp_without_zone_is_in_the_session_time_zone(spark, table, how):  # type: ignore[no-untyped-def]
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")  # UTC-4 in May
    try:
        # 07:30 in New York is 11:30 UTC: version 1
        assert _read(spark, table, how, timestampAsOf="2024-05-01 07:30:00").count() == 2
        # an explicit zone wins over the session's: 07:30 UTC is before the first commit
        with pytest.raises(Exception, match="is before the earliest version"):
            _read(spark, table, how, timestampAsOf="2024-05-01 07:30:00Z").count()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("how", PATHS)
def test_after_log_clean_up_the_checkpoint_is_the_earliest_version(spark, table, how,  # type: ignore[no-untyped-def]
                                                                   utc_session):
    at_two = DeltaTable(str(table), version=2)
    at_two.create_checkpoint()
    for version in (0, 1):  # what log retention removes before the checkpoint
        _commit_file(table, version).unlink()
    with pytest.raises(Exception, match=r"to version 1\. Available versions: \[2, 3\]"):
        _read(spark, table, how, versionAsOf=1).count()
    with pytest.raises(Exception, match=r"is before the earliest version available to this "
                       r"table \(version 2, committed 2024-05-01 12:00:00.000 UTC\)"):
        _read(spark, table, how, timestampAsOf="2024-05-01 11:00:00").count()
    assert _read(spark, table, how, versionAsOf=2).count() == 3
    assert _read(spark, table, how, timestampAsOf="2024-05-01 12:30:00").count() == 3
    assert _read(spark, table, how).count() == 4
