"""A Glue 4/5 Delta Lake job (``scripts/delta_lake_job.py``) run unmodified by ``lakemark run``
(issue 20): ``format="delta"`` sources and sinks of the Glue facade, ``from_catalog`` on Delta
tables as Glue's crawler and Spark's ``saveAsTable`` register them, ``--datalake-formats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from test_glue_scripts import SCRIPTS, GlueEnv

pytestmark = pytest.mark.spark


def crawled_delta_table(name: str, location: Path) -> dict[str, Any]:
    """A native Delta table as Glue's Delta crawler records it (no symlink manifest)."""
    return {
        "Name": name,
        "StorageDescriptor": {
            "Columns": [{"Name": "order_id", "Type": "bigint"},
                        {"Name": "customer", "Type": "string"},
                        {"Name": "amount", "Type": "double"}],
            "Location": str(location) + "/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {
                "SerializationLibrary":
                    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "Parameters": {"serialization.format": "1"},
            },
        },
        "PartitionKeys": [{"Name": "order_date", "Type": "string"}],
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "delta", "table_type": "delta", "EXTERNAL": "TRUE",
                       "spark.sql.sources.provider": "delta"},
    }


def orders(*rows: tuple[int, str, float, str]) -> str:
    return "".join(json.dumps({"order_id": i, "customer": c, "amount": a, "order_date": d}) + "\n"
                   for i, c, a, d in rows)


def rows(path: Path, *cols: str) -> list[tuple[Any, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return sorted(zip(*(table.column(c).to_pylist() for c in cols), strict=True))


def _run_job(glue: GlueEnv, rounds: int) -> tuple[Path, str]:
    raw = glue.tmp / "raw"
    raw.mkdir()
    (raw / "a.json").write_text(orders((1, " Ann ", 10.0, "2024-05-01"),
                                       (2, "bob", 5.0, "2024-05-01"),
                                       (3, "bob", -1.0, "2024-05-02")))
    lake = glue.tmp / "lake"
    glue.add_table("lake", crawled_delta_table("silver_orders", lake / "silver"))
    args = ["--JOB_NAME", "delta-orders", "--job-bookmark-option", "job-bookmark-enable",
            "--datalake-formats", "delta",
            "--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension --conf "
            "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "--database", "lake"]
    for name in ("bronze", "silver", "gold", "rejected"):
        args += [f"--{name}_path", str(lake / name)]
    args += ["--raw_path", str(raw)]
    out = glue.run(SCRIPTS / "delta_lake_job.py", *args)
    if rounds > 1:
        (raw / "b.json").write_text(orders((4, "ANN", 2.5, "2024-05-02"),
                                           (5, "cy", 0.0, "2024-05-03")))
        out = glue.run(SCRIPTS / "delta_lake_job.py", *args)
    return lake, out.stdout + out.stderr


def test_glue_delta_job_runs_unmodified(tmp_path: Path) -> None:
    """One run (one process): every Delta form of the script, the catalog's Delta table."""
    lake, log = _run_job(GlueEnv(tmp_path), rounds=1)
    bronze = DeltaTable(str(lake / "bronze"))
    assert bronze.metadata().partition_columns == ["order_date"] and bronze.version() == 0
    assert rows(lake / "bronze", "order_id") == [(1,), (2,), (3,)]
    assert rows(lake / "silver", "order_id", "customer") == [(1, "ann"), (2, "bob")]
    assert rows(lake / "gold", "customer", "revenue", "orders") == [("ann", 10.0, 1),
                                                                    ("bob", 5.0, 1)]
    assert rows(lake / "rejected", "order_id") == [(3,)]
    assert "silver held 2 orders after its first write" in log


@pytest.mark.long
def test_glue_delta_job_second_run_takes_only_new_files(tmp_path: Path) -> None:
    """Two runs with the bookmark on: bronze gets one commit per run with only the new files."""
    lake, log = _run_job(GlueEnv(tmp_path), rounds=2)
    bronze = DeltaTable(str(lake / "bronze"))
    assert bronze.version() == 1  # one commit per run
    assert rows(lake / "bronze", "order_id") == [(1,), (2,), (3,), (4,), (5,)]
    assert rows(lake / "silver", "order_id", "customer") == [(1, "ann"), (2, "bob"), (4, "ann")]
    assert rows(lake / "gold", "customer", "revenue", "orders") == [("ann", 12.5, 2),
                                                                    ("bob", 5.0, 1)]
    assert rows(lake / "rejected", "order_id") == [(3,), (5,)]
    assert "silver held 2 orders after its first write" in log
