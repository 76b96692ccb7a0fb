"""The HTML lineage report of a scanned corpus, opened in headless Chromium: its JavaScript
draws every dataset, column and edge, fills the job filter, the edge count and the warnings,
and the page renders to a screenshot of the window's size.

Set LAKEMARK_UPDATE_SCREENSHOT=1 to refresh docs/lineage-report.png from this test."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from lakemark.lineage import scan_folder
from lakemark.lineage._html import to_html

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SCRIPTS = FIXTURES / "lineage" / "scripts"
CORPUS = ("classic", "studio", "dataframe_sql", "handwritten")
WIDTH, HEIGHT = 1400, 900


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (Debian package `chromium`; ./dev test installs it)")
    pytest.skip("chromium is not installed and CI is unset: the report is not rendered")


def report(tmp_path: Path) -> tuple[Path, dict]:  # type: ignore[type-arg]
    conn = tmp_path / "in" / "123456789012-us-east-1"
    shutil.copytree(FIXTURES / "catalog" / "123456789012-us-east-1" / "catalog",
                    conn / "catalog")
    for name in CORPUS:
        (conn / "jobs" / name).mkdir(parents=True)
        shutil.copy(SCRIPTS / f"{name}.py", conn / "jobs" / name / f"{name}.py")
    page = to_html(scan_folder(tmp_path / "in"))
    path = tmp_path / "lineage.html"
    path.write_text(page)
    m = re.search(r"const D=(.*?);const NS=", page, re.S)
    assert m
    return path, json.loads(m.group(1))


def run_chromium(browser: str, tmp_path: Path, path: Path) -> tuple[str, bytes]:
    """Dump the DOM after the page's scripts ran, and take a screenshot, in parallel."""
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--window-size={WIDTH},{HEIGHT}"]
    shot = tmp_path / "shot.png"
    url = path.resolve().as_uri()
    dump = subprocess.Popen([*common, f"--user-data-dir={tmp_path / 'p1'}", "--dump-dom", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    snap = subprocess.Popen([*common, f"--user-data-dir={tmp_path / 'p2'}",
                             f"--screenshot={shot}", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dom, dump_err = dump.communicate(timeout=120)
    _, snap_err = snap.communicate(timeout=120)
    assert dump.returncode == 0, dump_err
    assert snap.returncode == 0 and shot.exists(), snap_err
    return dom, shot.read_bytes()


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = chromium()
    path, data = report(tmp_path)
    assert len(data["datasets"]) >= 8 and len(data["edges"]) >= 30
    dom, png = run_chromium(browser, tmp_path, path)

    # every node below was created by the report's JavaScript, not present in the HTML source
    source = path.read_text()
    assert '<g class="ds"' not in source and '<path class="e ' not in source
    datasets = re.findall(r'<g class="ds[^"]*" data-key="([^"]*)"', dom)
    assert len(datasets) == len(data["datasets"])
    columns = re.findall(r'<g class="col[^"]*" data-name="[^"]*"', dom)
    assert len(columns) == sum(len(d["cols"]) for d in data["datasets"])
    edges = re.findall(r'<path class="e (DIRECT|INDIRECT) ([A-Z_]+)[^"]*" d="M[-\d.]+,', dom)
    assert len(edges) == len(data["edges"])
    assert {kind for _, kind in edges} >= {"IDENTITY", "TRANSFORMATION", "AGGREGATION",
                                           "FILTER", "JOIN", "UNKNOWN"}
    assert f'<span id="count">{len(data["edges"])} edges</span>' in dom
    for job in CORPUS:
        assert f'<option value="{job}">{job}</option>' in dom
    assert "warning dataframe_sql: dataframe_sql.py:25: UDF mask" in dom
    assert re.search(r'<svg id="graph"[^>]* viewbox="0 0 \d+ \d+"', dom, re.I)

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (WIDTH, HEIGHT)
    if os.environ.get("LAKEMARK_UPDATE_SCREENSHOT"):
        (ROOT / "docs" / "lineage-report.png").write_bytes(png)
