"""One read, top to bottom, on S3 (moto_server, no S3A connector): a tracked JSON source's read
fetches the run's records once (sources/_fetched.py) and reads them with the Arrow reader,
and still calls its steps once each, in order, with no module calling back into one that
called it and no call up a layer (tests/spark/test_read_path_shape.py does the same on local
files)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from read_path_trace import report, trace

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "shape"
SOURCES = "lakemark.sources"
#: Re-entries allowed inside lakemark.sources (see test_read_path_shape.BUDGET).
BUDGET = 17


def _body(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_a_tracked_json_read_on_s3_goes_top_to_bottom(spark: Any, s3: Any,
                                                       tmp_path: Path) -> None:
    from lakemark import Job

    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    state = f"sqlite:///{tmp_path / 'state.db'}"
    root = f"s3://{BUCKET}/j"
    client.put_object(Bucket=BUCKET, Key="j/day=1/a.json",
                      Body=_body([{"id": 1, "code": 5}, {"id": 2, "code": 6}]))
    with Job("shape", state=state, spark=spark) as job:
        first = job.read_files(root, format="json", ctx="src", schema_evolution="addNewColumns")
        assert first.count() == 2
    client.put_object(Bucket=BUCKET, Key="j/day=2/b.json",
                      Body=_body([{"id": 3, "code": "X5", "extra": "e"}, {"id": 4, "code": 7}]))
    with Job("shape", state=state, spark=spark) as job:
        df, shape = trace(lambda: job.read_files(root, format="json", ctx="src",
                                                 schema_evolution="addNewColumns"),
                          "lakemark.job:read_files")
        rows = sorted((r.asDict() for r in df.collect()), key=lambda r: r["id"])
    print("\n" + report("json on S3", shape))
    assert [(r["id"], r["code"], r["extra"]) for r in rows] == [(3, None, "e"), (4, 7, None)]
    assert "lakemark.sources._fetched" in shape.modules(), report("json on S3", shape)
    assert not shape.call_backs(SOURCES), report("json on S3", shape)
    assert not shape.up_layer(), report("json on S3", shape)
    assert shape.steps(f"{SOURCES}._schema_track") == [
        "_json_tracked.observe", "_schema_decision._decided", "_json_tracked.frame"]
    assert len(shape.re_entries(SOURCES)) <= BUDGET, report("json on S3", shape)
