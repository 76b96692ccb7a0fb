"""Partition columns of ``from_catalog`` keep the catalog's declared types (issue 32), and
``push_down_predicate`` with ``catalogPartitionPredicate`` both narrow the partitions.

Written from Glue's documented behaviour: the Data Catalog's partition key types are the
frame's column types (a ``string`` key declared for ``month=02`` folders reads ``'02'``), a
partitioned sink writes the values it is given, and ``enableUpdateCatalog`` records them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import IntegerType, StringType

from lakemark.catalog import open_catalog
from lakemark.glue import GlueContext

_PARTS = [("2024", "02", "007"), ("2024", "11", "010"), ("2023", "02", "007")]


def _table(name: str, location: Path, fmt: str, keys: list[tuple[str, str]]) -> dict[str, Any]:
    serde = {"json": "org.openx.data.jsonserde.JsonSerDe",
             "parquet": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
             "csv": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"}[fmt]
    return {
        "Name": name, "DatabaseName": "lake", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "n", "Type": "bigint"}],
            "Location": str(location),
            "SerdeInfo": {"SerializationLibrary": serde,
                          "Parameters": {"field.delim": ","} if fmt == "csv" else {}},
        },
        "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
        "Parameters": {"classification": fmt},
    }


def _catalog(tmp: Path, *tables: dict[str, Any]) -> Any:
    folder = tmp / "catalog"
    (folder / "tables").mkdir(parents=True)
    (folder / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "lake"}]}))
    (folder / "tables" / "lake.json").write_text(json.dumps({"TableList": list(tables)}))
    return open_catalog(str(folder))


def _data(spark: Any, root: Path, fmt: str) -> None:
    """Files under ``year=/month=/code=`` folders, one row ``n`` per partition."""
    for n, (year, month, code) in enumerate(_PARTS):
        folder = root / f"year={year}" / f"month={month}" / f"code={code}"
        folder.mkdir(parents=True)
        if fmt == "json":
            # a text field: the DynamicFrame's JSON choices read the files again
            (folder / "part.json").write_text(json.dumps({"n": n, "s": "t"}) + "\n")
        elif fmt == "csv":
            (folder / "part.csv").write_text(f"{n}\n")
        else:
            spark.createDataFrame([(n,)], "n long").coalesce(1).write.parquet(
                str(folder / "tmp"))
            for f in (folder / "tmp").glob("*.parquet"):
                f.rename(folder / f"part-{n}.parquet")


_STRING_KEYS = [("year", "string"), ("month", "string"), ("code", "string")]


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((r["n"], r["year"], r["month"], r["code"]) for r in df.collect())


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv"])
def test_string_partition_keys_stay_strings(spark, tmp_path, fmt):  # type: ignore[no-untyped-def]
    root = tmp_path / "events"
    _data(spark, root, fmt)
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _table("events", root, fmt, _STRING_KEYS))
    expected = [(0, "2024", "02", "007"), (1, "2024", "11", "010"), (2, "2023", "02", "007")]
    frame = glue.create_dynamic_frame.from_catalog(database="lake", table_name="events")
    df = frame.toDF()
    assert all(isinstance(df.schema[k].dataType, StringType) for k in ("year", "month", "code"))
    assert _rows(df) == expected
    # a pruned read (partition paths under the table's root) too, DataFrame API as well
    pruned = glue.create_data_frame.from_catalog(database="lake", table_name="events",
                                                 push_down_predicate="month = '02'")
    assert _rows(pruned) == [expected[0], expected[2]]


def test_declared_int_key_is_cast_from_the_folder_text(spark, tmp_path):  # type: ignore[no-untyped-def]
    root = tmp_path / "events"
    _data(spark, root, "json")
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _table(
        "events", root, "json", [("year", "string"), ("month", "int"), ("code", "string")]))
    df = glue.create_data_frame.from_catalog(database="lake", table_name="events")
    assert isinstance(df.schema["month"].dataType, IntegerType)
    assert _rows(df) == [(0, "2024", 2, "007"), (1, "2024", 11, "010"), (2, "2023", 2, "007")]


def test_a_bookmarked_read_keeps_the_types(spark, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from lakemark.glue.job import Job as GlueJob

    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 's.db'}")
    root = tmp_path / "events"
    _data(spark, root, "parquet")
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _table("events", root, "parquet", _STRING_KEYS))
    job = GlueJob(glue)
    job.init("partition-types", {"job_bookmark_option": "job-bookmark-enable"})
    try:
        df = glue.create_dynamic_frame.from_catalog(
            database="lake", table_name="events", transformation_ctx="events").toDF()
        assert _rows(df)[0] == (0, "2024", "02", "007")
        pruned = glue.create_dynamic_frame.from_catalog(
            database="lake", table_name="events", transformation_ctx="feb",
            push_down_predicate="month = '02'").toDF()
        assert _rows(pruned) == [(0, "2024", "02", "007"), (2, "2023", "02", "007")]
    finally:
        job.commit()


def test_partitioned_sink_and_catalog_update_keep_the_zeros(spark, tmp_path):  # type: ignore[no-untyped-def]
    root, out = tmp_path / "events", tmp_path / "out"
    _data(spark, root, "json")
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _table("events", root, "json", _STRING_KEYS),
                             _table("copy", out, "json", _STRING_KEYS))
    frame = glue.create_dynamic_frame.from_catalog(database="lake", table_name="events")
    glue.write_dynamic_frame.from_catalog(frame=frame, database="lake", table_name="copy")
    months = sorted({p.name for p in out.glob("year=*/month=*")})
    assert months == ["month=02", "month=11"]  # no month=2 beside month=02
    assert sorted({p.name for p in out.glob("*/*/code=*")}) == ["code=007", "code=010"]
    # enableUpdateCatalog: the partitions registered as written, read back the same
    sink = glue.getSink(connection_type="s3", path=str(out), enableUpdateCatalog=True,
                        partitionKeys=["year", "month", "code"])
    sink.setFormat("json")
    sink.setCatalogInfo(catalogDatabase="lake", catalogTableName="copy")
    sink.writeFrame(frame)
    table = glue.catalog().get_table("lake", "copy")
    assert [(k.name, k.type) for k in table.partition_keys] == _STRING_KEYS
    values = sorted(p.values for p in glue.catalog().get_partitions(table))
    assert values == [("2023", "02", "007"), ("2024", "02", "007"), ("2024", "11", "010")]
    back = glue.create_data_frame.from_catalog(database="lake", table_name="copy",
                                               push_down_predicate="month = '02'")
    assert sorted({(r["month"], r["code"]) for r in back.collect()}) == [("02", "007")]


def test_push_down_and_catalog_predicate_both_narrow(spark, tmp_path):  # type: ignore[no-untyped-def]
    root = tmp_path / "events"
    _data(spark, root, "json")
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, _table("events", root, "json", _STRING_KEYS))
    df = glue.create_data_frame.from_catalog(
        database="lake", table_name="events", push_down_predicate="month = '02'",
        additional_options={"catalogPartitionPredicate": "year = '2024'"})
    assert _rows(df) == [(0, "2024", "02", "007")]
    only_catalog = glue.create_data_frame.from_catalog(
        database="lake", table_name="events",
        additional_options={"catalogPartitionPredicate": "year = '2023'"})
    assert _rows(only_catalog) == [(2, "2023", "02", "007")]


def test_a_key_also_listed_as_a_column_is_read_once(spark, tmp_path):  # type: ignore[no-untyped-def]
    root = tmp_path / "events"
    _data(spark, root, "csv")
    entry = _table("events", root, "csv", _STRING_KEYS)
    entry["StorageDescriptor"]["Columns"].append({"Name": "month", "Type": "string"})
    glue = GlueContext(spark.sparkContext)
    glue._catalog = _catalog(tmp_path, entry)
    df = glue.create_data_frame.from_catalog(database="lake", table_name="events")
    assert df.columns.count("month") == 1
    assert _rows(df)[0] == (0, "2024", "02", "007")
