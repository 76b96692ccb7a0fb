"""Quarantine for `lakemark ingest s3-incremental` (the S3-events source) against moto_server:
a damaged object is set aside by the same policy as `ingest files`, the events after it are
still taken, `lakemark quarantine retry` takes it back exactly once, and a kill after the sink
committed neither loses nor doubles a row."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark._fault import FAULT_ENV
from lakemark.cli import cli

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "drop"


def _parquet(ids: range) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"id": i, "name": f"n{i}"} for i in ids]), out)
    return out.getvalue()


def _json(ids: range) -> bytes:
    return "".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in ids).encode()


class Landing:
    """A bucket notifying a queue; stage 1 in its own process, stage 2 through the CLI."""

    def __init__(self, moto: Any, tmp: Path) -> None:
        self.moto = moto
        self.s3 = moto.client("s3")
        self.sqs = moto.client("sqs")
        self.queue = self.sqs.create_queue(QueueName="drop-events")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(
            QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.s3.create_bucket(Bucket=BUCKET)
        self.s3.put_bucket_notification_configuration(Bucket=BUCKET, NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]})
        self.events = str(tmp / "events")
        self.target = str(tmp / "target")
        self.state = f"sqlite:///{tmp / 'state.db'}"

    def put(self, key: str, body: bytes) -> None:
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=body)

    def stage1(self) -> None:
        cmd = [sys.executable, "-m", "lakemark", "ingest", "s3-events", "--queue-url",
               self.queue, "--events-table", self.events, "--wait-seconds", "0",
               "--state", self.state, "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, **self.moto.env))
        assert done.returncode == 0, done.stderr

    def stage2(self, fmt: str, *extra: str, code: int = 0) -> dict[str, Any]:
        result = CliRunner().invoke(cli, [
            "ingest", "s3-incremental", self.target, "--events-table", self.events,
            "--job", "drops", "--format", fmt, "--state", self.state, "--json", *extra])
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
        return json.loads(result.stdout) if code in (0, 3) else {"stderr": result.stderr}

    def cli(self, *args: str) -> dict[str, Any]:
        result = CliRunner().invoke(cli, [*args, "--state", self.state, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def ids(self) -> list[int]:
        return sorted(DeltaTable(self.target).to_pyarrow_table().column("id").to_pylist())


@pytest.fixture
def landing(s3: Any, tmp_path: Path, spark: Any) -> Landing:
    return Landing(s3, tmp_path)


def test_damaged_objects_are_set_aside_and_the_events_after_them_still_taken(
        landing: Landing) -> None:
    landing.put("2026/11/29/a.parquet", _parquet(range(0, 3)))
    whole = _parquet(range(100, 400))
    landing.put("2026/11/29/cut.parquet", whole[: len(whole) // 2])
    landing.put("2026/11/29/b.parquet", _parquet(range(3, 5)))
    landing.put("2026/11/29/export.parquet", b"id,name\n7,seven\n")  # a CSV under the name
    landing.stage1()
    out = landing.stage2("parquet", code=3)
    assert (out["files"], out["rows"], out["quarantined_files"]) == (4, 5, 2)
    assert sorted(q["path"] for q in out["quarantined"]) == [
        f"s3://{BUCKET}/2026/11/29/cut.parquet", f"s3://{BUCKET}/2026/11/29/export.parquet"]
    assert landing.ids() == [0, 1, 2, 3, 4]
    # The job does not stick: the next runs take the new events and nothing twice.
    assert landing.stage2("parquet")["files"] == 0
    landing.put("2026/11/30/c.parquet", _parquet(range(5, 6)))
    landing.stage1()
    assert (landing.stage2("parquet")["rows"]) == 1
    listed = landing.cli("quarantine", "list", "drops")["files"]
    assert sorted((f["ctx"], f["path"].rsplit("/", 1)[1], f["status"]) for f in listed) == [
        ("events", "cut.parquet", "open"), ("events", "export.parquet", "open")]
    # The producer uploads the cut file again, whole: its new event takes it once, and the
    # set-aside entry is closed, so a later `quarantine retry` cannot take it a second time.
    landing.put("2026/11/29/cut.parquet", whole)
    landing.stage1()
    assert landing.stage2("parquet")["rows"] == 300
    assert landing.cli("quarantine", "retry", "drops")["marked"][0]["path"].endswith(
        "export.parquet")
    again = landing.stage2("parquet", code=3)  # export.parquet is still not Parquet
    assert [q["path"].rsplit("/", 1)[1] for q in again["quarantined"]] == ["export.parquet"]
    assert landing.ids() == [*range(0, 6), *range(100, 400)]


def test_a_record_over_the_limit_is_taken_back_exactly_once_by_retry(landing: Landing) -> None:
    landing.put("in/small.json", _json(range(3)))
    landing.put("in/big.json", (json.dumps({"id": 9, "name": "x" * 300_000}) + "\n").encode())
    landing.put("in/after.json", _json(range(3, 5)))
    landing.stage1()
    out = landing.stage2("json", "--max-record-bytes", "64KiB", code=3)
    assert (out["rows"], [q["path"] for q in out["quarantined"]]) == (
        5, [f"s3://{BUCKET}/in/big.json"])
    assert landing.cli("quarantine", "retry", "drops", f"s3://{BUCKET}/in/big.json")["marked"]
    retried = landing.stage2("json", "--max-record-bytes", "1MiB")
    assert (retried["files"], retried["rows"], retried["quarantined_files"]) == (1, 1, 0)
    assert landing.stage2("json", "--max-record-bytes", "1MiB")["files"] == 0
    [entry] = landing.cli("quarantine", "list", "drops", "--all")["files"]
    assert (entry["status"], entry["retried_by"]) == ("retried", retried["run_id"])
    assert landing.ids() == [0, 1, 2, 3, 4, 9]


def test_damage_only_a_full_read_sees_is_pinned_on_its_object(landing: Landing) -> None:
    landing.put("in/a.json.gz", gzip.compress(_json(range(2))))
    cut = gzip.compress(_json(range(50, 5000)))
    landing.put("in/cut.json.gz", cut[: len(cut) // 2])
    landing.put("in/b.json.gz", gzip.compress(_json(range(2, 4))))
    landing.stage1()
    out = landing.stage2("json", code=3)
    assert [q["path"] for q in out["quarantined"]] == [f"s3://{BUCKET}/in/cut.json.gz"]
    assert landing.ids() == [0, 1, 2, 3]


def test_strict_mode_and_threshold_fail_naming_the_object_and_keep_the_checkpoint(
        landing: Landing) -> None:
    landing.put("in/a.parquet", _parquet(range(2)))
    landing.put("in/empty.parquet", b"")
    landing.stage1()
    failed = landing.stage2("parquet", "--on-bad-file", "fail", code=1)
    assert f"s3://{BUCKET}/in/empty.parquet" in failed["stderr"]
    assert "Traceback" not in failed["stderr"]
    over = landing.stage2("parquet", "--max-bad-files", "0", code=1)
    assert "max_bad_files 0" in over["stderr"]
    bad = CliRunner().invoke(cli, ["ingest", "s3-incremental", landing.target, "--events-table",
                                   landing.events, "--job", "drops", "--format", "parquet",
                                   "--state", landing.state, "--max-bad-files", "many"])
    assert bad.exit_code == 2 and "--max-bad-files 'many'" in bad.output
    out = landing.stage2("parquet", code=3)  # nothing was taken by the failed runs
    assert (out["files"], out["rows"]) == (2, 2)


def test_a_kill_after_the_sink_committed_replays_without_the_set_aside_object(
        landing: Landing) -> None:
    landing.put("in/a.parquet", _parquet(range(3)))
    landing.put("in/bad.parquet", b"PAR1 this is not parquet PAR1")
    landing.stage1()
    env = dict(os.environ, **landing.moto.env, **{FAULT_ENV: "after-sink-commit"})
    killed = subprocess.run([
        sys.executable, "-m", "lakemark", "ingest", "s3-incremental", landing.target,
        "--events-table", landing.events, "--job", "drops", "--format", "parquet",
        "--state", landing.state], capture_output=True, text=True, timeout=600, env=env)
    assert killed.returncode == -9
    landing.put("in/c.parquet", _parquet(range(3, 4)))  # arrives before the retry
    landing.stage1()
    retry = landing.stage2("parquet")
    assert (retry["files"], retry["skipped"]) == (2, True)  # exactly the killed attempt's
    assert landing.stage2("parquet")["rows"] == 1
    assert landing.ids() == [0, 1, 2, 3]
    [entry] = landing.cli("quarantine", "list", "drops")["files"]
    assert entry["path"] == f"s3://{BUCKET}/in/bad.parquet"


def test_stage_2_in_a_log_prints_progress_lines_on_stderr(landing: Landing) -> None:
    landing.put("drops/a.json", _json(range(3)))
    landing.stage1()
    result = CliRunner().invoke(cli, [
        "ingest", "s3-incremental", landing.target, "--events-table", landing.events,
        "--job", "drops", "--format", "json", "--state", landing.state, "--json",
        "--progress-interval", "0.01"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == 3  # stdout stays one JSON document
    lines = [line for line in result.stderr.splitlines() if line.startswith("progress: ")]
    assert any("1 file(s) planned" in line for line in lines), result.stderr
