"""The human lines of a run that sets files aside: set-aside files are counted apart from the
files taken, and a file name with control characters (a newline, an escape) stays on its
line, escaped, in the summary, the warnings, `quarantine list` and an `error:` line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from lakemark.cli import cli

pytestmark = pytest.mark.spark

OLD = time.time() - 3600
HOSTILE = "cut\nname\x1b[31m.parquet"  # a newline and a terminal escape in one file name
ESCAPED = "cut\\nname\\x1b[31m.parquet"


def parquet(path: Path, first: int, n: int, *, cut: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": list(range(first, first + n))}), path)
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    os.utime(path, (OLD, OLD))


def lakemark(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})


def test_the_summary_counts_set_aside_files_apart_and_escapes_hostile_names(
        tmp_path: Path) -> None:
    src = tmp_path / "in"
    parquet(src / "a.parquet", 0, 3)
    parquet(src / "b.parquet", 3, 2)
    parquet(src / HOSTILE, 100, 50, cut=True)
    state = f"sqlite:///{tmp_path / 's.db'}"
    run = lakemark("ingest", "files", str(src), str(tmp_path / "out"), "--job", "j",
                   "--state", state, "--format", "parquet")
    assert run.returncode == 3, run.stderr
    summary = [" ".join(line.replace("│", " ").split()) for line in run.stdout.splitlines()
               if line.strip("│| ").startswith("files taken ")]
    assert len(summary) == 1 and summary[0].startswith("files taken 2 ("), run.stdout
    assert summary[0].endswith(", 1 set aside"), run.stdout
    for text in (run.stdout, run.stderr):
        assert "\x1b" not in text and "\nname" not in text, text
    assert ESCAPED in run.stdout, run.stdout  # the "set aside" row
    assert any(ESCAPED in line and "set aside" in line for line in run.stderr.splitlines()), \
        run.stderr
    listed = lakemark("quarantine", "list", "j", "--state", state)
    assert listed.returncode == 0, listed.stderr
    assert ESCAPED in listed.stdout and "\x1b" not in listed.stdout, listed.stdout
    assert "\nname" not in listed.stdout, listed.stdout


def test_strict_mode_names_a_hostile_file_on_one_error_line(tmp_path: Path, spark: Any) -> None:
    src = tmp_path / "in"
    parquet(src / "a.parquet", 0, 3)
    parquet(src / HOSTILE, 100, 50, cut=True)
    result = CliRunner().invoke(cli, [
        "ingest", "files", str(src), str(tmp_path / "out"), "--job", "j", "--format", "parquet",
        "--state", f"sqlite:///{tmp_path / 's.db'}", "--on-bad-file", "fail"])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and ESCAPED in errors[0], result.stderr
    assert "\x1b" not in result.stderr and "\nname" not in result.stderr, result.stderr
