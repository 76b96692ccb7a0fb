"""A job whose source was read untracked writes into a Delta table with types; its first
tracked run (the default now) starts from the table's types, so a value of another type is
rescued instead of failing the run on the table's schema (issue 23's stuck job)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


def test_first_tracked_run_takes_the_tables_types(spark: Any, tmp_path: Path) -> None:
    src, table = tmp_path / "in", tmp_path / "table"
    src.mkdir()
    args = ["ingest", "files", str(src), str(table), "--job", "j",
            "--state", f"sqlite:///{tmp_path / 'state.db'}", "--json"]
    (src / "a.json").write_text('{"id": 1, "code": 5}\n')
    old = time.time() - 60
    os.utime(src / "a.json", (old, old))
    first = CliRunner().invoke(cli, [*args, "--schema-evolution", "off"])
    assert first.exit_code == 0, first.output
    (src / "b.json").write_text('{"id": 2, "code": "X5", "extra": "e"}\n')
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    out = json.loads(second.stdout)
    assert out["schema"]["rescued_values"] == {"code": 1}
    rows = sorted(DeltaTable(str(table)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["code"], r["extra"]) for r in rows] == [(1, 5, None), (2, None, "e")]
    assert json.loads(rows[1]["_rescued_data"])["code"] == "X5"
