"""Quarantine on S3 (a real moto_server): damaged objects are set aside by the same checks as
local files (ranged reads of head and tail), the run commits the good objects, and the job
never sticks."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "qlake"
SCHEMA = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]})


def _encode(fmt: str, ids: range) -> bytes:
    rows = [{"id": i, "name": f"n{i}"} for i in ids]
    out = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), out)
    elif fmt == "avro":
        fastavro.writer(out, SCHEMA, rows)
    else:
        out.write("".join(json.dumps(r) + "\n" for r in rows).encode())
    return out.getvalue()


@pytest.fixture
def bucket(s3: Any) -> Any:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def _ingest(tmp_path: Path, fmt: str, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, [
        "ingest", "files", f"s3://{BUCKET}/{fmt}/", str(tmp_path / f"t-{fmt}"), "--job", fmt,
        "--format", fmt, "--state", f"sqlite:///{tmp_path / 's.db'}", "--json", *extra],
        catch_exceptions=False)
    assert result.exit_code in (0, 3), (result.stdout, result.stderr)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
def test_a_truncated_object_is_set_aside_and_the_good_one_committed(
        spark: Any, bucket: Any, tmp_path: Path, fmt: str) -> None:
    bucket.put_object(Bucket=BUCKET, Key=f"{fmt}/good.{fmt}", Body=_encode(fmt, range(4)))
    cut = _encode(fmt, range(100, 300))
    bucket.put_object(Bucket=BUCKET, Key=f"{fmt}/cut.{fmt}", Body=cut[: len(cut) // 2])
    bucket.put_object(Bucket=BUCKET, Key=f"{fmt}/empty.{fmt}", Body=b"")
    code, out = _ingest(tmp_path, fmt)
    assert (code, out["rows"], out["quarantined_files"]) == (3, 4, 2)
    assert sorted(q["path"] for q in out["quarantined"]) == [
        f"s3://{BUCKET}/{fmt}/cut.{fmt}", f"s3://{BUCKET}/{fmt}/empty.{fmt}"]
    ids = DeltaTable(str(tmp_path / f"t-{fmt}")).to_pyarrow_table().column("id").to_pylist()
    assert sorted(ids) == [0, 1, 2, 3]
    code, again = _ingest(tmp_path, fmt)
    assert (code, again["files"]) == (0, 0)


def test_a_record_over_the_limit_in_an_object_is_set_aside(spark: Any, bucket: Any,
                                                           tmp_path: Path) -> None:
    bucket.put_object(Bucket=BUCKET, Key="json/a.json", Body=_encode("json", range(3)))
    big = json.dumps({"id": 9, "name": "x" * 200_000}) + "\n"
    bucket.put_object(Bucket=BUCKET, Key="json/big.json", Body=big.encode())
    code, out = _ingest(tmp_path, "json", "--max-record-bytes", "64KiB")
    assert (code, out["rows"]) == (3, 3)
    assert [q["path"] for q in out["quarantined"]] == [f"s3://{BUCKET}/json/big.json"]
