"""Damaged input under the Glue facade, run by `lakemark run` as a data engineer would:

- a script that never calls ``job.init`` has no run to set a file aside in: the first damaged
  file fails the read in one ``error:`` line naming it and its reason (no Py4J traceback), with
  the same reason a started job would set it aside for; a zero-byte file stays no rows;
- the same script with ``job.init``/``job.commit`` (from_options and from_catalog with a
  ``transformation_ctx``) sets the file aside, commits the rest and exits 3, then 0.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark

ROWS = [{"order_id": i, "sku": f"sku-{i % 7}"} for i in range(400)]

NO_JOB = """\
import sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "fmt", "target"])
glueContext = GlueContext(SparkContext.getOrCreate())
orders = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]], "recurse": True},
    format=args["fmt"], transformation_ctx="orders")
glueContext.write_dynamic_frame.from_options(
    frame=orders, connection_type="s3", connection_options={"path": args["target"]},
    format="json", transformation_ctx="sink")
"""

CATALOG_JOB = """\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "target"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
orders = glueContext.create_dynamic_frame.from_catalog(
    database="sales", table_name="orders", transformation_ctx="orders_src")
mapped = ApplyMapping.apply(frame=orders, mappings=[
    ("order_id", "long", "order_id", "long"), ("sku", "string", "sku", "string")],
    transformation_ctx="mapped")
glueContext.write_dynamic_frame.from_options(
    frame=mapped, connection_type="s3", connection_options={"path": args["target"]},
    format="json", transformation_ctx="sink")
