"""``lakemark server start|stop|status`` against a real Spark Connect server process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from conftest import ConnectServer, free_port, lakemark_cli


def _record(home: str) -> dict:
    return json.loads((Path(home) / "connect" / "server.json").read_text())


def test_status_is_one_line_with_endpoint_pid_and_uptime(connect_server: ConnectServer) -> None:
    done = lakemark_cli("server", "status", env=connect_server.env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    pid = _record(connect_server.home)["pid"]
    assert len(lines) == 1
    assert lines[0].startswith(f"up: {connect_server.endpoint} (pid {pid}, up ")
    assert "master local[2]" in lines[0]


def test_status_json_names_the_running_server(connect_server: ConnectServer) -> None:
    done = lakemark_cli("server", "status", "--json", env=connect_server.env)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["up"] is True
    assert status["endpoint"] == connect_server.endpoint
    assert status["pid"] == _record(connect_server.home)["pid"]
    assert status["uptime_s"] >= 0
    assert Path(status["log"]).is_file()
    # the record's pid is the server itself, listening on the port
    with socket.create_connection(("127.0.0.1", connect_server.port), timeout=5):
        pass
    assert b"SparkConnectServer" in Path(f"/proc/{status['pid']}/cmdline").read_bytes()


def test_start_twice_says_it_is_already_up(connect_server: ConnectServer) -> None:
    before = _record(connect_server.home)
    done = lakemark_cli("server", "start", "--port", str(free_port()), env=connect_server.env)
    assert done.returncode == 1
    err = done.stderr.strip().splitlines()
    assert len(err) == 1
    assert f"already up at {connect_server.endpoint} (pid {before['pid']})" in err[0]
    assert _record(connect_server.home) == before


def test_the_servers_python_workers_run_lakemark(connect_server: ConnectServer,
                                                 tmp_path: Path) -> None:
    """The server's environment: its Python workers use this interpreter and see lakemark."""
    pid = _record(connect_server.home)["pid"]
    environ = dict(item.split("=", 1) for item in
                   Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item)
    import lakemark

    assert Path(environ["PYSPARK_PYTHON"]).resolve() == Path(sys.executable).resolve()
    src = str(Path(lakemark.__file__).resolve().parent.parent)
    assert src in environ["PYTHONPATH"].split(os.pathsep)


_SAVE_AS_TABLE = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
spark.sql("DROP TABLE IF EXISTS warehouse_kept")
spark.range(2).write.saveAsTable("warehouse_kept")
print(spark.table("warehouse_kept").count())
"""


def test_managed_tables_go_to_the_servers_warehouse(connect_server: ConnectServer) -> None:
    """saveAsTable over Connect lands under $LAKEMARK_HOME/connect/warehouse, not in the folder
    the server was started from. The client is its own process: a Connect session made here
    would turn this whole test process into a Connect client."""
    done = subprocess.run([sys.executable, "-c", _SAVE_AS_TABLE, connect_server.endpoint],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2"]
    folder = Path(connect_server.home) / "connect" / "warehouse" / "warehouse_kept"
    assert list(folder.glob("*.parquet")), f"no table files under {folder}"


def test_a_port_in_use_is_one_line_and_nothing_starts(tmp_path: Path) -> None:
    env = {**os.environ, "LAKEMARK_HOME": str(tmp_path)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = lakemark_cli("server", "start", "--port", str(port), env=env)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"error: port {port} on 127.0.0.1 is in use by another "
                                   "process: give another --port")
    assert not (tmp_path / "connect" / "server.json").exists()


def test_status_and_stop_when_down(tmp_path: Path) -> None:
    env = {**os.environ, "LAKEMARK_HOME": str(tmp_path)}
    status = lakemark_cli("server", "status", env=env)
    assert (status.returncode, status.stdout.strip()) == (
        1, "down: no lakemark Connect server is running")
    assert json.loads(lakemark_cli("server", "status", "--json", env=env).stdout) == {"up": False}
    stop = lakemark_cli("server", "stop", env=env)
    assert (stop.returncode, stop.stdout.strip()) == (
        0, "down: no lakemark Connect server was running")


def test_a_record_of_a_server_that_is_gone_reads_as_down(tmp_path: Path) -> None:
    """A server killed from outside (or a reboot) leaves its record: status says down and
    removes it, so start is not refused."""
    record = tmp_path / "connect" / "server.json"
    record.parent.mkdir(parents=True)
    # pid 1 exists but is not a Connect server: the record must not be believed
    record.write_text(json.dumps({"pid": 1, "host": "127.0.0.1", "port": 15002,
                                  "master": "local[*]", "started_at": 0.0, "log": "x"}))
    env = {**os.environ, "LAKEMARK_HOME": str(tmp_path)}
    done = lakemark_cli("server", "status", env=env)
    assert done.returncode == 1
    assert done.stdout.startswith("down")
    assert not record.exists()


def test_stop_ends_the_server_and_frees_its_port(tmp_path: Path) -> None:
    """A server of its own (the session's fixture stays up): start, stop, then it is gone."""
    env = {**os.environ, "LAKEMARK_HOME": str(tmp_path)}
    port = free_port()
    started = lakemark_cli("server", "start", "--port", str(port), "--master", "local[1]",
                           "--driver-memory", "512m", "--json", env=env)
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    try:
        stopped = lakemark_cli("server", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.strip() == f"stopped: sc://127.0.0.1:{port} (pid {pid})"
    finally:  # never leave a JVM behind, whatever failed
        if Path(f"/proc/{pid}").exists() and b"SparkConnectServer" in Path(
                f"/proc/{pid}/cmdline").read_bytes():
            os.killpg(pid, 9)
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(
        ") ", 1)[1][0] == "Z"
    with socket.socket() as probe:  # free again for a server (which reuses the address)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
        probe.listen()
    assert lakemark_cli("server", "status", env=env).returncode == 1
