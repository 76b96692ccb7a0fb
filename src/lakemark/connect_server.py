"""A local Spark Connect server run from PySpark's own distribution (``lakemark server``).

Every classic lakemark run starts its own JVM; a Connect server started once and kept warm
lets a fresh client process skip JVM start and warm-up (issue 34). The server is PySpark's
``SparkConnectServer`` class started with its ``bin/spark-submit``: no other jars, no Maven.
Its pid, endpoint and settings are kept in ``$LAKEMARK_HOME/connect/server.json`` and its
output in ``server.log`` beside it (``LAKEMARK_HOME`` defaults to ``~/.lakemark``), so
``status`` and ``stop`` find it from any process.

The server's Python workers (UDFs, ``mapInArrow``, Python data sources) run this interpreter
with lakemark importable: ``PYSPARK_PYTHON`` and ``PYTHONPATH`` are set in its environment.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ConfigError, EnvironmentProblem

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServerInfo", "home", "server_status",
           "start_server", "stop_server"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 15002
#: The server class PySpark's ``sbin/start-connect-server.sh`` starts.
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


@dataclass(frozen=True)
class ServerInfo:
    """What ``server.json`` records of a started server."""

    pid: int
    host: str
    port: int
    master: str
    started_at: float
    log: str

    @property
    def endpoint(self) -> str:
        """The ``sc://`` URL clients give as ``--remote`` or ``SPARK_REMOTE``."""
        return f"sc://{self.host}:{self.port}"


def home() -> Path:
    """lakemark's own folder: ``$LAKEMARK_HOME``, else ``~/.lakemark``."""
    setting = os.environ.get("LAKEMARK_HOME")
    return Path(setting).expanduser() if setting else Path.home() / ".lakemark"


def _server_dir() -> Path:
    return home() / "connect"


def _state_file() -> Path:
    return _server_dir() / "server.json"


