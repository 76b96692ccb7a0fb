"""Benchmark: scripts analysed per second by the lineage analyser, on one core.

The corpus is the test fixtures (tests/fixtures/lineage/scripts: classic generated, Glue
Studio, hand-written DynamicFrame, DataFrame + SQL, args-driven, helpers), analysed in
round-robin for a fixed number of scripts after a warm-up. The issue's target is at least
200 typical scripts per second on one core. Run: .venv/bin/python bench/lineage_scan.py
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from lakemark.catalog import FolderCatalog
from lakemark.lineage import analyze_source

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "fixtures" / "lineage" / "scripts"
CATALOG = FolderCatalog(ROOT / "tests" / "fixtures" / "catalog" / "123456789012-us-east-1")
N = 600


def main() -> None:
    names = ["classic", "studio", "handwritten", "dataframe_sql", "args_driven", "with_helpers"]
    sources = {n: (SCRIPTS / f"{n}.py").read_text() for n in names}
    modules = {"helpers.cleaning": ("c.py", (SCRIPTS / "helpers_cleaning.py").read_text()),
               "writers": ("w.py", (SCRIPTS / "helpers_writers.py").read_text())}
    for n in names:  # warm-up (sqlglot's first parse builds its tables)
        analyze_source(sources[n], catalog=CATALOG, modules=modules)
    per_style: dict[str, float] = {}
    start = time.perf_counter()
    for i in range(N):
        n = names[i % len(names)]
        t0 = time.perf_counter()
        analyze_source(sources[n], catalog=CATALOG, modules=modules)
        per_style[n] = per_style.get(n, 0.0) + time.perf_counter() - t0
    total = time.perf_counter() - start
    result = {
        "scripts": N,
        "seconds": round(total, 3),
        "scripts_per_second": round(N / total, 1),
        "ms_per_script_by_style": {n: round(1000 * t / (N / len(names)), 2)
                                   for n, t in per_style.items()},
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
