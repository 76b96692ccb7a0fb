"""Scenarios 6 (S3 events, through ``bench/s3_events.py``) and 7 (lineage analyzer speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parent
REPO = BENCH.parent


def events(out_file: Path, *, events: int, trials: int) -> dict[str, Any]:
    """Run bench/s3_events.py (its own moto_server) and return its result document."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "s3_events.py"), "--events", str(events),
         "--latency-trials", str(trials), "--out", str(out_file)],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    if proc.returncode != 0:
        raise RuntimeError(f"s3_events.py failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(out_file.read_text())
    return result


def committed_events() -> dict[str, Any]:
    """The committed result of bench/s3_events.py, for --quick (which does not rerun it)."""
    result: dict[str, Any] = json.loads((BENCH / "results" / "s3_events.json").read_text())
    result["source"] = "bench/results/s3_events.json (committed; not rerun by --quick)"
    return result


def lineage(*, repeat: int) -> dict[str, Any]:
    """Scripts analysed per second over the lineage golden-fixture scripts, if present."""
    scripts_dir = REPO / "tests" / "fixtures" / "lineage" / "scripts"
    try:
        from lakemark.lineage import analyze_source
    except ImportError as exc:
        return {"outcome": "skipped", "reason": f"lakemark.lineage not importable: {exc}"}
    scripts = sorted(scripts_dir.glob("*.py")) if scripts_dir.is_dir() else []
    if not scripts:
        return {"outcome": "skipped", "reason": f"no scripts under {scripts_dir}"}
    texts = [(p.name, p.read_text()) for p in scripts]
    for name, text in texts:  # warm-up (imports, caches)
        analyze_source(text, job=name, file=name)
    t0 = time.perf_counter()
    lines = 0
    for _ in range(repeat):
        for name, text in texts:
            analyze_source(text, job=name, file=name)
            lines += text.count("\n")
    elapsed = time.perf_counter() - t0
    analysed = repeat * len(texts)
    return {"outcome": "measured", "scripts": len(texts), "repeat": repeat,
            "scripts_analysed": analysed, "seconds": round(elapsed, 3),
            "scripts_per_second": round(analysed / elapsed, 1),
            "lines_per_second": round(lines / elapsed, 0),
            "corpus": "tests/fixtures/lineage/scripts (Glue-style scripts, AST only)",
            "peer": "no open-source peer for static Glue-script lineage runs here; absolute "
                    "rate only"}
