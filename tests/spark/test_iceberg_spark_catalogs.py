"""Iceberg names qualified by a Spark catalog (issue 32): with ``spark.sql.catalog.local =
org.apache.iceberg.spark.SparkCatalog`` and its ``type``/``uri``/``warehouse`` settings, every
way Iceberg's Spark runtime resolves ``local.db.events`` (``save``, ``load``, ``spark.table``,
``spark.read.table``, ``writeTo``) resolves it through those settings, here a JDBC catalog on
SQLite read back with pyiceberg's SQL catalog; what cannot be mapped is refused by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.errors import ConfigError

pytestmark = pytest.mark.spark

PLUGIN = "org.apache.iceberg.spark.SparkCatalog"


def ids(df: Any) -> list[int]:
    return sorted(r.id for r in df.select("id").collect())


@pytest.fixture
def settings(spark: Any) -> Iterator[dict[str, str]]:
    """Session settings set for one test, unset after it."""
    given: dict[str, str] = {}
    yield given
    for key in given:
        spark.conf.unset(key)


def _set(spark: Any, settings: dict[str, str], **values: str) -> None:
    for key, value in values.items():
        name = "spark.sql.catalog.local" + ("" if key == "plugin" else
                                            "." + key.replace("_", "-"))
        spark.conf.set(name, value)
        settings[name] = value


def test_every_entry_point_resolves_through_the_spark_catalog(
        spark: Any, tmp_path: Path, settings: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # lakemark's own catalog is elsewhere: the name must not land there
    monkeypatch.setenv(CATALOG_ENV, f"sqlite:///{tmp_path / 'own' / 'catalog.db'}")
    db = tmp_path / "jdbc" / "catalog.db"
    db.parent.mkdir()
    warehouse = tmp_path / "warehouse"
    _set(spark, settings, plugin=PLUGIN, type="jdbc", uri=f"jdbc:sqlite:{db}",
         warehouse=str(warehouse), io_impl="org.apache.iceberg.hadoop.HadoopFileIO")
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, d string")
    rows.write.format("iceberg").mode("append").save("local.db.events")
    spark.createDataFrame([(3, "c")], "id long, d string").writeTo("local.db.events").append()
    spark.createDataFrame([(4, "d")], "id long, d string").write.format("iceberg") \
        .mode("append").save("local.db.events")
    catalog = SqlCatalog("local", uri=f"sqlite:///{db}", warehouse=warehouse.as_uri())
    table = catalog.load_table("db.events")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]
    assert table.metadata.location.startswith(warehouse.as_uri())
    assert not (tmp_path / "own" / "catalog.db").exists()
    assert ids(spark.read.format("iceberg").load("local.db.events")) == [1, 2, 3, 4]
    assert ids(spark.table("local.db.events")) == [1, 2, 3, 4]
    assert ids(spark.read.table("local.db.events")) == [1, 2, 3, 4]
    spark.createDataFrame([(9, "z")], "id long, d string").writeTo(
        "local.db.events").createOrReplace()
    assert ids(spark.table("local.db.events")) == [9]


def test_what_cannot_be_mapped_is_refused_by_name(spark: Any, tmp_path: Path,
                                                  settings: dict[str, str]) -> None:
    _set(spark, settings, plugin=PLUGIN, type="hadoop", warehouse="s3a://lake/wh")
    rows = spark.createDataFrame([(1, "a")], "id long, d string")
    message = r"Spark catalog 'local' is an Iceberg Hadoop catalog"
    with pytest.raises(ConfigError, match=message):
        rows.write.format("iceberg").mode("append").save("local.db.events")
    with pytest.raises(ConfigError, match=message):
        rows.writeTo("local.db.events").append()
    with pytest.raises(ConfigError, match=message):
        spark.read.format("iceberg").load("local.db.events")
    with pytest.raises(ConfigError, match=message):
        spark.table("local.db.events")
    assert not list(tmp_path.iterdir())
