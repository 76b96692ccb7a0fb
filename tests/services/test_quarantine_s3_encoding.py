"""An S3 object with bytes that are not UTF-8 (a real moto_server): lakemark's own reader
decodes it strictly, the read fails naming the object, and the run sets it aside instead of
writing U+FFFD in place of the bytes (issue 31)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "enclake"


def test_an_object_with_bytes_that_are_not_utf8_is_set_aside(spark: Any, s3: Any,
                                                              tmp_path: Path) -> None:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="csv/a.csv", Body="id,name\n1,café\n2,b\n".encode())
    client.put_object(Bucket=BUCKET, Key="csv/latin1.csv", Body=b"id,name\n3,caf\xe9\n")
    result = CliRunner().invoke(cli, [
        "ingest", "files", f"s3://{BUCKET}/csv/", str(tmp_path / "t"), "--job", "enc",
        "--format", "csv", "--option", "header=true", "--state",
        f"sqlite:///{tmp_path / 's.db'}", "--json"], catch_exceptions=False)
    assert result.exit_code == 3, (result.stdout, result.stderr)
    out = json.loads(result.stdout)
    assert [q["path"] for q in out["quarantined"]] == [f"s3://{BUCKET}/csv/latin1.csv"]
    assert "UnicodeDecodeError" in out["quarantined"][0]["reason"]
    rows = DeltaTable(str(tmp_path / "t")).to_pyarrow_table().to_pylist()
    assert sorted((str(r["id"]), r["name"]) for r in rows) == [("1", "café"), ("2", "b")]
