"""``from delta.tables import DeltaTable`` served by lakemark (no delta-spark, no jars), on real
Delta tables (deltalake) and the session-scoped local Spark: the shim's import, forPath /
forName / isDeltaTable / toDF, merge with every clause kind (SQL strings and Columns, first
matching clause wins, a source row matching two targets refused), update, delete, history,
detail, vacuum, optimize, restore, the create builders, and unsupported methods named."""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable as RsTable
from deltalake import write_deltalake

import lakemark
from lakemark.errors import ConfigError, SinkError, UnsupportedError
from lakemark.tables._delta_sql import spark_sql_to_datafusion

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def DeltaTable(spark: Any) -> Any:  # noqa: N802 - the class scripts import
    """The class ``from delta.tables import DeltaTable`` gives after ``lakemark.register``."""
    lakemark.register(spark)
    module = importlib.import_module("delta.tables")
    return module.DeltaTable


def rows(path: Path) -> dict[int, tuple[Any, ...]]:
    table = RsTable(str(path)).to_pyarrow_table().to_pylist()
    out = {r["id"]: tuple(v for k, v in sorted(r.items()) if k != "id") for r in table}
    assert len(out) == len(table), table
    return out


def seed(path: Path, ids: list[int], names: list[str], partition: bool = False) -> None:
    import pyarrow as pa

    data = pa.table({"id": pa.array(ids, pa.int64()), "name": names,
                     "day": ["d1" if i % 2 else "d2" for i in ids]})
    write_deltalake(str(path), data, partition_by=["day"] if partition else None)


def test_the_shim_is_lakemarks_and_delta_spark_would_win(DeltaTable: Any) -> None:
    import delta

    assert DeltaTable.__module__ == "lakemark.tables._delta_api"
    assert delta.__file__ is not None and "lakemark" in delta.__file__
    assert sys.path[-1].endswith("_shim")  # appended last: an installed delta-spark comes first
    from lakemark.tables import install_delta_shim

    assert install_delta_shim()  # idempotent


