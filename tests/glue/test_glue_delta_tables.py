"""An unmodified Glue 4/5 Delta upsert script (``from delta.tables import DeltaTable`` and the
issue's ``merge`` snippet on ``s3://lake/customers``) run by ``lakemark run`` in one process,
the bucket mapped to a local folder; no delta-spark, no jars."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

pytestmark = pytest.mark.spark

SCRIPT = Path(__file__).parent / "scripts" / "delta_upsert.py"


def test_delta_upsert_script_runs_unmodified(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    write_deltalake(str(lake / "customers"), pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "name": ["Ann", "Bob", "Cy"],
        "email": ["a@x", "b@x", "c@x"], "updated_at": pa.array([1, 1, 1], pa.int64())}))
    changes = lake / "changes" / "2026" / "11" / "25"
    changes.mkdir(parents=True)
    (changes / "batch-1.json").write_text(
        '{"id": 2, "name": "Bob", "email": "bob@new", "updated_at": 5}\n'
        '{"id": 3, "name": "Cy", "email": "old@c", "updated_at": 2}\n'
        '{"id": 3, "name": "Cyd", "email": "cyd@new", "updated_at": 3}\n'
        '{"id": 4, "name": "Dee", "email": "d@x", "updated_at": 5}\n')
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    cmd = [sys.executable, "-m", "lakemark", "run", "--state",
           f"sqlite:///{tmp_path / 'state.db'}", "--bucket-map", f"s3://lake={lake}",
           str(SCRIPT), "--JOB_NAME", "customers-upsert", "--changes_path",
           "s3://lake/changes/", "--job-bookmark-option", "job-bookmark-enable"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "LAST_COMMIT MERGE 2 1" in out.stdout, out.stdout
    table = DeltaTable(str(lake / "customers"))
    got = {r["id"]: (r["name"], r["email"], r["updated_at"])
           for r in table.to_pyarrow_table().to_pylist()}
    assert got == {1: ("Ann", "a@x", 1), 2: ("Bob", "bob@new", 5), 3: ("Cyd", "cyd@new", 3),
                   4: ("Dee", "d@x", 5)}
    assert [h["operation"] for h in table.history()][:2] == ["MERGE", "WRITE"]
