"""``write_target`` on local Spark with real deltalake: Delta tables (new, append, partitions,
overwrite, idempotency tokens, races, refusals, empty input, cleanup) and file folders.

Tables are read back two ways: with deltalake (``DeltaTable.to_pyarrow_table``) and with Spark
reading the table's data files. DataFrames that must never be computed are "poisoned" with
``raise_error``: if a test that expects nothing to run computes one, the write fails.
"""

from __future__ import annotations

import json
import os
from datetime import date, datetime, timedelta, UTC
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakemark.errors import ConfigError, FormatError, SinkError
from lakemark.sinks import IdempotencyToken, WriteResult, write_target

pytestmark = pytest.mark.spark

UTC = UTC
SCHEMA = ("id long, name string, ts timestamp, amount decimal(10,2), day date, "
          "region string")
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
REGIONS = ["eu", "us", None]


def make_rows(first: int, n: int) -> list[dict[str, Any]]:
    """Rows with microsecond timestamps, decimals, dates and a nullable partition column."""
    return [
        {
            "id": i,
            "name": f"n{i}" if i % 4 else None,
            "ts": datetime(2024, 1, 1, 0, 0, i % 60, 123456 + i, tzinfo=UTC),
            "amount": Decimal(f"{i}.{i % 100:02d}"),
            "day": date(2024, 1, 1 + i % 28),
            "region": REGIONS[i % 3],
        }
        for i in range(first, first + n)
    ]


def frame(spark: Any, rows: list[dict[str, Any]]) -> Any:
    return spark.createDataFrame([tuple(r.values()) for r in rows], SCHEMA)


def poisoned(spark: Any) -> Any:
    """A DataFrame of the table's schema whose computation fails."""
    from pyspark.sql import functions as F

    df = frame(spark, make_rows(0, 2))
    return df.withColumn(
        "name", F.when(F.col("id") < 0, F.col("name")).otherwise(F.raise_error(F.lit("computed!")))
    )


def sort_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["id"])


def delta_rows(path: Path) -> list[dict[str, Any]]:
    return sort_rows(DeltaTable(str(path)).to_pyarrow_table().to_pylist())


def spark_rows(spark: Any, path: Path) -> list[dict[str, Any]]:
    """The table read by Spark from the data files the Delta log lists (partitions from the
    folder names)."""
    uris = DeltaTable(str(path)).file_uris()
    df = spark.read.option("basePath", str(path)).parquet(*uris)
    return sort_rows(df.toArrow().to_pylist())


