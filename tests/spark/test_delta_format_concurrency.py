"""``df.write.format("delta")`` under concurrency and crashes (issue 20): two real writers
appending at once (a separate Spark process and this one) both commit, re-based under Delta's
conflict rules; a writer SIGKILLed mid-write (its files written, no commit) leaves nothing
visible. One Spark process per scenario, besides the session fixture's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakemark._fault import FAULT_ENV, FAULT_WAIT_ENV
from lakemark.tables import register

WRITER = """
import sys
from pyspark.sql import SparkSession
import lakemark
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .getOrCreate())
lakemark.register(spark)
ids = [int(x) for x in sys.argv[2].split(",")]
(spark.createDataFrame([(i, "other") for i in ids], "id long, who string")
 .write.format("delta").mode("append").save(sys.argv[1]))
print("WROTE", len(ids))
"""


def _writer(tmp_path: Path, table: Path, ids: str, **env: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER))
    environment = dict(os.environ, PYSPARK_PYTHON=sys.executable, **env)
    environment.pop("LAKEMARK_SPARK_MASTER", None)
    return subprocess.Popen([sys.executable, str(script), str(table), ids], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ids(table: Path) -> list[int]:
    return sorted(DeltaTable(str(table)).to_pyarrow_table().column("id").to_pylist())


def _parquet_files(table: Path) -> set[str]:
    return {str(p.relative_to(table)) for p in table.rglob("*.parquet")
            if "_delta_log" not in p.parts}


def test_two_writers_appending_at_once_both_commit(spark, tmp_path):  # type: ignore[no-untyped-def]
    assert register(spark)
    table = tmp_path / "t"
    spark.createDataFrame([(1, "me")], "id long, who string").write.format("delta").save(
        str(table))
    gate = tmp_path / "gate"
    other = _writer(tmp_path, table, "10,11", **{FAULT_WAIT_ENV: f"mid-write={gate}"})
    try:
        reached = Path(f"{gate}.reached")
        deadline = time.monotonic() + 600
        while not reached.exists():  # the other writer has its files and a stale snapshot
            assert other.poll() is None, other.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the other writer never reached its commit"
            time.sleep(0.1)
        spark.createDataFrame([(2, "me")], "id long, who string").write.format("delta") \
            .mode("append").save(str(table))
        assert DeltaTable(str(table)).version() == 1
    finally:
        gate.touch()
    out, err = other.communicate(timeout=600)
    assert other.returncode == 0, err[-3000:]
    assert "WROTE 2" in out
    history = DeltaTable(str(table))
    assert history.version() == 2 and _ids(table) == [1, 2, 10, 11]
    assert sorted(r.id for r in spark.read.format("delta").load(str(table)).collect()) == [
        1, 2, 10, 11]


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_a_writer_killed_mid_write_leaves_nothing_visible(spark, tmp_path):  # type: ignore[no-untyped-def]
    assert register(spark)
    table = tmp_path / "t"
    spark.createDataFrame([(1, "me")], "id long, who string").write.format("delta").save(
        str(table))
    before = _parquet_files(table)
    killed = _writer(tmp_path, table, "10,11,12", **{FAULT_ENV: "mid-write"})
    _, err = killed.communicate(timeout=600)
    assert killed.returncode == -9, err[-3000:]  # SIGKILL, after its data files were written
    assert DeltaTable(str(table)).version() == 0 and _ids(table) == [1]
    assert [r.id for r in spark.read.format("delta").load(str(table)).collect()] == [1]
    assert _parquet_files(table) >= before  # its orphans may stay on disk, never in the log
