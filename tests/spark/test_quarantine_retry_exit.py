"""The exit status of a retry that leaves out a file its own failed attempt set aside agrees
across `ingest files`, `ingest s3-incremental` (tests/services/test_s3_events_quarantine.py) and
`lakemark run`: 0 — the attempt that set the file aside reported it (its exit status, its
summary); the retry's summary and `--json` still list it as set aside earlier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_quarantine import truncate, write

pytestmark = pytest.mark.spark


def test_lakemark_run_exits_0_when_the_retry_only_leaves_out_what_its_attempt_set_aside(
        tmp_path: Path) -> None:
    src = tmp_path / "in"
    write("parquet", src / "a.parquet", 0, 3)
    truncate(write("parquet", src / "b.parquet", 10, 100))
    marker = tmp_path / "fail-after-read"
    marker.write_text("x")
    script = tmp_path / "job.py"
    script.write_text(
        "import os, sys\nfrom lakemark import Job\n"
        "with Job('scripted', state=sys.argv[3]) as job:\n"
        "    df = job.read_files(sys.argv[1], format='parquet', ctx='in')\n"
        "    if os.path.exists(sys.argv[4]):\n"
        "        raise RuntimeError('the sink is down')\n"
        "    job.write(df, sys.argv[2], format='json', ctx='out')\n")
    state = f"sqlite:///{tmp_path / 's.db'}"
    cmd = [sys.executable, "-m", "lakemark", "run", "--state", state, str(script), str(src),
           str(tmp_path / "t"), state, str(marker)]
    failed = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert failed.returncode == 1, failed.stderr
    marker.unlink()
    retry = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert retry.returncode == 0, retry.stderr
    assert "warning: job scripted committed" not in retry.stderr
    rows = [json.loads(line) for f in (tmp_path / "t").glob("*.json")
            for line in f.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == [0, 1, 2]
    shown = subprocess.run([sys.executable, "-m", "lakemark", "quarantine", "list", "scripted",
                            "--state", state, "--json"], capture_output=True, text=True,
                           timeout=120)
    assert [Path(f["path"]).name for f in json.loads(shown.stdout)["files"]] == ["b.parquet"]