def log_actions(path: Path, version: int) -> list[dict[str, Any]]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def stamp(text: str) -> datetime:
    """A Delta statistics timestamp (``2024-01-01T00:00:00.123Z``)."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def files_on_disk(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()}


# -- Delta -----------------------------------------------------------------------------------
def test_new_table_append_partitions_and_read_back(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    first, second = make_rows(0, 9), make_rows(9, 5)
    r1 = write_target(spark, frame(spark, first), str(table), partition_by=["region"])
    assert r1 == WriteResult(str(table), "delta", 9, r1.files, r1.bytes, False, 0)
    r2 = write_target(spark, frame(spark, second), str(table))  # partitioning of the table
    assert (r2.rows, r2.skipped, r2.table_version) == (5, False, 1)

    expected = sort_rows(first + second)
    assert delta_rows(table) == expected
    assert spark_rows(spark, table) == expected

    dt = DeltaTable(str(table))
    assert dt.metadata().partition_columns == ["region"]
    types = {f["name"]: f["type"] for f in json.loads(dt.schema().to_json())["fields"]}
    assert types == {"id": "long", "name": "string", "ts": "timestamp",
                     "amount": "decimal(10,2)", "day": "date", "region": "string"}

    for version, result, rows in ((0, r1, first), (1, r2, second)):
        adds = [a["add"] for a in log_actions(table, version) if "add" in a]
        assert len(adds) == result.files
        assert sum(a["size"] for a in adds) == result.bytes
        assert sum(json.loads(a["stats"])["numRecords"] for a in adds) == len(rows)
        for add in adds:
            region = add["partitionValues"]["region"]
            assert region in REGIONS
            assert add["path"].startswith(f"region={region or HIVE_NULL}/part-")
            stats = json.loads(add["stats"])
            data = pq.ParquetFile(table / add["path"]).read().to_pylist()  # no escapes here
            assert {r["region"] for r in rows if r["id"] in {d["id"] for d in data}} == {region}
            assert stats["numRecords"] == len(data)
            ids = [d["id"] for d in data]
            assert stats["minValues"]["id"] == min(ids) and stats["maxValues"]["id"] == max(ids)
            # Timestamps are kept to milliseconds: min rounded down, max rounded up.
            stamps = [d["ts"] for d in data]
            low, high = (stamp(stats["minValues"]["ts"]), stamp(stats["maxValues"]["ts"]))
            assert low <= min(stamps) and min(stamps) - low < timedelta(milliseconds=1)
            assert high >= max(stamps) and high - max(stamps) <= timedelta(milliseconds=1)
            assert stats["nullCount"]["name"] == sum(d["name"] is None for d in data)
            assert "region" not in pq.read_schema(table / add["path"]).names

    on_disk = files_on_disk(table)
    assert not any(p.startswith("_lakemark_staging") for p in on_disk)
    assert not (table / "_lakemark_staging").exists()
    assert all(p.startswith("_delta_log/") or p.split("/")[-1].startswith("part-")
               for p in on_disk)


def test_overwrite_removes_old_files_logically(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_target(spark, frame(spark, make_rows(0, 4)), str(table))
    old_files = set(DeltaTable(str(table)).file_uris())
    replacement = make_rows(100, 2)
    result = write_target(spark, frame(spark, replacement), str(table), mode="overwrite")
    assert (result.rows, result.table_version) == (2, 1)
    assert delta_rows(table) == sort_rows(replacement)
    dt = DeltaTable(str(table))
    assert not old_files & set(dt.file_uris())
    removed = {a["remove"]["path"] for a in log_actions(table, 1) if "remove" in a}
    assert {os.path.join(str(table), p) for p in removed} == old_files
    assert all(os.path.exists(f) for f in old_files)  # logical removal; vacuum deletes


def test_token_semantics_follow_delta(spark: Any, tmp_path: Path) -> None:
    """Delta's txnAppId/txnVersion rules, as the Delta documentation words them."""
    table = tmp_path / "t"
    rows = make_rows(0, 3)
    r = write_target(spark, frame(spark, rows), str(table),
                     token=IdempotencyToken("dailyETL", 23423))
    assert (r.skipped, r.rows, r.table_version) == (False, 3, 0)
    assert DeltaTable(str(table)).transaction_version("dailyETL") == 23423

    # Same app id with the recorded version or lower: ignored, and never computed.
    for version in (23423, 23422, 0):
        r = write_target(spark, poisoned(spark), str(table),
                         token=IdempotencyToken("dailyETL", version))
        assert r == WriteResult(str(table), "delta", 0, 0, 0, True, 0)
    assert DeltaTable(str(table)).version() == 0
    assert delta_rows(table) == sort_rows(rows)

    # Another app id: written. A higher version of the same app id: written.
    r = write_target(spark, frame(spark, make_rows(10, 1)), str(table),
                     options={"txnAppId": "anotherETL", "txnVersion": "23424"})
    assert (r.skipped, r.table_version) == (False, 1)
    r = write_target(spark, frame(spark, make_rows(20, 1)), str(table),
                     token=IdempotencyToken("dailyETL", 23424))
    assert (r.skipped, r.table_version) == (False, 2)
    dt = DeltaTable(str(table))
    assert dt.transaction_version("dailyETL") == 23424
    assert dt.transaction_version("anotherETL") == 23424
    assert [r["id"] for r in delta_rows(table)] == [0, 1, 2, 10, 20]
    txns = [a["txn"] for a in log_actions(table, 2) if "txn" in a]
    assert txns == [{"appId": "dailyETL", "version": 23424}]
    assert any("add" in a for a in log_actions(table, 2))  # the txn rides with the data


