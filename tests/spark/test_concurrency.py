"""Concurrency across processes: two `lakemark ingest files` runs of one job started together
(exactly one proceeds, the other fails naming the lease holder, no row is written twice). A lease
left by a SIGKILLed holder: tests/unit/test_lease_process.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakemark._fault import FAULT_ENV, FAULT_WAIT_ENV
from lakemark.state import open_store


def _ingest(src: Path, target: Path, state: str, env: dict[str, str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(src), str(target),
           "--job", "conc", "--state", state, "--json", "--master", "local[1]"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
@pytest.mark.spark
def test_two_ingest_processes_started_together_exactly_one_proceeds(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for f in range(3):
        (src / f"f{f}.json").write_text("".join(json.dumps({"id": f * 10 + i}) + "\n"
                                                for i in range(10)))
    target = tmp_path / "table"
    state = f"sqlite:///{tmp_path / 'state.db'}"
    gates = [tmp_path / "gate0", tmp_path / "gate1"]
    base = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_WAIT_ENV)}
    # A process that holds the lease stops after recording its plan (nothing written yet) until
    # its gate opens, so the other meets a live holder whichever of the two starts first.
    procs = [_ingest(src, target, state, {**base, FAULT_WAIT_ENV: f"after-plan-recorded={g}"})
             for g in gates]
    try:
        # Wait until one process ends, or both reach the gate (both would then have the lease).
        loser_index = None
        while loser_index is None:
            assert not all(Path(f"{g}.reached").exists() for g in gates), \
                "both processes got past begin_run"
            for i, p in enumerate(procs):
                try:
                    p.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    continue
                loser_index = i
                break
        loser = procs[loser_index]
        winner = procs[1 - loser_index]
        assert winner.poll() is None, "both processes ended before the gate opened"
        _, err = loser.communicate()
        assert loser.returncode == 1, err
        match = re.search(r"jr_[0-9A-Za-z_]+", err)
        assert match and "already running" in err and f"pid {winner.pid}" in err, err

        assert not Path(f"{gates[loser_index]}.reached").exists()
        gates[1 - loser_index].touch()
        out, werr = winner.communicate(timeout=600)
        assert winner.returncode == 0, werr[-2000:]
    finally:
        for g in gates:
            g.touch()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    result = json.loads(out)
    # The run the loser named is the one that proceeded.
    assert match.group(0) == result["run_id"]
    assert (result["run"], result["files"], result["rows"]) == (1, 3, 30)
    ids = sorted(DeltaTable(str(target)).to_pyarrow_table().column("id").to_pylist())
    assert ids == list(range(30)), "lost or duplicated rows"
    store = open_store(state)
    try:
        runs = store.list_runs("conc")
    finally:
        store.close()
    # The loser recorded nothing: one attempt, succeeded.
    assert [(r.run_id, r.status) for r in runs] == [(result["run_id"], "SUCCEEDED")]
