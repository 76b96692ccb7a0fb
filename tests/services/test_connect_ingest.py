"""``lakemark ingest files`` over Spark Connect, against the suite's real Connect server.

The shape is a scheduled landing-zone job: order events land as JSON lines in date folders
(``landing/orders/dt=YYYY-MM-DD/``), and every run of the job copies the new files into the
lake, here through a warm server given as ``--remote`` or ``SPARK_REMOTE``.
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


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _land(folder: Path, day: str, part: int, first_id: int, n: int) -> None:
    """One producer file of ``n`` orders, ids from ``first_id``."""
    path = folder / f"dt={day}" / f"orders-{part:04d}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(
        json.dumps({"order_id": i, "customer": f"c{i % 7}", "amount": round(i * 1.25, 2),
                    "ts": f"{day}T10:{i % 60:02d}:00Z"}) + "\n"
        for i in range(first_id, first_id + n)))


def _ingest(server: ConnectServer, tmp_path: Path, *args: str,
            env: dict[str, str] | None = None) -> dict:
    done = lakemark_cli("ingest", "files", str(tmp_path / "landing" / "orders"), *args,
                        "--job", "orders_hourly", "--state",
                        f"sqlite:///{tmp_path / 'state.db'}", "--json",
                        env=env if env is not None else server.env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_runs_over_connect_take_only_new_files(connect_server: ConnectServer,
                                                   tmp_path: Path) -> None:
    landing = tmp_path / "landing" / "orders"
    lake = tmp_path / "lake" / "orders"
    _land(landing, "2026-11-27", 1, 1, 40)
    _land(landing, "2026-11-27", 2, 41, 40)
    _land(landing, "2026-11-28", 1, 81, 40)
    first = _ingest(connect_server, tmp_path, str(lake), "--target-format", "parquet",
                    "--remote", connect_server.endpoint)
    assert (first["status"], first["files"], first["rows"]) == ("SUCCEEDED", 3, 120)

    _land(landing, "2026-11-28", 2, 121, 40)
    _land(landing, "2026-11-29", 1, 161, 40)
    # the scheduler's environment names the server (no --remote)
    second = _ingest(connect_server, tmp_path, str(lake), "--target-format", "parquet",
                     env={**connect_server.env, "SPARK_REMOTE": connect_server.endpoint})
    assert (second["status"], second["files"], second["rows"]) == ("SUCCEEDED", 2, 80)
    shown = lakemark_cli("runs", "show", second["run_id"], "--state",
                         f"sqlite:///{tmp_path / 'state.db'}", "--json")
    taken = [f["path"] for f in json.loads(shown.stdout)["sources"]["source"]["files"]]
    assert sorted(taken) == [str(landing / "dt=2026-11-28" / "orders-0002.json"),
                             str(landing / "dt=2026-11-29" / "orders-0001.json")]

    ids = pq.read_table(lake).column("order_id").to_pylist()
    assert sorted(ids) == list(range(1, 201))  # every order once: none lost, none twice

    third = _ingest(connect_server, tmp_path, str(lake), "--target-format", "parquet",
                    "--remote", connect_server.endpoint)
    assert (third["files"], third["rows"]) == (0, 0)
    assert third["bookmark_version"] == second["bookmark_version"] + 1


def test_a_delta_target_over_connect(connect_server: ConnectServer, tmp_path: Path) -> None:
    """The default target (Delta) over Connect: two runs, two table versions, no duplicates."""
    from deltalake import DeltaTable

    landing = tmp_path / "landing" / "orders"
    lake = tmp_path / "lake" / "orders_delta"
    _land(landing, "2026-11-27", 1, 1, 25)
    assert _ingest(connect_server, tmp_path, str(lake), "--remote",
                   connect_server.endpoint)["rows"] == 25
    _land(landing, "2026-11-28", 1, 26, 25)
    assert _ingest(connect_server, tmp_path, str(lake), "--remote",
                   connect_server.endpoint)["rows"] == 25
    table = DeltaTable(str(lake))
    assert table.version() == 1
    ids = table.to_pyarrow_table().column("order_id").to_pylist()
    assert sorted(ids) == list(range(1, 51))


def test_the_servers_python_workers_import_lakemark(connect_server: ConnectServer) -> None:
    """A Python function the server runs (mapInArrow, as lakemark's readers use) imports
    lakemark in the server's worker: the server was started so that it can."""
    script = (
        "from pyspark.sql import SparkSession\n"
        f"spark = SparkSession.builder.remote({connect_server.endpoint!r}).getOrCreate()\n"
        "def where(batches):\n"
        "    import pyarrow as pa, lakemark\n"
        "    for _ in batches:\n"
        "        yield pa.RecordBatch.from_pylist([{'where': lakemark.__file__}])\n"
        "rows = spark.range(1).mapInArrow(where, 'where string').collect()\n"
        "print(rows[0].where)\n"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(src)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(src / "lakemark" / "__init__.py")


@pytest.mark.parametrize(("args", "env", "message"), BAD_ENDPOINTS)
def test_a_bad_endpoint_is_one_line_and_changes_nothing(tmp_path: Path, args: list[str],
                                                        env: dict[str, str],
                                                        message: str) -> None:
    _land(tmp_path / "landing" / "orders", "2026-11-27", 1, 1, 3)
    state = tmp_path / "state.db"
    done = lakemark_cli("ingest", "files", str(tmp_path / "landing" / "orders"),
                        str(tmp_path / "lake"), "--job", "orders_hourly", "--state",
                        f"sqlite:///{state}", *args, env={**os.environ, **env})
    assert done.returncode == 2
    assert message in done.stderr
    assert not state.exists() and not (tmp_path / "lake").exists()


def test_an_unreachable_server_is_one_line_before_the_run_starts(tmp_path: Path) -> None:
    _land(tmp_path / "landing" / "orders", "2026-11-27", 1, 1, 3)
    state = tmp_path / "state.db"
    port = free_port()  # nothing listens there
    done = lakemark_cli("ingest", "files", str(tmp_path / "landing" / "orders"),
                        str(tmp_path / "lake"), "--job", "orders_hourly", "--state",
                        f"sqlite:///{state}", "--remote", f"sc://127.0.0.1:{port}")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: cannot reach the Spark Connect server at "
                               f"sc://127.0.0.1:{port} (")
    assert not state.exists() and not (tmp_path / "lake").exists()
