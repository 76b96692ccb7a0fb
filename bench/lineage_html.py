"""Benchmark: the lineage report at scale (issue 19, finding 8).

For synthetic Glue estates of 30 and 500 jobs (tests/unit/lineage_synth.py: a catalog and
scripts in chains and fans), measures the scan (CPU seconds, scripts per CPU-second), the
report's generation and size, and, in headless Chromium, the time the page's JavaScript takes
(performance.now) for its first view, for selecting a dataset (its depth-2 graph laid out by
dagre), and for the whole graph. Results: bench/results/lineage_html.json.
Run: PYTHONPATH=src .venv/bin/python bench/lineage_html.py
"""

from __future__ import annotations

import html
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from lineage_synth import make_estate  # noqa: E402

from lakemark.lineage import scan_folder  # noqa: E402
from lakemark.lineage._html import to_html  # noqa: E402

PROBE = """<script>
(function(){const R={},t=performance.now.bind(performance);
 R.first_ms=t()-window.__t0;
 let s=t();document.querySelector('#side li[data-id="d:'+CSS.escape(__KEY__)+'"]').click();
 R.select_ms=t()-s;R.select_nodes=document.querySelectorAll("#view g.ds,#view g.job").length;
 s=t();document.getElementById("all").click();R.whole_ms=t()-s;
 R.whole_nodes=document.querySelectorAll("#view g.ds,#view g.job").length;
 R.whole_edges=document.querySelectorAll("#view path.e").length;
 const pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(R);
 document.body.appendChild(pre)})();
</script></body></html>"""


def measure(jobs: int, browser: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_estate(root / "in", jobs)
        c0 = time.process_time()
        lineage = scan_folder(root / "in")
        scan = time.process_time() - c0
        c0 = time.process_time()
        page = to_html(lineage)
        render = time.process_time() - c0
        out: dict[str, Any] = {"jobs": jobs, "scan_cpu_s": round(scan, 3),
                               "scripts_per_cpu_s": round(jobs / scan, 1),
                               "to_html_cpu_s": round(render, 3), "page_bytes": len(page)}
        if browser is None:
            return out
        data = json.loads(re.search(r"const D=(.*?);const NS=", page, re.S).group(1))  # type: ignore[union-attr]
        key = {d["label"]: d["key"] for d in data["datasets"]}[f"lake.t_{jobs // 2:03d}"]
        page = page.replace("<script>\nconst D=",
                            "<script>\nwindow.__t0=performance.now();const D=", 1)
        probed = root / "probe.html"
        probed.write_text(page.rsplit("</body></html>", 1)[0]
                          + PROBE.replace("__KEY__", json.dumps(key)))
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                               "--window-size=1400,900", f"--user-data-dir={root / 'p'}",
                               "--dump-dom", probed.as_uri()],
                              capture_output=True, text=True, timeout=600)
        m = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
        if m:
            out.update({k: round(v, 1) if isinstance(v, float) else v
                        for k, v in json.loads(html.unescape(m.group(1))).items()})
        return out


def main() -> None:
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    rows = [measure(n, browser) for n in (30, 500)]
    result = {"benchmark": "bench/lineage_html.py", "date": date.today().isoformat(),
              "cpu": f"{os.cpu_count()} cores, shared; load average {os.getloadavg()}",
              "browser": browser or "none (browser columns absent)",
              "python": platform.python_version(), "rows": rows}
    path = ROOT / "bench" / "results" / "lineage_html.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
