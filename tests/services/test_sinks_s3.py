"""``write_target`` to S3 on a real moto_server, with plain PySpark (no S3A connector): the
executors write the files with pyarrow, deltalake commits Delta tables on the driver.

The Spark executors' Python workers reach moto through the endpoint lakemark ships to them;
their credentials come from their own environment, like on a real cluster. The workers inherit
the environment the JVM started with, so the (fake) credentials and the interpreter that has
pyarrow are set when this module is imported, before any Spark session exists.
"""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import date, datetime
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakemark.errors import FormatError, SinkError
from lakemark.sinks import IdempotencyToken, write_target

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "lake"
SCHEMA = "id long, name string, day date, region string"


def make_rows(first: int, n: int) -> list[tuple[Any, ...]]:
    return [(i, f"n{i}", date(2024, 1, 1 + i % 5), ["eu", "us", None][i % 3])
            for i in range(first, first + n)]


def as_dicts(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return sorted(({"id": r[0], "name": r[1], "day": r[2], "region": r[3]} for r in rows),
                  key=lambda r: r["id"])


@pytest.fixture
def lake(s3: Any) -> Any:
    """An empty bucket on moto_server; the S3 client."""
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def keys(client: Any, prefix: str) -> dict[str, int]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {o["Key"]: o["Size"] for page in pages for o in page.get("Contents", [])}


def storage_options(s3: Any) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1"}


def test_delta_table_on_s3(spark: Any, s3: Any, lake: Any) -> None:
    uri = f"s3://{BUCKET}/tables/orders"
    first, second = make_rows(0, 7), make_rows(7, 4)
    df1 = spark.createDataFrame(first, SCHEMA).repartition(2)
    r1 = write_target(spark, df1, uri, partition_by=["region"], token=IdempotencyToken("j", 1))
    assert (r1.rows, r1.skipped, r1.table_version) == (7, False, 0)

    # The same token again: skipped before anything is computed or written.
    objects = keys(lake, "tables/orders/")
    skipped = write_target(spark, spark.createDataFrame(second, SCHEMA), uri,
                           token=IdempotencyToken("j", 1))
    assert (skipped.skipped, skipped.rows, skipped.table_version) == (True, 0, 0)
    assert keys(lake, "tables/orders/") == objects

    r2 = write_target(spark, spark.createDataFrame(second, SCHEMA), uri,
                      token=IdempotencyToken("j", 2))
    assert (r2.rows, r2.skipped, r2.table_version) == (4, False, 1)

    dt = DeltaTable(uri, storage_options=storage_options(s3))
    assert dt.version() == 1 and dt.transaction_version("j") == 2
    assert dt.metadata().partition_columns == ["region"]
    assert sorted(dt.to_pyarrow_table().to_pylist(), key=lambda r: r["id"]) == as_dicts(
        first + second)

    data = {k: v for k, v in keys(lake, "tables/orders/").items() if "/_delta_log/" not in k}
    assert len(data) == r1.files + r2.files
    assert sum(data.values()) == r1.bytes + r2.bytes
    for version in (0, 1):
        body = lake.get_object(Bucket=BUCKET,
                               Key=f"tables/orders/_delta_log/{version:020d}.json")["Body"]
        adds = [json.loads(line)["add"] for line in body.read().decode().splitlines()
                if '"add"' in line]
        for add in adds:
            region = add["partitionValues"]["region"]
            assert add["path"].startswith(f"region={region or '__HIVE_DEFAULT_PARTITION__'}/")
            key = f"tables/orders/{add['path']}"
            assert data[key] == add["size"]
            table = pq.read_table(io.BytesIO(
                lake.get_object(Bucket=BUCKET, Key=key)["Body"].read()))
            stats = json.loads(add["stats"])
            assert stats["numRecords"] == table.num_rows > 0
            assert stats["minValues"]["id"] == min(table.column("id").to_pylist())
            assert stats["maxValues"]["id"] == max(table.column("id").to_pylist())
            assert "region" not in table.column_names


def test_delta_on_s3_refuses_foreign_prefix_and_missing_bucket(spark: Any, lake: Any) -> None:
    lake.put_object(Bucket=BUCKET, Key="raw/data.csv", Body=b"a,b\n")
    df = spark.createDataFrame(make_rows(0, 1), SCHEMA)
    with pytest.raises(SinkError, match="not a Delta table"):
        write_target(spark, df, f"s3://{BUCKET}/raw")
    with pytest.raises(SinkError, match="does not exist"):
        write_target(spark, df, "s3://no-such-bucket/t")
    assert set(keys(lake, "")) == {"raw/data.csv"}


def _read_objects(client: Any, prefix: str, fmt: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for key in keys(client, prefix):
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        if fmt == "parquet":
            table = pq.read_table(io.BytesIO(body))
        elif fmt == "json":
            table = pajson.read_json(io.BytesIO(body))
        else:
            table = pacsv.read_csv(io.BytesIO(body))
        region = key[len(prefix):].split("/")[0].split("=", 1)[1]
        for row in table.to_pylist():
            row["region"] = None if region == "__HIVE_DEFAULT_PARTITION__" else region
            day = row["day"]  # pyarrow infers JSON/CSV dates as timestamps or strings
            row["day"] = day.date() if isinstance(day, datetime) else (
                day if isinstance(day, date) else date.fromisoformat(day))
            rows.append(row)
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_folder_on_s3(spark: Any, lake: Any, fmt: str) -> None:
    uri = f"s3://{BUCKET}/out/{fmt}"
    options = {"header": "true"} if fmt == "csv" else {}
    first, second, third = make_rows(0, 5), make_rows(5, 3), make_rows(20, 2)
    r1 = write_target(spark, spark.createDataFrame(first, SCHEMA), uri, format=fmt,
                      partition_by=["region"], options=options)
    r2 = write_target(spark, spark.createDataFrame(second, SCHEMA), uri, format=fmt,
                      partition_by=["region"], options=options)
    objects = keys(lake, f"out/{fmt}/")
    assert (r1.rows, r2.rows) == (5, 3)
    assert len(objects) == r1.files + r2.files
    assert sum(objects.values()) == r1.bytes + r2.bytes
    assert _read_objects(lake, f"out/{fmt}/", fmt) == as_dicts(first + second)

    r3 = write_target(spark, spark.createDataFrame(third, SCHEMA), uri, format=fmt,
                      mode="overwrite", partition_by=["region"], options=options)
    assert r3.rows == 2 and len(keys(lake, f"out/{fmt}/")) == r3.files
    assert _read_objects(lake, f"out/{fmt}/", fmt) == as_dicts(third)


def test_orc_on_s3_without_s3a_is_a_format_error(spark: Any, lake: Any) -> None:
    df = spark.createDataFrame(make_rows(0, 1), SCHEMA)
    with pytest.raises(FormatError, match="S3A"):
        write_target(spark, df, f"s3://{BUCKET}/orc", format="orc")
    assert keys(lake, "") == {}


def test_parquet_arrow_schema_round_trips(spark: Any, lake: Any) -> None:
    """Types survive the executors' pyarrow writer (Spark reads the Arrow of the DataFrame)."""
    uri = f"s3://{BUCKET}/typed"
    df = spark.sql(
        "select cast(1 as tinyint) b, cast(2 as int) i, 1.5d d, cast('1.25' as decimal(5,2)) "
        "m, timestamp'2024-01-01 01:02:03.123456' ts, true f, cast(null as string) s"
    )
    write_target(spark, df, uri, format="parquet")
    (key,) = keys(lake, "typed/")
    table = pq.read_table(io.BytesIO(lake.get_object(Bucket=BUCKET, Key=key)["Body"].read()))
    assert table.schema.field("b").type == pa.int8()
    assert table.schema.field("m").type == pa.decimal128(5, 2)
    assert table.schema.field("ts").type.unit == "us"
    assert str(table.to_pylist()[0]["ts"]) == "2024-01-01 01:02:03.123456+00:00"


def test_arrow_and_spark_writers_agree(spark: Any, s3: Any, lake: Any, tmp_path: Any) -> None:
    """The same DataFrame written locally (Spark's writer) and to S3 (pyarrow on executors)
    gives the same partition folders, Delta partition values and rows."""
    df = spark.sql(
        "select id, concat('n', id) name, cast(id * 1.25 as decimal(9,2)) amount, "
        "element_at(array('a/b c', 'x=y%z:ü', '', null), cast(id % 4 + 1 as int)) region, "
        "timestamp'2024-03-01 10:00:00.000001' + make_interval(0,0,0,0,0,0,id % 2) ts "
        "from range(8)"
    )
    local = tmp_path / "t"
    write_target(spark, df, str(local), partition_by=["region", "ts"])
    write_target(spark, df, f"s3://{BUCKET}/t", partition_by=["region", "ts"])

    def layout(read: Any) -> set[tuple[str, str]]:
        adds = [json.loads(line)["add"] for line in read().splitlines() if '"add"' in line]
        return {(a["path"].rsplit("/", 1)[0], json.dumps(a["partitionValues"], sort_keys=True))
                for a in adds}

    on_s3 = layout(lambda: lake.get_object(
        Bucket=BUCKET, Key="t/_delta_log/00000000000000000000.json")["Body"].read().decode())
    on_disk = layout(lambda: (local / "_delta_log" / f"{0:020d}.json").read_text())
    assert on_s3 == on_disk and len(on_s3) == 4

    def table_rows(dt: DeltaTable) -> list[dict[str, Any]]:
        return sorted(dt.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])

    assert table_rows(DeltaTable(f"s3://{BUCKET}/t", storage_options=storage_options(s3))) == \
        table_rows(DeltaTable(str(local)))
