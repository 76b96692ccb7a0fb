"""The data catalog without a service: the model parsed from the exact AWS CLI JSON shapes
(``tests/fixtures/catalog``), reader options and Spark DDL, the catalog folder (lookups, path
safety, partitions from a file and from folder discovery, atomic writes), connections, and the
partition-predicate evaluator (examples plus light property tests)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.catalog import (
    HIVE_DEFAULT_PARTITION,
    Catalog,
    CatalogTable,
    Column,
    Connection,
    FolderCatalog,
    GlueCatalog,
    Partition,
    compile_predicate,
    open_catalog,
    parse_type,
    require_catalog,
    resolve_catalog_spec,
)
from lakemark.errors import ConfigError, SinkError, UnsupportedError

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "catalog" / "123456789012-us-east-1"
ORDERS_S3 = "s3://sales-lake-123456789012/curated/orders"


@pytest.fixture
def catalog() -> FolderCatalog:
    """The fixture catalog, read in place (tests using it never write)."""
    return FolderCatalog(str(FIXTURE))


@pytest.fixture
def writable(tmp_path: Path) -> FolderCatalog:
    """A copy of the fixture catalog that tests may change."""
    target = tmp_path / "123456789012-us-east-1"
    shutil.copytree(FIXTURE, target)
    return FolderCatalog(str(target))


def table_entry(database: str, name: str) -> dict:
    data = json.loads((FIXTURE / "catalog" / "tables" / f"{database}.json").read_text())
    return next(t for t in data["TableList"] if t["Name"] == name)


# ------------------------------------------------------------------------------ opening


def test_open_catalog_takes_the_connection_folder_or_its_catalog_subfolder() -> None:
    for spec in (str(FIXTURE), str(FIXTURE / "catalog"), f"file://{FIXTURE}", str(FIXTURE) + "/"):
        cat = open_catalog(spec)
        assert isinstance(cat, FolderCatalog) and isinstance(cat, Catalog)
        assert cat.root == FIXTURE / "catalog"
        assert cat.describe() == f"catalog folder {FIXTURE / 'catalog'}"


def test_spec_comes_from_the_argument_then_the_environment() -> None:
    env = {"LAKEMARK_CATALOG": str(FIXTURE)}
    assert resolve_catalog_spec(None, {}) is None
    assert resolve_catalog_spec("  ", {}) is None
    assert resolve_catalog_spec(None, env) == str(FIXTURE)
    assert resolve_catalog_spec("glue", env) == "glue"
    assert isinstance(open_catalog(None, env), FolderCatalog)
    assert isinstance(open_catalog("glue", env), GlueCatalog)
    assert isinstance(require_catalog(None, env), FolderCatalog)


def test_no_catalog_is_an_error_only_when_one_is_needed() -> None:
    with pytest.raises(ConfigError, match=r"set --catalog DIR\|glue or LAKEMARK_CATALOG"):
        require_catalog(None, {})
    with pytest.raises(ConfigError, match=r"reads sales\.orders from a data catalog"):
        require_catalog(None, {}, needed_for="sales.orders")
    with pytest.raises(ConfigError, match="LAKEMARK_CATALOG"):
        open_catalog(None, {})


def test_glue_specs() -> None:
    cat = open_catalog("glue:eu-west-1", {})
    assert isinstance(cat, GlueCatalog)
    assert "region eu-west-1" in cat.describe()
    assert isinstance(open_catalog("GLUE", {}), GlueCatalog)
    assert isinstance(open_catalog("glue:", {}), GlueCatalog)
    with pytest.raises(ConfigError, match="not an AWS region"):
        open_catalog("glue:nowhere", {})


def test_bad_catalog_folders(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        open_catalog(str(tmp_path / "missing"), {})
    with pytest.raises(ConfigError, match="is not a catalog folder"):
        open_catalog(str(tmp_path), {})
    with pytest.raises(UnsupportedError, match="local file system"):
        open_catalog("s3://bucket/catalog", {})


def test_catalog_imports_no_spark() -> None:
    code = ("import sys, lakemark.catalog; "
            "bad = [m for m in sys.modules if m.startswith(('pyspark', 'sqlglot'))]; "
            "assert not bad, bad")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# ------------------------------------------------------------------------ databases, tables


def test_databases_and_table_listing(catalog: FolderCatalog) -> None:
    assert catalog.list_databases() == ["database", "empty_db", "sales"]
    db = catalog.get_database("database")
    assert db.location_uri == "s3://trends-raw-123456789012/"
    assert catalog.get_database("SALES").name == "sales"
    assert catalog.list_tables("empty_db") == []
    names = [t.name for t in catalog.list_tables("database")]
    assert names == ["relatedqueries_csv", "interest_tsv", "searches_json", "access_logs"]
    with pytest.raises(ConfigError, match=r"'salse' not found.*close matches: sales"):
        catalog.list_tables("salse")


def test_crawler_csv_table_with_opencsv_serde(catalog: FolderCatalog) -> None:
    table = catalog.get_table("database", "relatedqueries_csv")
    assert table.qualified_name == "database.relatedqueries_csv"
    assert (table.format, table.classification) == ("csv", "csv")
    assert table.location == "s3://trends-raw-123456789012/relatedqueries_csv/"
    assert table.serde == "org.apache.hadoop.hive.serde2.OpenCSVSerde"
    assert table.read_options() == {"header": "true", "sep": ",", "quote": '"', "escape": "\\"}
    assert table.spark_ddl() == "`query` string, `value` string, `region` string, `week` string"
    assert [c.name for c in table.all_columns] == ["query", "value", "region", "week"]
    assert table.partition_keys == () and not table.is_jdbc
    assert table.parameters["UPDATED_BY_CRAWLER"] == "trends-crawler"
    assert table.raw["CreatedBy"].endswith("AWS-Crawler")
    # Glue stores names in lowercase; scripts are not always written that way.
    assert catalog.get_table("Database", "RelatedQueries_CSV") == table


def test_lazy_simple_serde_table_types_and_tab_separator(catalog: FolderCatalog) -> None:
    table = catalog.get_table("database", "interest_tsv")
    assert table.read_options() == {"header": "true", "sep": "\t"}
    assert table.spark_ddl() == (
        "`week` date, `interest` bigint, `share` decimal(5,2), `label` string"
    )
    assert table.columns[3] == Column("label", "varchar(20)", "display label")


def test_json_table_nested_types(catalog: FolderCatalog) -> None:
    table = catalog.get_table("database", "searches_json")
    assert table.format == "json" and table.read_options() == {}
    assert table.spark_ddl() == (
        "`id` bigint, `term` string, "
        "`user` struct<`name`:string,`geo`:struct<`lat`:double,`lon`:double>>, "
        "`tags` array<string>, `scores` map<string,int>, `@timestamp` string"
    )


def test_parquet_table_partition_keys(catalog: FolderCatalog) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    assert table.format == "parquet" and table.read_options() == {}
    assert [(k.name, k.type) for k in table.partition_keys] == [("year", "string"),
                                                                ("month", "int")]
    assert table.spark_ddl(include_partition_keys=False) == (
        "`order_id` bigint, `customer` string, `amount` decimal(12,2), `ordered_at` timestamp, "
        "`lines` array<struct<`sku`:string,`qty`:int,`price`:decimal(10,2)>>"
    )
    assert table.spark_ddl().endswith(", `year` string, `month` int")
    assert table.partition_location(["2024", "05"]) == f"{ORDERS_S3}/year=2024/month=05"


def test_jdbc_table(catalog: FolderCatalog) -> None:
    table = catalog.get_table("sales", "crm_public_customers")
    assert table.is_jdbc and table.format == "postgresql" and table.read_options() == {}
    assert table.location == "crm.public.customers"
    assert table.parameters["connectionName"] == "crm-postgres"


def test_unreadable_format_names_the_table_and_what_was_found(catalog: FolderCatalog) -> None:
    table = catalog.get_table("database", "access_logs")  # reading the entry is fine
    assert table.classification == "combined_apache"
    with pytest.raises(ConfigError, match=r"database\.access_logs.*'combined_apache'.*GrokSerDe"):
        _ = table.format
    with pytest.raises(ConfigError, match="access_logs"):
        table.read_options()


def test_missing_tables_and_databases_name_the_file_and_close_matches(
        catalog: FolderCatalog) -> None:
    tables = FIXTURE / "catalog" / "tables"
    with pytest.raises(ConfigError) as info:
        catalog.get_table("database", "relatedqueries")
    message = str(info.value)
    assert "database.relatedqueries not found" in message
    assert str(tables / "database.json") in message
    assert "close matches: relatedqueries_csv" in message
    with pytest.raises(ConfigError) as info:
        catalog.get_table("sale", "orders_parquet")
    assert str(tables / "sale.json") in str(info.value)
    assert "close database names: sales" in str(info.value)


@pytest.mark.parametrize("database, table", [
    ("../database", "x"), ("database/..", "x"), ("a/b", "x"), (".hidden", "x"),
    ("..", "x"), ("database", "../relatedqueries_csv"), ("database", "a\\b"),
])
def test_names_that_could_leave_the_folder_are_refused(writable: FolderCatalog, database: str,
                                                       table: str) -> None:
    with pytest.raises(ConfigError, match="unsafe catalog"):
        writable.get_table(database, table)
    bad = CatalogTable.create(database, table, "/tmp/x", "parquet", [("a", "int")])
    with pytest.raises(ConfigError, match="unsafe catalog"):
        writable.create_or_update_table(bad)
    with pytest.raises(ConfigError, match="unsafe catalog"):
        writable.get_partitions(dataclasses.replace(bad, partition_keys=(Column("p", "int"),)))


def test_a_symlink_out_of_the_folder_is_refused(writable: FolderCatalog, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"TableList": []}')
    (writable.root / "tables" / "evil.json").symlink_to(outside)
    with pytest.raises(ConfigError, match="leaves the catalog folder"):
        writable.get_table("evil", "x")


def test_invalid_json_names_the_file(writable: FolderCatalog) -> None:
    path = writable.root / "tables" / "sales.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"sales\.json is not valid JSON"):
        writable.get_table("sales", "orders_parquet")


# ---------------------------------------------------------------------- partitions (file)


def test_partitions_from_the_partitions_file(catalog: FolderCatalog) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    parts = catalog.get_partitions(table)
    assert [p.values for p in parts] == [("2023", "11"), ("2023", "12"), ("2024", "01"),
                                         ("2024", "02"), ("2024", "10")]
    assert parts[0].location == f"{ORDERS_S3}/year=2023/month=11/"
    # An entry without a location gets the Hive path under the table.
    assert parts[-1].location == f"{ORDERS_S3}/year=2024/month=10"
    assert parts[0].spec(table) == {"year": "2023", "month": "11"}


@pytest.mark.parametrize("predicate, expected", [
    ("year = '2024'", [("2024", "01"), ("2024", "02"), ("2024", "10")]),
    ("year >= '2024' AND month < 3", [("2024", "01"), ("2024", "02")]),
    ("month > 9", [("2023", "11"), ("2023", "12"), ("2024", "10")]),  # int key: 10 > 9
    ("month = '01'", [("2024", "01")]),  # int key: the literal is cast
    ("month IN (1, 12)", [("2023", "12"), ("2024", "01")]),
    ("month BETWEEN 2 AND 11", [("2023", "11"), ("2024", "02"), ("2024", "10")]),
    ("NOT (year = '2023') AND month <> 2", [("2024", "01"), ("2024", "10")]),
    ("year LIKE '202_' AND month != 1 OR month = 1", None),  # everything
    ("year = '2022'", []),
])
def test_partition_predicates_on_the_file(catalog: FolderCatalog, predicate: str,
                                          expected: list | None) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    got = [p.values for p in catalog.get_partitions(table, predicate)]
    assert got == (expected if expected is not None
                   else [p.values for p in catalog.get_partitions(table)])


def test_partition_predicate_errors(catalog: FolderCatalog) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    with pytest.raises(ConfigError, match=r"names column 'customer'.*partition keys: year, month"):
        catalog.get_partitions(table, "customer = 'x'")
    with pytest.raises(UnsupportedError, match="function"):
        catalog.get_partitions(table, "to_date(year) > '2024-01-01'")
    assert catalog.get_partitions(catalog.get_table("database", "relatedqueries_csv"), "x = 1") \
        == []  # an unpartitioned table has no partitions to filter


# ------------------------------------------------------------------ partitions (discovery)


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")


@pytest.fixture
def local_orders(writable: FolderCatalog, tmp_path: Path) -> CatalogTable:
    """orders_parquet copied to a local location that has no partitions file."""
    data = tmp_path / "lake" / "orders"
    for rel in ("year=2023/month=12/part-0.parquet", "year=2024/month=1/part-0.parquet",
                "year=2024/month=1/part-1.parquet", "year=2024/month=2/part-0.parquet",
                "year=2024/month=2/_SUCCESS", "YEAR=2024/Month=3/part-0.parquet",
                f"year={HIVE_DEFAULT_PARTITION}/month=4/part-0.parquet",
                "year=20%2F25/month=5/part-0.parquet",
                "year=2024/stray.parquet", "other/part-0.parquet", "part-9.parquet",
                "month=1/year=2024/part-0.parquet", "_temporary/year=2024/month=7/x.parquet"):
        _touch(data / rel)
    orders = writable.get_table("sales", "orders_parquet")
    return dataclasses.replace(orders, name="orders_local", location=str(data))


def test_partitions_discovered_from_hive_folders(writable: FolderCatalog,
                                                 local_orders: CatalogTable) -> None:
    parts = writable.get_partitions(local_orders)
    root = local_orders.location
    assert [(p.values, p.location) for p in parts] == [
        (("20/25", "5"), f"{root}/year=20%2F25/month=5"),
        (("2023", "12"), f"{root}/year=2023/month=12"),
        (("2024", "1"), f"{root}/year=2024/month=1"),
        (("2024", "2"), f"{root}/year=2024/month=2"),
        (("2024", "3"), f"{root}/YEAR=2024/Month=3"),
        ((HIVE_DEFAULT_PARTITION, "4"), f"{root}/year={HIVE_DEFAULT_PARTITION}/month=4"),
    ]
    assert [p.values for p in writable.get_partitions(local_orders, "month <= 2")] == [
        ("2024", "1"), ("2024", "2")]
    # The null partition is never equal or unequal to anything, but IS NULL.
    assert [p.values for p in writable.get_partitions(local_orders, "year <> '2024'")] == [
        ("20/25", "5"), ("2023", "12")]
    assert [p.values for p in writable.get_partitions(local_orders, "year IS NULL")] == [
        (HIVE_DEFAULT_PARTITION, "4")]


def test_discovery_of_a_location_that_does_not_exist_yet(writable: FolderCatalog,
                                                         local_orders: CatalogTable) -> None:
    missing = dataclasses.replace(local_orders, location=local_orders.location + "-missing")
    assert writable.get_partitions(missing) == []


# ------------------------------------------------------------------------------- writes


def test_create_table_round_trip(writable: FolderCatalog, tmp_path: Path) -> None:
    table = CatalogTable.create(
        "sales", "daily_totals", str(tmp_path / "totals"), "csv",
        [("day", "date"), ("total", "decimal(14,2)"), Column("note", "string", "free text")],
        [("region", "string")], separator="|", header=True,
    )
    writable.create_or_update_table(table)
    back = writable.get_table("sales", "daily_totals")
    assert back == table
    assert back.read_options() == {"header": "true", "sep": "|"}
    assert back.raw["CreateTime"] == back.raw["UpdateTime"]
    assert writable.list_tables("sales")[0].name == "orders_parquet"  # others kept, in order
    saved = json.loads((writable.root / "tables" / "sales.json").read_text())
    kept = next(t for t in saved["TableList"] if t["Name"] == "orders_parquet")
    assert kept == table_entry("sales", "orders_parquet")  # untouched, byte for byte in JSON
    assert not [p for p in (writable.root / "tables").iterdir() if p.name.startswith(".")]


def test_update_table_keeps_unmodelled_fields(writable: FolderCatalog) -> None:
    old = writable.get_table("database", "relatedqueries_csv")
    new = dataclasses.replace(old, location="s3://elsewhere/relatedqueries/",
                              columns=old.columns + (Column("extra", "int"),))
    writable.create_or_update_table(new)
    back = writable.get_table("database", "relatedqueries_csv")
    assert back == new
    assert back.raw["CreatedBy"] == old.raw["CreatedBy"]
    assert back.raw["CreateTime"] == old.raw["CreateTime"]
    assert back.raw["UpdateTime"] != old.raw["UpdateTime"]
    assert len(writable.list_tables("database")) == 4


def test_create_table_in_a_database_without_a_tables_file(writable: FolderCatalog) -> None:
    table = CatalogTable.create("empty_db", "t", "/data/t", "json", [("a", "string")])
    writable.create_or_update_table(table)
    assert (writable.root / "tables" / "empty_db.json").is_file()
    assert writable.get_table("empty_db", "t") == table
    with pytest.raises(ConfigError, match="'nodb' not found"):
        writable.create_or_update_table(dataclasses.replace(table, database="nodb"))
    assert not (writable.root / "tables" / "nodb.json").exists()


def test_a_failed_write_leaves_the_file_as_it_was(writable: FolderCatalog,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = writable.root / "tables" / "sales.json"
    before = path.read_bytes()

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    table = CatalogTable.create("sales", "t", "/data/t", "parquet", [("a", "int")])
    with pytest.raises(SinkError, match="No space left"):
        writable.create_or_update_table(table)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["database.json", "sales.json"]


def test_add_partitions_to_the_partitions_file(writable: FolderCatalog) -> None:
    table = writable.get_table("sales", "orders_parquet")
    new = Partition(("2024", "11"), f"{ORDERS_S3}/year=2024/month=11/")
    again = Partition(("2023", "11"), "s3://somewhere/else")  # already there: kept as is
    writable.add_partitions(table, [new, again])
    parts = writable.get_partitions(table)
    assert len(parts) == 6 and parts[-1] == new
    assert parts[0].location == f"{ORDERS_S3}/year=2023/month=11/"
    assert parts[-1].raw["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"].endswith(
        "ParquetHiveSerDe")
    with pytest.raises(ConfigError, match="do not match the partition keys"):
        writable.add_partitions(table, [Partition(("2024",), "x")])


def test_add_partitions_to_a_discovered_table_keeps_the_discovered_ones(
        writable: FolderCatalog, local_orders: CatalogTable) -> None:
    discovered = writable.get_partitions(local_orders)
    extra = Partition(("2025", "1"), "s3://other-bucket/orders/2025/01")
    writable.add_partitions(local_orders, [extra])
    assert (writable.root / "partitions" / "sales" / "orders_local.json").is_file()
    assert writable.get_partitions(local_orders) == discovered + [extra]
    assert writable.get_partitions(local_orders, "year = '2025'") == [extra]


# --------------------------------------------------------------------------- connections


def test_connections_hide_passwords_unless_asked(catalog: FolderCatalog) -> None:
    conn = catalog.get_connection("crm-postgres")
    assert conn.connection_type == "JDBC"
    assert conn.jdbc_url == ("jdbc:postgresql://crm-replica.abc123xyz.eu-west-1.rds.amazonaws.com"
                             ":5432/crm")
    assert conn.properties["USERNAME"] == "glue_reader" and "PASSWORD" not in conn.properties
    full = catalog.get_connection("crm-postgres", with_password=True)
    assert full.properties["PASSWORD"] == "s3cr3t-Pa55"
    for shown in (repr(full), str(full), f"{full}", repr([full])):
        assert "s3cr3t" not in shown and "'PASSWORD': '***'" in shown
    legacy = catalog.get_connection("legacy-mysql", with_password=True)
    assert "hunter2" not in repr(legacy) and "password=***" in repr(legacy)
    assert "hunter2" in legacy.properties["JDBC_CONNECTION_URL"]  # the value itself is intact
    with pytest.raises(ConfigError, match=r"'crm-postgre' not found.*close matches: crm-postgres"):
        catalog.get_connection("crm-postgre")


def test_connection_repr_masks_userinfo_in_urls() -> None:
    conn = Connection("c", "JDBC", {"JDBC_CONNECTION_URL": "jdbc:mysql://etl:pw9@h:3306/db",
                                    "KAFKA_SASL_SCRAM_PASSWORD": "k"})
    assert "pw9" not in repr(conn) and "etl:***@h" in repr(conn)
    assert "'KAFKA_SASL_SCRAM_PASSWORD': '***'" in repr(conn)


# ---------------------------------------------------------------- formats and reader options


def _table(serde: str | None = None, serde_params: dict | None = None,
           params: dict | None = None, sd_params: dict | None = None,
           input_format: str | None = None, table_type: str = "EXTERNAL_TABLE") -> CatalogTable:
    sd: dict = {"Columns": [{"Name": "a", "Type": "string"}], "Location": "s3://b/t/",
                "SerdeInfo": {"Parameters": serde_params or {}}, "Parameters": sd_params or {}}
    if serde:
        sd["SerdeInfo"]["SerializationLibrary"] = serde
    if input_format:
        sd["InputFormat"] = input_format
    return CatalogTable.from_glue({"Name": "t", "DatabaseName": "db", "StorageDescriptor": sd,
                                   "Parameters": params or {}, "TableType": table_type})


LAZY = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


@pytest.mark.parametrize("serde_params, expected", [
    ({"field.delim": ","}, {"sep": ","}),
    ({"field.delim": "|", "serialization.format": "|"}, {"sep": "|"}),
    ({"serialization.format": "1"}, {"sep": "\x01"}),  # Hive reads digits as a byte value
    ({"field.delim": "44"}, {"sep": ","}),
    ({"field.delim": "\\t"}, {"sep": "\t"}),
    ({"field.delim": "\\u0001"}, {"sep": "\x01"}),
    ({}, {"sep": "\x01"}),  # Hive's default text table
    ({"field.delim": ",", "escape.delim": "\\", "serialization.null.format": "",
      "line.delim": "\n", "serialization.encoding": "ISO-8859-1"},
     {"sep": ",", "escape": "\\", "nullValue": "", "encoding": "ISO-8859-1"}),
])
def test_lazy_simple_serde_options(serde_params: dict, expected: dict) -> None:
    table = _table(LAZY, serde_params, {"classification": "csv"})
    assert table.read_options() == {"header": "false", **expected}


def test_opencsv_defaults_and_header_rules() -> None:
    open_csv = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
    assert _table(open_csv).read_options() == {"header": "false", "sep": ",", "quote": '"',
                                                "escape": "\\"}
    assert _table(open_csv, {"separatorChar": ";", "quoteChar": "'"},
                  sd_params={"skip.header.line.count": "1"}).read_options()["header"] == "true"
    with pytest.raises(UnsupportedError, match="skip.header.line.count=2"):
        _table(open_csv, params={"skip.header.line.count": "2"}).read_options()
    with pytest.raises(ConfigError, match="is not a number"):
        _table(open_csv, params={"skip.header.line.count": "one"}).read_options()
    # The crawler's "delimiter" parameter is the fallback when the SerDe names none.
    assert _table(LAZY, params={"classification": "csv", "delimiter": ";"}).read_options()[
        "sep"] == ";"


def test_xml_json_and_text_options() -> None:
    xml_serde = "com.ibm.spss.hive.serde2.xml.XmlSerDe"
    assert _table(params={"classification": "xml", "rowTag": "record"}).read_options() == {
        "rowTag": "record"}
    assert _table(xml_serde, sd_params={"xmlinput.start": "<item ",
                                        "xmlinput.end": "</item>"}).read_options() == {
        "rowTag": "item"}
    with pytest.raises(ConfigError, match="names no row element"):
        _table(params={"classification": "xml"}).read_options()
    assert _table(params={"classification": "json", "jsonPath": "$[*]"}).read_options() == {
        "multiLine": "true"}
    assert _table(params={"classification": "text"}).read_options() == {}


@pytest.mark.parametrize("kwargs, classification", [
    ({"params": {"classification": "CSV"}}, "csv"),
    ({"params": {"classification": "glueparquet"}}, "parquet"),
    ({"params": {"classification": "UNKNOWN"}, "serde": LAZY}, "csv"),
    ({"sd_params": {"classification": "avro"}}, "avro"),
    ({"serde": "org.openx.data.jsonserde.JsonSerDe"}, "json"),
    ({"serde": "org.apache.hive.hcatalog.data.JsonSerDe"}, "json"),
    ({"serde": "org.apache.hadoop.hive.ql.io.orc.OrcSerde"}, "orc"),
    ({"input_format": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"},
     "parquet"),
    ({"input_format": "org.apache.hadoop.mapred.TextInputFormat"}, "csv"),
    ({"params": {"table_type": "ICEBERG"}}, "iceberg"),
    ({"params": {"spark.sql.sources.provider": "delta"}}, "delta"),
    ({"table_type": "VIRTUAL_VIEW"}, "view"),
    ({}, ""),
])
def test_format_detection(kwargs: dict, classification: str) -> None:
    table = _table(**kwargs)
    assert table.classification == classification
    if classification in ("iceberg", "delta", "view", ""):
        with pytest.raises(ConfigError, match=r"catalog table db\.t: cannot read"):
            _ = table.format


def test_table_input_has_only_writable_fields(catalog: FolderCatalog) -> None:
    table = catalog.get_table("sales", "orders_parquet")
    table_input = table.table_input()
    assert set(table_input) == {"Name", "Owner", "Retention", "StorageDescriptor",
                                "PartitionKeys", "TableType", "Parameters"}
    assert table_input["StorageDescriptor"]["Location"] == table.location
    assert CatalogTable.from_glue({**table_input, "DatabaseName": "sales"}) == table


def test_create_stores_canonical_hive_types() -> None:
    table = CatalogTable.create("db", "t", "/x", "parquet", [
        ("a", "integer"), ("b", "timestamp_ntz"), ("c", "struct<x:long,y:array<decimal(5,1)>>"),
        ("d", "VARCHAR(9)")], [("p", "string")])
    assert [c.type for c in table.all_columns] == [
        "int", "timestamp", "struct<x:bigint,y:array<decimal(5,1)>>", "varchar(9)", "string"]
    assert table.read_options() == {} and table.parameters == {"classification": "parquet"}


def test_create_refuses_formats_it_cannot_store() -> None:
    with pytest.raises(UnsupportedError, match="cannot create a catalog table of format 'xml'"):
        CatalogTable.create("db", "t", "/x", "xml", [("a", "int")])
    with pytest.raises(ConfigError, match=r"db\.t\.a: unknown type 'money'"):
        CatalogTable.create("db", "t", "/x", "parquet", [("a", "money")])


# ------------------------------------------------------------------------------ Hive types


@pytest.mark.parametrize("hive, spark", [
    ("int", "int"), ("INTEGER", "int"), ("bigint", "bigint"), ("tinyint", "tinyint"),
    ("smallint", "smallint"), ("double", "double"), ("double precision", "double"),
    ("float", "float"), ("boolean", "boolean"), ("binary", "binary"), ("date", "date"),
    ("timestamp", "timestamp"), ("decimal", "decimal(10,0)"), ("decimal(10,2)", "decimal(10,2)"),
    ("decimal( 38 , 0 )", "decimal(38,0)"), ("varchar(20)", "string"), ("char(3)", "string"),
    ("array<string>", "array<string>"), ("map<string,array<int>>", "map<string,array<int>>"),
    ("struct<a:int,b:string>", "struct<`a`:int,`b`:string>"),
    ("struct<`a b`:int,`x``y`:string>", "struct<`a b`:int,`x``y`:string>"),
    ("struct<first name:string>", "struct<`first name`:string>"),
    ("array<struct<k:varchar(5),v:decimal(4,1)>>", "array<struct<`k`:string,`v`:decimal(4,1)>>"),
    ("struct<>", "struct<>"),
])
def test_hive_types_to_spark(hive: str, spark: str) -> None:
    assert parse_type(hive).spark() == spark


@pytest.mark.parametrize("hive", [
    "uniontype<int,string>", "decimal(40,2)", "decimal(5,6)", "array<int", "map<string>",
    "struct<a int>", "money", "int(3)", "", "array<int>>",
])
def test_bad_hive_types(hive: str) -> None:
    table = CatalogTable("db", "t", "/x", "parquet", columns=(Column("c", hive),))
    with pytest.raises(ConfigError, match=r"catalog column db\.t\.c"):
        table.spark_ddl()


@pytest.mark.spark
def test_spark_parses_every_ddl(spark, catalog: FolderCatalog) -> None:  # type: ignore[no-untyped-def]
    for database in catalog.list_databases():
        for table in catalog.list_tables(database):
            schema = spark.createDataFrame([], table.spark_ddl()).schema
            assert schema.fieldNames() == [c.name for c in table.all_columns]
    nested = catalog.get_table("database", "searches_json")
    user = spark.createDataFrame([], nested.spark_ddl()).schema["user"].dataType
    assert user.simpleString() == "struct<name:string,geo:struct<lat:double,lon:double>>"


# ---------------------------------------------------------------------------- predicates


KEYS = (Column("year", "string"), Column("month", "int"), Column("day", "date"),
        Column("flag", "boolean"), Column("ts", "timestamp"))


def matches(predicate: str, *values: str | None) -> bool:
    return compile_predicate(predicate, KEYS)(values)


@pytest.mark.parametrize("predicate, values, expected", [
    ("year >= '2024'", ("2024", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), True),
    ("year >= '2024'", ("999", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), True),  # text
    ("year >= 2024", ("999", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), False),  # cast
    ("year > 2023", ("abc", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), False),
    ("NOT year > 2023", ("abc", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), False),
    ("month = 1.0", ("x", "01", "2024-01-01", "true", "2024-01-01"), True),
    ("month >= '1'", ("x", "10", "2024-01-01", "true", "2024-01-01"), True),
    ("day > '2023-12-31'", ("x", "1", "2024-01-01", "true", "2024-01-01"), True),
    ("day = DATE '2024-01-01'", ("x", "1", "2024-1-1", "true", "2024-01-01"), True),
    ("ts < '2024-01-01 12:00'", ("x", "1", "2024-01-01", "true", "2024-01-01 11:59:59"), True),
    ("ts >= day", ("x", "1", "2024-01-01", "true", "2024-01-01 00:00:00"), True),
    ("flag", ("x", "1", "2024-01-01", "true", "2024-01-01"), True),
    ("flag = false", ("x", "1", "2024-01-01", "0", "2024-01-01"), True),
    ("NOT flag", ("x", "1", "2024-01-01", "yes", "2024-01-01"), False),
    ("year LIKE '20\\_4'", ("2024", "1", "2024-01-01", "1", "2024-01-01"), False),
    ("year LIKE '20!_4' ESCAPE '!'", ("20_4", "1", "2024-01-01", "1", "2024-01-01"), True),
    ("year NOT LIKE '%4'", ("2024", "1", "2024-01-01", "1", "2024-01-01"), False),
    ("year ILIKE 'AB%'", ("abc", "1", "2024-01-01", "1", "2024-01-01"), True),
    ("month LIKE '1%'", ("x", "012", "2024-01-01", "1", "2024-01-01"), True),  # cast: '12'
    ("year IN ('a', NULL)", ("b", "1", "2024-01-01", "1", "2024-01-01"), False),
    ("NOT year IN ('a', NULL)", ("b", "1", "2024-01-01", "1", "2024-01-01"), False),
    ("year NOT BETWEEN 'a' AND 'c'", ("d", "1", "2024-01-01", "1", "2024-01-01"), True),
    ("concat(year, '-', month) = '2024-3'", ("2024", "03", "2024-01-01", "1", "2024-01-01"),
     True),
    ("CAST(year AS int) = 7", ("007", "1", "2024-01-01", "1", "2024-01-01"), True),
    ("year <=> NULL", (None, "1", "2024-01-01", "1", "2024-01-01"), True),
    ("year IS NOT NULL", (HIVE_DEFAULT_PARTITION, "1", "2024-01-01", "1", "2024-01-01"), False),
    ("year = 'it''s'", ("its", "1", "2024-01-01", "1", "2024-01-01"), True),  # Spark: 'it' 's'
    ("`Year` = \"x\"", ("x", "1", "2024-01-01", "1", "2024-01-01"), True),
    ("month = -1 OR month <> month", ("x", "-1", "2024-01-01", "1", "2024-01-01"), True),
])
def test_predicate_examples(predicate: str, values: tuple, expected: bool) -> None:
    assert matches(predicate, *values) is expected


@pytest.mark.parametrize("predicate, error, text", [
    ("region = 'eu'", ConfigError, "names column 'region'"),
    ("year = ", ConfigError, "cannot parse"),
    ("", ConfigError, "empty"),
    ("day > 5", ConfigError, "cannot compare a date with a number"),
    ("upper(year) = 'X'", UnsupportedError, "function"),
    ("month + 1 = 2", UnsupportedError, "operator"),
    ("year IN (SELECT 1)", UnsupportedError, "sub-query"),
    ("t.year = '1'", UnsupportedError, "qualified column"),
    ("year", UnsupportedError, "is not a condition"),
    ("year = '1'; month = 2", UnsupportedError, "expected one condition"),
    ("year LIKE month", UnsupportedError, "non-literal LIKE pattern"),
])
def test_predicate_errors(predicate: str, error: type, text: str) -> None:
    with pytest.raises(error, match=text):
        compile_predicate(predicate, KEYS, "db.t")


@pytest.mark.parametrize("predicate, expression", [
    ("year = '2024'", "year = '2024'"),
    ("month > 9 AND year >= '2023'", "(month > 9) AND (year >= '2023')"),
    ("9 < month", "month > 9"),
    ("year IN ('2023', '2024') OR month = 1", "(year IN ('2023', '2024')) OR (month = 1)"),
    ("month BETWEEN 1 AND 3", "(month >= 1) AND (month <= 3)"),
    # Only what Glue compares exactly as lakemark does is sent; the rest is filtered here.
    ("year = '2024' AND month = '01'", "year = '2024'"),
    ("year > 2023", None),
    ("year = '2024' OR year LIKE '1%'", None),
    ("NOT year = '2024'", None),
    ("year = 'it\\'s'", None),
    ("day = '2024-01-01'", None),
    ("month = 1.5", None),
])
def test_glue_expression_is_the_exactly_pushable_part(predicate: str,
                                                      expression: str | None) -> None:
    assert compile_predicate(predicate, KEYS).glue_expression == expression


# Property tests: random predicates over a string key and an int key, with a Python oracle.

YEARS = ["2022", "2023", "2024", "2025", "999", "10"]
MONTHS = ["1", "01", "2", "9", "10", "12"]


def _atoms() -> st.SearchStrategy:
    ops = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    year_cmp = st.builds(
        lambda op, lit: (f"year {op} '{lit}'", lambda y, m: ops[op](y, lit)),
        st.sampled_from(sorted(ops)), st.sampled_from(YEARS))
    month_cmp = st.builds(
        lambda op, lit: (f"month {op} {lit}", lambda y, m: ops[op](int(m), lit)),
        st.sampled_from(sorted(ops)), st.integers(0, 13))
    month_in = st.builds(
        lambda lits: (f"month IN ({', '.join(map(str, lits))})", lambda y, m: int(m) in lits),
        st.lists(st.integers(0, 13), min_size=1, max_size=4))
    year_between = st.builds(
        lambda lo, hi: (f"year BETWEEN '{lo}' AND '{hi}'", lambda y, m: lo <= y <= hi),
        st.sampled_from(YEARS), st.sampled_from(YEARS))
    year_like = st.builds(
        lambda prefix: (f"year LIKE '{prefix}%'", lambda y, m: y.startswith(prefix)),
        st.sampled_from(["20", "202", "1", "9", ""]))
    return st.one_of(year_cmp, month_cmp, month_in, year_between, year_like)


def _combine(children: st.SearchStrategy) -> st.SearchStrategy:
    def both(a: tuple, b: tuple, op: str) -> tuple:
        if op == "AND":
            return f"({a[0]}) AND ({b[0]})", lambda y, m: a[1](y, m) and b[1](y, m)
        return f"({a[0]}) OR ({b[0]})", lambda y, m: a[1](y, m) or b[1](y, m)

    return st.one_of(
        st.builds(both, children, children, st.sampled_from(["AND", "OR"])),
        st.builds(lambda a: (f"NOT ({a[0]})", lambda y, m: not a[1](y, m)), children),
    )


PREDICATES = st.recursive(_atoms(), _combine, max_leaves=6)
PROPERTY_KEYS = (Column("year", "string"), Column("month", "int"))


@settings(max_examples=150, deadline=None)
@given(PREDICATES, st.sampled_from(YEARS), st.sampled_from(MONTHS))
def test_predicates_agree_with_a_python_oracle(case: tuple, year: str, month: str) -> None:
    text, oracle = case
    assert compile_predicate(text, PROPERTY_KEYS)((year, month)) is oracle(year, month)


@settings(max_examples=150, deadline=None)
@given(PREDICATES, st.sampled_from(YEARS), st.sampled_from(MONTHS))
def test_not_is_the_complement_without_nulls(case: tuple, year: str, month: str) -> None:
    text, _ = case
    p = compile_predicate(text, PROPERTY_KEYS)
    q = compile_predicate(f"NOT ({text})", PROPERTY_KEYS)
    assert p((year, month)) != q((year, month))


@settings(max_examples=100, deadline=None)
@given(PREDICATES, st.sampled_from(YEARS), st.sampled_from(MONTHS + [HIVE_DEFAULT_PARTITION]))
def test_pushed_expression_never_drops_a_selected_partition(case: tuple, year: str,
                                                            month: str) -> None:
    """Whatever Glue is sent must keep every partition the full predicate keeps."""
    text, _ = case
    p = compile_predicate(text, PROPERTY_KEYS)
    if p.glue_expression is None or not p((year, month)):
        return
    assert compile_predicate(p.glue_expression, PROPERTY_KEYS)((year, month))
