"""The issue's reproduction: JDBC URLs with passwords in Oracle's thin form and with '/' and '@'
in the password, read with `job.read_jdbc` under `lakemark run` (a real Spark session and the
real JDBC error paths). The password is in no message, no run record and no state-file byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from secret_corpus import leaks

URLS = [
    "jdbc:oracle:thin:scott/Orc1ePassW0rd01@//127.0.0.1:1521/orcl",
    "jdbc:postgresql://etl:S3c/retSlash05@127.0.0.1:9/shop",
    "jdbc:postgresql://etl:p@ss@tSign06@127.0.0.1:9/shop",
    "jdbc:mysql://h:3306/shop?user=etl&password=QueryParamPw15&ssl=true",
]


def test_jdbc_urls_with_passwords_leak_nowhere(tmp_path: Path) -> None:
    script = tmp_path / "jdbc_job.py"
    script.write_text(
        "import sys\n"
        "from lakemark import Job, LakemarkError\n"
        f"URLS = {URLS!r}\n"
        "for n, url in enumerate(URLS):\n"
        "    try:\n"
        "        with Job(f'jdbc{n}') as job:\n"
        "            job.read_jdbc(url, 'hr.emp', ctx='emp')\n"
        "    except LakemarkError as exc:\n"
        "        print(f'{type(exc).__name__}: {exc}')\n"
        "    else:\n"
        "        sys.exit('read_jdbc did not fail for ' + str(n))\n"
        "with Job('jdbc-last') as job:\n"
        "    job.read_jdbc(URLS[0], 'hr.emp', ctx='emp')\n")
    state = tmp_path / "state"
    state.mkdir()
    url = f"sqlite:///{state / 'state.db'}"
    run = subprocess.run([sys.executable, "-m", "lakemark", "run", "--state", url, str(script)],
                         capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert run.returncode == 1, run.stderr
    assert run.stdout.count("Error:") + run.stdout.count("Problem:") == len(URLS), run.stdout
    assert "jdbc:oracle:thin:scott/***@//127.0.0.1:1521/orcl" in run.stderr
    assert not leaks(run.stdout) and not leaks(run.stderr), (leaks(run.stdout), leaks(run.stderr))
    records = []
    for n in [*range(len(URLS)), "-last"]:
        name = f"jdbc{n}"
        listed = subprocess.run([sys.executable, "-m", "lakemark", "runs", "list", name,
                                 "--state", url, "--json"], capture_output=True, text=True,
                                timeout=120)
        assert listed.returncode == 0, listed.stderr
        records.extend(json.loads(listed.stdout))
    assert len(records) == len(URLS) + 1 and all(r["status"] == "FAILED" for r in records)
    assert not leaks(json.dumps(records))
    for path in state.iterdir():
        assert not leaks(path.read_bytes()), path.name
