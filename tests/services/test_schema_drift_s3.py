"""Tracked XML and Avro sources on S3 (a real moto_server, no S3A connector): the rows are
made by the executors from the objects, with the partition folders, and the rescued data
names each value's object."""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

import fastavro
import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark, pytest.mark.long]

BUCKET = "drift"


def _avro(fields: list[tuple[str, str]], rows: list[dict[str, Any]]) -> bytes:
    schema = {"type": "record", "name": "r",
              "fields": [{"name": n, "type": ["null", t]} for n, t in fields]}
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), rows)
    return out.getvalue()


def test_tracked_xml_and_avro_on_s3(spark: Any, s3: Any, tmp_path: Any) -> None:
    from lakemark import Job

    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    put = client.put_object
    put(Bucket=BUCKET, Key="x/day=1/a.xml", Body=b"<r><row><id>1</id><code>5</code></row></r>")
    put(Bucket=BUCKET, Key="a/day=1/a.avro",
        Body=_avro([("id", "long"), ("code", "long")], [{"id": 1, "code": 5}]))
    state = f"sqlite:///{tmp_path / 'state.db'}"

    def read(job: Job, fmt: str) -> list[dict[str, Any]]:
        root = f"s3://{BUCKET}/{fmt[0]}"
        df = job.read_files(root, format=fmt, ctx=fmt, schema_evolution="addNewColumns",
                            options={"rowTag": "row"} if fmt == "xml" else None)
        return sorted((r.asDict() for r in df.collect()), key=lambda r: r["id"] or 0)

    with Job("s3drift", state=state, spark=spark) as job:
        assert read(job, "xml") == [{"code": 5, "id": 1, "day": 1, "_rescued_data": None}]
        assert read(job, "avro") == [{"id": 1, "code": 5, "day": 1, "_rescued_data": None}]
    put(Bucket=BUCKET, Key="x/day=2/b.xml",
        Body=b"<r><row><id>2</id><code>X5</code><more>m</more></row><row><id>3</id></r>")
    put(Bucket=BUCKET, Key="a/day=2/b.avro",
        Body=_avro([("id", "long"), ("code", "string")], [{"id": 2, "code": "X5"}]))
    with Job("s3drift", state=state, spark=spark) as job:
        xml = read(job, "xml")
        avro = read(job, "avro")
    assert [(r["id"], r["code"], r["more"], r["day"]) for r in xml] == [
        (None, None, None, 2), (2, None, "m", 2)]
    assert json.loads(xml[1]["_rescued_data"]) == {
        "code": "X5", "_file_path": f"s3://{BUCKET}/x/day=2/b.xml"}
    truncated = json.loads(xml[0]["_rescued_data"])  # an unclosed row: kept, not dropped
    assert (xml[0]["id"], truncated["_corrupt_record"]) == (None, "<row><id>3</id></r>")
    assert [(r["id"], r["code"], r["day"]) for r in avro] == [(2, None, 2)]
    assert json.loads(avro[0]["_rescued_data"]) == {
        "code": "X5", "_file_path": f"s3://{BUCKET}/a/day=2/b.avro"}