def test_merge_snippet_and_clauses(spark: Any, DeltaTable: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = tmp_path / "customers"
    seed(path, [1, 2, 3, 4], ["a", "b", "c", "d"])
    assert DeltaTable.isDeltaTable(spark, str(path))
    assert not DeltaTable.isDeltaTable(spark, str(tmp_path / "nothing"))
    updates = spark.createDataFrame([(1, "A", "d1"), (5, "E", "d1")], "id long, name string, "
                                                                      "day string")
    target = DeltaTable.forPath(spark, str(path))
    out = (target.alias("t").merge(updates.alias("s"), "t.id = s.id")
           .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    assert out.collect()[0].asDict() == {"num_affected_rows": 2, "num_updated_rows": 1,
                                         "num_deleted_rows": 0, "num_inserted_rows": 1}
    assert rows(path) == {1: ("d1", "A"), 2: ("d2", "b"), 3: ("d1", "c"), 4: ("d2", "d"),
                          5: ("d1", "E")}

    # Columns as conditions and values; first matching clause wins; by-source clauses.
    changes = spark.createDataFrame([(1, "x", "D"), (2, "y", "U"), (9, "z", "D"),
                                     (8, "it's", "U")], "id long, name string, op string")
    t, s = F.col("t.id"), F.col("s.id")
    (target.alias("t").merge(changes.alias("s"), t == s)
     .whenMatchedDelete(F.col("s.op") == "D")
     .whenMatchedUpdate(set={"name": F.concat(F.col("s.name"), F.lit("'!"))})
     .whenNotMatchedInsert(condition='s.op <> "D"',
                           values={"id": "s.id", "name": F.col("s.name"), "day": F.lit("d9")})
     .whenNotMatchedBySourceUpdate(F.col("t.id") == 3, {"name": "upper(t.name)"})
     .whenNotMatchedBySourceDelete("t.id = 4")
     .execute())
    assert rows(path) == {2: ("d2", "y'!"), 3: ("d1", "C"), 5: ("d1", "E"),
                          8: ("d9", "it's")}
    assert target.toDF().count() == 4

    # A target row matched by two source rows: refused, nothing written.
    twice = spark.createDataFrame([(2, "p"), (2, "q")], "id long, name string")
    before = RsTable(str(path)).version()
    with pytest.raises(SinkError, match="more than one source row"):
        target.alias("t").merge(twice.alias("s"), "t.id = s.id").whenMatchedUpdate(
            set={"name": "s.name"}).execute()
    assert RsTable(str(path)).version() == before
    # Clause order and bad expressions fail before anything runs, naming what is wrong.
    with pytest.raises(ConfigError, match="only the last may omit"):
        target.alias("t").merge(twice.alias("s"), "t.id = s.id").whenMatchedDelete(
        ).whenMatchedUpdateAll().execute()
    with pytest.raises(ConfigError, match="merge condition"):
        target.alias("t").merge(twice.alias("s"), "t.id = s.nope").whenMatchedDelete().execute()
    with pytest.raises(ConfigError, match="whenNotMatchedInsertAll cannot resolve t.day"):
        target.alias("t").merge(twice.alias("s"), "t.id = s.id").whenNotMatchedInsertAll(
        ).execute()
    with pytest.raises(ConfigError, match="at least one WHEN"):
        target.alias("t").merge(twice.alias("s"), "t.id = s.id").execute()


def test_update_delete_history_detail_restore(spark: Any, DeltaTable: Any,
                                              tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = tmp_path / "t"
    seed(path, [1, 2, 3], ["a", "b", "c"], partition=True)
    table = DeltaTable.forPath(spark, str(path))
    table.update("id = 1", {"name": "'one'"})
    table.update(F.col("id") >= 2, {"name": F.upper(F.col("name"))})
    table.delete(F.col("id") == 3)
    assert rows(path) == {1: ("d1", "one"), 2: ("d2", "B")}
    history = table.history()
    assert [r["operation"] for r in history.select("operation").collect()][:3] == [
        "DELETE", "UPDATE", "UPDATE"]
    assert {"version", "timestamp", "operation", "operationParameters", "readVersion",
            "isBlindAppend", "operationMetrics", "userMetadata"} <= set(history.columns)
    assert table.history(1).count() == 1
    detail = table.detail().collect()[0]
    assert detail["format"] == "delta" and detail["partitionColumns"] == ["day"]
    assert detail["numFiles"] >= 2 and detail["location"] == str(path)
    restored = table.restoreToVersion(0).collect()[0]
    assert restored["num_of_files_after_restore"] >= 2
    assert rows(path) == {1: ("d1", "a"), 2: ("d2", "b"), 3: ("d1", "c")}
    # Delta (and deltalake) date a version by its log file's modification time.
    written = (path / "_delta_log" / f"{1:020d}.json").stat().st_mtime_ns
    stamp = dt.datetime.fromtimestamp(-(-written // 1_000_000) / 1000, dt.UTC)
    table.restoreToTimestamp(stamp.isoformat())
    assert rows(path)[1] == ("d1", "one")

    import pyarrow as pa

    for extra in (7, 9):  # small files in partition d1 to compact
        write_deltalake(str(path), pa.table({"id": pa.array([extra], pa.int64()),
                                             "name": ["n"], "day": ["d1"]}), mode="append")
    result = table.optimize().where("day = 'd1'").executeCompaction().collect()[0]
    assert result["metrics"]["numFilesRemoved"] >= 2
    with pytest.raises(ConfigError, match="not a partition column"):
        table.optimize().where("name = 'x'").executeCompaction()
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        assert table.vacuum(0).count() == 0
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    assert rows(path)[1] == ("d1", "one")


def test_create_builders_and_for_name(spark: Any, DeltaTable: Any, tmp_path: Path) -> None:
    from pyspark.sql.types import StringType, StructField, StructType

    path = tmp_path / "made"
    table = (DeltaTable.createIfNotExists(spark).tableName("dtables_made").location(str(path))
             .addColumn("id", "BIGINT", nullable=False).addColumns(
                 StructType([StructField("name", StringType())]))
             .addColumn("day", "STRING").partitionedBy("day").property("delta.appendOnly",
                                                                       "false")
             .comment("made by a test").execute())
    detail = table.detail().collect()[0]
    assert detail["partitionColumns"] == ["day"] and detail["description"] == "made by a test"
    assert detail["properties"] == {"delta.appendOnly": "false"}
    again = DeltaTable.createIfNotExists(spark).location(str(path)).addColumn("x", "INT").execute()
    assert again.toDF().columns == ["id", "name", "day"]
    with pytest.raises(SinkError, match="already exists"):
        DeltaTable.create(spark).location(str(path)).addColumn("x", "INT").execute()
    assert DeltaTable.forName(spark, "dtables_made").toDF().count() == 0
    assert DeltaTable.forName(spark, f"delta.`{path}`").toDF().columns == ["id", "name", "day"]
    replaced = DeltaTable.createOrReplace(spark).location(str(path)).addColumn(
        "k", "INT").execute()
    assert replaced.toDF().columns == ["k"]
    with pytest.raises(ConfigError, match="was not found"):
        DeltaTable.forName(spark, "dtables_no_such_table")


def test_for_name_reads_the_lakemark_catalog(spark: Any, DeltaTable: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    path = tmp_path / "sales"
    seed(path, [1], ["a"])
    catalog = tmp_path / "connection" / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "lake"}]}))
    (catalog / "tables" / "lake.json").write_text(json.dumps({"TableList": [{
        "Name": "sales", "DatabaseName": "lake", "Parameters": {"table_type": "delta"},
        "StorageDescriptor": {"Location": str(path), "Columns": []}}]}))
    monkeypatch.setenv("LAKEMARK_CATALOG", str(catalog.parent))
    assert repr(DeltaTable.forName(spark, "lake.sales")) == f"DeltaTable({str(path)!r})"


def test_unsupported_methods_are_named(spark: Any, DeltaTable: Any, tmp_path: Path) -> None:
    path = tmp_path / "u"
    seed(path, [1], ["a"])
    table = DeltaTable.forPath(spark, str(path))
    with pytest.raises(UnsupportedError, match="DeltaTable.generate is not supported"):
        table.generate("symlink_format_manifest")
    with pytest.raises(UnsupportedError, match="DeltaTable.somethingNew is not supported"):
        table.somethingNew()
    with pytest.raises(UnsupportedError, match="DeltaTable.convertToDelta is not supported"):
        DeltaTable.convertToDelta(spark, f"parquet.`{path}`")
    with pytest.raises(UnsupportedError, match="DeltaTable.someStaticHelper is not supported"):
        DeltaTable.someStaticHelper(spark)
    with pytest.raises(UnsupportedError, match="DeltaTableBuilder.clusterBy is not supported"):
        DeltaTable.create(spark).clusterBy("id")
    source = spark.createDataFrame([], "id long")
    with pytest.raises(UnsupportedError, match="DeltaMergeBuilder.whenSomething is not"):
        table.merge(source, "id = id").whenSomething()
    with pytest.raises(ConfigError, match="is not a Delta table"):
        DeltaTable.forPath(spark, str(tmp_path / "nothing"))


def test_spark_sql_printing_is_adjusted_for_deltalake() -> None:
    assert spark_sql_to_datafusion("(s.v = 'it\\'s') AND (a <=> b)") == \
        "(s.v = 'it''s') AND (a IS NOT DISTINCT FROM b)"
    assert spark_sql_to_datafusion("`we'ird` = '<=>'") == "`we'ird` = '<=>'"
    assert spark_sql_to_datafusion('s.op = "D" AND n = "it\'s"') == "s.op = 'D' AND n = 'it''s'"


def test_merge_update_and_create_on_s3(spark: Any, DeltaTable: Any, s3: Any) -> None:
    s3.client("s3").create_bucket(Bucket="dtables")
    table = (DeltaTable.createIfNotExists(spark).location("s3://dtables/customers")
             .addColumn("id", "BIGINT").addColumn("name", "STRING").execute())
    updates = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    table.alias("t").merge(updates.alias("s"), "t.id = s.id").whenMatchedUpdateAll(
    ).whenNotMatchedInsertAll().execute()
    DeltaTable.forPath(spark, "s3a://dtables/customers").update("id = 2", {"name": "'B'"})
    from lakemark.sinks._location import open_delta, resolve_target

    stored = open_delta(resolve_target("s3://dtables/customers"))
    assert stored is not None
    assert sorted(tuple(r.values()) for r in stored.to_pyarrow_table().to_pylist()) == [
        (1, "a"), (2, "B")]
    assert [r["operation"] for r in table.history().collect()] == [
        "UPDATE", "MERGE", "CREATE TABLE"]


def test_history_names_operations_as_delta_on_spark(spark: Any, DeltaTable: Any,
                                                    tmp_path: Path) -> None:
    """Issue 32: every write path lakemark has records Delta on Spark's operation name and
    parameters, so ``history().where("operation = 'WRITE'")`` finds DataFrame writes."""
    path = str(tmp_path / "t")
    frame = spark.createDataFrame([(1, "a", "d1"), (2, "b", "d2")], "id long, name string, "
                                  "day string")
    frame.write.format("delta").partitionBy("day").save(path)
    frame.write.format("delta").mode("append").save(path)
    frame.where("day = 'd1'").write.format("delta").mode("overwrite") \
        .option("replaceWhere", "day = 'd1'").save(path)
    table = DeltaTable.forPath(spark, path)
    table.update("id = 1", {"name": "'one'"})
    table.delete("id = 2")
    table.alias("t").merge(frame.alias("s"), "t.id = s.id").whenNotMatchedInsertAll().execute()
    table.restoreToVersion(1)
    history = {r["version"]: (r["operation"], r["operationParameters"])
               for r in table.history().collect()}
    assert [history[v][0] for v in sorted(history)] == [
        "WRITE", "WRITE", "WRITE", "UPDATE", "DELETE", "MERGE", "RESTORE"]
    assert history[0][1] == {"mode": "ErrorIfExists", "partitionBy": '["day"]'}
    assert history[1][1] == {"mode": "Append", "partitionBy": "[]"}
    assert history[2][1] == {"mode": "Overwrite", "partitionBy": "[]",
                             "predicate": "day = 'd1'"}
    assert history[6][1] == {"version": "1", "timestamp": None}
    writes = table.history().where("operation = 'WRITE'").count()
    assert writes == 3
    created = tmp_path / "c"
    for how in ("create", "replace", "createOrReplace"):
        getattr(DeltaTable, how)(spark).location(str(created)).addColumn("id", "BIGINT") \
            .partitionedBy().property("delta.appendOnly", "false").execute()
    made = DeltaTable.forPath(spark, str(created)).history().orderBy("version").collect()
    assert [r["operation"] for r in made] == ["CREATE TABLE", "REPLACE TABLE",
                                              "CREATE OR REPLACE TABLE"]
    assert made[0]["operationParameters"] == {
        "isManaged": "false", "description": None, "partitionBy": "[]",
        "properties": '{"delta.appendOnly": "false"}'}


def test_for_name_of_a_table_that_is_not_delta_names_for_name_and_the_table(
        spark: Any, DeltaTable: Any, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    spark.createDataFrame([(1,)], "id long").write.parquet(str(plain))
    with pytest.raises(ConfigError, match=r"^DeltaTable.forName: table 'delta.`.*plain`' \(at "
                                          r".*plain\) is not a Delta table \(no _delta_log\)$"):
        DeltaTable.forName(spark, f"delta.`{plain}`")
    assert not (plain / "_delta_log").exists()  # nothing was made
