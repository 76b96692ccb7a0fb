"""A full disk under the target or under the state store (a small tmpfs, for real): `lakemark
ingest files` ends in one `error:` line naming the target or store and the cause ("No space
left on device" out of Spark's error chain; "disk full" for the store), prints no Java stack
trace or Python traceback, moves no bookmark and leaves no half-written data; once there is
space again the next run leaves every row in the table exactly once. A PostgreSQL store whose
connection the server ends mid-run is the same, with "connection to the server was lost"
(issue 31, finding 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from fs_faults import fill, tmpfs

pytestmark = pytest.mark.spark


def lakemark(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "1000"}
    env.pop("LAKEMARK_SPARK_MASTER", None)
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, timeout=900, env=env)


def test_a_full_disk_under_the_target_is_named_and_loses_nothing(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    ids = range(30_000)  # ~2 MB of JSON: far more than the target's disk holds as Parquet
    (src / "a.json").write_text("".join(json.dumps({"id": i, "pad": f"{i:064x}"}) + "\n"
                                        for i in ids))
    state = f"sqlite:///{tmp_path / 'state.db'}"
    with tmpfs(tmp_path / "disk", "128k") as disk:
        table = disk / "table"
        args = ("ingest", "files", str(src), str(table), "--job", "j", "--state", state,
                "--master", "local[1]")
        failed = lakemark(*args)
        assert failed.returncode == 1, failed.stderr[-3000:]
        stderr = failed.stderr
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, stderr[-3000:]
        assert f"writing {table} failed" in errors[0], errors[0]
        assert "No space left on device" in errors[0], errors[0]
        assert "o2" not in errors[0] and "An error occurred while calling" not in errors[0]
        # Spark's noise stays off: no stack frame, no cause chain, no Python traceback.
        assert "\tat " not in stderr and "Caused by" not in stderr, stderr[-3000:]
        assert "Traceback" not in stderr and "Exception" not in stderr, stderr[-3000:]
        # Nothing half-written: no data file in the table, the bookmark did not move.
        assert not [p for p in disk.rglob("*.parquet")], list(disk.rglob("*"))
        shown = lakemark("bookmark", "show", "j", "--state", state, "--json")
        assert json.loads(shown.stdout)["run"] == 0, shown.stdout
        # More space (the same mount, grown): the next run takes the file, every row once.
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        done = lakemark(*args)
        assert done.returncode == 0, done.stderr[-3000:]
        got = DeltaTable(str(table)).to_pyarrow_table(columns=["id"]).column("id").to_pylist()
        assert sorted(got) == list(ids)


@pytest.mark.parametrize("point", ["after-plan-recorded", "before-job-commit"])
def test_a_store_whose_disk_fills_mid_run_ends_in_one_line_and_loses_nothing(
        tmp_path: Path, point: str) -> None:
    """`ingest files` held at ``point`` (before its sink wrote, or after its sink committed)
    while the disk under its SQLite store fills: one `error:` line naming the store and "disk
    full", no traceback; with space again the next run leaves every row in the table once."""
    from crash_support import check_exactly_once, start_held

    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(50)))
    target = tmp_path / "table"
    with tmpfs(tmp_path / "disk", "2m") as disk:
        state = f"sqlite:///{disk}/state.db"
        gate = tmp_path / "gate"
        proc, reached = start_held(str(src), str(target), job="j", state=state, point=point,
                                   gate=gate)
        if not reached:
            raise AssertionError(f"the run ended before {point}: {proc.communicate()[1]}")
        filler = fill(disk)
        gate.touch()
        _, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 1, stderr[-3000:]
        assert "Traceback" not in stderr and "\tat " not in stderr, stderr[-3000:]
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, stderr[-3000:]
        flat = " ".join(stderr.split())
        assert f"state store {state}" in flat and "disk under it is full" in flat, flat
        assert "not a lakemark state database" not in flat
        filler.unlink()
        again = lakemark("ingest", "files", str(src), str(target), "--job", "j", "--state",
                         state, "--master", "local[1]")
        assert again.returncode == 0, again.stderr[-3000:]
        found = check_exactly_once(target, "delta", state=state, job="j",
                                   files={"a.json": list(range(50))}, all_taken=True)
        assert found.ok, found.problems
        assert found.rows == 50


def test_a_postgres_store_whose_connection_is_ended_mid_run_loses_nothing(
        tmp_path: Path) -> None:
    """`ingest files` held after its sink committed while the server ends its state-store
    connection (pg_terminate_backend from another session, found by the run's own
    application_name): one `error:` line naming the store without credentials and "connection
    to the server was lost"; the next run replays the committed write and commits it once."""
    import uuid

    import psycopg
    from crash_support import check_exactly_once, start_held
    from pgtest import DATABASE, HOST, PORT, need_postgres, state_url

    user = need_postgres()
    schema = f"lm_pgfault_{uuid.uuid4().hex[:10]}"
    app = f"lakemark-fault-{uuid.uuid4().hex[:10]}"
    state = state_url(user) + f"?schema={schema}&application_name={app}"
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(40)))
    target = tmp_path / "table"
    admin = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user, autocommit=True)
    try:
        gate = tmp_path / "gate"
        proc, reached = start_held(str(src), str(target), job="j", state=state,
                                   point="before-job-commit", gate=gate)
        if not reached:
            raise AssertionError(f"the run ended early: {proc.communicate()[1]}")
        ended = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = %s", (app,)).fetchall()
        assert ended == [(True,)], ended  # exactly the held run's store connection
        gate.touch()
        _, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 1, stderr[-3000:]
        assert "Traceback" not in stderr and "\tat " not in stderr, stderr[-3000:]
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, stderr[-3000:]
        flat = " ".join(stderr.split())
        assert "connection to the server was lost" in errors[0], flat
        assert f"{HOST}:{PORT}/{DATABASE}" in errors[0], errors[0]
        again = lakemark("ingest", "files", str(src), str(target), "--job", "j", "--state",
                         state, "--master", "local[1]")
        assert again.returncode == 0, again.stderr[-3000:]
        found = check_exactly_once(target, "delta", state=state, job="j",
                                   files={"a.json": list(range(40))}, all_taken=True)
        assert found.ok, found.problems
        assert found.rows == 40
    finally:
        admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.close()
