"""A Hadoop Iceberg catalog configured as Iceberg's Spark quickstart does it
(``spark.sql.catalog.local = org.apache.iceberg.spark.SparkCatalog``, ``.type = hadoop``,
``.warehouse = <folder>``), without Iceberg's runtime (issue 32): ``writeTo``, ``save``,
``load``, ``spark.table`` and ``spark.sql`` on ``local.db.events`` all use the Hadoop layout
(``<warehouse>/db/events/metadata/v<N>.metadata.json`` + ``version-hint.text``), so the table is
the one Iceberg's HadoopCatalog would read and write there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import StaticTable

pytestmark = pytest.mark.spark
PREFIX = "spark.sql.catalog.local"


@pytest.fixture
def warehouse(spark: Any, tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "warehouse"
    conf = {PREFIX: "org.apache.iceberg.spark.SparkCatalog", f"{PREFIX}.type": "hadoop",
            f"{PREFIX}.warehouse": f"file://{folder}"}
    for key, value in conf.items():
        spark.conf.set(key, value)
    yield folder
    for key in conf:
        spark.conf.unset(key)


def ids(frame: Any) -> list[int]:
    return sorted(r.id for r in frame.select("id").collect())


def test_every_entry_point_uses_the_hadoop_layout(spark: Any, warehouse: Path) -> None:
    rows = spark.createDataFrame([(1, "2024-05-01"), (2, "2024-05-02")], "id long, day string")
    rows.writeTo("local.db.events").partitionedBy("day").create()
    spark.createDataFrame([(3, "2024-05-02")], "id long, day string").write.format("iceberg") \
        .mode("append").save("local.db.events")
    metadata = warehouse / "db" / "events" / "metadata"
    hint = int((metadata / "version-hint.text").read_text())
    current = metadata / f"v{hint}.metadata.json"
    assert current.exists() and not (metadata / f"v{hint + 1}.metadata.json").exists()
    assert json.loads(current.read_text())["location"].rstrip("/").endswith("db/events")
    # the files alone (no catalog) are the table: what Iceberg's HadoopTables would open
    static = StaticTable.from_metadata(str(current))
    assert sorted(static.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert ids(spark.read.format("iceberg").load("local.db.events")) == [1, 2, 3]
    assert ids(spark.table("local.db.events")) == [1, 2, 3]
    first = static.snapshots()[0].snapshot_id
    assert ids(spark.sql(f"SELECT id FROM local.db.events VERSION AS OF {first}")) == [1, 2]
