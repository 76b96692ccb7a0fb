"""``spark.read.format("delta")`` with no Delta jars (issue 20): lakemark's reader on real
tables written by lakemark's sink and by deltalake, local and on moto_server's S3, through
both read paths (Spark's Parquet reader on the file list, and the Python data source)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark.sinks import write_target
from lakemark.tables import READER_OPTION, register

PATHS = ["parquet", "datasource"]


@pytest.fixture(autouse=True)
def _registered(spark):  # type: ignore[no-untyped-def]
    assert register(spark)


def _read(spark, path, how, **options):  # type: ignore[no-untyped-def]
    reader = spark.read.format("delta").option(READER_OPTION, how)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def _rows(df, *cols):  # type: ignore[no-untyped-def]
    return sorted(tuple(r[c] for c in cols) for r in df.collect())


def _deltalake_table(path: Path) -> None:
    utc = dt.UTC
    write_deltalake(str(path), pa.table({
        "a": pa.array([1, 2, 3], pa.int64()), "p": pa.array([1, 2, None], pa.int32()),
        "s": ["x", "y", "z"],
        "t": pa.array([dt.datetime(2024, 1, 1, tzinfo=utc)] * 3, pa.timestamp("us", tz="UTC")),
    }), partition_by=["p"])
    write_deltalake(str(path), pa.table({
        "a": pa.array([4], pa.int64()), "p": pa.array([1], pa.int32()), "s": ["w"],
        "t": pa.array([dt.datetime(2024, 1, 2, tzinfo=utc)], pa.timestamp("us", tz="UTC")),
    }), mode="append")


@pytest.mark.parametrize("how", PATHS)
def test_reads_a_table_written_by_deltalake_with_null_partitions(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    table = tmp_path / "t"
    _deltalake_table(table)
    df = _read(spark, table, how)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("a", "bigint"), ("p", "int"), ("s", "string"), ("t", "timestamp")]
    assert _rows(df, "a", "p", "s") == [(1, 1, "x"), (2, 2, "y"), (3, None, "z"), (4, 1, "w")]
    assert _rows(df.where("p = 1"), "a") == [(1,), (4,)]
    assert _rows(df.where("p is null"), "a") == [(3,)]
    assert df.where("t > timestamp'2024-01-01 12:00:00'").count() == 1


@pytest.mark.parametrize("how", PATHS)
def test_time_travel_by_version_and_timestamp(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    table = tmp_path / "t"
    _deltalake_table(table)
    assert _read(spark, table, how, versionAsOf=0).count() == 3
    assert _read(spark, table, how, versionAsOf="1").count() == 4
    first = DeltaTable(str(table)).history()[-1]["timestamp"]
    when = dt.datetime.fromtimestamp(first / 1000, dt.UTC)
    assert _read(spark, table, how, timestampAsOf=when.isoformat()).count() == 3
    with pytest.raises(Exception, match=r"to version 7\. Available versions: \[0, 1\]"):
        _read(spark, table, how, versionAsOf=7).count()


def test_load_with_format_argument(spark, tmp_path):  # type: ignore[no-untyped-def]
    table = tmp_path / "t"
    _deltalake_table(table)
    assert spark.read.load(str(table), format="delta").count() == 4
    assert spark.read.format("delta").load(str(table)).count() == 4


@pytest.mark.parametrize("how", PATHS)
def test_reads_a_table_written_by_lakemark_with_evolved_schema(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    table = str(tmp_path / "t")
    first = spark.createDataFrame([(1, "a", dt.date(2024, 1, 1))], "id long, k string, d date")
    write_target(spark, first, table, partition_by=["d"])
    second = spark.createDataFrame([(2, "b", dt.date(2024, 1, 2), 2.5)],
                                   "id long, k string, d date, x double")
    write_target(spark, second, table, options={"mergeSchema": "true"})
    df = _read(spark, table, how)
    assert df.columns == ["id", "k", "d", "x"]
    assert _rows(df, "id", "k", "d", "x") == [(1, "a", dt.date(2024, 1, 1), None),
                                              (2, "b", dt.date(2024, 1, 2), 2.5)]


def test_data_source_prunes_files_by_partition_and_stats(spark, tmp_path):  # type: ignore[no-untyped-def]
    table = str(tmp_path / "t")
    for p in range(4):
        write_deltalake(table, pa.table({"a": pa.array([p * 10, p * 10 + 1], pa.int64()),
                                         "p": pa.array([p, p], pa.int64())}),
                        partition_by=["p"], mode="append")
    df = _read(spark, table, "datasource")
    assert df.where("p = 2").rdd.getNumPartitions() == 1
    assert _rows(df.where("p = 2"), "a") == [(20,), (21,)]
    assert df.where("a > 100").rdd.getNumPartitions() <= 1  # Spark keeps one empty task
    assert df.where("a > 100").count() == 0
    assert _rows(df.where("a >= 31"), "a") == [(31,)]
    assert df.where("p in (1, 3) and a < 12").count() == 2


def _rewrite_protocol(table: Path, protocol: dict, configuration: dict | None = None) -> None:  # type: ignore[type-arg]
    log = table / "_delta_log" / "00000000000000000000.json"
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    for action in lines:
        if "protocol" in action:
            action["protocol"] = protocol
        if "metaData" in action and configuration:
            action["metaData"]["configuration"] = configuration
            schema = json.loads(action["metaData"]["schemaString"])
            for i, fld in enumerate(schema["fields"], 1):
                fld["metadata"] = {"delta.columnMapping.id": i,
                                   "delta.columnMapping.physicalName": fld["name"]}
            action["metaData"]["schemaString"] = json.dumps(schema)
    log.write_text("\n".join(json.dumps(a) for a in lines) + "\n")


@pytest.mark.parametrize("how", PATHS)
def test_column_mapping_is_refused_by_name(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"a": [1]}))
    _rewrite_protocol(table, {"minReaderVersion": 2, "minWriterVersion": 5},
                      {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "1"})
    with pytest.raises(Exception, match="uses column mapping"):
        _read(spark, table, how).collect()


@pytest.mark.parametrize("how", PATHS)
def test_newer_reader_protocol_is_refused(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"a": [1]}))
    _rewrite_protocol(table, {"minReaderVersion": 3, "minWriterVersion": 7,
                              "readerFeatures": ["variantType-preview"],
                              "writerFeatures": ["variantType-preview"]})
    with pytest.raises(Exception, match="variantType"):
        _read(spark, table, how).collect()


@pytest.mark.parametrize("how", PATHS)
def test_read_change_feed_is_refused_not_ignored(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    """A snapshot read must not hand back the whole table where the script asked for changes."""
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"a": [1]}),
                    configuration={"delta.enableChangeDataFeed": "true"})
    with pytest.raises(Exception, match="option readChangeFeed: .*Job.read_table"):
        _read(spark, table, how, readChangeFeed="true", startingVersion="0").collect()
    assert _rows(_read(spark, table, how, readChangeFeed="false"), "a") == [(1,)]


def test_a_folder_that_is_no_delta_table(spark, tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "plain").mkdir()
    with pytest.raises(Exception, match="is not a Delta table"):
        spark.read.format("delta").load(str(tmp_path / "plain"))


def test_reads_s3_without_s3a(spark, s3):  # type: ignore[no-untyped-def]
    s3.client("s3").create_bucket(Bucket="lake")
    options = {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ALLOW_HTTP": "true",
               "AWS_REGION": "us-east-1"}
    write_deltalake("s3://lake/t", pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]}),
                    partition_by=["p"], storage_options=options)
    write_deltalake("s3://lake/t", pa.table({"a": [4], "p": ["y"]}), mode="append",
                    storage_options=options)
    df = spark.read.format("delta").load("s3://lake/t")
    assert _rows(df, "a", "p") == [(1, "x"), (2, "y"), (3, "x"), (4, "y")]
    assert _rows(df.where("p = 'y'"), "a") == [(2,), (4,)]
    assert spark.read.format("delta").option("versionAsOf", 0).load("s3://lake/t").count() == 3


@pytest.mark.parametrize("how", PATHS)
def test_typed_partition_values_come_from_the_log(spark, tmp_path, how):  # type: ignore[no-untyped-def]
    from decimal import Decimal

    table = str(tmp_path / "t")
    utc = dt.UTC
    write_deltalake(table, pa.table({
        "v": [1, 2],
        "d": pa.array([dt.date(2024, 2, 29), dt.date(1999, 12, 31)]),
        "ts": pa.array([dt.datetime(2024, 1, 1, 12, 30, tzinfo=utc), None],
                       pa.timestamp("us", tz="UTC")),
        "m": pa.array([Decimal("1.25"), Decimal("3.50")], pa.decimal128(5, 2)),
        "s": ["a b/c=d%", "é"],
    }), partition_by=["d", "ts", "m", "s"])
    rows = _rows(_read(spark, table, how), "v", "d", "ts", "m", "s")
    assert rows == [(1, dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12, 30), Decimal("1.25"),
                     "a b/c=d%"),
                    (2, dt.date(1999, 12, 31), None, Decimal("3.50"), "é")]
