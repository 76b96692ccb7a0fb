"""Benchmark: event-driven S3 ingestion against moto_server.

* Stage 1 throughput: N objects are put into a bucket whose notifications go to an SQS queue;
  one consumer drains the queue into the events table. Reports events per second and the SQS
  calls made per 1,000 events, against the physical floor (100 receives of 10 messages, plus
  100 batch deletes of 10).
* Latency: from ``put_object`` to the target's commit, for one object, through one stage-1
  sync and one stage-2 run on a warm local Spark session (median of ``--latency-trials``).

    python bench/s3_events.py [--events 1000] [--latency-trials 5] [--out FILE]

moto_server is in-process-free here: it runs as its own HTTP process, as in the tests. Numbers
measure lakemark plus moto on loopback, not AWS; the SQS call counts carry over to AWS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = str(Path(sys.executable).with_name("moto_server"))
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).read()
            return proc, endpoint
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("moto_server did not start") from None
            time.sleep(0.1)


class TimedClient:
    """The SQS client, with the time spent inside its calls added up (moto's share)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0

        return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--latency-trials", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "s3_events.json"))
    args = ap.parse_args()

    proc, endpoint = start_moto()
    os.environ.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_REGION": "us-east-1", "PYSPARK_PYTHON": sys.executable})
    try:
        import boto3

        from lakemark import Job
        from lakemark.events import EventsTable, QueueOptions, consume, read_event_objects
        from lakemark.spark import get_spark

        s3 = boto3.client("s3")
        sqs = boto3.client("sqs")
        queue = sqs.create_queue(QueueName="bench")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
            "Attributes"]["QueueArn"]
        s3.create_bucket(Bucket="bench-bucket")
        s3.put_bucket_notification_configuration(
            Bucket="bench-bucket", NotificationConfiguration={"QueueConfigurations": [
                {"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]})
        for i in range(args.events):
            s3.put_object(Bucket="bench-bucket", Key=f"in/{i:06d}.json",
                          Body=b'{"id": %d}\n' % i)
        tmp = Path(tempfile.mkdtemp(prefix="lakemark-bench-events-"))
        table = EventsTable(str(tmp / "events"))
        options = QueueOptions(wait_seconds=20, max_messages=1000, max_fetch_seconds=3600)
        timed = TimedClient(sqs)
        t0 = time.perf_counter()
        total = consume(timed, queue, table, options)
        stage1_s = time.perf_counter() - t0
        sqs_s = timed.seconds
        assert total.inserted == args.events, total.to_json()
        receives = total.sqs_calls - -(-total.deleted // 10)
        floor = 2 * -(-args.events // 10)

        spark = get_spark("local[2]")
        state = f"sqlite:///{tmp / 'state.db'}"
        target = str(tmp / "target")
        with Job("bench-objects", state=state, spark=spark) as job:  # catch up once
            df = read_event_objects(job, table.uri, format="json")
            job.write(df, target, format="delta", ctx="target")
        latencies = []
        for trial in range(args.latency_trials):
            t0 = time.perf_counter()
            s3.put_object(Bucket="bench-bucket", Key=f"late/{trial}.json", Body=b'{"id": -1}\n')
            consume(sqs, queue, table, QueueOptions(wait_seconds=0))
            with Job("bench-objects", state=state, spark=spark) as job:
                df = read_event_objects(job, table.uri, format="json")
                result = job.write(df, target, format="delta", ctx="target")
            latencies.append(time.perf_counter() - t0)
            assert result.rows == 1, result
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    result_doc: dict[str, Any] = {
        "benchmark": "s3_events",
        "events": args.events,
        "stage1_seconds": round(stage1_s, 3),
        "stage1_events_per_second": round(args.events / stage1_s, 1),
        "stage1_seconds_inside_sqs_calls": round(sqs_s, 3),
        "stage1_seconds_in_lakemark": round(stage1_s - sqs_s, 3),
        "stage1_events_per_second_excluding_sqs_calls": round(
            args.events / max(stage1_s - sqs_s, 1e-9), 1),
        "sqs_calls": total.sqs_calls,
        "sqs_receive_calls": receives,
        "sqs_delete_batch_calls": total.sqs_calls - receives,
        "sqs_calls_per_1000_events": round(total.sqs_calls * 1000 / args.events, 1),
        "floor_sqs_calls_per_1000_events": round(floor * 1000 / args.events, 1),
        "ratio_to_floor": round(total.sqs_calls / floor, 3),
        "put_to_target_commit_latency_s": {
            "median": round(statistics.median(latencies), 3),
            "max": round(max(latencies), 3), "trials": len(latencies),
        },
        "peer": "Hudi's S3EventsSource cannot run here (no Maven repository for its jars); "
                "compared against the physical floor of SQS calls instead",
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result_doc, indent=2) + "\n")
    print(json.dumps(result_doc, indent=2))


if __name__ == "__main__":
    main()
