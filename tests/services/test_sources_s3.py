"""``read_files`` on S3 (a real moto_server), with plain PySpark and no S3A connector: the same
files read from S3 and from a local folder give the same DataFrame (schema and rows).

The executors' Python workers reach moto through the endpoint lakemark ships to them; their
credentials come from their own environment, which they inherit from the JVM, so the (fake)
credentials and the interpreter that has pyarrow are set when this module is imported, before
any Spark session exists.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakemark.errors import ReadError
from lakemark.storage import list_files
from lakemark.sources import read_files

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "lake"

ROWS = [
    {"id": 1, "name": "ann", "score": 1.5, "at": "2024-01-01T10:00:00Z"},
    {"id": 2, "name": "bob", "score": None, "at": "2024-01-01T11:30:00Z"},
    {"id": 3, "name": "cy", "score": 2.25, "at": "2024-01-02T00:00:00Z"},
]
AVRO_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "Row",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": ["null", "double"]},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ],
})


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _write(path: Path, fmt: str, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        path.write_text("id,name,score,at\n" + "".join(
            f"{r['id']},{r['name']},{'' if r['score'] is None else r['score']},{r['at']}\n"
            for r in rows))
    elif fmt == "parquet":
        pq.write_table(pa.table({
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "name": [r["name"] for r in rows],
            "score": pa.array([r["score"] for r in rows], pa.float64()),
            "at": pa.array([_ts(r["at"]) for r in rows], pa.timestamp("us", tz="UTC")),
        }), path)
    else:
        with path.open("wb") as out:
            fastavro.writer(out, AVRO_SCHEMA, [{**r, "at": _ts(r["at"])} for r in rows])


@pytest.fixture
def lake(s3: Any) -> Any:
    """An empty bucket on moto_server; the S3 client."""
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def _mirror(lake: Any, local_root: Path, prefix: str) -> None:
    """Upload every file under ``local_root`` to ``s3://lake/<prefix>/`` at the same place."""
    for path in sorted(local_root.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(local_root).as_posix()}"
            lake.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


OPTIONS = {"csv": {"header": "true", "inferSchema": "true"}}


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet", "avro"])
def test_s3_reads_like_local(spark: Any, lake: Any, tmp_path: Path, fmt: str) -> None:
    local = tmp_path / fmt
    _write(local / "day=2024-01-01" / f"a.{fmt}", fmt, ROWS[:2])
    _write(local / "day=2024-01-02" / f"b.{fmt}", fmt, ROWS[2:])
    _mirror(lake, local, f"in/{fmt}")
    # A file that is under the prefix but not planned must not be read.
    _write(tmp_path / "extra" / f"c.{fmt}", fmt, [{**ROWS[0], "id": 99}])
    lake.put_object(Bucket=BUCKET, Key=f"in/{fmt}/day=2024-01-03/c.{fmt}",
                    Body=(tmp_path / "extra" / f"c.{fmt}").read_bytes())

    s3_root = f"s3://{BUCKET}/in/{fmt}"
    s3_files = [f for f in list_files(s3_root).files if "2024-01-03" not in f.path]
    local_files = list_files(str(local)).files
    assert len(s3_files) == len(local_files) == 2

    options = OPTIONS.get(fmt)
    from_local = read_files(spark, local_files, root=str(local), format=fmt, options=options)
    from_s3 = read_files(spark, s3_files, root=s3_root, format=fmt, options=options)
    assert from_s3.schema == from_local.schema
    assert "day" in from_s3.columns and dict(from_s3.dtypes)["day"] == "date"
    assert _rows(from_s3) == _rows(from_local)
    assert len(_rows(from_s3)) == 3 and 99 not in {r[0] for r in _rows(from_s3)}

    # s3a:// names the same objects.
    s3a = read_files(spark, s3_files, root=s3_root.replace("s3://", "s3a://"), format=fmt,
                     options=options)
    assert _rows(s3a) == _rows(from_local)


def test_s3_json_modes(spark: Any, lake: Any) -> None:
    lake.put_object(Bucket=BUCKET, Key="bad/p=1/x.json",
                    Body=b'{"id": 1, "name": "a"}\n{oops\n{"id": 2}\n')
    files = list_files(f"s3://{BUCKET}/bad").files
    root = f"s3://{BUCKET}/bad"

    permissive = read_files(spark, files, root=root, format="json")
    assert permissive.columns == ["_corrupt_record", "id", "name", "p"]
    assert _rows(permissive) == sorted(
        [(None, 1, "a", 1), ("{oops", None, None, 1), (None, 2, None, 1)], key=repr)

    dropped = read_files(spark, files, root=root, format="json", mode="DROPMALFORMED")
    assert _rows(dropped) == [(1, "a", 1), (2, None, 1)]

    strict = read_files(spark, files, root=root, format="json", mode="FAILFAST",
                        schema="id long, name string")
    with pytest.raises(ReadError, match=r"malformed json record in s3://lake/bad/p=1/x\.json"):
        strict.collect()


def test_s3_missing_object_is_a_read_error(spark: Any, lake: Any) -> None:
    lake.put_object(Bucket=BUCKET, Key="gone/a.json", Body=b'{"id": 1}\n')
    files = list_files(f"s3://{BUCKET}/gone").files
    df = read_files(spark, files, root=f"s3://{BUCKET}/gone", format="json",
                    schema="id long")
    lake.delete_object(Bucket=BUCKET, Key="gone/a.json")
    with pytest.raises(ReadError, match=r"s3://lake/gone/a\.json"):
        df.collect()


S3_NAMES = ["colon:a.json", "pct%41.json", "pct%20space.json", "hash#c.json", "question?d.json",
            "bracket[1].json", "star*e.json", "with space.json", "tab\tname.json",
            "ünïcødé-名前.json", "back\\slash.json", "plus+and&=.json", "k" * 900 + ".json"]


def test_s3_keys_with_any_allowed_name_are_listed_and_read(spark: Any, lake: Any) -> None:
    """Every key S3 allows (URI and glob characters, unicode, ~1,000 bytes). moto_server
    refuses a newline in a key (real S3 takes it); the local corpus has one."""
    for index, name in enumerate(S3_NAMES):
        lake.put_object(Bucket=BUCKET, Key=f"names/{name}",
                        Body=(json.dumps({"id": index}) + "\n").encode())
    listing = list_files(f"s3://{BUCKET}/names/")
    assert sorted(e.path.rsplit("/names/", 1)[1] for e in listing.entries) == sorted(S3_NAMES)
    df = read_files(spark, listing.entries, root=f"s3://{BUCKET}/names", format="json")
    assert sorted(r["id"] for r in df.collect()) == list(range(len(S3_NAMES)))