job.commit()
"""


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


def _avro(rows: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema({"type": "record", "name": "o", "fields": [
        {"name": "order_id", "type": "long"}, {"name": "sku", "type": "string"}]}), rows)
    return out.getvalue()


def _run(tmp: Path, script: str, *args: str, catalog: Path | None = None,
         ) -> subprocess.CompletedProcess[str]:
    path = tmp / "job.py"
    path.write_text(script)
    cmd = [sys.executable, "-m", "lakemark", "run", "--state", f"sqlite:///{tmp / 's.db'}",
           *(["--catalog", str(catalog)] if catalog else []), str(path), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp,
                          env=dict(os.environ, PYSPARK_PYTHON=sys.executable))


def _ids(folder: Path) -> list[int]:
    return sorted(json.loads(line)["order_id"] for f in folder.glob("*.json")
                  for line in f.read_text().splitlines() if line.strip())


@pytest.mark.parametrize("fmt, damage", [
    ("parquet", "cut"), ("avro", "cut"), ("json", "loop")])
def test_without_job_init_a_damaged_file_is_named_in_one_line(tmp_path: Path, fmt: str,
                                                              damage: str) -> None:
    src = tmp_path / "landing" / "dt=2026-11-28"
    src.mkdir(parents=True)
    encode = {"parquet": _parquet, "avro": _avro,
              "json": lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()}[fmt]
    (src / f"part-0.{fmt}").write_bytes(encode(ROWS[:3]))
    bad = src / f"part-1.{fmt}"
    if damage == "cut":
        whole = encode(ROWS)
        bad.write_bytes(whole[: len(whole) // 2])
    else:
        bad.symlink_to(bad)
    out = _run(tmp_path, NO_JOB, "--JOB_NAME", "orders", "--source", str(src.parent),
               "--fmt", fmt, "--target", str(tmp_path / "out"))
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"error: cannot read {fmt} file {bad}: "), out.stderr
    assert "Job.init" in lines[0]
    assert not (tmp_path / "out").exists()  # nothing written


def test_without_job_init_a_zero_byte_file_is_still_no_rows(tmp_path: Path) -> None:
    src = tmp_path / "landing"
    src.mkdir()
    (src / "part-0.parquet").write_bytes(_parquet(ROWS[:3]))
    (src / "part-1.parquet").write_bytes(b"")  # a producer that died before writing
    out = _run(tmp_path, NO_JOB, "--JOB_NAME", "orders", "--source", str(src),
               "--fmt", "parquet", "--target", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr
    assert _ids(tmp_path / "out") == [0, 1, 2]


def test_a_started_catalog_job_sets_the_damaged_file_aside_and_commits_the_rest(
        tmp_path: Path) -> None:
    data = tmp_path / "warehouse" / "orders"
    data.mkdir(parents=True)
    (data / "part-0.parquet").write_bytes(_parquet(ROWS[:3]))
    whole = _parquet(ROWS[100:])
    (data / "part-1.parquet").write_bytes(whole[: len(whole) // 3])
    catalog = tmp_path / "connection"
    (catalog / "catalog" / "tables").mkdir(parents=True)
    (catalog / "catalog" / "databases.json").write_text(
        json.dumps({"DatabaseList": [{"Name": "sales"}]}))
    (catalog / "catalog" / "tables" / "sales.json").write_text(json.dumps({"TableList": [{
        "Name": "orders", "DatabaseName": "sales", "TableType": "EXTERNAL_TABLE",
        "PartitionKeys": [], "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [{"Name": "order_id", "Type": "bigint"},
                        {"Name": "sku", "Type": "string"}],
            "Location": str(data) + "/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}}]}))
    args = ("--JOB_NAME", "orders", "--job-bookmark-option", "job-bookmark-enable",
            "--target", str(tmp_path / "out"))
    first = _run(tmp_path, CATALOG_JOB, *args, catalog=catalog)
    assert first.returncode == 3, first.stderr
    assert first.stderr.strip().splitlines()[-1].startswith(
        "warning: job orders committed, but 1 source file(s)")
    assert "Traceback" not in first.stderr and "Py4J" not in first.stderr
    assert _ids(tmp_path / "out") == [0, 1, 2]
    again = _run(tmp_path, CATALOG_JOB, *args, catalog=catalog)
    assert again.returncode == 0, again.stderr
    assert _ids(tmp_path / "out") == [0, 1, 2]
    listed = subprocess.run([sys.executable, "-m", "lakemark", "quarantine", "list", "orders",
                             "--state", f"sqlite:///{tmp_path / 's.db'}", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert [Path(f["path"]).name for f in json.loads(listed.stdout)["files"]] == [
        "part-1.parquet"]


def test_lakemark_run_on_bad_file_fail_makes_a_started_glue_job_strict(tmp_path: Path) -> None:
    """`lakemark run --on-bad-file fail` gives the script's jobs the strict policy: the run
    fails naming the file, sets nothing aside and writes nothing; without it the same script
    sets the file aside and commits the rest."""
    src = tmp_path / "landing"
    src.mkdir()
    (src / "part-0.parquet").write_bytes(_parquet(ROWS[:3]))
    whole = _parquet(ROWS)
    (src / "part-1.parquet").write_bytes(whole[: len(whole) // 2])
    script = NO_JOB.replace(
        "from awsglue.context import GlueContext\n",
        "from awsglue.context import GlueContext\nfrom awsglue.job import Job\n").replace(
        'orders = glueContext', 'job = Job(glueContext)\njob.init(args["JOB_NAME"], args)\n'
        'orders = glueContext') + "job.commit()\n"
    path = tmp_path / "job.py"
    path.write_text(script)
    state = f"sqlite:///{tmp_path / 's.db'}"

    def run(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lakemark", "run", "--state", state, *options, str(path),
             "--JOB_NAME", "orders", "--job-bookmark-option", "job-bookmark-enable",
             "--source", str(src), "--fmt", "parquet", "--target", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
            env=dict(os.environ, PYSPARK_PYTHON=sys.executable))

    strict = run("--on-bad-file", "fail")
    assert strict.returncode == 1, strict.stderr
    last = strict.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "part-1.parquet" in last and "fail" in last
    assert not (tmp_path / "out").exists()
    relaxed = run()
    assert relaxed.returncode == 3, relaxed.stderr
    assert _ids(tmp_path / "out") == [0, 1, 2]
