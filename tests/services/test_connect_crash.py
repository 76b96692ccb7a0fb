"""Exactly-once across the client–server split of Spark Connect (issue 34), with real processes.

* The client (``lakemark ingest files --remote``) SIGKILLs itself at each named point of the
  crash matrix (``LAKEMARK_FAULT``), into a Parquet folder and into a Delta table; the next
  run, on the same warm server, leaves every row once in the target and the bookmark right.
* The server is SIGKILLed while a client stands just before its write: the client fails with
  one line (not gRPC's dump), the bookmark does not move, and after ``lakemark server start``
  the rerun leaves every row once.
* Two jobs run on one server at the same time, each with its own session settings, source,
  target and bookmark.

The checks are ``tests/crash_support.py``'s, shared with the classic crash matrix.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crash_support import KILLED, check_exactly_once, covered_files, run_ingest, start_held

from conftest import ConnectServer, free_port, lakemark_cli, need_service
from lakemark._fault import FAULT_POINTS
from lakemark.state import open_store

JOB = "connect_crash"


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    missing = [m for m in ("grpc", "grpc_status") if importlib.util.find_spec(m) is None]
    if missing:
        need_service(f"the Spark Connect client libraries ({', '.join(missing)}; "
                     "pip install 'lakemark[connect]')")


class Landing:
    """A source folder, a target and a SQLite state store; ``ingest files --remote`` runs as
    processes. Every file is JSON lines with an ``id`` unique across the source."""

    def __init__(self, tmp: Path, endpoint: str, *, target_format: str = "parquet",
                 job: str = JOB, first_id: int = 0) -> None:
        self.src = tmp / "in"
        self.src.mkdir(parents=True)
        self.target = tmp / "target"
        self.target_format = target_format
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.endpoint = endpoint
        self.job = job
        self.next_id = first_id
        self.files: dict[str, list[int]] = {}

    def arrive(self, n: int) -> None:
        path = self.src / f"f{len(self.files):04d}.json"
        ids = list(range(self.next_id, self.next_id + n))
        path.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
        self.files[path.name] = ids
        self.next_id += n

    def run(self, fault: str | None = None,
            extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return run_ingest(str(self.src), str(self.target), job=self.job, state=self.state,
                          fault=fault, target_format=self.target_format, timeout=600,
                          remote=self.endpoint, extra=extra)

    def bookmark(self) -> dict[str, Any]:
        store = open_store(self.state)
        try:
            return dict(store.get_bookmark(self.job).to_json())
        finally:
            store.close()

    def succeed(self, extra: tuple[str, ...] = ()) -> dict[str, Any]:
        out = self.run(extra=extra)
        assert out.returncode == 0, out.stderr[-2000:]
        return dict(json.loads(out.stdout))

    def check(self, *, all_taken: bool = True) -> None:
        found = check_exactly_once(self.target, self.target_format, state=self.state,
                                   job=self.job, files=self.files, all_taken=all_taken)
        assert found.ok, found.problems
        if all_taken:
            assert found.rows == sum(len(ids) for ids in self.files.values())


@pytest.mark.long
@pytest.mark.parametrize("target_format", ["parquet", "delta"])
def test_client_killed_at_each_point_then_rerun_writes_every_row_once(
        connect_server: ConnectServer, tmp_path: Path, target_format: str) -> None:
    land = Landing(tmp_path, connect_server.endpoint, target_format=target_format)
    for point in FAULT_POINTS:
        land.arrive(3)
        before = land.bookmark() if point != FAULT_POINTS[0] else None  # a run done
        killed = land.run(fault=point)
        assert killed.returncode == KILLED, (point, killed.returncode, killed.stderr[-2000:])
        if before is not None:  # a kill leaves the bookmark's state as it was, whole
            after = land.bookmark()
            assert (after["run"], after["state"]) == (before["run"], before["state"]), point
        if FAULT_POINTS.index(point) < FAULT_POINTS.index("after-sink-commit"):
            land.check(all_taken=False)  # nothing published: the target is the bookmark's
        land.arrive(2)  # arrives before the rerun, which takes it too (or the next one does)
        land.succeed()
        land.succeed()
        land.check()


def _server_pid(home: Path) -> int:
    return int(json.loads((home / "connect" / "server.json").read_text())["pid"])


def _start(home: Path, port: int) -> None:
    started = lakemark_cli("server", "start", "--port", str(port), "--master", "local[2]",
                           "--driver-memory", "1g", "--conf",
                           "spark.sql.shuffle.partitions=4",
                           env={**os.environ, "LAKEMARK_HOME": str(home)})
    assert started.returncode == 0, started.stderr[-2000:]


@pytest.fixture(scope="module")
def own_server() -> Iterator[tuple[Path, int]]:
    """A server of this module's own (the test kills it): its LAKEMARK_HOME and port."""
    home = Path(tempfile.mkdtemp(prefix="lakemark-connect-kill-"))
    port = free_port()
    _start(home, port)
    yield home, port
    lakemark_cli("server", "stop", env={**os.environ, "LAKEMARK_HOME": str(home)})
    subprocess.run(["rm", "-rf", str(home)], check=False)


