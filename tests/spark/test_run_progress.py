"""`lakemark run` in a log (stdout not a terminal) prints progress lines naming the script's
job at work, as `ingest files` does; 0 turns them off; a bad interval is a usage error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

SCRIPT = '''\
import sys
from lakemark import Job

with Job("progress\\nnight", state=sys.argv[1]) as job:
    df = job.read_files(sys.argv[2], format="json", ctx="orders")
    job.write(df, sys.argv[3], format="parquet", ctx="out")
'''


def run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    landing = tmp_path / "landing"
    landing.mkdir(exist_ok=True)
    (landing / "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    script = tmp_path / "etl.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "LAKEMARK_PROGRESS_INTERVAL"}
    return subprocess.run(
        [sys.executable, "-m", "lakemark", "run", "--master", "local[1]", *options, str(script),
         f"sqlite:///{tmp_path / 's.db'}", str(landing), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, env=env)


def test_a_script_run_in_a_log_prints_progress_lines_naming_its_job(tmp_path: Path) -> None:
    out = run(tmp_path, "--progress-interval", "0.05")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("progress: ")]
    assert lines, out.stderr
    named = [line for line in lines if line.startswith("progress: job progress\\nnight, ")]
    assert named, lines  # the job's name, its newline escaped: one line each
    assert any("file(s) planned" in line for line in named), named


def test_interval_0_prints_none_and_a_bad_one_is_a_usage_error(tmp_path: Path) -> None:
    quiet = run(tmp_path, "--progress-interval", "0")
    assert quiet.returncode == 0, quiet.stderr
    assert "progress: " not in quiet.stderr
    bad = run(tmp_path, "--progress-interval", "-1")
    assert bad.returncode == 2
    assert "--progress-interval must be a finite number of seconds" in bad.stderr
