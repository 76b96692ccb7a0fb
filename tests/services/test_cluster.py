"""An incremental job on a real Spark standalone cluster (master + one worker started from the
PySpark installation on 127.0.0.1), with the PostgreSQL state store and a JDBC and a file source.

Checks that the executors — not the driver — read the data (the tasks run in the worker's
executor directory, in another process) and that run 2 processes only the new input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from conftest import free_port, need_service
from pgtest import DATABASE, HOST, PORT, jdbc_url, need_postgres, state_url

pytestmark = [pytest.mark.spark, pytest.mark.services]

JOB = '''
import json, os, sys
from lakemark import Job

source, out, url, table, user, report = sys.argv[1:7]


def where(df):
    """The working directory and pid of the processes that ran the tasks over ``df``."""
    return df.rdd.mapPartitions(
        lambda rows: [(os.getcwd(), os.getpid(), sum(1 for _ in rows))]).collect()


with Job("cluster-job") as job:
    files = job.read_files(source, format="json", ctx="files")
    rows = job.read_jdbc(url, table, ctx="jdbc", user=user, keys=["id"], hashfield="id",
                         hashpartitions=2)
    seen = where(files) + where(rows)
    job.write(files, out + "/files", format="parquet", ctx="files_out")
    job.write(rows, out + "/rows", format="parquet", ctx="rows_out")
    with open(report, "w") as fh:
        json.dump({"driver_pid": os.getpid(), "driver_cwd": os.getcwd(), "tasks": seen,
                   "run_id": job.run_id}, fh)
'''


class Cluster:
    def __init__(self, tmp: Path) -> None:
        import pyspark

        self.spark_class = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
        self.port, self.ui = free_port(), free_port()
        self.work = tmp / "work"
        self.work.mkdir()
        self.logs = tmp / "cluster-logs"
        self.logs.mkdir()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.master = f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> None:
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
        log = (self.logs / f"{name}.log").open("wb")
        self.procs.append(subprocess.Popen([self.spark_class, *args], stdout=log,
                                           stderr=subprocess.STDOUT, env=env,
                                           start_new_session=True))

    def start(self) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        self._start("worker", "org.apache.spark.deploy.worker.Worker", self.master,
                    "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                    "--webui-port", str(free_port()), "--work-dir", str(self.work))
        deadline = time.monotonic() + 120
        while True:  # poll the master's status until the worker has registered
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as r:
                    if json.load(r).get("aliveworkers", 0) >= 1:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                logs = "\n".join(f.read_text(errors="replace")[-2000:]
                                 for f in sorted(self.logs.iterdir()))
                pytest.fail(f"the standalone cluster did not start:\n{logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    import pyspark

    if not (Path(pyspark.__file__).parent / "bin" / "spark-class").exists():
        need_service("pyspark has no bin/spark-class to start a standalone cluster")
    c = Cluster(tmp_path)
    c.start()
    yield c
    c.stop()


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_incremental_job_on_a_standalone_cluster(tmp_path: Path, cluster: Cluster) -> None:
    import psycopg

    user = need_postgres()
    schema = f"lm_cluster_{uuid.uuid4().hex[:10]}"
    conn = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user, autocommit=True)
    conn.execute(f'CREATE SCHEMA "{schema}"')
    state = state_url(user) + f"?schema={schema}"
    try:
        conn.execute(f'CREATE TABLE "{schema}".t (id int PRIMARY KEY, v text)')
        conn.execute(f"INSERT INTO \"{schema}\".t SELECT g, 'r' || g FROM generate_series(1, 10) g")
        source = tmp_path / "landing"
        source.mkdir()
        (source / "a.json").write_text('{"x": 1}\n{"x": 2}\n')
        script = tmp_path / "job.py"
        script.write_text(JOB)
        out = tmp_path / "out"

        def run(n: int) -> dict[str, Any]:
            report = tmp_path / f"report{n}.json"
            cmd = [sys.executable, "-m", "lakemark", "run", "--master", cluster.master,
                   "--state", state,
                   "--conf", "spark.driver.host=127.0.0.1",
                   "--conf", "spark.driver.bindAddress=127.0.0.1",
                   "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=1",
                   str(script), str(source), str(out), jdbc_url(), f"{schema}.t", user,
                   str(report)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                                  env=dict(os.environ, PYSPARK_PYTHON=sys.executable))
            assert done.returncode == 0, done.stdout + done.stderr
            return dict(json.loads(report.read_text()))

        first = run(1)
        tasks = [t for t in first["tasks"] if t[2]]
        assert tasks, first
        work = str(cluster.work)
        for cwd, pid, _ in first["tasks"]:
            assert cwd.startswith(work) and pid != first["driver_pid"], first
        ids = sorted(r["id"] for r in pq.read_table(out / "rows").to_pylist())
        assert ids == list(range(1, 11))

        conn.execute(f"INSERT INTO \"{schema}\".t "
                     "SELECT g, 'r' || g FROM generate_series(11, 13) g")
        (source / "b.json").write_text('{"x": 3}\n')
        second = run(2)
        counts = [t[2] for t in second["tasks"]]
        assert sum(counts) == 4  # one new JSON row + three new table rows
        assert sorted(r["x"] for r in pq.read_table(out / "files").to_pylist()) == [1, 2, 3]
        ids = sorted(r["id"] for r in pq.read_table(out / "rows").to_pylist())
        assert ids == list(range(1, 14))

        from lakemark.state import open_store

        store = open_store(state)
        bookmark = store.get_bookmark("cluster-job")
        assert (bookmark.run, bookmark.run_id) == (2, second["run_id"])
        assert bookmark.state["jdbc"]["last"] == [{"type": "int", "value": "13"}]
        store.close()
    finally:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.close()
