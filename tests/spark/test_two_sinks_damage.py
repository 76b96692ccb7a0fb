"""A job that writes one read to two sinks, over input with damage only a full read meets (a bad
page in one column of a Parquet file): the damage is found before the first sink commits, so no
sink ever holds rows of a file another sink of the run did not get — across a kill after the
first sink committed and its retry, and a later take of the fixed file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from damaged_pages import orders_parquet as _parquet
from deltalake import DeltaTable

from lakemark._fault import FAULT_ENV

pytestmark = pytest.mark.spark

# Two sinks of one read, as a user writes them: a narrow table of keys and the full rows.
SCRIPT = """\
import sys
from lakemark import Job

source, keys, full = sys.argv[1:4]
with Job("orders") as job:
    orders = job.read_files(source, format="parquet", ctx="landing")
    if not orders.isEmpty():  # a run with no new file has no columns to select
        job.write(orders.select("id"), keys, format="delta", ctx="order_keys")
        job.write(orders, full, format="delta", ctx="orders")
"""


class Orders:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.src = tmp / "landing"
        self.src.mkdir()
        self.keys = tmp / "order_keys"
        self.full = tmp / "orders"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.script = tmp / "orders_job.py"
        self.script.write_text(SCRIPT)

    def run(self, fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
        env.pop(FAULT_ENV, None)
        if fault:
            env[FAULT_ENV] = fault
        return subprocess.run(
            [sys.executable, "-m", "lakemark", "run", "--state", self.state, str(self.script),
             str(self.src), str(self.keys), str(self.full)],
            capture_output=True, text=True, timeout=600, env=env)

    def ids(self, table: Path) -> list[int]:
        if not (table / "_delta_log").exists():
            return []
        return sorted(DeltaTable(str(table)).to_pyarrow_table().column("id").to_pylist())

    def both(self) -> tuple[list[int], list[int]]:
        return self.ids(self.keys), self.ids(self.full)


def test_damage_is_found_before_the_first_sink_and_a_kill_after_it_doubles_nothing(
        tmp_path: Path) -> None:
    job = Orders(tmp_path)
    (job.src / "part-0.parquet").write_bytes(_parquet(range(3)))
    (job.src / "part-1.parquet").write_bytes(_parquet(range(100, 400), bad_page=True))

    first = job.run()
    assert first.returncode == 1, first.stderr
    last = first.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "part-1.parquet" in last, first.stderr
    assert "set aside before any sink wrote" in last
    assert "Traceback" not in first.stderr
    assert job.both() == ([], [])  # neither sink wrote: the narrow one did not go first

    # The next attempt goes on without the file; it is killed after its first sink committed.
    killed = job.run(fault="after-sink-commit")
    assert killed.returncode == -9, killed.stderr
    assert job.both() == ([0, 1, 2], [])
    retry = job.run()  # replays the killed attempt's files: the first write is skipped
    assert retry.returncode == 3, retry.stderr
    assert job.both() == ([0, 1, 2], [0, 1, 2])
    assert job.run().returncode == 0
    assert job.both() == ([0, 1, 2], [0, 1, 2])

    # The producer sends the file again, whole: both sinks take it once.
    (job.src / "part-1.parquet").write_bytes(_parquet(range(100, 400)))
    fixed = job.run()
    assert fixed.returncode == 0, fixed.stderr
    assert job.both() == ([0, 1, 2, *range(100, 400)], [0, 1, 2, *range(100, 400)])
    assert job.run().returncode == 0
    assert job.both()[1] == [0, 1, 2, *range(100, 400)]
    listed = subprocess.run([sys.executable, "-m", "lakemark", "quarantine", "list", "orders",
                             "--all", "--state", job.state, "--json"],
                            capture_output=True, text=True, timeout=120)
    [entry] = json.loads(listed.stdout)["files"]
    assert (Path(entry["path"]).name, entry["status"]) == ("part-1.parquet", "retried")


def test_strict_mode_fails_before_any_sink_and_sets_nothing_aside(tmp_path: Path) -> None:
    job = Orders(tmp_path)
    job.script.write_text(SCRIPT.replace(
        'from lakemark import Job', 'from lakemark import BadFilePolicy, Job').replace(
        'Job("orders")', 'Job("orders", bad_files=BadFilePolicy("fail"))'))
    (job.src / "part-0.parquet").write_bytes(_parquet(range(3)))
    (job.src / "part-1.parquet").write_bytes(_parquet(range(100, 400), bad_page=True))
    for _ in range(2):  # strict: it fails every time, naming the file, and writes nothing
        out = job.run()
        assert out.returncode == 1 and "part-1.parquet" in out.stderr, out.stderr
        assert "on_bad_file=fail" in out.stderr
    assert job.both() == ([], [])
