"""Commands that start Spark end cleanly and say nothing but lakemark's own lines.

Spark's JVM prints `WARNING: Using incubator modules…` and `Setting default log level…` at start;
deltalake's native threads could abort the interpreter at exit. Each command runs as its own
process here, as a scheduler starts it; its status must be 0 and its stderr empty. (The
JVM-free commands are repeated many times in tests/unit/test_cli_process.py; bench/exit_stress.py
repeats these Spark-starting ones.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

GLUE_SCRIPT = '''\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "target"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
orders = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
mapped = ApplyMapping.apply(frame=orders, mappings=[("id", "long", "order_id", "long")],
                            transformation_ctx="mapped")
glueContext.write_dynamic_frame.from_options(
    frame=mapped, connection_type="s3", connection_options={"path": args["target"]},
    format="delta", transformation_ctx="sink")
job.commit()
'''


# lakemark's log lines (rich's level column) and its progress lines (a run past the interval)
LAKEMARK_LINE = re.compile(r"^(?:(?:DEBUG|INFO|WARNING|ERROR) {2,}\S| {4,}\S|progress: )")


def assert_only_lakemark_lines(stderr: str) -> None:
    """stderr holds lakemark's own log lines (rich's level column) and nothing else: no JVM
    start-up lines, no Spark log, no Java stack trace, no abort message."""
    foreign = [line for line in stderr.splitlines() if line and not LAKEMARK_LINE.match(line)]
    assert foreign == [], foreign
    assert "terminate called" not in stderr


def lakemark(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("LAKEMARK_SPARK_MASTER", None)
    # progress lines are lakemark's own (tests/spark/test_run_progress.py); off here, so a run
    # slower than their interval on a loaded machine does not print one
    env["LAKEMARK_PROGRESS_INTERVAL"] = "0"
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd, env=env)


def test_ingest_to_delta_is_quiet_and_exits_0(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    out = lakemark("ingest", "files", str(landing), str(tmp_path / "lake"), "--job", "q",
                   "--state", f"sqlite:///{tmp_path / 's.db'}", "--master", "local[1]", "--json")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert json.loads(out.stdout)["rows"] == 2


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_glue_script_writing_delta_is_quiet_and_exits_0(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.json").write_text('{"id": 1}\n{"id": 2}\n{"id": 3}\n')
    script = tmp_path / "etl.py"
    script.write_text(GLUE_SCRIPT)
    out = lakemark("run", "--state", f"sqlite:///{tmp_path / 's.db'}", "--master", "local[1]",
                   str(script), "--JOB_NAME", "glue-q", "--job-bookmark-option",
                   "job-bookmark-enable", "--source", str(landing),
                   "--target", str(tmp_path / "lake"))
    assert out.returncode == 0, out.stderr
    assert_only_lakemark_lines(out.stderr)
    from deltalake import DeltaTable

    assert sorted(DeltaTable(str(tmp_path / "lake")).to_pyarrow_table()
                  .column("order_id").to_pylist()) == [1, 2, 3]


def test_the_demo_is_quiet_and_exits_0(tmp_path: Path) -> None:
    out = lakemark("demo", "--dir", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stderr
    assert_only_lakemark_lines(out.stderr)
    assert "each row once: yes" in out.stdout
    assert "lakemark server start" in out.stdout  # the way to run many scheduled jobs fast


@pytest.mark.long
def test_a_class_data_archive_is_built_and_runs_start_with_it(tmp_path: Path) -> None:
    """The archive builder writes a JDK archive of Spark's classes; a run given it succeeds
    with clean output (the JVM's CDS messages would go to stdout and break --json)."""
    import shutil

    from lakemark.session import class_cache as _class_cache

    java = shutil.which("java")
    assert java
    env = dict(os.environ, LAKEMARK_CLASS_CACHE=str(tmp_path / "cache"))
    env.pop("PYSPARK_SUBMIT_ARGS", None)  # left by in-process `lakemark run` tests
    os.environ[_class_cache.ENV] = env["LAKEMARK_CLASS_CACHE"]
    try:
        path = _class_cache.archive_path(java)
    finally:
        del os.environ[_class_cache.ENV]
    assert path is not None
    path.parent.mkdir(parents=True)
    built = subprocess.run([sys.executable, "-m", "lakemark.session.class_cache_build", str(path)],
                           capture_output=True, text=True, timeout=900,
                           env=dict(env, LAKEMARK_CLASS_CACHE="off"))
    assert built.returncode == 0, built.stderr
    assert path.is_file() and path.stat().st_size > 1_000_000
    assert not path.with_suffix(".lock").exists()
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.json").write_text('{"id": 7}\n')
    out = subprocess.run([sys.executable, "-m", "lakemark", "ingest", "files", str(landing),
                          str(tmp_path / "lake"), "--job", "cds", "--state",
                          f"sqlite:///{tmp_path / 's.db'}", "--json"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert json.loads(out.stdout)["rows"] == 1
