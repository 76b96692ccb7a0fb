"""``lakemark run --remote`` and ``Job(remote=…)``/``Job(spark=<Connect session>)`` against the
suite's real Spark Connect server.

The shape is a hand-written PySpark job of a data team: a script that uses ``lakemark.Job`` to
copy the new order files of a landing folder into a Parquet folder, scheduled against a warm
server. The bookmark stays in the client's state store; reading and writing run on the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import (BAD_ENDPOINTS, ConnectServer, free_port, lakemark_cli,
                      need_connect_client)

SRC = Path(__file__).resolve().parents[2] / "src"

SCRIPT = '''\
import sys
from lakemark import Job

landing, lake = sys.argv[1], sys.argv[2]
with Job("orders_copy") as job:
    orders = job.read_files(landing, format="json", ctx="orders")
    print("SESSION", type(job.spark).__module__)
    job.write(orders.where("amount > 0"), lake, format="parquet", ctx="lake")
    job.commit()
'''


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _land(folder: Path, name: str, first_id: int, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(
        json.dumps({"order_id": i, "amount": float(i % 5)}) + "\n"
        for i in range(first_id, first_id + n)))


def _runs(state: Path, job: str) -> list[dict]:
    done = lakemark_cli("runs", "list", job, "--state", f"sqlite:///{state}", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_script_run_with_remote_takes_only_new_files(connect_server: ConnectServer,
                                                       tmp_path: Path) -> None:
    landing, lake, state = tmp_path / "landing", tmp_path / "lake", tmp_path / "state.db"
    script = tmp_path / "orders_copy.py"
    script.write_text(SCRIPT)
    _land(landing, "a.json", 1, 30)
    _land(landing, "b.json", 31, 30)
    first = lakemark_cli("run", "--state", f"sqlite:///{state}", "--remote",
                         connect_server.endpoint, str(script), str(landing), str(lake),
                         env=connect_server.env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "SESSION pyspark.sql.connect.session" in first.stdout  # Spark is the server's

    _land(landing, "c.json", 61, 30)
    # the scheduler's environment names the server
    second = lakemark_cli("run", "--state", f"sqlite:///{state}", str(script), str(landing),
                          str(lake), env={**connect_server.env,
                                          "SPARK_REMOTE": connect_server.endpoint})
    assert second.returncode == 0, second.stderr[-3000:]
    assert "SESSION pyspark.sql.connect.session" in second.stdout

    ids = sorted(pq.read_table(lake).column("order_id").to_pylist())
    assert ids == [i for i in range(1, 91) if i % 5]  # every kept order once
    runs = _runs(state, "orders_copy")
    assert [(r["run"], r["status"]) for r in runs] == [(1, "SUCCEEDED"), (2, "SUCCEEDED")]
    shown = lakemark_cli("runs", "show", runs[1]["run_id"], "--state", f"sqlite:///{state}",
                         "--json")
    taken = [Path(f["path"]).name for f in json.loads(shown.stdout)["sources"]["orders"]["files"]]
    assert taken == ["c.json"]


def test_the_python_api_takes_remote_or_a_connect_session(connect_server: ConnectServer,
                                                          tmp_path: Path) -> None:
    """``Job(remote=URL)`` for one run, ``Job(spark=<a Connect session>)`` for the next: one
    bookmark in the client's state store, reads and writes on the server."""
    landing, lake, state = tmp_path / "landing", tmp_path / "lake", tmp_path / "state.db"
    _land(landing, "a.json", 1, 20)
    code = f'''
import sys
from pathlib import Path
from pyspark.sql import SparkSession
from lakemark import Job

url, landing, lake, state = {connect_server.endpoint!r}, {str(landing)!r}, {str(lake)!r}, \\
    {f"sqlite:///{state}"!r}
with Job("api_orders", state=state, remote=url) as job:
    job.write(job.read_files(landing, format="json", ctx="orders"), lake, format="parquet",
              ctx="lake")
    job.commit()
    print("FIRST", type(job.spark).__module__)
Path(landing, "b.json").write_text('{{"order_id": 21, "amount": 1.0}}\\n')
session = SparkSession.builder.remote(url).getOrCreate()
with Job("api_orders", state=state, spark=session) as job:
    job.write(job.read_files(landing, format="json", ctx="orders"), lake, format="parquet",
              ctx="lake")
    job.commit()
    print("SECOND", job.spark is session)
'''
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "FIRST pyspark.sql.connect.session" in done.stdout
    assert "SECOND True" in done.stdout
    assert sorted(pq.read_table(lake).column("order_id").to_pylist()) == list(range(1, 22))
    assert [r["status"] for r in _runs(state, "api_orders")] == ["SUCCEEDED", "SUCCEEDED"]


