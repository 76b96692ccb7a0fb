"""The AWS Glue Data Catalog as the Iceberg catalog, against a real moto_server process.

``iceberg_catalog="glue"`` resolves to pyiceberg's Glue catalog with the endpoint of the
environment (``AWS_ENDPOINT_URL``, set by the ``moto_server`` fixture) and a local warehouse:
a job appends twice exactly once, the table is registered in Glue with ``table_type=ICEBERG``,
and an incremental source reads it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark import Job
from lakemark.catalog._iceberg import WAREHOUSE_ENV

pytestmark = [pytest.mark.services, pytest.mark.spark]


def test_glue_data_catalog_holds_lakemark_iceberg_tables(spark: Any, s3: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))  # no user configuration
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "warehouse"))
    state = f"sqlite:///{tmp_path / 'state.db'}"
    rows = [(1, "a"), (2, "b")]
    for run in range(2):
        with Job("gl", state=state) as job:
            df = spark.createDataFrame(rows[run:run + 1], "id long, name string")
            result = job.write(df, "db.events", format="iceberg", ctx="events",
                               iceberg_catalog="glue")
            assert (result.rows, result.skipped) == (1, False)
    table = s3.client("glue").get_table(DatabaseName="db", Name="events")["Table"]
    assert table["Parameters"]["table_type"] == "ICEBERG"
    assert table["Parameters"]["metadata_location"].startswith((tmp_path / "warehouse")
                                                               .as_uri())
    with Job("reader", state=state) as job:
        read = job.read_table("db.events", format="iceberg", ctx="src",
                              options={"iceberg_catalog": "glue"})
        assert sorted(r.id for r in read.collect()) == [1, 2]


def test_glue_script_calls_on_an_iceberg_table_of_the_glue_api(
        spark: Any, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--catalog glue``: the Data Catalog lists the table with ``table_type=ICEBERG`` and the
    same table is the Iceberg table (pyiceberg's Glue catalog on moto_server's endpoint). A
    Glue script's catalog sink (``write_dynamic_frame.from_catalog``, ``getSink`` +
    ``setCatalogInfo``) appends to it exactly once per run, and ``create_data_frame.from_catalog``
    with a ``transformation_ctx`` takes only what the table gained since the last run."""
    from lakemark.catalog._iceberg import CATALOG_ENV
    from lakemark.glue import GlueContext
    from lakemark.glue.dynamicframe import DynamicFrame
    from lakemark.glue.job import Job as GlueJob
    from lakemark.sinks import write_target

    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "warehouse"))
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    monkeypatch.setenv("LAKEMARK_CATALOG", "glue")
    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 'state.db'}")
    schema = "id long, name string"
    write_target(spark, spark.createDataFrame([(1, "a")], schema), "shop.orders",
                 format="iceberg", iceberg_catalog="glue")  # registered as Glue/Athena do
    assert s3.client("glue").get_table(DatabaseName="shop", Name="orders")["Table"][
        "Parameters"]["table_type"] == "ICEBERG"
    taken = []
    for run, rows in enumerate(([(2, "b")], [(3, "c"), (4, "d")])):
        glue = GlueContext(spark.sparkContext)
        job = GlueJob(glue)
        job.init("ice-glue", {"job_bookmark_option": "job-bookmark-enable"})
        frame = DynamicFrame.fromDF(spark.createDataFrame(rows, schema), glue, "rows")
        if run == 0:
            glue.write_dynamic_frame.from_catalog(frame=frame, database="shop",
                                                  table_name="orders",
                                                  transformation_ctx="orders_sink")
        else:
            sink = glue.getSink(connection_type="s3", path="s3://unused/",
                                transformation_ctx="orders_sink")
            sink.setCatalogInfo(catalogDatabase="shop", catalogTableName="orders")
            sink.writeFrame(frame)
        read = glue.create_data_frame.from_catalog(database="shop", table_name="orders",
                                                   transformation_ctx="orders_src")
        taken.append(sorted(r.id for r in read.collect()))
        job.commit()
    assert taken == [[1, 2], [3, 4]]
    whole = glue.create_dynamic_frame.from_catalog(database="shop", table_name="orders")
    assert sorted(r.id for r in whole.toDF().collect()) == [1, 2, 3, 4]


