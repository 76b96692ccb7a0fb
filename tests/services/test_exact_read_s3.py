"""The issue-31 story on S3 (moto_server): an object rewritten longer between the plan and the
read is left out of the run (its size no longer matches the plan: ``HeadObject`` after the
read) and taken whole by the next run: no row twice, none lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "exact"


def _body(first: int, n: int) -> bytes:
    return "".join(json.dumps({"id": i}) + "\n" for i in range(first, first + n)).encode()


def test_an_object_rewritten_during_the_read_is_left_out_then_taken_whole(
        spark: Any, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lakemark.run import file_sources as _job_files
    from lakemark.ingest import IngestOptions, ingest_files
    from lakemark.state import open_store

    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="in/log.json", Body=_body(0, 20))
    client.put_object(Bucket=BUCKET, Key="in/other.json", Body=_body(100, 5))
    original = _job_files.fault_point
    done: list[str] = []

    def hook(name: str) -> None:
        original(name)
        if name == "mid-read" and not done:
            done.append(name)  # the writer appends 15 rows (S3: a longer object)
            client.put_object(Bucket=BUCKET, Key="in/log.json", Body=_body(0, 35))

    monkeypatch.setattr(_job_files, "fault_point", hook)
    target = tmp_path / "table"
    options = IngestOptions(f"s3://{BUCKET}/in", str(target), "exact-s3")
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        first = ingest_files(options, store).to_json()
        assert (first["files"], first["rows"]) == (1, 5)
        assert [c["path"] for c in first["changed_during_run"]] == [f"s3://{BUCKET}/in/log.json"]
        monkeypatch.undo()
        second = ingest_files(options, store).to_json()
        assert (second["files"], second["rows"]) == (1, 35)
    finally:
        store.close()
    ids = sorted(DeltaTable(str(target)).to_pyarrow_table().column("id").to_pylist())
    assert ids == [*range(35), *range(100, 105)]
