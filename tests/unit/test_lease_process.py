"""A lease left by a SIGKILLed holder process on this host is taken over by the next run at
once: no timeout, no --force, no manual step."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lakemark import Job
from lakemark.errors import LeaseError
from lakemark.state import open_store

_HOLDER = """
import sys
from lakemark import Job
job = Job("held", state=sys.argv[1])
job.start()
print(job.run_id, flush=True)
sys.stdin.read()  # hold the lease until killed
"""


def test_lease_of_a_sigkilled_holder_is_taken_over_at_once(tmp_path: Path) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, state], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        held_run = holder.stdout.readline().strip()
        assert held_run.startswith("jr_")
        store = open_store(state)
        try:
            # While the holder lives, the lease is refused and names it.
            with pytest.raises(LeaseError) as info:
                store.begin_run("held", "enable", host=socket.gethostname(), pid=os.getpid(),
                                lease_timeout_s=3600)
            assert info.value.holder_run_id == held_run
        finally:
            store.close()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert holder.returncode == -signal.SIGKILL

    # A long lease timeout and no --force: only "holder's process is gone" can free it.
    with Job("held", state=state, lease_timeout_s=3600) as job:
        assert job.run.attempt == 1 and job.run.run == 1
    store = open_store(state)
    try:
        dead = store.get_run(held_run)
        assert dead.status == "FAILED" and "gone" in (dead.error or "")
        assert store.get_bookmark("held").run == 1
    finally:
        store.close()