def test_write_to_glue_catalog_with_an_s3_warehouse(spark: Any, s3: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``LAKEMARK_ICEBERG_CATALOG=glue`` with an ``s3://`` warehouse, as a Glue Iceberg job
    runs: ``df.writeTo("glue_catalog.db.t")`` (Iceberg's Spark catalog plugin configured, no
    jar) creates a ``days(ts)``-partitioned table registered in moto's Glue API with its
    metadata and data on moto's S3 and appends to it; an incremental source reads it back; a
    job merges by key into another table of the same catalog (copy-on-write on S3)."""
    import datetime as dt

    from pyspark.sql.functions import partitioning

    from lakemark.catalog._iceberg import CATALOG_ENV

    s3.client("s3").create_bucket(Bucket="gluelake")
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.setenv(CATALOG_ENV, "glue")
    monkeypatch.setenv(WAREHOUSE_ENV, "s3://gluelake/wh")
    state = f"sqlite:///{tmp_path / 'state.db'}"
    schema = "id long, name string, ts timestamp"
    when = dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)
    spark.conf.set("spark.sql.catalog.glue_catalog", "org.apache.iceberg.spark.SparkCatalog")
    try:
        spark.createDataFrame([(1, "a", when), (2, "b", when + dt.timedelta(days=1))],
                              schema).writeTo("glue_catalog.web.clicks") \
            .partitionedBy(partitioning.days("ts")).create()
        spark.createDataFrame([(3, "c", when)], schema).writeTo(
            "glue_catalog.web.clicks").append()
    finally:
        spark.conf.unset("spark.sql.catalog.glue_catalog")
    table = s3.client("glue").get_table(DatabaseName="web", Name="clicks")["Table"]
    assert table["Parameters"]["table_type"] == "ICEBERG"
    assert table["Parameters"]["metadata_location"].startswith("s3://gluelake/wh/web.db/clicks/")
    keys = [o["Key"] for o in s3.client("s3").list_objects_v2(
        Bucket="gluelake", Prefix="wh/web.db/clicks/data/")["Contents"]]
    assert {k.split("/")[4] for k in keys} == {"ts_day=2024-06-01", "ts_day=2024-06-02"}
    with Job("read", state=state) as job:
        read = job.read_table("web.clicks", format="iceberg", ctx="src")
        assert sorted(r.id for r in read.collect()) == [1, 2, 3]

    users = "id long, name string"
    for rows in ([(1, "a"), (2, "b")], [(2, "B"), (3, "c")]):
        with Job("users", state=state) as job:
            result = job.write(spark.createDataFrame(rows, users), "web.users",
                               format="iceberg", ctx="users", merge_keys=["id"])
            assert (result.rows, result.skipped) == (2, False)
    merged = spark.read.format("iceberg").load("web.users").collect()
    assert sorted((r.id, r.name) for r in merged) == [(1, "a"), (2, "B"), (3, "c")]
    location = s3.client("glue").get_table(DatabaseName="web", Name="users")["Table"][
        "Parameters"]["metadata_location"]
    assert location.startswith("s3://gluelake/wh/web.db/users/metadata/")


def test_a_glue_spark_catalog_resolves_through_its_own_settings(
        spark: Any, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: ``spark.sql.catalog.glue_catalog`` with Glue's ``catalog-impl`` and an S3
    ``warehouse`` (a Glue job's ``--conf``) is the Glue Data Catalog with that warehouse, for
    ``save``, ``writeTo``, ``load`` and ``spark.table`` alike (not lakemark's own catalog)."""
    from lakemark.catalog._iceberg import CATALOG_ENV

    s3.client("s3").create_bucket(Bucket="sparkconf")
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.setenv(CATALOG_ENV, f"sqlite:///{tmp_path / 'own.db'}")
    s3.client("glue").create_database(DatabaseInput={"Name": "shop"})
    settings = {"spark.sql.catalog.glue_catalog": "org.apache.iceberg.spark.SparkCatalog",
                "spark.sql.catalog.glue_catalog.catalog-impl":
                    "org.apache.iceberg.aws.glue.GlueCatalog",
                "spark.sql.catalog.glue_catalog.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                "spark.sql.catalog.glue_catalog.warehouse": "s3://sparkconf/wh"}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
        rows.write.format("iceberg").mode("append").save("glue_catalog.shop.orders")
        spark.createDataFrame([(3, "c")], "id long, name string").writeTo(
            "glue_catalog.shop.orders").append()
        assert sorted(r.id for r in spark.table("glue_catalog.shop.orders").collect()) == \
            [1, 2, 3]
        assert spark.read.format("iceberg").load("glue_catalog.shop.orders").count() == 3
    finally:
        for key in settings:
            spark.conf.unset(key)
    table = s3.client("glue").get_table(DatabaseName="shop", Name="orders")["Table"]
    assert table["Parameters"]["table_type"] == "ICEBERG"
    assert table["Parameters"]["metadata_location"].startswith("s3://sparkconf/wh/")
    assert not (tmp_path / "own.db").exists()