def test_commit_race_on_same_token_never_duplicates(spark: Any, tmp_path: Path) -> None:
    """A writer whose snapshot predates a commit of the same token loses (reports skipped;
    write_target then deletes its files) instead of committing the data a second time."""
    from lakemark.sinks._delta import _commit
    from lakemark.sinks._location import resolve_target
    from lakemark.sinks._model import DataFile
    from lakemark.sinks._schema import delta_schema

    table = tmp_path / "t"
    df = frame(spark, make_rows(0, 2))
    write_target(spark, df, str(table))
    stale = DeltaTable(str(table))  # both writers checked the token at this version
    write_target(spark, df, str(table), token=IdempotencyToken("job/sink", 7))

    target = resolve_target(str(table))
    schema = delta_schema(df.schema, target=str(table))

    def data_file(name: str) -> DataFile:
        path = table / name
        pq.write_table(pa.Table.from_pylist(make_rows(99, 1), schema=df.toArrow().schema), path)
        return DataFile(name, path.stat().st_size, 1, 0, {}, None)

    late = data_file("part-00000-late.parquet")
    version, skipped = _commit(target, stale, schema, schema, [], [late], "append",
                               IdempotencyToken("job/sink", 7), "a" * 32)
    assert (version, skipped) == (1, True)
    assert DeltaTable(str(table)).version() == 1
    assert [r["id"] for r in delta_rows(table)] == [0, 0, 1, 1]

    # A different app id from the same stale snapshot is re-based and committed once.
    other = data_file("part-00000-other.parquet")
    version, skipped = _commit(target, stale, schema, schema, [], [other], "append",
                               IdempotencyToken("job/other", 1), "b" * 32)
    assert (version, skipped) == (2, False)
    assert [r["id"] for r in delta_rows(table)].count(99) == 1


def test_schema_mismatch_is_refused_before_writing(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_target(spark, frame(spark, make_rows(0, 2)), str(table), partition_by=["region"])
    before = files_on_disk(table)
    from pyspark.sql import functions as F

    wrong = poisoned(spark).withColumn("id", F.col("id").cast("string")).withColumn(
        "extra", F.col("day"))
    with pytest.raises(SinkError) as err:
        write_target(spark, wrong, str(table))
    message = str(err.value)
    assert str(table) in message and "id" in message and "extra" in message
    assert "nothing was written" in message
    with pytest.raises(SinkError, match="partitioned by"):
        write_target(spark, poisoned(spark), str(table), partition_by=["day"])
    assert files_on_disk(table) == before
    assert DeltaTable(str(table)).version() == 0


def test_merge_schema_adds_new_columns_and_fills_missing_ones_with_nulls(
    spark: Any, tmp_path: Path
) -> None:
    table = tmp_path / "t"
    base = spark.createDataFrame([(1, "a")], "id bigint, name string")
    write_target(spark, base, str(table))
    wider = spark.createDataFrame([(2, "b", 2.5)], "id bigint, name string, score double")
    with pytest.raises(SinkError, match="score.*not in the table.*mergeSchema=true"):
        write_target(spark, wider, str(table))
    assert DeltaTable(str(table)).version() == 0  # the refused write changed nothing
    result = write_target(spark, wider, str(table), options={"mergeSchema": "true"})
    assert result.rows == 1
    narrower = spark.createDataFrame([(3,)], "id bigint")  # name and score missing: nulls
    write_target(spark, narrower, str(table), options={"mergeschema": "TRUE"})
    dt = DeltaTable(str(table))
    assert [f.name for f in dt.schema().fields] == ["id", "name", "score"]
    rows = sorted(dt.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "score": None}, {"id": 2, "name": "b", "score": 2.5},
                    {"id": 3, "name": None, "score": None}]
    # A type change is refused even with mergeSchema, before any column is added.
    clash = spark.createDataFrame([("x", 1)], "id string, more int")
    version = dt.version()
    with pytest.raises(SinkError, match="id: table has long, DataFrame has string.*"
                       "tracked schema.*--schema-hints"):
        write_target(spark, clash, str(table), options={"mergeSchema": "true"})
    assert DeltaTable(str(table)).version() == version
    with pytest.raises(ConfigError, match="mergeSchema must be true or false"):
        write_target(spark, wider, str(table), options={"mergeSchema": "yes"})


