"""The Glue Data Catalog API catalog against a real moto_server process.

The catalog is set up with plain boto3 calls (as the AWS console or Terraform would), then read
through ``open_catalog("glue")``, which finds the server only through ``AWS_ENDPOINT_URL`` (set by
the ``moto_server`` fixture). The same JSON fixtures as the folder-catalog tests are used, and
both catalogs must give the same tables and the same partitions for the same predicates.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from lakemark.catalog import (
    CatalogTable,
    Column,
    FolderCatalog,
    GlueCatalog,
    Partition,
    open_catalog,
)
from lakemark.errors import ConfigError, SourceError

pytestmark = pytest.mark.services

FIXTURE = (Path(__file__).resolve().parent.parent / "fixtures" / "catalog"
           / "123456789012-us-east-1")
CATALOG = FIXTURE / "catalog"

# What the Glue API accepts when creating (the rest of a get-tables entry is read-only).
TABLE_INPUT = ("Name", "Description", "Owner", "Retention", "StorageDescriptor", "PartitionKeys",
               "TableType", "Parameters")


def _load(rel: str) -> Any:
    return json.loads((CATALOG / rel).read_text())


@pytest.fixture
def glue(s3: Any) -> Any:
    """A fresh moto_server holding the fixture catalog, created through boto3."""
    client = s3.client("glue")
    for db in _load("databases.json")["DatabaseList"]:
        client.create_database(DatabaseInput={
            k: db[k] for k in ("Name", "Description", "LocationUri", "Parameters") if k in db})
    for db in ("database", "sales"):
        for table in _load(f"tables/{db}.json")["TableList"]:
            client.create_table(DatabaseName=db,
                                TableInput={k: table[k] for k in TABLE_INPUT if k in table})
    parts = _load("partitions/sales/orders_parquet.json")["Partitions"]
    for part in parts:  # the folder's location-less entry gets the location Glue would hold
        part["StorageDescriptor"].setdefault(
            "Location", "s3://sales-lake-123456789012/curated/orders/year=2024/month=10")
    client.batch_create_partition(
        DatabaseName="sales", TableName="orders_parquet",
        PartitionInputList=[{k: p[k] for k in ("Values", "StorageDescriptor", "Parameters")}
                            for p in parts])
    for conn in _load("connections.json")["ConnectionList"]:
        client.create_connection(ConnectionInput={
            k: conn[k] for k in ("Name", "Description", "ConnectionType", "MatchCriteria",
                                 "ConnectionProperties", "PhysicalConnectionRequirements")
            if k in conn})
    return s3


@pytest.fixture
def catalog(glue: Any) -> GlueCatalog:
    cat = open_catalog("glue")
    assert isinstance(cat, GlueCatalog)
    return cat


@pytest.fixture
def folder() -> FolderCatalog:
    return FolderCatalog(str(FIXTURE))


def test_the_endpoint_comes_from_the_environment(glue: Any) -> None:
    cat = open_catalog("glue:us-east-1", env=glue.env)
    assert isinstance(cat, GlueCatalog)
    assert cat.describe() == f"AWS Glue Data Catalog (region us-east-1, endpoint {glue.endpoint})"
    assert cat.list_databases() == ["database", "empty_db", "sales"]


def test_databases_and_tables_match_the_folder_catalog(catalog: GlueCatalog,
                                                       folder: FolderCatalog) -> None:
    assert catalog.list_databases() == folder.list_databases()
    assert catalog.get_database("database").location_uri == "s3://trends-raw-123456789012/"
    assert catalog.list_tables("empty_db") == []
    for db in ("database", "sales"):
        from_api = {t.name: t for t in catalog.list_tables(db)}
        from_files = {t.name: t for t in folder.list_tables(db)}
        assert from_api == from_files
        for name, table in from_files.items():
            assert catalog.get_table(db, name) == table


def test_crawler_csv_table_through_the_api(catalog: GlueCatalog) -> None:
    table = catalog.get_table("database", "relatedqueries_csv")
    assert table.format == "csv"
    assert table.read_options() == {"header": "true", "sep": ",", "quote": '"', "escape": "\\"}
    assert table.spark_ddl() == "`query` string, `value` string, `region` string, `week` string"


def test_missing_names_are_config_errors(catalog: GlueCatalog) -> None:
    with pytest.raises(ConfigError, match=r"database\.relatedqueries not found.*"
                                          r"close matches: relatedqueries_csv"):
        catalog.get_table("database", "relatedqueries")
    with pytest.raises(ConfigError, match=r"'sale' not found.*close matches: sales"):
        catalog.get_table("sale", "orders_parquet")
    with pytest.raises(ConfigError, match=r"'nodb' not found"):
        catalog.list_tables("nodb")
    with pytest.raises(ConfigError, match=r"'nodb' not found"):
        catalog.get_database("nodb")
    with pytest.raises(ConfigError, match=r"connection 'crm' not found.*crm-postgres"):
        catalog.get_connection("crm")


@pytest.mark.parametrize("predicate", [
    None, "year = '2024'", "month > 9", "month = '01'", "year >= '2024' AND month < 3",
    "month IN (1, 12)", "NOT (year = '2023') AND month <> 2", "year LIKE '2023'", "year = '2022'",
])
def test_partitions_match_the_folder_catalog(catalog: GlueCatalog, folder: FolderCatalog,
                                             predicate: str | None) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    got = catalog.get_partitions(table, predicate)
    want = folder.get_partitions(folder.get_table("sales", "orders_parquet"), predicate)
    assert sorted(p.values for p in got) == sorted(p.values for p in want)
    assert {p.values: p.location.rstrip("/") for p in got} == {
        p.values: p.location.rstrip("/") for p in want}


def test_predicates_are_pushed_down_as_expression(catalog: GlueCatalog) -> None:
    sent: list[dict] = []
    catalog.client.meta.events.register(
        "provide-client-params.glue.GetPartitions", lambda params, **_: sent.append(dict(params)))
    table = catalog.get_table("sales", "orders_parquet")
    assert len(catalog.get_partitions(table, "month > 9 AND year LIKE '20%'")) == 3
    assert sent[-1]["Expression"] == "month > 9"
    catalog.get_partitions(table, "NOT month > 9")
    assert "Expression" not in sent[-1]
    catalog.get_partitions(table)
    assert "Expression" not in sent[-1]


class _RefusesExpressions:
    """A Glue client that answers GetPartitions with Expression as Glue does for keys it
    cannot compare (InvalidInputException); every other call goes to moto."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.refused = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get_paginator(self, operation: str) -> Any:
        paginator = self._client.get_paginator(operation)
        outer = self

        class Paginator:
            def paginate(self, **kwargs: Any) -> Any:
                if "Expression" in kwargs:
                    from botocore.exceptions import ClientError

                    outer.refused += 1
                    raise ClientError({"Error": {"Code": "InvalidInputException",
                                                 "Message": "Unsupported expression"}},
                                      "GetPartitions")
                return paginator.paginate(**kwargs)

        return Paginator()


