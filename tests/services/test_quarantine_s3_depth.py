"""Small S3 objects nested deeper than Parquet allows (a real moto_server): the driver does not
read them before the run, so lakemark's own reader checks each record's nesting; the object is
set aside naming depth and limit, the others commit (issue 31's nesting check, S3 reach)."""

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

BUCKET = "deeplake"


def _nest_json(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = {"n": value}
    return value


def _nest_xml(levels: int) -> str:
    text = "<v>1</v>"
    for _ in range(levels):
        text = f"<n>{text}</n>"
    return text


@pytest.mark.parametrize(("fmt", "good", "deep", "options"), [
    ("json", json.dumps({"id": 1}) + "\n",
     json.dumps({"id": 2}) + "\n" + json.dumps({"id": 3, "t": _nest_json(120)}) + "\n", []),
    ("xml", "<rows><row><id>1</id></row></rows>",
     f"<rows><row><id>2</id></row><row><id>3</id>{_nest_xml(120)}</row></rows>",
     ["--option", "rowTag=row"]),
])
def test_a_small_object_nested_too_deep_is_set_aside_and_the_others_commit(
        spark: Any, s3: Any, tmp_path: Path, fmt: str, good: str, deep: str,
        options: list[str]) -> None:
    client = s3.client("s3")
    bucket = f"{BUCKET}-{fmt}"
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key=f"in/a.{fmt}", Body=good.encode())
    client.put_object(Bucket=bucket, Key=f"in/deep.{fmt}", Body=deep.encode())
    result = CliRunner().invoke(cli, [
        "ingest", "files", f"s3://{bucket}/in/", str(tmp_path / "t"), "--job", f"deep-{fmt}",
        "--format", fmt, *options, "--state", f"sqlite:///{tmp_path / 's.db'}", "--json"],
        catch_exceptions=False)
    assert result.exit_code == 3, (result.stdout, result.stderr)
    out = json.loads(result.stdout)
    assert [q["path"] for q in out["quarantined"]] == [f"s3://{bucket}/in/deep.{fmt}"], \
        json.dumps(out["quarantined"])
    reason = out["quarantined"][0]["reason"]
    assert "levels deep" in reason and "deeper than the 100 levels" in reason, reason
    rows = DeltaTable(str(tmp_path / "t")).to_pyarrow_table().to_pylist()
    assert sorted(int(r["id"]) for r in rows) == [1]