def _gone(pid: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.long
def test_server_killed_mid_run_then_restarted_loses_and_duplicates_nothing(
        own_server: tuple[Path, int], tmp_path: Path) -> None:
    home, port = own_server
    land = Landing(tmp_path, f"sc://127.0.0.1:{port}")
    land.arrive(3)
    land.succeed()
    land.arrive(2)
    before = land.bookmark()
    gate = tmp_path / "gate"
    # the client has read the input's schema and is about to write: the server dies there
    client, reached = start_held(str(land.src), str(land.target), job=JOB, state=land.state,
                                 point="mid-read", gate=gate, target_format="parquet",
                                 remote=land.endpoint, extra=("--progress-interval", "0"))
    assert reached, client.communicate()[1][-2000:]
    pid = _server_pid(home)
    os.kill(pid, signal.SIGKILL)
    assert _gone(pid), "the killed server is still there"
    gate.touch()
    _, err = client.communicate(timeout=300)
    assert client.returncode == 1, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert lines[0].startswith("error: the Spark Connect server stopped answering during the "
                               "run"), lines[0]
    after = land.bookmark()
    assert (after["run"], after["state"]) == (before["run"], before["state"])
    land.check(all_taken=False)

    _start(home, port)  # the record of the killed server reads as down: a new one starts
    land.arrive(1)
    land.succeed()
    land.check()


@pytest.mark.long
def test_two_jobs_on_one_server_at_once_keep_their_sessions_and_bookmarks(
        connect_server: ConnectServer, tmp_path: Path) -> None:
    a = Landing(tmp_path / "a", connect_server.endpoint, job="orders")
    b = Landing(tmp_path / "b", connect_server.endpoint, job="refunds", first_id=100_000)
    for land in (a, b):
        land.state = f"sqlite:///{tmp_path / 'state.db'}"  # one store, two jobs
        land.arrive(3)
        land.arrive(3)
    # job a sets a session setting that changes how its output is split; b must not see it
    one_row_files = ("--conf", "spark.sql.files.maxRecordsPerFile=1")
    held = {}
    for land, extra in ((a, one_row_files), (b, ())):
        gate = tmp_path / f"gate-{land.job}"
        proc, reached = start_held(str(land.src), str(land.target), job=land.job,
                                   state=land.state, point="mid-read", gate=gate,
                                   target_format="parquet", remote=land.endpoint,
                                   extra=extra)
        assert reached, proc.communicate()[1][-2000:]
        held[land.job] = (proc, gate)
    for _, gate in held.values():  # both stand mid-run on the server: let them go together
        gate.touch()
    for land in (a, b):
        proc, _ = held[land.job]
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        assert (json.loads(out)["files"], json.loads(out)["rows"]) == (2, 6)
    a_files = list(a.target.rglob("*.parquet"))
    b_files = list(b.target.rglob("*.parquet"))
    assert len(a_files) == 6  # one row a file: a's own session setting
    assert len(b_files) < 6  # b's session never had it
    for land in (a, b):
        land.check()
    # each bookmark covers its own source only; the next runs take only their new files
    a.arrive(2)
    b.arrive(4)
    assert (a.succeed()["rows"], b.succeed()["rows"]) == (2, 4)
    for land in (a, b):
        land.check()
        assert covered_files(land.state, land.job) == set(land.files)
