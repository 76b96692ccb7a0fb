"""Clean-up of processed files on S3 (moto_server as a separate process): archive by copy and
delete at the path relative to the source prefix, an existing destination never overwritten,
a copy whose delete was lost finished, delete, and the clean-up entry in the run.

The runs plan and commit without reading rows (no Spark): the clean-up acts on what the
committed run took, whatever the run did with the rows.
"""

from __future__ import annotations

from typing import Any

import pytest

from lakemark import Job
from lakemark.cli._runs import run_details
from lakemark.state import open_store

pytestmark = pytest.mark.services

BUCKET = "lake"


def keys(client: Any, bucket: str = BUCKET) -> list[str]:
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", ()))


def test_s3_archive_moves_by_copy_and_delete(tmp_path: Any, s3: Any) -> None:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    client.create_bucket(Bucket="cold")
    for key in ("in/a.json", "in/2024/01/b.json", "in/c.json"):
        client.put_object(Bucket=BUCKET, Key=key, Body=key.encode())
    client.put_object(Bucket="cold", Key="orders/c.json", Body=b"someone else's")
    # An earlier move that copied b.json but was killed before deleting its source:
    client.copy_object(Bucket="cold", Key="orders/2024/01/b.json",
                       CopySource={"Bucket": BUCKET, "Key": "in/2024/01/b.json"})
    state = f"sqlite:///{tmp_path / 's.db'}"
    with pytest.raises(Exception, match="archive_to s3://lake/in/old overlaps"):
        with Job("j", state=state) as job:
            job.plan_files(f"s3://{BUCKET}/in", ctx="source", clean_source="archive",
                           archive_to=f"s3://{BUCKET}/in/old")
    with Job("j", state=state) as job:
        job.plan_files(f"s3://{BUCKET}/in", ctx="source", clean_source="archive",
                       archive_to="s3://cold/orders/")
    assert keys(client) == ["in/c.json"]  # kept: its destination holds another object
    assert keys(client, "cold") == ["orders/2024/01/b.json", "orders/a.json", "orders/c.json"]
    assert client.get_object(Bucket="cold", Key="orders/a.json")["Body"].read() \
        == b"in/a.json"
    assert client.get_object(Bucket="cold", Key="orders/c.json")["Body"].read() \
        == b"someone else's"
    store = open_store(state)
    clean = run_details(store, job.run_id)["cleanups"]["source"]
    store.close()
    assert clean["status"] == "done" and clean["archive_to"] == "s3://cold/orders"
    assert clean["counts"]["archived"] == 2 and clean["counts"]["conflict"] == 1
    assert {"from": f"s3://{BUCKET}/in/a.json", "to": "s3://cold/orders/a.json"} \
        in clean["moves"]


def test_s3_delete_keeps_an_object_rewritten_after_planning(tmp_path: Any, s3: Any) -> None:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    for key in ("in/a.json", "in/b.json"):
        client.put_object(Bucket=BUCKET, Key=key, Body=b"v1")
    state = f"sqlite:///{tmp_path / 's.db'}"
    with Job("j", state=state) as job:
        job.plan_files(f"s3://{BUCKET}/in", ctx="source", clean_source="delete")
        client.put_object(Bucket=BUCKET, Key="in/b.json", Body=b"version 2")
    assert keys(client) == ["in/b.json"]
    assert job.cleanups[0]["counts"]["deleted"] == 1
    assert job.cleanups[0]["counts"]["changed"] == 1
