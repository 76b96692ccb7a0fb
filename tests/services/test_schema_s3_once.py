"""A run of a tracked JSON source on S3 (moto_server, no S3A connector) fetches each object
once: the first run's inference, the key scan, the type of a new column (addNewColumns) and
the typed frame all use the records the executors cut from the objects (sources/_fetched.py),
which the job frees when the run ends. Rows, rescued data and counts are those of the same
run over local files, with the objects' s3:// URIs as ``_file_path``. (Files holding a key
that differs from a column only in case are read by the exact path, which fetches them once
more: a known limit.)"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "once"
FIRST = {"day=1/a.json": [{"id": 1, "code": 5, "tags": ["t"]}]}
LATER = {
    "day=2/b.json": [{"id": 2, "code": "X5", "extra": "e"}, "not json", {"id": 3, "code": 7}],
    "day=3/c.json": [{"id": 4, "code": 8, "tags": []}, ""],
    "day=3/d.json": [{"id": 5, "code": 9, "Code": 10}],  # a case variant: the exact path
}


def _body(rows: list[Any]) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def _run(spark: Any, state: str, root: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One run of the tracked source under ``root``: its rows and its manifest's schema entry."""
    from lakemark import Job
    from lakemark.state import open_store

    with Job("once", state=state, spark=spark) as job:
        df = job.read_files(root, format="json", ctx="src", schema_evolution="addNewColumns")
        rows = [r.asDict() for r in df.collect()]
        run_id = job.run_id
    store = open_store(state)
    try:
        entry = next(i.plan for i in store.run_inputs(run_id) if i.ctx == "schema:src")
    finally:
        store.close()
    return sorted(rows, key=lambda r: r["id"] or 0), entry


def _persisted(spark: Any) -> int:
    return int(spark.sparkContext._jsc.getPersistentRDDs().size())  # noqa: SLF001


def test_tracked_json_on_s3_fetches_each_object_once(spark: Any, s3: Any,
                                                     tmp_path: Path) -> None:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    local = tmp_path / "src"
    for key in (*FIRST, *LATER):
        (local / key).parent.mkdir(parents=True, exist_ok=True)
    s3_state = f"sqlite:///{tmp_path / 's3.db'}"
    local_state = f"sqlite:///{tmp_path / 'local.db'}"
    root = f"s3://{BUCKET}/j"

    def put(batch: dict[str, list[Any]]) -> None:
        for key, rows in batch.items():
            client.put_object(Bucket=BUCKET, Key=f"j/{key}", Body=_body(rows))
            (local / key).write_bytes(_body(rows))

    def gets() -> Counter[str]:
        return Counter(path for method, path in s3.recorded()
                       if method == "GET" and "?" not in path)

    put(FIRST)
    s3.record()
    _run(spark, s3_state, root)  # the schema is inferred (from the kept records) and tracked
    assert gets() == {f"/{BUCKET}/j/{key}": 1 for key in FIRST}
    _run(spark, local_state, str(local))
    put(LATER)
    before = _persisted(spark)
    s3.record()
    rows, entry = _run(spark, s3_state, root)
    fetched = gets()
    once = {f"/{BUCKET}/j/{key}": 1 for key in LATER}
    assert fetched == {**once, f"/{BUCKET}/j/day=3/d.json": 2}
    assert _persisted(spark) == before  # the records kept for the run are freed

    expected, expected_entry = _run(spark, local_state, str(local))
    for row in expected:
        if row["_rescued_data"] is not None:
            rescued = json.loads(row["_rescued_data"])
            path = rescued["_file_path"]
            rescued["_file_path"] = f"s3://{BUCKET}/j/" + path[path.index("day="):]
            row["_rescued_data"] = json.dumps(rescued, separators=(",", ":"))
    assert rows == expected
    assert [(r["id"], r["code"], r["extra"], r["day"]) for r in rows] == [
        (None, None, None, 2), (2, None, "e", 2), (3, 7, None, 2), (4, 8, None, 3),
        (5, 9, None, 3)]
    assert json.loads(rows[4]["_rescued_data"]) == {
        "Code": "10", "_file_path": f"s3://{BUCKET}/j/day=3/d.json"}
    assert json.loads(rows[1]["_rescued_data"]) == {
        "code": "X5", "_file_path": f"s3://{BUCKET}/j/day=2/b.json"}
    assert json.loads(rows[0]["_rescued_data"])["_corrupt_record"] == "not json"
    counts = ("rescued_values", "corrupt_records", "added_columns", "inferred")
    assert {k: entry[k] for k in counts} == {k: expected_entry[k] for k in counts} == {
        "rescued_values": {"code": 1}, "corrupt_records": 1, "added_columns": ["extra"],
        "inferred": True}
