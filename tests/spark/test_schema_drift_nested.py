"""A tracked JSON source whose nested values drift: a struct field of another type, text where
a struct was, a new field inside a struct. Nothing may come back as a silent null, on the
fast path (Spark's JSON reader) or the exact path (files holding a key that differs from a
column only in case, parsed record by record)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from lakemark import Job

pytestmark = pytest.mark.spark


def _put(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("case_variant", [False, True], ids=["fast", "exact"])
def test_nested_misfits_are_rescued_whole(spark: Any, tmp_path: Path,
                                          case_variant: bool) -> None:
    src, state = tmp_path / "in", f"sqlite:///{tmp_path / 'state.db'}"
    src.mkdir()
    _put(src / "a.json", [{"id": 1, "payload": {"a": 1}}])
    old = time.time() - 60
    os.utime(src / "a.json", (old, old))
    with Job("j", state=state, spark=spark) as job:
        assert job.read_files(str(src), format="json", ctx="src").count() == 1
    later = [{"id": 2, "payload": {"a": "x", "b": 2}}, {"id": 3, "payload": "flat"},
             {"id": 4, "payload": None}]
    if case_variant:
        later[0]["ID"] = 7
    _put(src / "b.json", later)
    with Job("j", state=state, spark=spark) as job:
        rows = {r["id"]: r for r in job.read_files(str(src), format="json", ctx="src")
                .collect()}
    rescued = {i: json.loads(r["_rescued_data"]) if r["_rescued_data"] else {}
               for i, r in rows.items()}
    assert json.loads(rescued[2]["payload"]) == {"a": "x", "b": 2}
    assert rows[2]["payload"] is None or rows[2]["payload"]["a"] is None
    assert rows[3]["payload"] is None and rescued[3]["payload"] == "flat"
    assert rows[4]["payload"] is None and "payload" not in rescued[4]
    if case_variant:
        assert rescued[2]["ID"] == "7"
