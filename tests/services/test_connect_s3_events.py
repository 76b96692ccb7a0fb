"""``lakemark ingest s3-incremental --remote``: stage 2 of event-driven S3 ingestion on the
suite's real Spark Connect server, with a real bucket notification to a real queue on
moto_server. Stage 1 (``ingest s3-events``) starts no Spark: it needs no endpoint.

The server was started with moto's endpoint in its environment (the ``connect_server``
fixture), as a production server must see the same S3 as the client.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from conftest import ConnectServer, MotoServer, free_port, lakemark_cli, need_connect_client

pytestmark = [pytest.mark.services]

BUCKET = "landing-connect"


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _bucket_with_queue(moto: MotoServer) -> tuple[Any, str]:
    s3, sqs = moto.client("s3"), moto.client("sqs")
    queue = sqs.create_queue(QueueName="landing-connect-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue,
                                   AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_notification_configuration(Bucket=BUCKET, NotificationConfiguration={
        "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]})
    return s3, queue


def test_stage_two_over_connect_takes_each_object_once(s3: MotoServer,
                                                       connect_server: ConnectServer,
                                                       tmp_path: Path) -> None:
    client, queue = _bucket_with_queue(s3)
    events, target, state = tmp_path / "events", tmp_path / "target", tmp_path / "state.db"
    env = {**connect_server.env, **s3.env}

    def put(key: str, ids: range) -> None:
        client.put_object(Bucket=BUCKET, Key=key,
                          Body="".join(json.dumps({"id": i}) + "\n" for i in ids).encode())

    def stage1() -> None:
        done = lakemark_cli("ingest", "s3-events", "--queue-url", queue, "--events-table",
                            str(events), "--wait-seconds", "0", "--state", f"sqlite:///{state}",
                            "--json", env=env)
        assert done.returncode == 0, done.stderr[-2000:]

    def stage2(*extra: str, environ: dict[str, str] = env) -> dict[str, Any]:
        done = lakemark_cli("ingest", "s3-incremental", str(target), "--events-table",
                            str(events), "--job", "objects", "--format", "json", "--state",
                            f"sqlite:///{state}", "--json", *extra, env=environ)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    put("in/0.json", range(0, 3))
    put("in/1.json", range(3, 6))
    stage1()
    first = stage2("--remote", connect_server.endpoint)
    assert (first["files"], first["rows"]) == (2, 6)
    put("in/2.json", range(6, 9))
    stage1()
    second = stage2(environ={**env, "SPARK_REMOTE": connect_server.endpoint})
    assert (second["files"], second["rows"]) == (1, 3)
    assert stage2("--remote", connect_server.endpoint)["files"] == 0
    ids = DeltaTable(str(target)).to_pyarrow_table().column("id").to_pylist()
    assert sorted(ids) == list(range(9))  # every object's rows once


def test_a_bad_or_unreachable_endpoint_changes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    args = ("ingest", "s3-incremental", str(tmp_path / "target"), "--events-table",
            str(tmp_path / "events"), "--job", "objects", "--format", "json", "--state",
            f"sqlite:///{state}")
    bad = lakemark_cli(*args, "--remote", "grpc://127.0.0.1:15002")
    assert bad.returncode == 2
    assert ("--remote must be a Spark Connect URL sc://HOST:PORT, got "
            "'grpc://127.0.0.1:15002'") in bad.stderr
    both = lakemark_cli(*args, "--remote", "sc://127.0.0.1:15002", "--master", "local[1]")
    assert both.returncode == 2
    assert "--master does not apply with --remote" in both.stderr
    port = free_port()
    down = lakemark_cli(*args, "--remote", f"sc://127.0.0.1:{port}")
    assert down.returncode == 1
    assert down.stderr.strip().splitlines() == [
        line for line in down.stderr.strip().splitlines()
        if line.startswith(f"error: cannot reach the Spark Connect server at "
                           f"sc://127.0.0.1:{port} (")]
    assert len(down.stderr.strip().splitlines()) == 1
    assert not state.exists() and not (tmp_path / "target").exists()
