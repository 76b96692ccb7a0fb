"""Glue's Delta reads and Delta ``replaceWhere`` writes on ``s3://`` against moto_server, in a
session without S3A (issue 20): ``create_data_frame``/``create_dynamic_frame``
``.from_options(connection_type="s3", format="delta")`` and ``.from_catalog`` on a Delta table of
the Glue Data Catalog (moto's Glue API), with and without ``transformation_ctx`` (then the
bookmarked table source: a second run takes only the new commit); ``replaceWhere`` on a data
column (its partition-column form is the same code as on a local table)."""

from __future__ import annotations

from typing import Any

import pytest
from deltalake import DeltaTable

from lakemark.sinks._spark_writer import has_s3a

pytestmark = pytest.mark.spark

TABLE = "s3://lake/orders"
OPTIONS = {"AWS_ALLOW_HTTP": "true"}  # moto_server speaks http; its endpoint is in the env


def _ids(df: Any) -> list[int]:
    return sorted(r["id"] for r in df.collect())


def _append(rows: list[tuple[int, str, float]]) -> None:
    """An append by deltalake (no Spark job: the reads are what these tests are about)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(TABLE, pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                                     "p": [r[1] for r in rows],
                                     "amount": [r[2] for r in rows]}),
                    mode="append", partition_by=["p"], storage_options=OPTIONS)


def _replace(spark: Any, rows: list[tuple[int, str, float]], where: str) -> None:
    spark.createDataFrame(rows, "id long, p string, amount double").write.format("delta") \
        .mode("overwrite").option("replaceWhere", where).save(TABLE)


def _crawled(client: Any) -> None:
    """The table as Glue's Delta crawler records it (a native Delta table)."""
    client.create_database(DatabaseInput={"Name": "lake"})
    client.create_table(DatabaseName="lake", TableInput={
        "Name": "orders", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "amount", "Type": "double"}],
            "Location": TABLE + "/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}},
        "PartitionKeys": [{"Name": "p", "Type": "string"}],
        "Parameters": {"classification": "delta", "table_type": "delta", "EXTERNAL": "TRUE"}})


def test_glue_delta_reads_on_s3_with_and_without_a_ctx(spark, s3, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from lakemark.glue import GlueContext
    from lakemark.glue.job import Job as GlueJob

    assert not has_s3a(spark), "the test session must lack S3A"
    s3.client("s3").create_bucket(Bucket="lake")
    _crawled(s3.client("glue"))
    monkeypatch.setenv("LAKEMARK_CATALOG", "glue")
    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 'state.db'}")
    _append([(1, "a", 1.0), (2, "b", 2.0)])
    _append([(3, "a", 3.0)])

    def run(new: list[int], whole: bool) -> None:
        glue = GlueContext(spark.sparkContext)
        job = GlueJob(glue)
        job.init("orders-s3", {"job_bookmark_option": "job-bookmark-enable"})
        try:
            if whole:
                assert _ids(glue.create_data_frame.from_options(
                    connection_type="s3", format="delta", connection_options={"path": TABLE},
                    transformation_ctx="by_path")) == new
            assert _ids(glue.create_dynamic_frame.from_catalog(
                database="lake", table_name="orders", transformation_ctx="by_catalog").toDF()
            ) == new
            if whole:  # without a ctx: the whole table as of a version, pruned
                assert _ids(glue.create_data_frame.from_catalog(
                    database="lake", table_name="orders", push_down_predicate="p = 'a'",
                    additional_options={"versionAsOf": "0"})) == [1]
        finally:
            job.commit()

    run([1, 2, 3], whole=True)
    _append([(4, "b", 4.0)])
    run([4], whole=False)  # the bookmark took versions 0-1; this run takes version 2 only


def test_replace_where_on_s3_without_s3a(spark, s3):  # type: ignore[no-untyped-def]
    s3.client("s3").create_bucket(Bucket="lake")
    _append([(1, "a", 1.0), (2, "a", 20.0), (3, "b", 30.0), (4, "b", 4.0)])
    # a data column: the rows it selects are replaced, the other rows of their files kept
    _replace(spark, [(5, "b", 50.0)], "amount >= 10")
    assert sorted((r.id, r.p, r.amount) for r in spark.read.format("delta").load(TABLE)
                  .collect()) == [(1, "a", 1.0), (4, "b", 4.0), (5, "b", 50.0)]
    history = DeltaTable(TABLE, storage_options=OPTIONS).history()
    assert len(history) == 2  # one commit per write