def _read_info() -> ServerInfo | None:
    path = _state_file()
    try:
        data = json.loads(path.read_text())
        return ServerInfo(**{k: data[k] for k in ServerInfo.__dataclass_fields__})
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a lakemark server record ({exc}); remove it if no "
                          "server is running") from exc


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running Connect server (not a dead one's reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return SERVER_CLASS.encode() in cmdline.read_bytes()
        except OSError:
            return False
    return True


def _port_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``host:port`` now. SO_REUSEADDR as the server's own
    socket has: a port whose last server just stopped (connections in TIME_WAIT) is free,
    one another process listens on is not."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _accepts(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def _spark_home() -> Path:
    """PySpark's own distribution: ``bin/spark-submit`` and the Connect server jar."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    if not (spark_home / "bin" / "spark-submit").exists():
        raise EnvironmentProblem(f"PySpark at {spark_home} has no bin/spark-submit: install "
                                 "PySpark from pip (pip install 'lakemark[connect]')")
    if not list((spark_home / "jars").glob("spark-connect_*.jar")):
        raise EnvironmentProblem(f"PySpark at {spark_home} has no Spark Connect server jar "
                                 "(jars/spark-connect_*.jar): PySpark 4 or newer is needed")
    return spark_home


def server_command(host: str, port: int, master: str, settings: Mapping[str, str],
                   driver_memory: str | None) -> list[str]:
    """The ``spark-submit`` command line that starts the server."""
    cmd = [str(_spark_home() / "bin" / "spark-submit"), "--class", SERVER_CLASS,
           "--name", "lakemark Connect server", "--master", master]
    if driver_memory:
        cmd += ["--driver-memory", driver_memory]
    merged = {**settings, "spark.connect.grpc.binding.address": host,
              "spark.connect.grpc.binding.port": str(port)}
    for key, value in merged.items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd


def _worker_env() -> dict[str, str]:
    """The server's environment: its Python workers run this interpreter and see lakemark."""
    package_root = str(Path(__file__).resolve().parent.parent)
    paths = [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                              if p and p != package_root]
    return {**os.environ, "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(paths)}


def start_server(*, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 master: str | None = None, conf: Mapping[str, str] | None = None,
                 driver_memory: str | None = None, timeout: float = 180.0) -> ServerInfo:
    """Start the server and return once it accepts connections.

    ConfigError when one is already up or the port is taken (nothing started);
    EnvironmentProblem when it does not come up (its log's last lines are quoted).
    """
    from .spark import check_java, spark_settings

    current = server_status()
    if current is not None:
        raise ConfigError(f"a lakemark Connect server is already up at {current.endpoint} "
                          f"(pid {current.pid}); `lakemark server stop` first")
    if not 0 < port < 65536:
        raise ConfigError(f"--port {port} is not a TCP port (1-65535)")
    if not _port_free(host, port):
        raise ConfigError(f"port {port} on {host} is in use by another process: give "
                          "another --port")
    check_java()
    master, settings = spark_settings(master, conf)
    # Spark's own logging goes to the server's log; the client's class-data archive and quiet
    # log4j file are for lakemark's in-process driver, not for this one.
    if "spark.driver.extraJavaOptions" not in (conf or {}):
        settings.pop("spark.driver.extraJavaOptions", None)
    settings.setdefault("spark.pyspark.python", sys.executable)
    # Clients have no SparkContext to ask (lakemark.spark.default_parallelism): say it here.
    settings.setdefault("spark.default.parallelism", str(_cores(master)))
    folder = _server_dir()
    # Managed tables (saveAsTable, CREATE TABLE) of every client land in one known place, not
    # in whatever folder `lakemark server start` happened to run in.
    settings.setdefault("spark.sql.warehouse.dir", str(folder / "warehouse"))
    cmd = server_command(host, port, master, settings, driver_memory)
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "server.log"
    with open(log, "ab") as out:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        out.write(f"\n=== lakemark server start {now} sc://{host}:{port} master {master}\n"
                  .encode())
        out.flush()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                env=_worker_env(), start_new_session=True)
    info = ServerInfo(pid=proc.pid, host=host, port=port, master=master,
                      started_at=time.time(), log=str(log))
    _write_info(info)
    deadline = time.monotonic() + timeout
    while not _accepts(host, port):
        if proc.poll() is not None:
            _state_file().unlink(missing_ok=True)
            raise EnvironmentProblem(f"the Connect server exited (status {proc.returncode}) "
                                     f"before it listened on {host}:{port}: {_last_line(log)} "
                                     f"(log: {log})")
        if time.monotonic() > deadline:
            _terminate(proc.pid)
            _state_file().unlink(missing_ok=True)
            raise EnvironmentProblem(f"the Connect server did not listen on {host}:{port} "
                                     f"within {timeout:.0f} s; stopped it (log: {log})")
        time.sleep(0.2)
    return info


def _cores(master: str) -> int:
    """Cores of a ``local[N]``/``local[*]``/``local`` master (this machine's for others)."""
    inside = master[len("local["):-1] if master.startswith("local[") else ""
    if master == "local":
        return 1
    if inside.split(",")[0].isdigit():
        return int(inside.split(",")[0])
    return os.cpu_count() or 1


def _write_info(info: ServerInfo) -> None:
    path = _state_file()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(info), indent=1))
    os.replace(tmp, path)


def _last_line(log: Path) -> str:
    """The last error-looking line of the server's log (or its last line)."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    for line in reversed(lines[-200:]):
        if "Exception" in line or "Error" in line or "error" in line:
            return line[:300]
    return lines[-1][:300] if lines else "empty log"


def server_status() -> ServerInfo | None:
    """The running server's record, or None; a record of a server that is gone is removed."""
    info = _read_info()
    if info is None:
        return None
    if not _alive(info.pid):
        _state_file().unlink(missing_ok=True)
        return None
    return info


def _terminate(pid: int, timeout: float = 30.0) -> None:
    """End the server's process group (``start_new_session``: it is the group's leader)."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child: poll whether it is still there
            waited = 0 if _exists(pid) else pid
        if waited == pid:
            return
        time.sleep(0.1)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:  # a zombie (ended, not yet reaped by its parent) has ended
        return stat.read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True


def stop_server() -> ServerInfo | None:
    """Stop the running server (SIGTERM, then SIGKILL after 30 s); None when none was up."""
    info = server_status()
    if info is None:
        return None
    _terminate(info.pid)
    # A JVM's main thread shows as ended while its other threads still close its sockets:
    # return once the port is free, so a start right after this one is not refused.
    deadline = time.monotonic() + 10
    while not _port_free(info.host, info.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    _state_file().unlink(missing_ok=True)
    return info
