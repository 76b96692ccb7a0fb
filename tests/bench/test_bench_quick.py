"""The benchmark harness's smoke test: ``bench/run.py all --quick`` produces every result file
with the keys the report reads, and ``bench/report.py`` renders them (no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need_service

pytestmark = [pytest.mark.spark, pytest.mark.services]

REPO = Path(__file__).resolve().parents[2]

EXPECTED = {
    "incremental": ["sizes"],
    "throughput": ["plain_mib_per_s", "lakemark_mib_per_s", "ratio_lakemark_to_plain_throughput",
                   "meets_target"],
    "s3_listing": ["full_listing", "start_after_listing", "target_calls",
                   "meets_target_start_after", "same_plan"],
    "scale": ["plan_new_s", "plan_zero_new_s", "process_peak_rss_mib", "meets_target"],
    "commit": ["at_run", "per_run_job_commit_ms", "per_run_delta_commit_ms", "meets_target"],
    "events": ["stage1_events_per_second", "sqs_calls_per_1000_events", "ratio_to_floor"],
    "lineage": ["outcome"],
    "iceberg_throughput": ["delta_mib_per_s", "iceberg_mib_per_s",
                           "ratio_iceberg_to_delta_throughput", "meets_target"],
}
TOOLS = ("lakemark", "spark_stream", "full_reread", "floor")


@pytest.mark.long
def test_quick_run_writes_every_result(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "all", "--quick", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name, keys in EXPECTED.items():
        doc = json.loads((out / f"{name}.json").read_text())
        assert doc["status"] == "ok" and doc["quick"] is True, (name, doc.get("error"))
        assert {"measured_at", "machine", "elapsed_s"} <= doc.keys(), name
        assert set(keys) <= doc.keys(), (name, sorted(doc))

    size = json.loads((out / "incremental.json").read_text())["sizes"][0]
    for case in size["cases"].values():
        assert set(TOOLS) <= case.keys()
        for tool in TOOLS:
            assert "wall_s" in case[tool] and "planning_s" in case[tool]
        assert case["ratios"]["spark_stream_wall_over_lakemark_wall"] is not None
        assert case["lakemark"]["files"] == case["floor"]["files"]  # the same new files
    assert len(size["history"]) == size["earlier_runs"]
    s3 = json.loads((out / "s3_listing.json").read_text())
    assert s3["start_after_listing"]["planned"] == s3["full_listing"]["planned"] == s3["new_keys"]

    if importlib.util.find_spec("matplotlib") is None:
        need_service("matplotlib is not installed (pip install 'lakemark[bench]'); "
                     "report not built")
    readme = tmp_path / "README.md"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "report.py"), "--results", str(out),
         "--readme", str(readme)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = readme.read_text()
    assert "## Summary" in text and "## 7. Lineage analyzer" in text
    assert list(out.glob("*.png"))