def test_non_delta_targets_are_refused(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "data.csv").write_text("a,b\n")
    with pytest.raises(SinkError, match="not a Delta table"):
        write_target(spark, poisoned(spark), str(folder))
    assert files_on_disk(folder) == {"data.csv"}

    a_file = tmp_path / "file.parquet"
    a_file.write_bytes(b"x")
    with pytest.raises(SinkError, match="is a file"):
        write_target(spark, poisoned(spark), str(a_file))

    # Hidden entries and leftovers of an interrupted lakemark write do not count.
    leftovers = tmp_path / "interrupted"
    (leftovers / "_lakemark_staging" / "x").mkdir(parents=True)
    (leftovers / "region=eu").mkdir()
    (leftovers / "region=eu" / f"part-00000-lm{'0' * 32}-a0-000.snappy.parquet").write_bytes(b"")
    result = write_target(spark, frame(spark, make_rows(0, 1)), str(leftovers))
    assert result.rows == 1 and delta_rows(leftovers)[0]["id"] == 0


def test_failed_write_leaves_nothing(spark: Any, tmp_path: Path) -> None:
    new = tmp_path / "new"
    with pytest.raises(SinkError, match="computed!"):
        write_target(spark, poisoned(spark), str(new), partition_by=["region"])
    assert not new.exists()

    existing = tmp_path / "existing"
    write_target(spark, frame(spark, make_rows(0, 2)), str(existing))
    before = files_on_disk(existing)
    with pytest.raises(SinkError, match="computed!"):
        write_target(spark, poisoned(spark), str(existing), token=IdempotencyToken("j", 1))
    assert files_on_disk(existing) == before
    dt = DeltaTable(str(existing))
    assert dt.version() == 0 and dt.transaction_version("j") is None


