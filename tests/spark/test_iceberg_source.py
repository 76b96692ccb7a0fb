"""Incremental Iceberg sources on real Spark with a real SQL catalog on SQLite (in tmp_path).

``job.read_table("db.src", format="iceberg", ctx=…)``: the first run reads the table, later runs
only the snapshots appended since (recorded in the manifest before reading), an overwrite in
the range fails the run naming the option that skips it, and a run killed right after its sink
committed is retried on exactly the snapshot it pinned, so nothing is written twice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyiceberg.catalog.sql import SqlCatalog

from lakemark import Job
from lakemark.errors import SourceError
from lakemark.state import open_store

pytestmark = pytest.mark.spark

SRC = Path(__file__).resolve().parents[2] / "src"
KILLED = -9


class Lake:
    """An Iceberg source table ``db.src`` written by pyiceberg, a state store, a Delta target."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.catalog_uri = f"sqlite:///{tmp / 'iceberg' / 'catalog.db'}"
        (tmp / "iceberg").mkdir()
        self.catalog = SqlCatalog("lakemark", uri=self.catalog_uri,
                                  warehouse=(tmp / "iceberg" / "warehouse").as_uri())
        self.catalog.create_namespace("db")
        schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
        self.table = self.catalog.create_table("db.src", schema)
        self.target = str(tmp / "out")

    def append(self, first: int, n: int) -> int:
        ids = list(range(first, first + n))
        self.table.append(pa.table({"id": pa.array(ids, pa.int64()),
                                    "name": [f"n{i}" for i in ids]}))
        return int(self.table.current_snapshot().snapshot_id)

    def run(self, **options: str) -> tuple[list[int], str]:
        """One run: the new rows of ``db.src`` appended to the Delta target; (ids read, run)."""
        with Job("j", state=self.state) as job:
            df = job.read_table("db.src", format="iceberg", ctx="src",
                                options={"iceberg_catalog": self.catalog_uri, **options})
            ids = sorted(r.id for r in df.select("id").collect())
            job.write(df, self.target, format="delta", ctx="out",
                      options={"mergeSchema": "true"})
            return ids, job.run_id

    def target_ids(self) -> list[int]:
        return sorted(DeltaTable(self.target).to_pyarrow_table().column("id").to_pylist())

    def manifest(self, run_id: str) -> dict[str, Any]:
        store = open_store(self.state)
        try:
            return next(i.plan for i in store.run_inputs(run_id) if i.ctx == "src")
        finally:
            store.close()


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


def test_runs_take_only_the_snapshots_appended_since(spark: Any, lake: Lake) -> None:
    lake.append(0, 2)
    first_pin = lake.append(2, 1)
    ids, run1 = lake.run()
    assert ids == [0, 1, 2]
    plan = lake.manifest(run1)
    assert (plan["kind"], plan["format"], plan["source"]) == ("table", "iceberg", "db.src")
    assert plan["range"]["full"] and plan["range"]["through"] == first_pin
    assert plan["next_state"]["snapshot_id"] == first_pin
    lake.append(3, 2)
    with lake.catalog.load_table("db.src").update_schema() as update:
        update.add_column("extra", __import__("pyiceberg.types").types.StringType())
    lake.table = lake.catalog.load_table("db.src")
    lake.table.append(pa.table({"id": pa.array([5], pa.int64()), "name": ["n5"],
                                "extra": ["x"]}))
    ids, run2 = lake.run()
    assert ids == [3, 4, 5]
    extra = DeltaTable(lake.target).to_pyarrow_table().sort_by("id").column("extra")
    assert extra.to_pylist() == [None] * 5 + ["x"]  # older files lack the column
    plan = lake.manifest(run2)
    assert plan["range"]["after"] == first_pin and len(plan["range"]["take"]) == 2
    assert plan["planned_files"] == 2
    ids, run3 = lake.run()  # nothing new: empty read, nothing written
    assert ids == [] and lake.manifest(run3)["planned_files"] == 0
    assert lake.target_ids() == [0, 1, 2, 3, 4, 5]


def test_an_overwrite_in_range_fails_the_run_unless_skipped(spark: Any, lake: Lake) -> None:
    lake.append(0, 2)
    lake.run()
    lake.table.delete("id == 0")  # copy-on-write: the file is rewritten without the row
    snapshot = lake.table.current_snapshot()
    assert snapshot.summary.operation.value == "overwrite"
    overwrite = snapshot.snapshot_id
    lake.append(10, 1)
    with pytest.raises(SourceError) as caught:
        lake.run()
    message = str(caught.value)
    assert "\n" not in message and "db.src" in message and str(overwrite) in message
    assert "streaming-skip-overwrite-snapshots=true" in message
    ids, run = lake.run(skipChangeCommits="true")  # the bookmark did not move: retried
    assert ids == [10]
    assert lake.manifest(run)["range"]["skipped"] == [overwrite]


def _killed_run(lake: Lake, fault: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(f"""
        from lakemark import Job
        from lakemark.spark import get_spark
        spark = get_spark("local[1]")
        with Job("j", state={lake.state!r}, spark=spark) as job:
            df = job.read_table("db.src", format="iceberg", ctx="src",
                                options={{"iceberg_catalog": {lake.catalog_uri!r}}})
            job.write(df, {lake.target!r}, format="delta", ctx="out")
    """)
    env = {**os.environ, "LAKEMARK_FAULT": fault, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)


def test_retry_after_sink_commit_replays_the_pinned_snapshot(spark: Any, lake: Lake) -> None:
    lake.append(0, 2)
    lake.run()
    pinned = lake.append(2, 2)
    killed = _killed_run(lake, "after-sink-commit")
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert lake.target_ids() == [0, 1, 2, 3]  # the write committed, the run did not
    lake.append(4, 1)  # arrives before the retry: the retry still reads up to `pinned`
    ids, retry = lake.run()
    assert ids == [2, 3]
    plan = lake.manifest(retry)
    assert plan["range"]["through"] == pinned and plan["replay"]["case"] == "pinned"
    assert lake.target_ids() == [0, 1, 2, 3]  # skipped: the token was there
    ids, _ = lake.run()
    assert ids == [4] and lake.target_ids() == [0, 1, 2, 3, 4]