def test_an_in_process_run_puts_spark_remote_and_pyspark_back(connect_server: ConnectServer,
                                                              tmp_path: Path) -> None:
    """``lakemark run --remote`` called in a process that goes on (click's runner): after it,
    SPARK_REMOTE and pyspark's SparkContext are as they were, so the caller's own later
    sessions are not the script's server."""
    landing, lake, state = tmp_path / "landing", tmp_path / "lake", tmp_path / "state.db"
    script = tmp_path / "orders_copy.py"
    script.write_text(SCRIPT)
    _land(landing, "a.json", 1, 10)
    code = f'''
import os
import pyspark
from click.testing import CliRunner
from lakemark.cli import cli

original = pyspark.SparkContext
done = CliRunner().invoke(cli, ["run", "--state", {f"sqlite:///{state}"!r}, "--remote",
                                {connect_server.endpoint!r}, {str(script)!r}, {str(landing)!r},
                                {str(lake)!r}])
print("EXIT", done.exit_code, "SESSION pyspark.sql.connect.session" in done.output)
print("REMOTE", os.environ.get("SPARK_REMOTE"), os.environ.get("SPARK_CONNECT_MODE_ENABLED"))
print("CONTEXT", pyspark.SparkContext is original)
'''
    env = {k: v for k, v in connect_server.env.items()
           if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env={**env, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-3:] == ["EXIT 0 True", "REMOTE None None",
                                             "CONTEXT True"], \
        done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted(pq.read_table(lake).column("order_id").to_pylist()) == [
        i for i in range(1, 11) if i % 5]


@pytest.mark.parametrize(("args", "env", "message"), BAD_ENDPOINTS)
def test_a_bad_endpoint_is_one_line_and_runs_nothing(tmp_path: Path, args: list[str],
                                                     env: dict[str, str], message: str) -> None:
    script = tmp_path / "orders_copy.py"
    script.write_text(SCRIPT)
    _land(tmp_path / "landing", "a.json", 1, 3)
    state = tmp_path / "state.db"
    done = lakemark_cli("run", "--state", f"sqlite:///{state}", *args, str(script),
                        str(tmp_path / "landing"), str(tmp_path / "lake"),
                        env={**os.environ, **env})
    assert done.returncode == 2
    assert message in done.stderr
    assert "SESSION" not in done.stdout  # the script never started
    assert not state.exists() and not (tmp_path / "lake").exists()


def test_submit_with_remote_is_refused(connect_server: ConnectServer, tmp_path: Path) -> None:
    script = tmp_path / "orders_copy.py"
    script.write_text(SCRIPT)
    done = lakemark_cli("run", "--submit", "--remote", connect_server.endpoint, str(script),
                        "x", "y", env=connect_server.env)
    assert done.returncode == 2
    assert "--submit does not apply with --remote" in done.stderr


def test_an_unreachable_server_is_one_line_and_records_no_run(tmp_path: Path) -> None:
    script = tmp_path / "orders_copy.py"
    script.write_text(SCRIPT)
    _land(tmp_path / "landing", "a.json", 1, 3)
    state = tmp_path / "state.db"
    port = free_port()  # nothing listens there
    done = lakemark_cli("run", "--state", f"sqlite:///{state}", "--remote",
                        f"sc://127.0.0.1:{port}", str(script), str(tmp_path / "landing"),
                        str(tmp_path / "lake"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: cannot reach the Spark Connect server at "
                               f"sc://127.0.0.1:{port} (")
    assert not state.exists() and not (tmp_path / "lake").exists()

    code = ("from lakemark import Job\n"
            "from lakemark.errors import EnvironmentProblem\n"
            "try:\n"
            f"    Job('api_orders', state={f'sqlite:///{state}'!r}, "
            f"remote='sc://127.0.0.1:{port}')\n"
            "except EnvironmentProblem as exc:\n"
            "    print(exc)\n")
    api = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert api.returncode == 0, api.stderr[-2000:]
    assert api.stdout.startswith(f"cannot reach the Spark Connect server at "
                                 f"sc://127.0.0.1:{port} (")
    assert not state.exists()  # no run recorded: the store was never opened


def test_job_refuses_a_bad_remote_and_remote_with_spark(tmp_path: Path) -> None:
    from lakemark import Job
    from lakemark.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^remote= must be a Spark Connect URL sc://HOST:PORT,"
                                          r" got 'http://127.0.0.1:15002'$"):
        Job("j", state=f"sqlite:///{tmp_path / 's.db'}", remote="http://127.0.0.1:15002")
    with pytest.raises(ConfigError, match="^Job takes spark= or remote=, not both$"):
        Job("j", state=f"sqlite:///{tmp_path / 's.db'}", remote="sc://127.0.0.1:1",
            spark=object())  # type: ignore[arg-type]
    assert not (tmp_path / "s.db").exists()
