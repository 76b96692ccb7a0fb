"""``df.write.format("delta")...save(path)`` with no Delta jars (issue 20): save modes,
partitionBy, Delta's idempotent-write options (the seed's snippet, verbatim), userMetadata,
mergeSchema, one commit per write and nothing visible after a failed write."""

from __future__ import annotations

import logging
import os

import pytest
from deltalake import DeltaTable

from lakemark.errors import UnsupportedError
from lakemark.tables import register


@pytest.fixture(autouse=True)
def _registered(spark):  # type: ignore[no-untyped-def]
    assert register(spark)


def _frame(spark, ids, day="d1"):  # type: ignore[no-untyped-def]
    return spark.createDataFrame([(i, f"n{i}", day) for i in ids],
                                 "id long, name string, day string")


def _ids(path) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(DeltaTable(str(path)).to_pyarrow_table().column("id").to_pylist())


def test_modes_and_partitions_with_one_commit_per_write(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    _frame(spark, [1, 2]).write.format("delta").partitionBy("day").save(path)
    table = DeltaTable(path)
    assert table.version() == 0 and table.metadata().partition_columns == ["day"]
    assert all(f.startswith("day=d1/") for f in pa_paths(table))
    with pytest.raises(Exception, match="already exists"):
        _frame(spark, [3]).write.format("delta").save(path)
    _frame(spark, [3]).write.format("delta").mode("ignore").save(path)
    assert DeltaTable(path).version() == 0
    _frame(spark, [3, 4], "d2").write.format("delta").mode("append").save(path)
    assert _ids(path) == [1, 2, 3, 4] and DeltaTable(path).version() == 1
    _frame(spark, [9]).write.mode("overwrite").format("delta").save(path)
    assert _ids(path) == [9] and DeltaTable(path).version() == 2
    back = spark.read.format("delta").load(path)
    assert sorted(r.id for r in back.collect()) == [9]
    assert sorted(r.id for r in spark.read.format("delta").option("versionAsOf", 1)
                  .load(path).collect()) == [1, 2, 3, 4]


def pa_paths(table: DeltaTable) -> list[str]:
    import pyarrow as pa

    paths = pa.table(table.get_add_actions(flatten=True)).column("path")
    return [str(p) for p in paths.to_pylist()]


def test_the_seed_snippet_runs_verbatim_and_skips_the_repeat(spark, tmp_path, caplog):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    dataFrame = _frame(spark, [1, 2])
    app_id = "dailyETL"
    version = 23423
    caplog.set_level(logging.INFO, logger="lakemark")
    # From the Delta docs (shared/seeds/002): no format given, as there
    dataFrame.write.option("txnVersion", version).option("txnAppId", app_id).save(path)
    dataFrame.write.option("txnVersion", version).option("txnAppId", app_id).save(path)
    assert _ids(path) == [1, 2]
    table = DeltaTable(path)
    assert table.version() == 0 and table.transaction_version(app_id) == version
    assert any("skipped" in r.getMessage() and "dailyETL" in r.getMessage()
               for r in caplog.records)
    # the form, with a format and a mode; a lower version is ignored, a higher written
    _frame(spark, [5]).write.format("delta").option("txnVersion", 23422) \
        .option("txnAppId", app_id).mode("append").save(path)
    _frame(spark, [6]).write.format("delta").option("txnVersion", 23424) \
        .option("txnAppId", app_id).mode("append").save(path)
    _frame(spark, [7]).write.format("delta").option("txnVersion", 23424) \
        .option("txnAppId", "anotherETL").mode("append").save(path)
    assert _ids(path) == [1, 2, 6, 7]


def test_user_metadata_and_merge_schema(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    _frame(spark, [1]).write.format("delta").option("userMetadata", "first load").save(path)
    assert DeltaTable(path).history(1)[0]["userMetadata"] == "first load"
    wider = spark.createDataFrame([(2, "n2", "d1", 0.5)],
                                  "id long, name string, day string, x double")
    with pytest.raises(Exception, match="mergeSchema"):
        wider.write.format("delta").mode("append").save(path)
    assert DeltaTable(path).version() == 0
    wider.write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    rows = sorted((r.id, r.x) for r in spark.read.format("delta").load(path).collect())
    assert rows == [(1, None), (2, 0.5)]


def test_unsupported_options_are_refused_by_name(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    _frame(spark, [1]).write.format("delta").save(path)
    with pytest.raises(Exception, match="partitionOverwriteMode"):
        _frame(spark, [2]).write.format("delta").mode("overwrite") \
            .option("partitionOverwriteMode", "dynamic").save(path)
    with pytest.raises(Exception, match="overwriteSchema needs mode"):
        _frame(spark, [2]).write.format("delta").mode("append") \
            .option("overwriteSchema", "true").save(path)
    assert _ids(path) == [1]


def test_overwrite_schema_replaces_schema_and_partitioning_in_one_commit(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    _frame(spark, [1, 2]).write.format("delta").partitionBy("day").save(path)
    DeltaTable(path).alter.set_table_properties({"delta.logRetentionDuration": "interval 9 days"})
    other = spark.createDataFrame([(7, 1.5)], "id int, score double")
    with pytest.raises(Exception, match="does not match the schema"):
        other.write.format("delta").mode("overwrite").save(path)
    other.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
    table = DeltaTable(path)
    assert table.version() == 2 and table.metadata().partition_columns == []
    assert [f.name for f in table.schema().fields] == ["id", "score"]
    assert table.metadata().configuration["delta.logRetentionDuration"] == "interval 9 days"
    assert [(r.id, r.score) for r in spark.read.format("delta").load(path).collect()] == [(7, 1.5)]
    assert sorted(r.id for r in spark.read.format("delta").option("versionAsOf", 1)
                  .load(path).collect()) == [1, 2]
    _frame(spark, [3], "d9").write.format("delta").mode("overwrite") \
        .option("overwriteSchema", "true").partitionBy("day").save(path)
    assert DeltaTable(path).metadata().partition_columns == ["day"] and _ids(path) == [3]


def test_replace_where_on_data_columns_replaces_the_selected_rows(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    _frame(spark, [1, 2, 3]).union(_frame(spark, [4, 5], "d2")).coalesce(1) \
        .write.format("delta").save(path)
    first = set(pa_paths(DeltaTable(path)))
    _frame(spark, [6], "d3").coalesce(1).write.format("delta").mode("append").save(path)
    untouched = set(pa_paths(DeltaTable(path))) - first  # the file of id 6
    _frame(spark, [20, 30], "d2").write.format("delta").mode("overwrite") \
        .option("replaceWhere", "id >= 2 AND id <= 4 OR day = 'd2'").save(path)
    table = DeltaTable(path)
    assert _ids(path) == [1, 6, 20, 30] and table.version() == 2
    live = set(pa_paths(table))
    assert untouched <= live and not first & live  # the file with no selected row stays
    with pytest.raises(Exception, match="do not match replaceWhere"):
        _frame(spark, [1], "d1").write.format("delta").mode("overwrite") \
            .option("replaceWhere", "id > 10").save(path)
    _frame(spark, [11], "dx").write.format("delta").mode("overwrite") \
        .option("replaceWhere", "id = 11").save(path)  # selects no stored row: an append
    assert _ids(path) == [1, 6, 11, 20, 30] and DeltaTable(path).version() == 3


def test_replace_where_replaces_only_the_selected_partitions(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    (_frame(spark, [1, 2], "d1").union(_frame(spark, [3], "d2"))
     .union(_frame(spark, [4], "d3"))).write.format("delta").partitionBy("day").save(path)
    _frame(spark, [20, 21], "d2").write.format("delta").mode("overwrite") \
        .option("replaceWhere", "day = 'd2'").save(path)
    assert _ids(path) == [1, 2, 4, 20, 21] and DeltaTable(path).version() == 1
    with pytest.raises(Exception, match="do not match replaceWhere"):
        _frame(spark, [30], "d1").write.format("delta").mode("overwrite") \
            .option("replaceWhere", "day in ('d2', 'd3')").save(path)
    with pytest.raises(Exception, match="needs mode"):
        _frame(spark, [30], "d1").write.format("delta").mode("append") \
            .option("replaceWhere", "day = 'd1'").save(path)
    assert _ids(path) == [1, 2, 4, 20, 21] and DeltaTable(path).version() == 1


def test_a_failed_write_leaves_nothing_visible(spark, tmp_path):  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    path = str(tmp_path / "t")
    _frame(spark, [1]).write.format("delta").save(path)
    bad = spark.range(0, 1000, numPartitions=4).select(
        F.col("id"), F.lit("x").alias("name"), F.lit("d1").alias("day"),
    ).withColumn("id", F.when(F.col("id") == 999, F.raise_error("boom")).otherwise(F.col("id")))
    with pytest.raises(Exception, match="boom"):
        bad.write.format("delta").mode("append").save(path)
    assert _ids(path) == [1] and DeltaTable(path).version() == 0
    data = [f for _, _, files in os.walk(path) for f in files if f.endswith(".parquet")]
    assert len(data) == 1


def test_writes_s3_without_s3a(spark, s3):  # type: ignore[no-untyped-def]
    s3.client("s3").create_bucket(Bucket="lake")
    _frame(spark, [1, 2]).write.format("delta").partitionBy("day").save("s3://lake/t")
    _frame(spark, [3]).write.format("delta").mode("append") \
        .option("txnAppId", "job").option("txnVersion", 1).save("s3://lake/t")
    _frame(spark, [3]).write.format("delta").mode("append") \
        .option("txnAppId", "job").option("txnVersion", 1).save("s3://lake/t")
    back = spark.read.format("delta").load("s3://lake/t")
    assert sorted(r.id for r in back.collect()) == [1, 2, 3]


def test_the_data_source_writer_commits_once_and_honours_txn(spark, tmp_path, caplog):  # type: ignore[no-untyped-def]
    """The writer Spark calls where lakemark's save hook is absent (e.g. Spark Connect)."""
    path = str(tmp_path / "t")

    def write(df, mode, **options):  # type: ignore[no-untyped-def]
        writer = df.write.format("delta").mode(mode).option("lakemark.writer", "datasource")
        for key, value in options.items():
            writer = writer.option(key, value)
        writer.save(path)

    write(_frame(spark, [1, 2]).repartition(2), "append", userMetadata="ds")
    table = DeltaTable(path)
    assert table.version() == 0 and _ids(path) == [1, 2]
    assert table.history(1)[0]["userMetadata"] == "ds"
    caplog.set_level(logging.INFO, logger="lakemark")
    write(_frame(spark, [3]), "append", txnAppId="app", txnVersion=1)
    write(_frame(spark, [3]), "append", txnAppId="app", txnVersion=1)
    assert _ids(path) == [1, 2, 3] and DeltaTable(path).version() == 1
    write(_frame(spark, [7]), "overwrite")
    assert _ids(path) == [7] and DeltaTable(path).version() == 2
    with pytest.raises(Exception, match="(?i)replaceWhere"):
        write(_frame(spark, [8]), "overwrite", replaceWhere="day = 'd1'")
    assert _ids(path) == [7]
    assert sorted(r.id for r in spark.read.format("delta").load(path).collect()) == [7]
    # Spark's Python data source writer gets no partition columns: refused by name, unwritten
    with pytest.raises(UnsupportedError, match="partitionBy"):
        _frame(spark, [9]).write.format("delta").mode("append") \
            .option("lakemark.writer", "datasource").partitionBy("day").save(path)
    assert _ids(path) == [7]