def test_empty_dataframe(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    empty = frame(spark, [])
    r = write_target(spark, empty, str(table), partition_by=["region"])
    assert r == WriteResult(str(table), "delta", 0, 0, 0, False, 0)
    dt = DeltaTable(str(table))
    assert dt.to_pyarrow_table().num_rows == 0
    assert dt.schema().fields[0].name == "id" and dt.metadata().partition_columns == ["region"]
    assert files_on_disk(table) == {"_delta_log/00000000000000000000.json"}

    # No data and no token: nothing to commit. With a token: the token alone is committed,
    # so the retry of an empty run is skipped.
    assert write_target(spark, empty, str(table)).table_version == 0
    r = write_target(spark, empty, str(table), token=IdempotencyToken("j", 3))
    assert (r.skipped, r.table_version) == (False, 1)
    assert DeltaTable(str(table)).transaction_version("j") == 3
    assert write_target(spark, empty, str(table), token=IdempotencyToken("j", 3)).skipped


# -- folder formats --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_folder_formats_append_and_overwrite(spark: Any, tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / fmt
    options = {} if fmt == "parquet" else {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"}
    if fmt == "csv":
        options["header"] = "true"
    first, second, third = make_rows(0, 3), make_rows(3, 2), make_rows(10, 1)

    def read() -> list[dict[str, Any]]:
        df = spark.read.format(fmt).schema(SCHEMA).options(**options).load(str(folder))
        return sort_rows(df.toArrow().to_pylist())

    def visible() -> dict[str, int]:
        return {p: (folder / p).stat().st_size for p in files_on_disk(folder)
                if not any(part.startswith(("_", ".")) for part in Path(p).parts)}

    r1 = write_target(spark, frame(spark, first), str(folder), format=fmt,
                      partition_by=["region"], options=options)
    after_first = visible()
    assert (r1.format, r1.rows, r1.files, r1.bytes) == (fmt, 3, len(after_first),
                                                       sum(after_first.values()))
    r2 = write_target(spark, frame(spark, second), str(folder), format=fmt,
                      partition_by=["region"], options=options)
    new = {p: s for p, s in visible().items() if p not in after_first}
    assert (r2.rows, r2.files, r2.bytes, r2.table_version) == (2, len(new), sum(new.values()),
                                                               None)
    assert all(p.startswith("region=") for p in new)
    assert read() == sort_rows(first + second)

    r3 = write_target(spark, frame(spark, third), str(folder), format=fmt, mode="overwrite",
                      partition_by=["region"], options=options)
    assert (r3.rows, r3.files) == (1, len(visible()))
    assert read() == third


def test_folder_format_refuses_a_delta_table(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_target(spark, frame(spark, make_rows(0, 1)), str(table))
    with pytest.raises(SinkError, match="is a Delta table"):
        write_target(spark, poisoned(spark), str(table), format="parquet", mode="overwrite")
    assert DeltaTable(str(table)).to_pyarrow_table().num_rows == 1


# -- arguments -------------------------------------------------------------------------------
def test_argument_errors(spark: Any, tmp_path: Path) -> None:
    df = poisoned(spark)
    target = str(tmp_path / "t")
    with pytest.raises(FormatError, match="avro"):
        write_target(spark, df, target, format="avro")
    with pytest.raises(ConfigError, match="mode"):
        write_target(spark, df, target, mode="upsert")
    with pytest.raises(ConfigError, match="nope"):
        write_target(spark, df, target, partition_by=["nope"])
    with pytest.raises(ConfigError, match="txnVersion"):
        write_target(spark, df, target, options={"txnAppId": "a"})
    with pytest.raises(ConfigError, match="txnAppId is missing"):
        write_target(spark, df, target, options={"txnVersion": "1"})
    with pytest.raises(ConfigError, match="Delta and Iceberg targets only"):
        write_target(spark, df, target, format="parquet", token=IdempotencyToken("a", 1))
    with pytest.raises(ConfigError, match="disagree"):
        write_target(spark, df, target, token=IdempotencyToken("a", 1),
                     options={"txnAppId": "a", "txnVersion": "2"})
    for app_id, version in (("", 1), ("  ", 1), ("a", -1), ("a", True), ("a", 1.0)):
        with pytest.raises(ConfigError):
            IdempotencyToken(app_id, version)  # type: ignore[arg-type]
    assert not os.path.exists(target)


def test_awkward_partition_values_and_paths(spark: Any, tmp_path: Path) -> None:
    """Escaped folder names, NULL and empty-string partitions, timestamp partitions, a space
    in the table path: Delta values and folder names follow Spark's spelling."""
    table = tmp_path / "my table"
    rows = make_rows(0, 5)
    for row, region in zip(rows, ["a/b c", "x=y%z:ü", "", None, "a/b c"]):
        row["region"] = region
    df = frame(spark, rows).select("id", "name", "amount", "region", "ts")
    result = write_target(spark, df, str(table), partition_by=["region", "ts"])
    assert result.rows == 5
    for row in rows:
        row.pop("day")
        row["region"] = row["region"] or None  # Spark and Delta store '' partitions as NULL
    assert delta_rows(table) == sort_rows(rows)
    adds = [a["add"] for a in log_actions(table, 0) if "add" in a]
    values = {(a["partitionValues"]["region"], a["partitionValues"]["ts"]) for a in adds}
    assert ("a/b c", "2024-01-01 00:00:00.123456") in values
    assert ("x=y%z:ü", "2024-01-01 00:00:01.123457") in values
    assert (None, "2024-01-01 00:00:02.123458") in values
    folders = {str(p.parent.relative_to(table)) for p in table.rglob("part-*")}
    assert "region=a%2Fb c/ts=2024-01-01 00%3A00%3A00.123456" in folders
    assert "region=x%3Dy%25z%3Aü/ts=2024-01-01 00%3A00%3A01.123457" in folders
