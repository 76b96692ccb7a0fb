"""Iceberg targets with time and truncate partition transforms, on a SQLite SQL catalog.

``writeTo(…).partitionedBy(days("ts"))``, ``job.write(…, partition_by=["hours(ts)", …])`` and
``--partition-by "days(ts)"`` create the table's spec; every data file holds one partition and
its manifest entry carries the partition value Iceberg's own transform gives its rows (checked
against pyiceberg's transforms, row by row), so pyiceberg scans prune by them; appends keep the
spec; reads give the rows back. Bad transforms are refused by name before anything is written.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import DayTransform, HourTransform, TruncateTransform

from lakemark import Job
from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.errors import ConfigError
from lakemark.state import open_store

pytestmark = pytest.mark.spark

UTC = dt.UTC


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqlCatalog:
    (tmp_path / "iceberg").mkdir()
    uri = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    return SqlCatalog("lakemark", uri=uri,
                      warehouse=(tmp_path / "iceberg" / "warehouse").as_uri())


@pytest.fixture
def new_york(spark: Any) -> Iterator[None]:
    """A session time zone far from UTC: partition values must not depend on it."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    yield
    spark.conf.set("spark.sql.session.timeZone", before)


def partitions_match_rows(table: Any) -> set[tuple[Any, ...]]:
    """Assert every data file's partition tuple is what Iceberg's transforms give each of its
    rows (pyiceberg's own transform functions); the partition tuples of the files."""
    schema = table.schema()
    fields = table.spec().fields
    files = [task.file for task in table.scan().plan_files()]
    for data_file in files:
        rows = pq.read_table(data_file.file_path.removeprefix("file://"))
        for i, field in enumerate(fields):
            source = schema.find_field(field.source_id)
            apply = field.transform.transform(source.field_type)
            for value in rows.column(source.name).to_pylist():
                if isinstance(value, dt.datetime):  # Iceberg's timestamps: micros
                    value = value if value.tzinfo else value.replace(tzinfo=UTC)
                    value = (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // \
                        dt.timedelta(microseconds=1)
                expected = None if value is None else apply(value)
                assert data_file.partition[i] == expected, (data_file.file_path, value)
    return {tuple(f.partition) for f in files}


def test_write_to_partitioned_by_days_creates_prunes_appends_and_reads(
        spark: Any, catalog: SqlCatalog, new_york: None) -> None:
    from pyspark.sql.functions import partitioning

    rows = [(1, dt.datetime(2024, 1, 1, 23, 30, tzinfo=UTC)),
            (2, dt.datetime(2024, 1, 2, 0, 30, tzinfo=UTC)),
            (3, dt.datetime(2024, 1, 2, 4, 30, tzinfo=UTC)),  # 23:30 on Jan 1 in New York
            (4, None)]
    df = spark.createDataFrame(rows, "id long, ts timestamp")
    df.writeTo("db.days").using("iceberg").partitionedBy(partitioning.days("ts")).create()
    table = catalog.load_table("db.days")
    [field] = table.spec().fields
    assert isinstance(field.transform, DayTransform) and field.name == "ts_day"
    jan1, jan2 = 19723, 19724  # days since 1970-01-01
    assert partitions_match_rows(table) == {(jan1,), (jan2,), (None,)}
    later = table.scan(row_filter="ts >= '2024-01-02T00:00:00+00:00'")
    assert {tuple(t.file.partition) for t in later.plan_files()} == {(jan2,)}  # pruned
    assert sorted(later.to_arrow().column("id").to_pylist()) == [2, 3]

    spark.createDataFrame([(5, dt.datetime(2024, 1, 1, 1, 0, tzinfo=UTC))],
                          "id long, ts timestamp").write.format("iceberg") \
        .mode("append").save("db.days")  # the table keeps its spec
    table = catalog.load_table("db.days")
    assert partitions_match_rows(table) == {(jan1,), (jan2,), (None,)}
    read = spark.read.format("iceberg").load("db.days")
    assert sorted(r.id for r in read.collect()) == [1, 2, 3, 4, 5]


def test_job_write_with_hours_and_truncate_appends_and_reads_incrementally(
        spark: Any, catalog: SqlCatalog, tmp_path: Path) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    schema = "id long, ts timestamp_ntz, name string"
    first = spark.createDataFrame([(1, dt.datetime(2024, 3, 1, 10, 5), "alpha"),
                                   (2, dt.datetime(2024, 3, 1, 10, 55), "alps"),
                                   (3, dt.datetime(2024, 3, 1, 11, 0), "beta")], schema)
    with Job("w", state=state) as job:
        job.write(first, "db.hours", format="iceberg", ctx="out",
                  partition_by=["hours(ts)", "truncate(2, name)"])
    table = catalog.load_table("db.hours")
    assert [type(f.transform) for f in table.spec().fields] == [HourTransform,
                                                                TruncateTransform]
    ten = (dt.datetime(2024, 3, 1, 10) - dt.datetime(1970, 1, 1)) // dt.timedelta(hours=1)
    assert partitions_match_rows(table) == {(ten, "al"), (ten + 1, "be")}
    second = spark.createDataFrame([(4, dt.datetime(2024, 3, 1, 10, 0), "alto")], schema)
    with Job("w", state=state) as job:
        job.write(second, "db.hours", format="iceberg", ctx="out")
    assert partitions_match_rows(catalog.load_table("db.hours")) == {(ten, "al"),
                                                                     (ten + 1, "be")}
    with Job("r", state=state) as job:
        taken = job.read_table("db.hours", format="iceberg", ctx="in")
        assert sorted(r.id for r in taken.collect()) == [1, 2, 3, 4]


def test_cli_ingest_partition_by_days(spark: Any, catalog: SqlCatalog, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from lakemark.cli import cli

    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.json").write_text("".join(json.dumps(r) + "\n" for r in (
        {"id": 1, "ts": "2024-05-01T10:00:00Z"}, {"id": 2, "ts": "2024-05-02T10:00:00Z"})))
    result = CliRunner().invoke(cli, [
        "ingest", "files", str(landing), "--job", "j", "--target-format", "iceberg",
        "--table", "db.cli", "--partition-by", "days(ts)", "--option", "inferTimestamp=true",
        "--state", f"sqlite:///{tmp_path / 'state.db'}", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    table = catalog.load_table("db.cli")
    assert isinstance(table.spec().fields[0].transform, DayTransform)
    assert partitions_match_rows(table) == {(19844,), (19845,)}  # May 1 and 2, 2024


def test_bad_transforms_are_refused_by_name_before_anything_is_written(
        spark: Any, catalog: SqlCatalog, tmp_path: Path) -> None:
    from pyiceberg.exceptions import NoSuchTableError

    state = f"sqlite:///{tmp_path / 'state.db'}"
    df = spark.createDataFrame([(1, "x", dt.date(2024, 1, 1))], "id long, s string, d date")
    cases = {"weeks(d)": r"unknown partition transform 'weeks' in 'weeks\(d\)'",
             "days(s)": r"days\(s\).*column 's' is string, but day needs date",
             "hours(d)": r"hours\(d\).*column 'd' is date, but hour needs timestamp",
             "bucket(4, id)": r"bucket\(4, id\).*bucket partitions are not supported",
             "truncate(x, s)": r"'truncate\(x, s\)' needs an integer width"}
    with Job("bad", state=state) as job:
        for spec, message in cases.items():
            with pytest.raises(ConfigError, match=message):
                job.write(df, "db.bad", format="iceberg", ctx="out", partition_by=[spec])
        with pytest.raises(ConfigError, match=r"transforms \(days\(d\)\) apply to Iceberg"):
            job.write(df, str(tmp_path / "delta"), format="delta", ctx="d",
                      partition_by=["days(d)"])
        run_id = job.run_id
    with pytest.raises(NoSuchTableError):
        catalog.load_table("db.bad")
    assert not (tmp_path / "delta").exists()
    store = open_store(state)
    try:  # nothing recorded for the refused sinks
        assert [i.ctx for i in store.run_inputs(run_id) if i.ctx.startswith("sink:")] == []
    finally:
        store.close()

    df.writeTo("db.bad").using("iceberg").partitionedBy("d").create()
    with pytest.raises(ConfigError, match=r"partitioned by d, not days\(d\)"):
        df.write.format("iceberg").mode("append").partitionBy("days(d)").save("db.bad")
    assert len(catalog.load_table("db.bad").snapshots()) == 1


def test_merge_into_a_time_partitioned_table(spark: Any, catalog: SqlCatalog) -> None:
    """pyiceberg splits a merge's rows by a time transform only with ``pyiceberg-core``:
    without it the merge is refused by name and the table is unchanged; with it, it merges."""
    import importlib.util

    from lakemark.errors import SinkError
    from lakemark.sinks import write_target

    schema = "id long, ts timestamp"
    write_target(spark, spark.createDataFrame([(1, dt.datetime(2024, 1, 1, tzinfo=UTC))],
                                              schema),
                 "db.m", format="iceberg", partition_by=["months(ts)"])
    change = spark.createDataFrame([(1, dt.datetime(2024, 2, 1, tzinfo=UTC))], schema)
    if importlib.util.find_spec("pyiceberg_core") is None:
        with pytest.raises(SinkError, match=r"partitioned by month\(ts\) needs pyiceberg"):
            write_target(spark, change, "db.m", format="iceberg", merge_keys=["id"])
        assert len(catalog.load_table("db.m").snapshots()) == 1
    else:
        write_target(spark, change, "db.m", format="iceberg", merge_keys=["id"])
        assert partitions_match_rows(catalog.load_table("db.m")) == {(649,)}  # 2024-02
