"""Where ``format("delta")`` is lakemark's (issue 20): every session lakemark makes, a plain
PySpark session after ``lakemark.register(spark)``, a plain script under ``lakemark run`` - and
nowhere when Delta Lake's own jars are on the classpath. Each case is its own Spark process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lakemark.tables import is_registered

PLAIN_SESSION = """
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         {extra}.getOrCreate())
"""


def _python(code: str, tmp_path: Path, *args: str,
            run: bool = False) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ)
    env.pop("LAKEMARK_SPARK_MASTER", None)
    env["PYSPARK_PYTHON"] = sys.executable
    command = [sys.executable, "-m", "lakemark", "run", str(script)] if run else \
        [sys.executable, str(script)]
    out = subprocess.run([*command, *args], capture_output=True, text=True, timeout=600,
                         env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def test_sessions_lakemark_makes_are_registered(spark) -> None:  # type: ignore[no-untyped-def]
    assert is_registered(spark)


def test_the_seed_snippet_in_plain_pyspark_after_register(tmp_path: Path, s3) -> None:  # type: ignore[no-untyped-def]
    s3.client("s3").create_bucket(Bucket="plain")
    code = PLAIN_SESSION.format(extra="") + """
import logging, sys
import lakemark
import pyarrow as pa
from deltalake import DeltaTable
logging.basicConfig(level=logging.INFO, format="LOG %(message)s")
assert lakemark.register(spark) is True
dataFrame = spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string")
app_id = "dailyETL"
version = 23423
for attempt in range(2):
    dataFrame.write.option("txnVersion", version).option("txnAppId", app_id).save(sys.argv[1])
print("ROWS", spark.read.format("delta").load(sys.argv[1]).count())
for where in (sys.argv[2], "s3://plain/t"):
    dataFrame.write.format("delta").partitionBy("v").save(where)
    table = DeltaTable(where, storage_options={"AWS_ALLOW_HTTP": "true"})
    print("PARTS", where, table.metadata().partition_columns, sorted(
        (a["partition.v"], a["path"].split("/")[0]) for a in
        pa.table(table.get_add_actions(flatten=True)).to_pylist()))
"""
    out = _python(code, tmp_path, str(tmp_path / "t"), str(tmp_path / "parts"))
    assert "ROWS 2" in out.stdout
    assert "skipped" in out.stderr and "dailyETL" in out.stderr
    folders = "[('a', 'v=a'), ('b', 'v=b')]"
    assert f"PARTS {tmp_path / 'parts'} ['v'] {folders}" in out.stdout
    assert f"PARTS s3://plain/t ['v'] {folders}" in out.stdout


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_a_plain_script_under_lakemark_run(tmp_path: Path) -> None:
    code = PLAIN_SESSION.format(extra="") + """
import sys
spark.range(5).selectExpr("id", "id % 2 as p").write.format("delta").partitionBy("p") \
    .save(sys.argv[1])
spark.range(5, 7).selectExpr("id", "id % 2 as p").write.format("delta").mode("append") \
    .save(sys.argv[1])
print("ROWS", spark.read.load(sys.argv[1], format="delta").count())
"""
    out = _python(code, tmp_path, str(tmp_path / "t"), run=True)
    assert "ROWS 7" in out.stdout


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("jar") is None,
                    reason="needs a JDK (javac, jar) to build a stand-in Delta class")
def test_steps_aside_when_delta_jars_are_present(tmp_path: Path) -> None:
    source = tmp_path / "src" / "io" / "delta" / "sql"
    source.mkdir(parents=True)
    (source / "DeltaSparkSessionExtension.java").write_text(
        "package io.delta.sql; public class DeltaSparkSessionExtension {}\n")
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(source / "DeltaSparkSessionExtension.java")],
                   check=True, capture_output=True)
    jar = tmp_path / "fake-delta.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True,
                   capture_output=True)
    code = PLAIN_SESSION.format(extra=f'.config("spark.jars", "{jar}")') + """
import lakemark
from lakemark.tables import is_registered
print("REGISTERED", lakemark.register(spark), is_registered(spark))
try:
    spark.range(1).write.format("delta").save(r"{out}")
except Exception as exc:
    print("SPARK SAYS", type(exc).__name__)
""".replace("{out}", str(tmp_path / "t"))
    out = _python(code, tmp_path)
    assert "REGISTERED False False" in out.stdout
    assert "SPARK SAYS" in out.stdout  # Spark's own handling of "delta", not lakemark's
    assert not (tmp_path / "t" / "_delta_log").exists()
