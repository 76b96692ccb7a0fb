"""``lakemark run --bucket-map``: a production Glue script runs unmodified on local folders.

The script names ``s3://prod-bucket`` everywhere (its arguments, its code, its catalog table's
location) and mixes DynamicFrame and plain Spark I/O and ``purge_s3_path``. With the bucket
mapped to a folder it reads and writes there, and its bookmark and run manifest name the
original ``s3://`` URIs. S3 itself is made unreachable (the endpoint is a closed loopback port),
so any request that escaped the mapping would fail the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark

SCRIPT = '''
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Join
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "target"])
glue_context = GlueContext(SparkContext.getOrCreate())
spark = glue_context.spark_session
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

glue_context.purge_s3_path("s3://prod-bucket/tmp/", {"retentionPeriod": 0})
orders = glue_context.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
shops = glue_context.create_dynamic_frame.from_catalog(
    database="prod", table_name="shops", transformation_ctx="shops")
joined = Join.apply(orders, shops, "shop", "shop_id")
glue_context.write_dynamic_frame.from_options(
    frame=joined, connection_type="s3", connection_options={"path": args["target"]},
    format="parquet", transformation_ctx="out")
df = orders.toDF()
df.write.mode("append").json("s3://prod-bucket/plain/")
print("PLAIN_READ", spark.read.json("s3://prod-bucket/plain/").count())
job.commit()
'''


def _run(tmp: Path, *extra: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_ACCESS_KEY_ID="x",
               AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1",
               AWS_MAX_ATTEMPTS="1")
    env.pop("AWS_ENDPOINT_URL_S3", None)
    cmd = [sys.executable, "-m", "lakemark", "run", "--state", f"sqlite:///{tmp / 'state.db'}",
           "--catalog", str(tmp / "catalog"), *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp)
    if ok:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def _cli(tmp: Path, *args: str) -> Any:
    cmd = [sys.executable, "-m", "lakemark", *args, "--state", f"sqlite:///{tmp / 'state.db'}",
           "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _world(tmp: Path) -> Path:
    """The local folder standing for s3://prod-bucket, and a catalog naming that bucket."""
    bucket = tmp / "prod-bucket"
    (bucket / "in").mkdir(parents=True)
    (bucket / "in" / "o1.json").write_text('{"id": 1, "shop": 10}\n{"id": 2, "shop": 20}\n')
    (bucket / "ref" / "shops").mkdir(parents=True)
    (bucket / "ref" / "shops" / "s.csv").write_text("10,Lyon\n20,Oslo\n")
    (bucket / "tmp").mkdir()
    (bucket / "tmp" / "stale.txt").write_text("left by an earlier run\n")
    catalog = tmp / "catalog" / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "prod"}]}))
    table = {
        "Name": "shops", "DatabaseName": "prod", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "shop_id", "Type": "bigint"}, {"Name": "city", "Type": "string"}],
            "Location": "s3://prod-bucket/ref/shops/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}},
        },
        "PartitionKeys": [], "Parameters": {"classification": "csv"},
    }
    (catalog / "tables" / "prod.json").write_text(json.dumps({"TableList": [table]}))
    (tmp / "job.py").write_text(SCRIPT)
    return bucket


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_production_script_runs_on_mapped_folders_with_bookmarks(tmp_path: Path) -> None:
    bucket = _world(tmp_path)
    args = ("--bucket-map", f"s3://prod-bucket={bucket}", "job.py", "--JOB_NAME", "prod-orders",
            "--job-bookmark-option", "job-bookmark-enable",
            "--source", "s3://prod-bucket/in/", "--target", "s3://prod-bucket/out/")

    first = _run(tmp_path, *args)
    assert "PLAIN_READ 2" in first.stdout
    assert not (bucket / "tmp" / "stale.txt").exists()  # purge_s3_path purged the folder
    rows = pq.read_table(bucket / "out").to_pylist()
    assert sorted((r["id"], r["city"]) for r in rows) == [(1, "Lyon"), (2, "Oslo")]

    (bucket / "in" / "o2.json").write_text('{"id": 3, "shop": 30}\n')
    (bucket / "ref" / "shops" / "s2.csv").write_text("30,Rome\n")  # bookmarked: new files only
    second = _run(tmp_path, *args)
    assert "PLAIN_READ 3" in second.stdout  # one record appended by the second run
    rows = pq.read_table(bucket / "out").to_pylist()
    assert sorted((r["id"], r["city"]) for r in rows) == [(1, "Lyon"), (2, "Oslo"), (3, "Rome")]
    # The Glue sink's output prefix holds only data files, as Glue's does (issue 32): its
    # commit records are in the state store, and nothing is left of its staging beside it.
    out = bucket / "out"
    assert [p.suffix for p in out.rglob("*")] == [".parquet"] * len(list(out.rglob("*")))
    assert len(list(out.rglob("*"))) >= 2 and not (bucket / "out__lakemark_staging").exists()

    runs = _cli(tmp_path, "runs", "list", "prod-orders")
    assert [(r["run"], r["status"]) for r in runs] == [(1, "SUCCEEDED"), (2, "SUCCEEDED")]
    shown = [_cli(tmp_path, "runs", "show", r["run_id"])["sources"] for r in runs]
    taken = [(sorted(f["path"] for f in s["orders"]["files"]),
              sorted(f["path"] for f in s["shops"]["files"])) for s in shown]
    # The bookmark and the manifest name the original URIs, never the local folder.
    assert taken == [(["s3://prod-bucket/in/o1.json"], ["s3://prod-bucket/ref/shops/s.csv"]),
                     (["s3://prod-bucket/in/o2.json"], ["s3://prod-bucket/ref/shops/s2.csv"])]
    bookmark = _cli(tmp_path, "bookmark", "show", "prod-orders")
    assert bookmark["state"]["orders"]["source"] == "s3://prod-bucket/in"
    assert bookmark["state"]["shops"]["source"] == "s3://prod-bucket/ref/shops"


def test_malformed_bucket_map_names_the_option_and_value(tmp_path: Path) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "job.py").write_text("raise SystemExit('must not run')\n")
    out = _run(tmp_path, "--bucket-map", "prod-bucket=/data", "job.py", ok=False)
    assert out.returncode != 0
    assert "--bucket-map 'prod-bucket=/data'" in out.stderr
    assert "s3://BUCKET[/prefix]=DIR" in out.stderr
    assert not (tmp_path / "state.db").exists()
