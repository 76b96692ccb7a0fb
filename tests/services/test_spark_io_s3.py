"""Plain Spark reads and writes of s3:// paths in a session without S3A (``lakemark.spark_io``),
against moto_server: the calls Glue scripts make next to their DynamicFrame I/O."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakemark.errors import ConfigError
from lakemark.sinks._spark_writer import has_s3a

pytestmark = pytest.mark.spark


@pytest.fixture
def bucket(spark: Any, s3: Any) -> Any:
    assert not has_s3a(spark), "the test session must lack S3A (else Spark's own S3 I/O runs)"
    s3.client("s3").create_bucket(Bucket="lake")
    return s3.client("s3")


def keys(client: Any, prefix: str) -> list[str]:
    out = client.list_objects_v2(Bucket="lake", Prefix=prefix).get("Contents", [])
    return sorted(o["Key"] for o in out)


def test_reads_json_csv_and_parquet_from_s3(spark: Any, bucket: Any) -> None:
    bucket.put_object(Bucket="lake", Key="raw/a.json",
                      Body=b'{"id": 1, "v": "x"}\n{"id": 2, "v": "y"}\n')
    bucket.put_object(Bucket="lake", Key="raw/d=2024-01-02/b.json", Body=b'{"id": 3, "v": "z"}\n')
    bucket.put_object(Bucket="lake", Key="csv/a.csv", Body=b"id;name\n1;ann\n2;bob\n")
    df = spark.read.json("s3://lake/raw/")
    assert sorted(r["id"] for r in df.collect()) == [1, 2, 3]
    csv = (spark.read.format("csv").option("header", "true").option("sep", ";")
           .load("s3a://lake/csv/"))
    assert sorted((r["id"], r["name"]) for r in csv.collect()) == [("1", "ann"), ("2", "bob")]
    typed = spark.read.csv("s3://lake/csv/", header=True, sep=";", schema="id int, name string")
    assert typed.schema.simpleString() == "struct<id:int,name:string>"
    buf = io.BytesIO()  # a parquet object written by pyarrow, read back through Spark
    pq.write_table(pa.table({"k": [1, 2], "s": ["a", "b"]}), buf)
    bucket.put_object(Bucket="lake", Key="pq/part-0.parquet", Body=buf.getvalue())
    assert sorted(r["k"] for r in spark.read.parquet("s3://lake/pq/").collect()) == [1, 2]


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_writes_with_partition_folders_and_save_modes(spark: Any, bucket: Any) -> None:
    df = spark.createDataFrame([(1, "eu"), (2, "us"), (3, "eu")], "id int, region string")
    df.write.partitionBy("region").parquet("s3://lake/out/")
    got = keys(bucket, "out/")
    assert any(k.startswith("out/region=eu/") and k.endswith(".parquet") for k in got)
    assert any(k.startswith("out/region=us/") for k in got)
    back = spark.read.parquet("s3://lake/out/")
    assert sorted((r["id"], r["region"]) for r in back.collect()) == [
        (1, "eu"), (2, "us"), (3, "eu")]

    with pytest.raises(ConfigError, match="PATH_ALREADY_EXISTS"):
        df.write.parquet("s3://lake/out/")  # Spark's default mode: errorifexists
    df.write.mode("ignore").parquet("s3://lake/out/")
    assert spark.read.parquet("s3://lake/out/").count() == 3
    df.write.mode("append").partitionBy("region").parquet("s3://lake/out/")
    assert spark.read.parquet("s3://lake/out/").count() == 6
    df.limit(1).write.mode("overwrite").partitionBy("region").parquet("s3://lake/out/")
    assert spark.read.parquet("s3://lake/out/").count() == 1

    df.write.format("json").mode("overwrite").save("s3://lake/js/")
    assert sorted(r["id"] for r in spark.read.json("s3://lake/js/").collect()) == [1, 2, 3]
    df.write.csv("s3://lake/csv/", header=True)
    assert spark.read.csv("s3://lake/csv/", header=True).count() == 3
