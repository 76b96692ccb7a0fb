"""lakemark's own Spark Connect sessions give up on a lost server after about
``CONNECT_RETRY_S`` seconds without Spark's RETRIES_EXCEEDED warning; a Connect session the
caller made in the same process keeps Spark's own retries and warning (nothing is changed
process-wide). Real server (``connect_server``); the sessions live in a separate Python
process, as a Connect client and the suite's local Spark cannot share one; giving up is driven
with an UNAVAILABLE error through each client's own retry loop (its waits skipped)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ConnectServer, free_port, need_connect_client

SRC = Path(__file__).resolve().parents[2] / "src"

_PROBE = '''
import warnings
import grpc
from pyspark.sql.connect.client.retries import Retrying
from pyspark.sql.connect.session import SparkSession
from lakemark.spark import get_spark

class Unavailable(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.UNAVAILABLE

    def trailing_metadata(self):
        return None

def give_up(session):
    """(attempts, warnings) of one call that keeps meeting a lost server."""
    retrying = session.client._retrying()
    retrying._sleep = lambda seconds: None
    attempts = 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    raise Unavailable()
        except Unavailable:
            pass
    return attempts, [str(w.message)[:18] for w in seen]

def describe(name, session):
    policy = session.client.get_retry_policies()[0]
    attempts, said = give_up(session)
    print(name, type(session.client._retrying()) is Retrying, policy.max_retries, attempts,
          said)

url = {url!r}
if {user_first!r}:
    theirs = SparkSession.builder.remote(url).create()
    ours = get_spark(remote=url)  # hands back the caller's active session: left as it is
    print("SAME", ours is theirs)
else:
    ours = get_spark(remote=url)
    theirs = SparkSession.builder.remote(url).create()  # the caller's other session
    print("SAME", ours is theirs)
    describe("OURS", ours)
describe("THEIRS", theirs)
print("FILTERS", [f for f in warnings.filters if f[1] is not None and "RETRIES" in f[1].pattern])
for session in {{ours, theirs}}:
    session.stop()
'''


@pytest.mark.parametrize("user_first", [False, True])
def test_only_lakemarks_own_session_has_bounded_quiet_retries(connect_server: ConnectServer,
                                                              user_first: bool) -> None:
    need_connect_client()
    code = _PROBE.format(url=connect_server.endpoint, user_first=user_first)
    env = {k: v for k, v in connect_server.env.items()
           if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**env, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    spark_default = "THEIRS True 15 16 ['[RETRIES_EXCEEDED]']"
    if user_first:
        assert lines == ["SAME True", spark_default, "FILTERS []"], done.stdout
    else:  # 7 retries (about CONNECT_RETRY_S seconds of waits), then one plain error
        assert lines == ["SAME False", "OURS False 7 8 []", spark_default, "FILTERS []"], \
            done.stdout
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") is None


_OTHER_SERVER = """
import sys
from pyspark.sql.connect.session import SparkSession
from lakemark.spark import get_spark
theirs = SparkSession.builder.remote(sys.argv[1]).create()  # the caller's, another server
mine = get_spark(remote=sys.argv[2])
assert mine is not theirs
print(mine.client._builder.endpoint, mine.range(3).count())
again = get_spark(remote=sys.argv[2])  # lakemark's own session to the same server is shared
print(again is mine, flush=True)
import os
os._exit(0)  # the caller's session to nothing would retry its release at exit
"""


def test_a_session_to_another_server_is_not_handed_to_lakemark(
        connect_server: ConnectServer) -> None:
    """The caller's active Connect session talks to another server (here: nothing listens on
    its port): ``remote=`` still gets a session to the server it names."""
    need_connect_client()
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_SERVER, f"sc://127.0.0.1:{free_port()}",
         connect_server.endpoint],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [f"127.0.0.1:{connect_server.port}", "3", "True"]
