"""``DataCatalogConnection`` (issue 32): the catalog in use served as the frame AWS's Hive
metastore migration utility reads (``type``/``database``/``table``/``items``, items in the
Glue API's fields with camel-case names); the utility's import side (a ``catalog`` sink) is
refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from lakemark.catalog import open_catalog
from lakemark.errors import ConfigError, UnsupportedError
from lakemark.glue import GlueContext
from lakemark.glue._catalog_frames import catalog_entries

CONNECTION = "com.amazonaws.services.glue.connections.DataCatalogConnection"


def _catalog(tmp: Path) -> Any:
    folder = tmp / "catalog"
    (folder / "tables").mkdir(parents=True)
    (folder / "partitions" / "sales").mkdir(parents=True)
    (folder / "databases.json").write_text(json.dumps({"DatabaseList": [
        {"Name": "sales", "Description": "orders", "LocationUri": "s3://b/sales/",
         "Parameters": {"owner": "team"}}]}))
    sd = {"Columns": [{"Name": "id", "Type": "bigint", "Comment": "key"}],
          "Location": "s3://b/sales/orders/",
          "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
          "SerdeInfo": {"SerializationLibrary":
                        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
          "SortColumns": [{"Column": "id", "SortOrder": 1}]}
    (folder / "tables" / "sales.json").write_text(json.dumps({"TableList": [
        {"Name": "orders", "DatabaseName": "sales", "TableType": "EXTERNAL_TABLE",
         "CreateTime": "2024-05-01T10:00:00.000+00:00", "Owner": "etl", "Retention": 0,
         "StorageDescriptor": sd, "PartitionKeys": [{"Name": "month", "Type": "string"}],
         "Parameters": {"classification": "parquet"}},
        {"Name": "customers", "DatabaseName": "sales",
         "StorageDescriptor": {**sd, "Location": "s3://b/sales/customers/"},
         "Parameters": {"classification": "parquet"}}]}))
    (folder / "partitions" / "sales" / "orders.json").write_text(json.dumps({"Partitions": [
        {"Values": [m], "StorageDescriptor": {**sd, "Location": f"s3://b/sales/orders/month={m}/"},
         "CreationTime": "2024-05-02T00:00:00.000+00:00"} for m in ("01", "02")]}))
    return open_catalog(str(folder))


def test_catalog_entries_are_pure_catalog_reads(tmp_path: Path) -> None:
    rows = catalog_entries(_catalog(tmp_path), "sales")
    assert [(r["type"], r["database"], r["table"]) for r in rows] == [
        ("database", None, None), ("table", "sales", None), ("table", "sales", None),
        ("partition", "sales", "orders")]
    assert rows[0]["items"] == [{"name": "sales", "description": "orders",
                                 "locationUri": "s3://b/sales/",
                                 "parameters": {"owner": "team"}}]
    orders = rows[2]["items"][0]
    assert orders["name"] == "orders" and orders["owner"] == "etl"
    assert orders["partitionKeys"] == [{"name": "month", "type": "string", "comment": None}]
    assert orders["storageDescriptor"]["sortColumns"] == [{"column": "id", "order": 1}]
    assert [p["values"] for p in rows[3]["items"]] == [["01"], ["02"]]
    with pytest.raises(ConfigError, match="nope"):
        catalog_entries(_catalog(tmp_path / "again"), "nope")


def test_the_migration_utility_reads_databases_tables_partitions(spark, tmp_path):  # type: ignore[no-untyped-def]
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path)
    frame = glue.create_dynamic_frame.from_options(
        connection_type=CONNECTION, connection_options={
            "catalog.name": "datacatalog", "catalog.database": "sales",
            "catalog.region": "us-east-1"})
    df = frame.toDF()
    assert df.columns == ["type", "database", "table", "items"]
    # what the utility does: split by type, go through JSON, explode the items
    tables = spark.read.json(spark.sparkContext.parallelize(
        df.where("type = 'table'").toJSON().collect()))
    names = tables.select(F.explode("items").alias("item")).select(
        "item.name", "item.storageDescriptor.location",
        "item.storageDescriptor.serdeInfo.serializationLibrary").collect()
    assert sorted(tuple(r) for r in names) == [
        ("customers", "s3://b/sales/customers/",
         "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
        ("orders", "s3://b/sales/orders/",
         "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")]
    table_json = json.loads(df.where("type = 'table'").toJSON().first())
    assert "values" not in table_json["items"][0]  # a partition's field: absent, not null
    parts = df.where("type = 'partition'").select(
        "database", "table", F.explode("items").alias("item")).select(
        "database", "table", "item.namespaceName", "item.tableName", "item.values",
        "item.storageDescriptor.location").collect()
    assert [tuple(r) for r in parts] == [
        ("sales", "orders", "sales", "orders", ["01"], "s3://b/sales/orders/month=01/"),
        ("sales", "orders", "sales", "orders", ["02"], "s3://b/sales/orders/month=02/")]
    db = df.where("type = 'database'").select(F.explode("items").alias("i")).first()
    assert (db["i"]["name"], db["i"]["locationUri"]) == ("sales", "s3://b/sales/")


def test_bad_options_and_the_catalog_sink(spark, tmp_path):  # type: ignore[no-untyped-def]
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path)
    with pytest.raises(ConfigError, match="needs connection option 'catalog.database'"):
        glue.create_dynamic_frame.from_options(connection_type=CONNECTION,
                                               connection_options={})
    with pytest.raises(UnsupportedError, match="option.s. not supported: path"):
        glue.create_dynamic_frame.from_options(
            connection_type=CONNECTION, connection_options={"catalog.database": "sales",
                                                            "path": "x"})
    with pytest.raises(ConfigError, match="catalog.name='other'"):
        glue.create_dynamic_frame.from_options(
            connection_type=CONNECTION, connection_options={"catalog.database": "sales",
                                                            "catalog.name": "other"})
    frame = spark.createDataFrame([("database",)], "type string")
    with pytest.raises(UnsupportedError, match="^connection_type 'catalog' .*enableUpdateCatalog"):
        glue.write_dynamic_frame.from_options(frame=frame, connection_type="catalog",
                                              connection_options={"catalog.name": "datacatalog"})
