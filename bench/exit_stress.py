"""Clean exits, measured: every Delta-touching command run many times as its own process.

    python bench/exit_stress.py [--repeats N] [--only NAME ...]
                                [--out bench/results/exit_stress.json]

Each case is a real ``lakemark`` command started as a scheduler starts it. A run counts as bad
when its exit status is not 0, when its stderr holds anything but lakemark's own log lines
(Spark's start-up noise, a Java stack trace) or when it printed ``terminate called``
(a native thread aborting the interpreter
at exit, status 134). The suite runs the JVM-free cases 20 times each
(tests/unit/test_cli_process.py) and each Spark case once (tests/spark/test_quiet_exit.py);
this script runs every case ``--repeats`` times (default 20) and commits the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

GLUE_SCRIPT = """\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "target"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
frame = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
glueContext.write_dynamic_frame.from_options(
    frame=frame, connection_type="s3", connection_options={"path": args["target"]},
    format="delta", transformation_ctx="sink")
job.commit()
"""

READ_DELTA = """\
import sys
from deltalake import DeltaTable
print(DeltaTable(sys.argv[1]).to_pyarrow_table().num_rows)
"""


def lakemark(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, **(env or {})))


#: lakemark's own log lines (rich's level column, then continuation lines) are not noise.
LAKEMARK_LINE = re.compile(r"^(?:(?:DEBUG|INFO|WARNING|ERROR) {2,}\S| {4,}\S)")


def bad(out: subprocess.CompletedProcess[str]) -> str | None:
    """Why a run is bad, or None."""
    if "terminate called" in out.stderr:
        return f"abort at exit (status {out.returncode})"
    if out.returncode != 0:
        return f"status {out.returncode}: {out.stderr.strip()[-300:]}"
    foreign = [line for line in out.stderr.splitlines() if line and not LAKEMARK_LINE.match(line)]
    if foreign:
        return f"stderr: {' | '.join(foreign)[:300]}"
    return None


class Moto:
    """moto_server on a free loopback port, with a bucket notifying a queue."""

    def __init__(self) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        exe = str(Path(sys.executable).with_name("moto_server"))
        self.proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.endpoint = f"http://127.0.0.1:{port}"
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                    "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        import boto3

        kw = dict(endpoint_url=self.endpoint, region_name="us-east-1",
                  aws_access_key_id="testing", aws_secret_access_key="testing")
        self.s3 = boto3.client("s3", **kw)
        sqs = boto3.client("sqs", **kw)
        self.queue = sqs.create_queue(QueueName="landing")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])[
            "Attributes"]["QueueArn"]
        self.s3.create_bucket(Bucket="landing")
        self.s3.put_bucket_notification_configuration(Bucket="landing", NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]})

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


Case = Callable[[int], subprocess.CompletedProcess[str]]


def cases(tmp: Path, moto: Moto | None) -> dict[str, Case]:
    state = f"sqlite:///{tmp / 'state.db'}"
    landing = tmp / "landing"
    landing.mkdir()
    script = tmp / "etl.py"
    script.write_text(GLUE_SCRIPT)
    reader = tmp / "read_delta.py"
    reader.write_text(READ_DELTA)

    def arrive(i: int) -> None:
        (landing / f"part-{i:04d}.json").write_text(
            "".join(json.dumps({"id": i * 10 + k}) + "\n" for k in range(10)))

    def demo(i: int) -> subprocess.CompletedProcess[str]:
        return lakemark("demo", "--dir", str(tmp / "demo"))

    def ingest_delta(i: int) -> subprocess.CompletedProcess[str]:
        arrive(i)
        return lakemark("ingest", "files", str(landing), str(tmp / "lake"), "--job", "stress",
                        "--state", state, "--json")

    def ingest_empty(i: int) -> subprocess.CompletedProcess[str]:
        return lakemark("ingest", "files", str(landing), str(tmp / "lake"), "--job", "stress",
                        "--state", state, "--json")

    def glue_delta(i: int) -> subprocess.CompletedProcess[str]:
        arrive(1000 + i)
        return lakemark("run", "--state", state, str(script), "--JOB_NAME", "glue-stress",
                        "--job-bookmark-option", "job-bookmark-enable", "--source", str(landing),
                        "--target", str(tmp / "glue-lake"))

    def run_reads_delta(i: int) -> subprocess.CompletedProcess[str]:
        return lakemark("run", str(reader), str(tmp / "lake"))

    def bookmark_show(i: int) -> subprocess.CompletedProcess[str]:
        return lakemark("bookmark", "show", "stress", "--state", state)

    def runs_list(i: int) -> subprocess.CompletedProcess[str]:
        return lakemark("runs", "list", "stress", "--state", state)

    out: dict[str, Callable[[int], subprocess.CompletedProcess[str]]] = {
        "demo": demo, "ingest-delta": ingest_delta, "ingest-empty": ingest_empty,
        "glue-run-delta": glue_delta, "run-reads-delta": run_reads_delta,
        "bookmark-show": bookmark_show, "runs-list": runs_list,
    }
    if moto is not None:
        events = str(tmp / "events")

        def s3_events(i: int) -> subprocess.CompletedProcess[str]:
            moto.s3.put_object(Bucket="landing", Key=f"in/{i:04d}.json",
                               Body=json.dumps({"id": i}).encode() + b"\n")
            return lakemark("ingest", "s3-events", "--queue-url", moto.queue, "--events-table",
                            events, "--wait-seconds", "0", "--state", state, "--json",
                            env=moto.env)

        def s3_incremental(i: int) -> subprocess.CompletedProcess[str]:
            return lakemark("ingest", "s3-incremental", str(tmp / "objects"), "--events-table",
                            events, "--job", "objects", "--format", "json", "--state", state,
                            "--json", env=moto.env)

        out.update({"s3-events": s3_events, "s3-incremental": s3_incremental})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "exit_stress.json"))
    parser.add_argument("--merge", action="store_true",
                        help="keep the cases already in --out that this call does not run")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lakemark-exit-"))
    moto = Moto()
    results: dict[str, Any] = {}
    try:
        for name, case in cases(tmp, moto).items():
            if args.only and name not in args.only:
                continue
            walls, problems = [], []
            for i in range(args.repeats):
                started = time.perf_counter()
                out = case(i)
                walls.append(round(time.perf_counter() - started, 2))
                why = bad(out)
                if why:
                    problems.append({"repeat": i, "why": why})
            walls.sort()
            results[name] = {"runs": args.repeats, "bad": len(problems), "problems": problems[:5],
                             "wall_s_median": walls[len(walls) // 2], "wall_s_max": walls[-1]}
            print(f"{name:16s} {args.repeats} runs, {len(problems)} bad, "
                  f"median {walls[len(walls) // 2]} s", flush=True)
    finally:
        moto.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.merge and Path(args.out).exists():
        results = {**json.loads(Path(args.out).read_text())["cases"], **results}
    doc = {"scenario": "exit_stress", "command": "python bench/exit_stress.py "
           f"--repeats {args.repeats}", "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
           "cases": results}
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