def test_a_refused_expression_falls_back_to_local_filtering(glue: Any) -> None:
    client = _RefusesExpressions(glue.client("glue"))
    cat = GlueCatalog("us-east-1", client=client)
    table = cat.get_table("sales", "orders_parquet")
    got = cat.get_partitions(table, "year = '2024' AND month >= 2")
    assert client.refused == 1
    assert sorted(p.values for p in got) == [("2024", "02"), ("2024", "10")]


def test_connection_password_only_when_asked(catalog: GlueCatalog) -> None:
    hidden = catalog.get_connection("crm-postgres")
    assert hidden.properties["USERNAME"] == "glue_reader"
    assert "PASSWORD" not in hidden.properties
    full = catalog.get_connection("crm-postgres", with_password=True)
    assert full.properties["PASSWORD"] == "s3cr3t-Pa55"
    assert "s3cr3t" not in repr(full) and "s3cr3t" not in str([full])
    assert full.jdbc_url and full.jdbc_url.startswith("jdbc:postgresql://")


def test_create_or_update_table_round_trip(catalog: GlueCatalog) -> None:
    table = CatalogTable.create(
        "sales", "daily_totals", "s3://sales-lake-123456789012/curated/daily_totals/", "parquet",
        [("day", "date"), ("total", "decimal(14,2)"), Column("note", "string", "free text")],
        [("region", "string")],
    )
    catalog.create_or_update_table(table)
    assert catalog.get_table("sales", "daily_totals") == table
    updated = dataclasses.replace(table, location="s3://elsewhere/daily_totals/",
                                  columns=table.columns + (Column("n", "bigint"),))
    catalog.create_or_update_table(updated)
    assert catalog.get_table("sales", "daily_totals") == updated
    assert len(catalog.list_tables("sales")) == 3
    # An existing crawler table keeps its parameters when updated.
    old = catalog.get_table("database", "relatedqueries_csv")
    catalog.create_or_update_table(dataclasses.replace(old, location="s3://moved/rq/"))
    again = catalog.get_table("database", "relatedqueries_csv")
    assert again.location == "s3://moved/rq/" and again.parameters == old.parameters
    with pytest.raises(ConfigError, match="'nodb' not found"):
        catalog.create_or_update_table(dataclasses.replace(table, database="nodb"))


def test_add_partitions_round_trip(catalog: GlueCatalog) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    new = [Partition(("2025", str(m)), table.partition_location(["2025", str(m)]))
           for m in range(1, 4)]
    existing = Partition(("2023", "11"), "s3://somewhere/else")  # already there: kept
    catalog.add_partitions(table, new + [existing])
    parts = {p.values: p.location for p in catalog.get_partitions(table)}
    assert len(parts) == 8
    assert parts[("2025", "2")] == (
        "s3://sales-lake-123456789012/curated/orders/year=2025/month=2")
    assert parts[("2023", "11")].startswith("s3://sales-lake-123456789012/")
    assert [p.values for p in catalog.get_partitions(table, "year = '2025' AND month >= 2")] \
        == [("2025", "2"), ("2025", "3")]


def test_an_unreachable_endpoint_is_a_source_error(glue: Any) -> None:
    from conftest import free_port  # type: ignore[import-not-found]

    env = dict(glue.env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}",
               AWS_MAX_ATTEMPTS="1")
    cat = open_catalog("glue", env=env)
    with pytest.raises(SourceError, match=r"cannot read table sales\.orders_parquet"):
        cat.get_table("sales", "orders_parquet")
