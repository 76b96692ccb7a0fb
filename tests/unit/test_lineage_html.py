"""The HTML lineage report: self-contained, holds every edge, and names from scanned scripts
cannot inject markup or script into it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from conftest import need_service

from lakemark.lineage import analyze_source
from lakemark.lineage._html import to_html

SOURCE = (
    "df = spark.read.parquet('s3://in/x')\n"
    "df = df.select(F.col('a').alias('</script><script>alert(1)</script>'), 'b')\n"
    "df.where('b > 1').write.parquet('s3://out/<img src=x onerror=alert(2)>')\n"
)


def render() -> str:
    return to_html([analyze_source("from pyspark.sql import functions as F\n" + SOURCE)])


def payload(page: str) -> dict:  # type: ignore[type-arg]
    m = re.search(r"const D=(.*?);const NS=", page, re.S)
    assert m
    return json.loads(m.group(1))


def test_report_is_self_contained_and_holds_every_edge() -> None:
    page = render()
    assert "src=\"http" not in page and "href=\"http" not in page
    data = payload(page)
    kinds = {(e["fcol"], e["tcol"], e["kind"]) for e in data["edges"]}
    assert ("a", "</script><script>alert(1)</script>", "IDENTITY") in kinds
    assert ("b", "", "FILTER") in kinds


def data_script(page: str) -> str:
    """The report's own script (after the vendored dagre one): data and code."""
    scripts = [s.split("</script>", 1)[0] for s in page.split("<script>")[1:]]
    assert len(scripts) == 2 and "dagre" in scripts[0][:2000]
    return scripts[1]


def test_names_from_scripts_cannot_break_out_of_the_script_element() -> None:
    page = render()
    assert page.count("</script>") == 2  # only the real end tags (dagre, then the report's)
    assert "<img" not in page.split("<script>", 1)[0]
    assert "alert(1)" in data_script(page) and "alert(1)" not in page.split("<script>", 1)[0]


def test_embedded_javascript_parses(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        need_service("node is not installed; the report's script syntax is not checked")
    page = render()
    for n, script in enumerate((page.split("<script>", 1)[1].split("</script>", 1)[0],
                                data_script(page))):
        path = tmp_path / f"report{n}.js"
        path.write_text(script)
        result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stderr
