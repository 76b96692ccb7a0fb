"""Shared fixtures: a real local Spark session and a real moto_server process.

Services are real processes. A test that needs one skips only outside CI (``CI`` unset) and says
why; in CI a missing service is an error.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

IN_CI = bool(os.environ.get("CI"))

# Never let a test reach real AWS with someone's real credentials.
for _key, _value in {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}.items():
    os.environ[_key] = _value
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)


#: What pyspark sets in os.environ once a Spark Connect session is made in this process: from
#: then on every classic session, SparkContext and child process of the suite acts as a Connect
#: client. Connect clients belong in child processes.
_CONNECT_MARKS = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")


@pytest.fixture(autouse=True)
def _no_connect_client_left_in_this_process():  # type: ignore[no-untyped-def]
    """Fail the test that turned the test process into a Spark Connect client (and undo it),
    instead of the hundreds of later tests that would fail for it."""
    before = {k: os.environ.get(k) for k in _CONNECT_MARKS}
    yield
    left = [k for k in _CONNECT_MARKS if os.environ.get(k) != before[k]]
    for key in left:
        if before[key] is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before[key]  # type: ignore[assignment]
    if left:
        pytest.fail(f"this test left {', '.join(left)} in os.environ (a Spark Connect session "
                    "made in the test process): make the Connect client in a child process")


def need_service(reason: str) -> None:
    """Skip (outside CI) or fail (in CI) a test whose service is missing."""
    if IN_CI:
        pytest.fail(f"required service missing in CI: {reason}")
    pytest.skip(f"{reason} (set CI=1 to make this an error)")


def need_connect_client() -> None:
    """Skip (outside CI) or fail (in CI) a test that needs the Spark Connect client libraries."""
    import importlib.util

    missing = [m for m in ("grpc", "grpc_status") if importlib.util.find_spec(m) is None]
    if missing:
        need_service(f"the Spark Connect client libraries ({', '.join(missing)}; "
                     "pip install 'lakemark[connect]')")


#: Endpoint settings every command that takes ``--remote`` refuses before it starts, with the
#: one line it prints: (arguments, environment, message).
BAD_ENDPOINTS = [
    (["--remote", "http://127.0.0.1:15002"], {},
     "--remote must be a Spark Connect URL sc://HOST:PORT, got 'http://127.0.0.1:15002'"),
    ([], {"SPARK_REMOTE": "localhost:15002"},
     "SPARK_REMOTE must be a Spark Connect URL sc://HOST:PORT, got 'localhost:15002'"),
    (["--remote", "sc://127.0.0.1:15002", "--master", "local[2]"], {},
     "--master does not apply with --remote"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One local Spark session (2 cores) for the whole test run."""
    from lakemark.spark import get_spark

    session = get_spark("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


class MotoServer:
    """A running moto_server: its endpoint and the environment that points clients at it."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.env = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
        }

    def client(self, service: str):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def reset(self) -> None:
        self._api("reset", "POST")

    def _api(self, path: str, method: str = "GET") -> bytes:
        req = urllib.request.Request(f"{self.endpoint}/moto-api/{path}", method=method)
        with urllib.request.urlopen(req, timeout=10) as response:
            return bytes(response.read())

    def record(self) -> None:
        """Start recording the requests the server gets (moto's recorder), from none."""
        self._api("recorder/reset-recording", "POST")
        self._api("recorder/start-recording", "POST")

    def recorded(self) -> list[tuple[str, str]]:
        """Stop recording; the recorded requests as (method, URL path and query)."""
        self._api("recorder/stop-recording", "POST")
        lines = self._api("recorder/download-recording").decode().splitlines()
        out = []
        for line in lines:
            if line.strip():
                entry = json.loads(line)
                parts = urllib.parse.urlsplit(entry["url"])
                path = urllib.parse.unquote(parts.path)
                out.append((entry["method"], path + (f"?{parts.query}" if parts.query else "")))
        return out


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """moto_server as a separate HTTP process on a free loopback port."""
    # The venv's own moto_server first: one elsewhere on PATH may be an older moto.
    exe = str(Path(sys.executable).with_name("moto_server"))
    if not os.path.exists(exe):
        exe = shutil.which("moto_server") or exe
    if not os.path.exists(exe):
        need_service("moto_server is not installed (pip install 'moto[server]')")
    port = free_port()
    # Where moto's recorder writes, when a test turns it on (MotoServer.record).
    recordings = tempfile.mkdtemp(prefix="lakemark-moto-")
    proc = subprocess.Popen(
        [exe, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MOTO_RECORDER_FILEPATH": os.path.join(recordings, "requests")},
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                shutil.rmtree(recordings, ignore_errors=True)
                pytest.fail("moto_server did not start")
            time.sleep(0.1)
    server = MotoServer(endpoint)
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    yield server
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(recordings, ignore_errors=True)


@pytest.fixture
def s3(moto_server: MotoServer) -> Iterator[MotoServer]:
    """moto_server with its state wiped before the test."""
    moto_server.reset()
    yield moto_server


class ConnectServer:
    """A running ``lakemark server``: its endpoint and the LAKEMARK_HOME that records it."""

    def __init__(self, endpoint: str, home: str, port: int) -> None:
        self.endpoint = endpoint
        self.home = home
        self.port = port

    @property
    def env(self) -> dict[str, str]:
        """The environment of a ``lakemark`` process that sees this server's record."""
        return {**os.environ, "LAKEMARK_HOME": self.home}


def lakemark_cli(*args: str, env: dict[str, str] | None = None,
                 timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``lakemark ARGS`` as a separate process of this interpreter (this checkout's src)."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    env = dict(env if env is not None else os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "lakemark", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def connect_server(moto_server: MotoServer) -> Iterator[ConnectServer]:
    """A real Spark Connect server (``lakemark server start``) on a free loopback port, with
    its own LAKEMARK_HOME; stopped with ``lakemark server stop`` after the session. Started
    after moto_server, so the server's Python workers see the same S3 (its endpoint and test
    credentials in their environment) as the client, as a production server must."""
    home = tempfile.mkdtemp(prefix="lakemark-connect-home-")
    port = free_port()
    server = ConnectServer(f"sc://127.0.0.1:{port}", home, port)
    started = lakemark_cli("server", "start", "--port", str(port), "--master", "local[2]",
                           "--driver-memory", "1g", "--conf", "spark.sql.shuffle.partitions=4",
                           env=server.env)
    if started.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        pytest.fail(f"lakemark server start failed: {started.stderr.strip()[-2000:]}")
    yield server
    stopped = lakemark_cli("server", "stop", env=server.env)
    shutil.rmtree(home, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr
