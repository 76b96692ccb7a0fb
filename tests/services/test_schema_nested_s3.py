"""Issue 31 finding 4 on S3 (moto_server, no S3A connector): a tracked JSON source reads its
objects' records kept for the run (sources/_fetched.py), so the nested-field scan, the
inference of a new nested field's type and the exact path for case variants take that road.
``address.zip`` is added under ``addNewColumns`` and rescued under ``rescue``, on the fast and
the exact path."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "nested"


def _body(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.mark.parametrize("mode", ["addNewColumns", "rescue"])
def test_nested_fields_on_s3_are_added_or_rescued(spark: Any, s3: Any, tmp_path: Any,
                                                  mode: str) -> None:
    from lakemark import Job

    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    root = f"s3://{BUCKET}/{mode}"
    client.put_object(Bucket=BUCKET, Key=f"{mode}/a.json",
                      Body=_body([{"id": 1, "address": {"city": "Oslo"}}]))
    state = f"sqlite:///{tmp_path / 'state.db'}"

    def rows() -> dict[int, dict[str, Any]]:
        with Job("s3nested", state=state, spark=spark) as job:
            df = job.read_files(root, format="json", ctx="src", schema_evolution=mode)
            return {r["id"]: r.asDict(recursive=True) for r in df.collect()}

    assert rows()[1]["address"] == {"city": "Oslo"}
    client.put_object(Bucket=BUCKET, Key=f"{mode}/b.json",
                      Body=_body([{"id": 2, "address": {"city": "Rome", "zip": "00100"}}]))
    client.put_object(Bucket=BUCKET, Key=f"{mode}/c.json",  # ID: the exact path
                      Body=_body([{"id": 3, "ID": 3, "address": {"city": "Bern", "zip": "3000"}}]))
    got = rows()
    for i, zip_ in ((2, "00100"), (3, "3000")):
        rescued = json.loads(got[i]["_rescued_data"]) if got[i]["_rescued_data"] else {}
        if mode == "addNewColumns":
            assert got[i]["address"]["zip"] == zip_ and "address" not in rescued
        else:
            assert json.loads(rescued["address"])["zip"] == zip_
            assert rescued["_file_path"].startswith(f"s3://{BUCKET}/")
