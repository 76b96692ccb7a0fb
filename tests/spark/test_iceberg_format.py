"""``format("iceberg")`` in plain PySpark with no Iceberg jar, on a SQLite SQL catalog in tmp_path.

Writes: create with identity partitions, append, overwrite, mergeSchema, Spark's save modes.
Reads: the current snapshot, ``snapshot-id`` and ``as-of-timestamp``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import IdentityTransform

from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.errors import ConfigError, SinkError
from lakemark.tables import lakemark_iceberg

pytestmark = pytest.mark.spark


def ids(df: Any) -> list[int]:
    return sorted(r.id for r in df.select("id").collect())


def test_format_iceberg_writes_and_reads_without_jars(spark: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    assert lakemark_iceberg(spark)  # no Iceberg runtime on this classpath
    first = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id long, d string")
    first.write.format("iceberg").mode("append").partitionBy("d").save("db.t")
    catalog = SqlCatalog("lakemark", uri=uri,
                         warehouse=(tmp_path / "iceberg" / "warehouse").as_uri())
    table = catalog.load_table("db.t")
    [field] = table.spec().fields
    assert isinstance(field.transform, IdentityTransform)
    assert table.schema().find_column_name(field.source_id) == "d"
    assert sorted(table.scan(row_filter="d == 'a'").to_arrow().column("id").to_pylist()) == [1, 3]
    snap1 = table.current_snapshot()

    spark.createDataFrame([(4, "b")], "id long, d string").write.format("iceberg") \
        .mode("append").save("db.t")  # the table keeps its partitioning
    reader = spark.read.format("iceberg")
    assert ids(reader.load("db.t")) == [1, 2, 3, 4]
    assert ids(spark.read.format("iceberg").option("snapshot-id", snap1.snapshot_id)
               .load("db.t")) == [1, 2, 3]
    assert ids(spark.read.format("iceberg").option("as-of-timestamp", snap1.timestamp_ms)
               .load("db.t")) == [1, 2, 3]
    with pytest.raises(ConfigError, match="already exists"):
        first.write.format("iceberg").save("db.t")  # Spark's default: errorifexists
    first.write.format("iceberg").mode("ignore").save("db.t")

    wider = spark.createDataFrame([(5, "c", 1.5)], "id long, d string, score double")
    with pytest.raises(SinkError, match="'score' is not in the table"):
        wider.write.format("iceberg").mode("append").save("db.t")
    wider.write.format("iceberg").mode("append").option("mergeSchema", "true").save("db.t")
    read = spark.read.format("iceberg").load("db.t")
    assert {r.id: r.score for r in read.collect()} == {1: None, 2: None, 3: None, 4: None,
                                                        5: 1.5}

    wider.write.format("iceberg").mode("overwrite").save("db.t")
    assert ids(spark.read.format("iceberg").load("db.t")) == [5]
    assert ids(spark.read.format("iceberg").option("snapshot-id", snap1.snapshot_id)
               .load("db.t")) == [1, 2, 3]  # time travel still sees the old rows
    with pytest.raises(ConfigError, match="snapshot-ids"):
        spark.read.format("iceberg").option("snapshot-ids", "1").load("db.t")


def test_write_to_an_iceberg_catalog_of_the_session_without_jars(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``df.writeTo`` (DataFrameWriterV2): ``.using("iceberg")`` or a name under a Spark catalog
    configured with Iceberg's plugin (as Glue Iceberg jobs configure ``glue_catalog``) goes to
    lakemark's Iceberg sink; Spark's rules for create/append/replace hold."""
    from lakemark.errors import UnsupportedError

    uri = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    spark.conf.set("spark.sql.catalog.glue_catalog", "org.apache.iceberg.spark.SparkCatalog")
    try:
        rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, d string")
        with pytest.raises(ConfigError, match=r"TABLE_OR_VIEW_NOT_FOUND.*db\.v2"):
            rows.writeTo("glue_catalog.db.v2").append()
        rows.writeTo("db.v2").using("iceberg").partitionedBy("d").create()
        with pytest.raises(ConfigError, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
            rows.writeTo("glue_catalog.db.v2").create()
        spark.createDataFrame([(3, "a")], "id long, d string").writeTo(
            "glue_catalog.db.v2").append()
        catalog = SqlCatalog("lakemark", uri=uri,
                             warehouse=(tmp_path / "iceberg" / "warehouse").as_uri())
        table = catalog.load_table("db.v2")
        assert isinstance(table.spec().fields[0].transform, IdentityTransform)
        assert ids(spark.read.format("iceberg").load("db.v2")) == [1, 2, 3]
        spark.createDataFrame([(9, "z")], "id long, d string").writeTo(
            "glue_catalog.db.v2").createOrReplace()
        assert ids(spark.read.format("iceberg").load("db.v2")) == [9]
        with pytest.raises(UnsupportedError, match="overwritePartitions"):
            rows.writeTo("glue_catalog.db.v2").overwritePartitions()
        from pyspark.sql.functions import partitioning

        with pytest.raises(ConfigError, match=r"days\(d\).*column 'd' is string"):
            rows.writeTo("glue_catalog.db.days").partitionedBy(
                partitioning.days("d")).create()
        assert len(catalog.load_table("db.v2").snapshots()) == 4  # create, append, replace(2)
    finally:
        spark.conf.unset("spark.sql.catalog.glue_catalog")
