"""A Glue job on Iceberg tables of the Data Catalog (``scripts/iceberg_catalog_job.py``) run
unmodified by ``lakemark run`` with a catalog folder: ``write_dynamic_frame.from_catalog`` and
``getSink(...).setCatalogInfo`` into tables registered with ``table_type=ICEBERG``,
``create_data_frame.from_catalog`` reading one incrementally through its
``transformation_ctx``, Iceberg's Spark settings accepted without the jar,
``--datalake-formats iceberg``. The Iceberg tables live in a SQLite SQL catalog
(``LAKEMARK_ICEBERG_CATALOG``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.sinks._iceberg import APP_ID_KEY
from test_glue_scripts import SCRIPTS, GlueEnv

pytestmark = pytest.mark.spark


def glue_iceberg_entry(table: Any, columns: list[tuple[str, str]]) -> dict[str, Any]:
    """A catalog entry as Glue holds an Iceberg table (what Athena's CREATE TABLE … TBLPROPERTIES
    ('table_type'='ICEBERG') and Iceberg's Glue catalog register)."""
    return {
        "Name": table.name()[-1],
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"table_type": "ICEBERG", "metadata_location": table.metadata_location},
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t, "Parameters": {"iceberg.field.current": "true"}}
                        for n, t in columns],
            "Location": table.location(),
        },
    }


class IcebergGlue:
    """A catalog folder whose tables ``lake.orders`` and ``lake.customer_totals`` are Iceberg
    tables of a SQLite SQL catalog, and the landing folder of the job."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import pyarrow as pa

        self.glue = GlueEnv(tmp)
        self.uri = f"sqlite:///{tmp / 'iceberg' / 'catalog.db'}"
        self.warehouse = tmp / "iceberg" / "warehouse"
        self.warehouse.mkdir(parents=True)
        monkeypatch.setenv(CATALOG_ENV, self.uri)
        self.landing = tmp / "landing"
        self.landing.mkdir()
        catalog = self.catalog()
        catalog.create_namespace("lake")
        for name, schema, columns in (
                ("orders", pa.schema([("order_id", pa.int64()), ("customer", pa.string()),
                                      ("amount", pa.float64())]),
                 [("order_id", "bigint"), ("customer", "string"), ("amount", "double")]),
                ("customer_totals", pa.schema([("customer", pa.string()),
                                               ("revenue", pa.float64()),
                                               ("orders", pa.int64())]),
                 [("customer", "string"), ("revenue", "double"), ("orders", "bigint")])):
            table = catalog.create_table(f"lake.{name}", schema)
            self.glue.add_table("lake", glue_iceberg_entry(table, columns))

    def catalog(self) -> SqlCatalog:
        return SqlCatalog("lakemark", uri=self.uri, warehouse=self.warehouse.as_uri())

    def land(self, name: str, *rows: tuple[int, str, float]) -> None:
        (self.landing / name).write_text("".join(
            json.dumps({"id": i, "who": c, "total": a}) + "\n" for i, c, a in rows))

    def run(self) -> str:
        out = self.glue.run(SCRIPTS / "iceberg_catalog_job.py", "--JOB_NAME", "ice-orders",
                            "--job-bookmark-option", "job-bookmark-enable",
                            "--datalake-formats", "iceberg", "--landing", str(self.landing),
                            "--db", "lake", "--lake_warehouse", "s3://lake-bucket/warehouse")
        return out.stdout + out.stderr

    def rows(self, name: str, *cols: str) -> list[tuple[Any, ...]]:
        data = self.catalog().load_table(f"lake.{name}").scan().to_arrow()
        return sorted(zip(*(data.column(c).to_pylist() for c in cols), strict=True))


def test_glue_iceberg_job_runs_unmodified(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lake = IcebergGlue(tmp_path, monkeypatch)
    lake.land("a.json", (1, "ann", 10.0), (2, "bob", 5.0), (3, "ann", 2.5))
    log = lake.run()
    assert lake.rows("orders", "order_id", "customer") == [(1, "ann"), (2, "bob"), (3, "ann")]
    assert lake.rows("customer_totals", "customer", "revenue", "orders") == [
        ("ann", 12.5, 2), ("bob", 5.0, 1)]
    orders = lake.catalog().load_table("lake.orders").current_snapshot()
    assert orders.summary.additional_properties[APP_ID_KEY] == "ice-orders/orders_target"
    assert "iceberg orders now 3 rows, this run 3" in log


@pytest.mark.long
def test_glue_iceberg_second_run_takes_only_the_new_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = IcebergGlue(tmp_path, monkeypatch)
    lake.land("a.json", (1, "ann", 10.0), (2, "bob", 5.0))
    lake.run()
    lake.land("b.json", (3, "ann", 1.0))
    log = lake.run()
    assert lake.rows("orders", "order_id") == [(1,), (2,), (3,)]
    assert lake.rows("customer_totals", "customer", "revenue", "orders") == [
        ("ann", 1.0, 1), ("ann", 10.0, 1), ("bob", 5.0, 1)]  # run 2 totalled only order 3
    assert "iceberg orders now 3 rows, this run 1" in log
    assert len(lake.catalog().load_table("lake.orders").snapshots()) == 2


def test_an_iceberg_entry_missing_from_the_iceberg_catalog_is_refused(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Data Catalog entry says ``table_type=iceberg`` but the Iceberg catalog in use has no
    such table: reads and writes fail naming both and the setting to change; a write creates
    nothing elsewhere."""
    from lakemark.errors import ConfigError
    from lakemark.glue import GlueContext

    glue = GlueEnv(tmp_path)
    uri = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    monkeypatch.setenv("LAKEMARK_CATALOG", str(glue.catalog.parent))
    glue.add_table("lake", {
        "Name": "ghost", "TableType": "EXTERNAL_TABLE", "Parameters": {"table_type": "iceberg"},
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}],
                              "Location": str(tmp_path / "ghost")}})
    context = GlueContext(spark.sparkContext)
    refused = (r"catalog table lake\.ghost is an Iceberg table, but Iceberg table lake\.ghost "
               r"does not exist in catalog 'lakemark' .*; set LAKEMARK_ICEBERG_CATALOG")
    with pytest.raises(ConfigError, match=refused):
        context.write_data_frame.from_catalog(
            frame=spark.createDataFrame([(1,)], "id long"), database="lake", table_name="ghost")
    with pytest.raises(ConfigError, match=refused):
        context.create_data_frame.from_catalog(database="lake", table_name="ghost")
    iceberg = SqlCatalog("lakemark", uri=uri, warehouse=(tmp_path / "w").as_uri())
    assert iceberg.list_namespaces() == []
