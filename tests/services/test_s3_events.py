"""Event-driven S3 ingestion against moto_server: a real bucket notification configuration to a
real queue; stage 1 (`lakemark ingest s3-events`) runs as its own process, stage 2
(`lakemark ingest s3-incremental`) on the test's Spark session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli
from lakemark.events import EventsTable, parse_message
from lakemark._fault import FAULT_ENV

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "landing"


class Pipeline:
    """A bucket whose notifications go to a queue, an events table and a target."""

    def __init__(self, moto: Any, tmp: Path) -> None:
        self.moto = moto
        self.s3 = moto.client("s3")
        self.sqs = moto.client("sqs")
        self.queue = self.sqs.create_queue(QueueName="landing-events")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(
            QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.s3.create_bucket(Bucket=BUCKET)
        self.s3.put_bucket_notification_configuration(Bucket=BUCKET, NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn,
                                     "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]}]})
        self.events = str(tmp / "events")
        self.target = str(tmp / "target")
        self.state = f"sqlite:///{tmp / 'state.db'}"

    def put(self, key: str, rows: list[dict[str, Any]]) -> None:
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=body)

    def stage1(self, *extra: str) -> dict[str, Any]:
        cmd = [sys.executable, "-m", "lakemark", "ingest", "s3-events", "--queue-url",
               self.queue, "--events-table", self.events, "--wait-seconds", "0",
               "--state", self.state, "--json", *extra]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, **self.moto.env))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def stage2(self, *extra: str, ok: bool = True, process: bool = False,
               fault: str | None = None) -> dict[str, Any]:
        args = ["ingest", "s3-incremental", self.target, "--events-table", self.events,
                "--job", "objects", "--format", "json", "--state", self.state, "--json", *extra]
        if process:  # its own process, as a scheduler would start it
            env = dict(os.environ, **self.moto.env)
            if fault:  # SIGKILLed at that point of the run (lakemark._fault)
                env[FAULT_ENV] = fault
            out = subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                                 text=True, timeout=600, env=env)
            if fault:
                return {"returncode": out.returncode, "stderr": out.stderr}
            assert out.returncode == 0, out.stderr
            return json.loads(out.stdout)
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        if not ok:
            return {"exit_code": result.exit_code, "output": result.output}
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def queue_depth(self) -> int:
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(
            attrs["ApproximateNumberOfMessagesNotVisible"])

    def events_rows(self) -> list[dict[str, Any]]:
        return DeltaTable(self.events).to_pyarrow_table().to_pylist()

    def target_ids(self) -> list[int]:
        return sorted(DeltaTable(self.target).to_pyarrow_table().column("id").to_pylist())


@pytest.fixture
def pipeline(s3: Any, tmp_path: Path, spark: Any) -> Pipeline:
    return Pipeline(s3, tmp_path)


def test_events_flow_into_the_table_and_messages_are_deleted_after_commit(
    pipeline: Pipeline,
) -> None:
    pipeline.put("in/a b.json", [{"id": 1}])
    pipeline.put("in/b.json", [{"id": 2}])
    pipeline.s3.delete_object(Bucket=BUCKET, Key="in/b.json")
    out = pipeline.stage1()
    assert (out["events"], out["inserted"], out["quarantined"]) == (3, 3, 0)
    assert out["deleted"] == out["messages"]  # the bucket's s3:TestEvent included
    assert pipeline.queue_depth() == 0
    rows = pipeline.events_rows()
    assert sorted((r["key"], r["event_name"].split(":")[0]) for r in rows) == [
        ("in/a b.json", "ObjectCreated"), ("in/b.json", "ObjectCreated"),
        ("in/b.json", "ObjectRemoved")]
    # Each sync is a run of the stage-1 job, visible like any other.
    [run_id] = out["runs"]
    shown = CliRunner().invoke(cli, ["runs", "show", run_id, "--state", pipeline.state, "--json"])
    assert json.loads(shown.stdout)["status"] == "SUCCEEDED"


def test_redelivery_after_a_crash_between_commit_and_delete_adds_no_duplicate(
    pipeline: Pipeline,
) -> None:
    for i in range(3):
        pipeline.put(f"in/{i}.json", [{"id": i}])
    # A consumer receives and commits, then dies before deleting: the messages stay queued.
    got = pipeline.sqs.receive_message(QueueUrl=pipeline.queue, MaxNumberOfMessages=10,
                                       VisibilityTimeout=300)["Messages"]
    table = EventsTable(pipeline.events)
    inserted, _ = table.append([r for m in got for r in parse_message(m["Body"])])
    assert inserted == 3
    for m in got:  # their visibility timeout runs out
        pipeline.sqs.change_message_visibility(QueueUrl=pipeline.queue,
                                               ReceiptHandle=m["ReceiptHandle"],
                                               VisibilityTimeout=0)
    out = pipeline.stage1()
    assert (out["events"], out["inserted"]) == (3, 0)
    assert pipeline.queue_depth() == 0
    assert len(pipeline.events_rows()) == 3
    # Duplicate and out-of-order deliveries of the same notifications add nothing either.
    for m in reversed(got):
        pipeline.sqs.send_message(QueueUrl=pipeline.queue, MessageBody=m["Body"])
    assert pipeline.stage1()["inserted"] == 0
    assert len(pipeline.events_rows()) == 3


def test_a_poison_message_is_quarantined_and_blocks_nothing(pipeline: Pipeline) -> None:
    pipeline.sqs.send_message(QueueUrl=pipeline.queue, MessageBody="{not json")
    pipeline.put("in/good.json", [{"id": 1}])
    # Visible again at once: the first sync leaves it for a retry, the next one quarantines it.
    out = pipeline.stage1("--max-receives", "2", "--visibility-timeout", "0")
    assert (out["inserted"], out["retry_later"], out["quarantined"]) == (1, 1, 1)
    assert pipeline.queue_depth() == 0
    [bad] = DeltaTable(pipeline.events + "_quarantine").to_pyarrow_table().to_pylist()
    assert bad["body"] == "{not json" and "not JSON" in bad["error"]


def test_stage_two_takes_each_created_object_once_in_bounded_runs(pipeline: Pipeline) -> None:
    for i in range(3):
        pipeline.put(f"in/{i}.json", [{"id": i}])
    pipeline.put("in/gone.json", [{"id": 99}])
    pipeline.s3.delete_object(Bucket=BUCKET, Key="in/gone.json")
    pipeline.put("other/x.json", [{"id": 100}])
    pipeline.stage1()
    first = pipeline.stage2("--key-prefix", "in/", "--max-files", "2")
    assert (first["files"], first["rows"]) == (2, 2)
    second = pipeline.stage2("--key-prefix", "in/", "--max-files", "2")
    assert (second["files"], second["rows"]) == (1, 1)
    assert pipeline.stage2("--key-prefix", "in/")["files"] == 0
    assert pipeline.target_ids() == [0, 1, 2]  # the removed object and other/ are not read

    pipeline.put("in/3.json", [{"id": 3}])
    pipeline.stage1()
    assert pipeline.stage2("--key-prefix", "in/")["files"] == 1
    assert pipeline.target_ids() == [0, 1, 2, 3]
    shown = CliRunner().invoke(cli, ["runs", "show", first["run_id"], "--state", pipeline.state,
                                     "--json"])
    files = json.loads(shown.stdout)["sources"]["events"]["files"]
    assert [f["path"] for f in files] == ["s3://landing/in/0.json", "s3://landing/in/1.json"]


def test_a_retry_after_the_sink_committed_replays_exactly_the_killed_attempts_objects(
    pipeline: Pipeline,
) -> None:
    pipeline.put("in/0.json", [{"id": 0}])
    pipeline.put("in/1.json", [{"id": 1}])
    pipeline.stage1()
    killed = pipeline.stage2(process=True, fault="after-sink-commit")
    assert killed["returncode"] == -9
    assert pipeline.target_ids() == [0, 1]  # written, but the run never committed
    pipeline.put("in/2.json", [{"id": 2}])  # arrives before the retry
    pipeline.stage1()
    retry = pipeline.stage2()
    # The retry skips its write (the token is in the table) and must therefore take exactly the
    # killed attempt's objects: planning afresh would mark in/2.json done without writing it.
    assert (retry["files"], retry["skipped"]) == (2, True)
    shown = CliRunner().invoke(cli, ["runs", "show", retry["run_id"], "--state", pipeline.state,
                                     "--json"])
    assert json.loads(shown.stdout)["sources"]["events"]["replay"]["case"] == "pinned"
    assert pipeline.stage2()["files"] == 1
    assert pipeline.target_ids() == [0, 1, 2]


def test_lost_notification_is_caught_by_backfill(pipeline: Pipeline) -> None:
    pipeline.put("in/seen.json", [{"id": 1}])
    pipeline.stage1()
    pipeline.put("in/lost.json", [{"id": 2}])
    pipeline.sqs.purge_queue(QueueUrl=pipeline.queue)  # its notification never arrives
    assert pipeline.stage2()["files"] == 1
    out = pipeline.stage2("--backfill-prefix", f"s3://{BUCKET}/in/", process=True)
    assert out["files"] == 1
    assert pipeline.target_ids() == [1, 2]


def test_backfilled_objects_are_taken_once_across_scheduled_runs_and_late_notifications(
    pipeline: Pipeline,
) -> None:
    """Issue 31's story: notifications lost, a backfill, later runs that keep the flag (as a
    schedule does), a late notification of a backfilled object, and a re-uploaded key."""
    backfill = ("--backfill-prefix", f"s3://{BUCKET}/in/")

    def lose_notifications() -> list[str]:
        """Take the queued notifications out of the queue: lost, or late if sent again."""
        bodies: list[str] = []
        while True:
            got = pipeline.sqs.receive_message(QueueUrl=pipeline.queue, MaxNumberOfMessages=10,
                                               WaitTimeSeconds=0).get("Messages", [])
            if not got:
                return bodies
            for m in got:
                bodies.append(m["Body"])
                pipeline.sqs.delete_message(QueueUrl=pipeline.queue,
                                            ReceiptHandle=m["ReceiptHandle"])

    pipeline.put("in/seen.json", [{"id": 1}])
    pipeline.stage1()
    pipeline.put("in/a.json", [{"id": 2}])
    pipeline.put("in/b.json", [{"id": 3}])
    late = lose_notifications()
    first = pipeline.stage2(*backfill)
    assert (first["files"], first["backfilled"]) == (3, 2)
    assert pipeline.target_ids() == [1, 2, 3]
    for _ in range(2):  # later scheduled runs keep the flag
        again = pipeline.stage2(*backfill)
        assert again["files"] == 0 and again["rows"] == 0
    for body in late:  # the lost notifications arrive after all
        pipeline.sqs.send_message(QueueUrl=pipeline.queue, MessageBody=body)
    assert pipeline.stage1()["inserted"] >= 2
    stale = pipeline.stage2(*backfill)
    assert (stale["files"], stale["skipped_stale"]) == (0, 2)
    shown = CliRunner().invoke(cli, ["runs", "show", stale["run_id"], "--state",
                                     pipeline.state, "--json"])
    assert json.loads(shown.stdout)["sources"]["events"]["skipped_stale"] == 2
    assert pipeline.target_ids() == [1, 2, 3]
    # A key uploaded again with new content is a new object: taken once, whether its
    # notification is lost (the backfill finds the new eTag) or delivered.
    pipeline.put("in/a.json", [{"id": 4}])
    lose_notifications()
    assert pipeline.stage2(*backfill)["files"] == 1
    pipeline.put("in/b.json", [{"id": 5}])
    pipeline.stage1()
    assert pipeline.stage2(*backfill)["files"] == 1
    assert pipeline.stage2(*backfill)["files"] == 0
    assert pipeline.target_ids() == [1, 2, 3, 4, 5]
    # The backfill's events are in the events table, beside S3's own, for anyone to query.
    filled = [r["key"] for r in pipeline.events_rows()
              if r["event_name"] == "ObjectCreated:LakemarkBackfill"]
    assert sorted(filled) == ["in/a.json", "in/a.json", "in/b.json"]


def test_bad_options_are_refused_before_any_work(pipeline: Pipeline) -> None:
    out = pipeline.stage2("--max-files", "0", ok=False)
    assert out["exit_code"] == 1 and "--max-files" in out["output"]
    out = pipeline.stage2("--backfill-prefix", "/local/path", ok=False)
    assert out["exit_code"] == 1 and "--backfill-prefix" in out["output"]
    result = CliRunner().invoke(cli, [
        "ingest", "s3-events", "--queue-url", pipeline.queue, "--events-table",
        pipeline.events, "--wait-seconds", "21", "--state", pipeline.state])
    assert result.exit_code == 1 and "--wait-seconds" in result.output
    # Nothing was recorded: not a run, not even the state store.
    assert not Path(pipeline.state.removeprefix("sqlite:///")).exists()


def test_continuous_consumer_stops_cleanly_on_sigterm_without_losing_a_message(
    pipeline: Pipeline,
) -> None:
    import signal
    import time

    cmd = [sys.executable, "-m", "lakemark", "ingest", "s3-events", "--queue-url",
           pipeline.queue, "--events-table", pipeline.events, "--wait-seconds", "1",
           "--continuous", "--min-sync-interval", "0.2", "--state", pipeline.state, "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **pipeline.moto.env))
    try:
        for i in range(5):
            pipeline.put(f"in/{i}.json", [{"id": i}])
        deadline = time.monotonic() + 120
        while True:  # wait for the condition, not for a guessed time
            table = EventsTable(pipeline.events)
            if table.version() is not None and len(pipeline.events_rows()) == 5:
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the consumer did not ingest the events"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["inserted"] == 5 and summary["syncs"] >= 1
    assert pipeline.queue_depth() == 0


def test_a_poison_message_can_go_to_a_dead_letter_queue(pipeline: Pipeline) -> None:
    dlq = pipeline.sqs.create_queue(QueueName="landing-dlq")["QueueUrl"]
    pipeline.sqs.send_message(QueueUrl=pipeline.queue, MessageBody='{"Records": "nope"}')
    out = pipeline.stage1("--max-receives", "1", "--dead-letter-queue-url", dlq)
    assert out["quarantined"] == 1 and pipeline.queue_depth() == 0
    [moved] = pipeline.sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])["Messages"]
    assert moved["Body"] == '{"Records": "nope"}'
    assert "Records" in moved["MessageAttributes"]["lakemark-error"]["StringValue"]
