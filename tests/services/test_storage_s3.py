"""The storage layer against a real moto_server process: S3 listing (pagination, folders,
markers, hidden names, exclusions, StartAfter), errors, and the pyarrow filesystem.

Clients find the server only through ``AWS_ENDPOINT_URL`` (set by the ``moto_server`` fixture),
as they would find a real endpoint.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakemark.errors import ConfigError, SourceError
from lakemark.storage import (
    arrow_filesystem,
    arrow_filesystem_from_config,
    arrow_fs_config,
    check_source,
    list_files,
    list_files_after,
    s3_client,
)

pytestmark = pytest.mark.services

BUCKET = "lake"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def put_all(client: Any, keys: list[str], body: bytes = b"{}") -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda k: client.put_object(Bucket=BUCKET, Key=k, Body=body), keys))


def keys_of(files: list[Any]) -> list[str]:
    prefix = f"s3://{BUCKET}/"
    assert all(f.path.startswith(prefix) for f in files)
    return [f.path[len(prefix):] for f in files]


@pytest.fixture
def bucket(s3: Any) -> Any:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def layout(bucket: Any) -> Any:
    """A source prefix with folders, folder markers and files Spark treats as hidden."""
    put_all(bucket, [
        "in/a.json", "in/b.json", "in/sub/c.json", "in/sub/deep/d.json", "in/year=2024/e.json",
        "in/_p=1/f.json",                                    # partition folder: kept
        "in/_SUCCESS", "in/.a.json.crc", "in/_temporary/0/x.json", "in/sub/.hidden/y.json",
        "in/z.json._COPYING_",                               # hidden
        "in-sibling/not-mine.json", "ina.json",              # siblings sharing the prefix
    ])
    for marker in ("in/", "in/sub/", "in/empty/", "in/sub_$folder$"):
        bucket.put_object(Bucket=BUCKET, Key=marker, Body=b"")
    return bucket


def test_recursive_listing_skips_markers_hidden_names_and_siblings(layout: Any) -> None:
    listing = list_files(f"s3://{BUCKET}/in")
    assert listing.root == f"s3://{BUCKET}/in"
    assert sorted(keys_of(listing.files)) == [
        "in/_p=1/f.json", "in/a.json", "in/b.json", "in/sub/c.json", "in/sub/deep/d.json",
        "in/year=2024/e.json",
    ]
    assert listing.files == sorted(listing.files, key=lambda f: (f.mtime, f.path))
    assert all(f.size == 2 for f in listing.files)
    assert listing.requests == 1


def test_non_recursive_lists_direct_children_only(layout: Any) -> None:
    listing = list_files(f"s3://{BUCKET}/in/", recurse=False)
    assert sorted(keys_of(listing.files)) == ["in/a.json", "in/b.json"]
    assert listing.requests == 1


def test_every_s3_scheme_and_trailing_slash_gives_the_same_root_and_files(layout: Any) -> None:
    listings = [list_files(u) for u in
                (f"s3://{BUCKET}/in", f"s3a://{BUCKET}/in/", f"s3n://{BUCKET}/in")]
    assert {x.root for x in listings} == {f"s3://{BUCKET}/in"}
    assert listings[0].files == listings[1].files == listings[2].files


def test_whole_bucket(layout: Any) -> None:
    listing = list_files(f"s3://{BUCKET}")
    assert listing.root == f"s3://{BUCKET}"
    assert "in-sibling/not-mine.json" in keys_of(listing.files)
    assert "ina.json" in keys_of(listing.files)
    assert not any(k.endswith("/") or "_temporary" in k for k in keys_of(listing.files))


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_pagination_over_more_than_1000_objects(bucket: Any) -> None:
    keys = [f"big/part-{i:05d}.json" for i in range(1234)]
    put_all(bucket, keys + ["bigger/other.json"])
    listing = list_files(f"s3a://{BUCKET}/big")
    assert listing.requests == 2  # MaxKeys 1000: two pages
    assert sorted(keys_of(listing.files)) == keys
    assert listing.files == sorted(listing.files)
    flat = list_files(f"s3://{BUCKET}/big/", recurse=False)
    assert flat.requests == 2 and len(flat.files) == 1234
    after = list_files_after(f"s3://{BUCKET}/big", "big/part-00199.json")
    assert sorted(keys_of(after.files)) == keys[200:]
    assert after.requests == 2  # 1034 keys: StartAfter on page one, the token on page two


def test_key_naming_one_object_lists_just_it(layout: Any) -> None:
    listing = list_files(f"s3://{BUCKET}/in/a.json")
    assert keys_of(listing.files) == ["in/a.json"]
    assert listing.root == f"s3://{BUCKET}/in/a.json"
    assert listing.requests == 2  # the folder listing came back empty, then the one-key check


def test_prefix_with_nothing_under_it_is_zero_files_not_an_error(layout: Any) -> None:
    for uri in (f"s3://{BUCKET}/nothing/here", f"s3://{BUCKET}/in/empty/", f"s3://{BUCKET}/in/a"):
        assert list_files(uri).files == [], uri
    assert check_source(f"s3://{BUCKET}/nothing/here").bucket == BUCKET


def test_missing_bucket_error_names_the_bucket(s3: Any) -> None:
    with pytest.raises(SourceError, match="no-such-bucket") as err:
        list_files("s3a://no-such-bucket/in/")
    assert "does not exist" in str(err.value)
    with pytest.raises(SourceError, match="no-such-bucket"):
        check_source("s3://no-such-bucket/x")
    with pytest.raises(SourceError, match="no-such-bucket"):
        list_files_after("s3://no-such-bucket/x", "x/a")


def test_unreachable_endpoint_is_a_source_error_without_credentials(s3: Any) -> None:
    dead = s3_client(endpoint_url=f"http://127.0.0.1:{_free_port()}", max_attempts=1)
    with pytest.raises(SourceError) as err:
        list_files(f"s3://{BUCKET}/in", s3_client=dead)
    message = str(err.value)
    assert f"s3://{BUCKET}/in" in message
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in message


def test_exclusions_against_relative_path_and_full_uri(layout: Any) -> None:
    listing = list_files(f"s3a://{BUCKET}/in", exclusions='["sub/**", "**/e.json"]')
    assert sorted(keys_of(listing.files)) == ["in/_p=1/f.json", "in/a.json", "in/b.json"]
    listing = list_files(f"s3a://{BUCKET}/in", exclusions=[f"s3://{BUCKET}/in/*.json"])
    assert sorted(keys_of(listing.files)) == [
        "in/_p=1/f.json", "in/sub/c.json", "in/sub/deep/d.json", "in/year=2024/e.json"
    ]
    with pytest.raises(ConfigError, match="exclusions"):
        list_files(f"s3://{BUCKET}/in", exclusions="[oops")


def test_mtime_is_last_modified_in_epoch_ms(bucket: Any) -> None:
    before = time.time_ns() // 1_000_000
    bucket.put_object(Bucket=BUCKET, Key="t/one.json", Body=b"12345")
    after = time.time_ns() // 1_000_000
    listing = list_files(f"s3://{BUCKET}/t")
    [entry] = listing.files
    assert isinstance(entry.mtime, int) and entry.size == 5
    # S3 may truncate Last-Modified to the second
    assert before // 1000 * 1000 <= entry.mtime <= after
    head = bucket.head_object(Bucket=BUCKET, Key="t/one.json")["LastModified"]
    assert entry.mtime // 1000 == int(head.astimezone(UTC).timestamp())
    assert listing.started_ms >= after


def test_service_specific_endpoint_variable_wins(
    s3: Any, bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket.put_object(Bucket=BUCKET, Key="e/x.json", Body=b"{}")
    dead = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.endpoint)
    assert keys_of(list_files(f"s3://{BUCKET}/e").files) == ["e/x.json"]
    cfg = arrow_fs_config(f"s3://{BUCKET}/e")
    assert cfg["endpoint_override"] == s3.endpoint.split("://", 1)[1]


def test_list_files_after_uses_start_after(bucket: Any) -> None:
    keys = [f"ev/2024-01-0{d}.json" for d in range(1, 6)]
    put_all(bucket, keys + ["ev/_SUCCESS", "ev/sub/2024-01-09.json", "evx/2024-01-09.json"])
    listing = list_files_after(f"s3://{BUCKET}/ev", "ev/2024-01-03.json")
    assert sorted(keys_of(listing.files)) == [
        "ev/2024-01-04.json", "ev/2024-01-05.json", "ev/sub/2024-01-09.json"
    ]
    assert listing.requests == 1 and listing.root == f"s3://{BUCKET}/ev"
    as_uri = list_files_after(f"s3a://{BUCKET}/ev/", f"s3://{BUCKET}/ev/2024-01-04.json",
                              recurse=False)
    assert keys_of(as_uri.files) == ["ev/2024-01-05.json"]
    with pytest.raises(ConfigError, match="other"):
        list_files_after(f"s3://{BUCKET}/ev", "s3://other/ev/x")



def test_purge_and_publish_go_through_the_s3_filesystem(bucket: Any) -> None:
    """Glue's purge deletes through storage's S3 file system (DeleteObjects), which also
    serves folder publishes: the same protocol as the local one and a test-only mock://."""
    from lakemark.glue._purge import purge_path
    from lakemark.storage import filesystem_for

    put_all(bucket, ["old/a.json", "old/p=1/b.json", "keep/c.json"])
    assert purge_path(f"s3://{BUCKET}/old", {"retentionPeriod": 0}) == 2
    assert keys_of(list_files(f"s3://{BUCKET}").files) == ["keep/c.json"]
    fs = filesystem_for(f"s3a://{BUCKET}/keep/")
    fs.write_text("_staging/x.json", "{}")
    fs.publish("_staging/x.json", "x.json", 2)
    fs.delete(["_staging/x.json"])
    assert fs.read_text("x.json") == "{}" and fs.exists("c.json")
    assert sorted(fs.files("")) == ["c.json", "x.json"]

def _parquet_bytes() -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}), sink)
    return sink.getvalue()


def test_arrow_filesystem_reads_an_object(s3: Any, bucket: Any) -> None:
    payload = _parquet_bytes()
    bucket.put_object(Bucket=BUCKET, Key="pq/part-0.parquet", Body=payload)
    [entry] = list_files(f"s3://{BUCKET}/pq").files
    fs, path = arrow_filesystem(entry.path)
    assert path == f"{BUCKET}/pq/part-0.parquet"
    assert pq.read_table(path, filesystem=fs).column("name").to_pylist() == ["a", "b", "c"]
    cfg = arrow_fs_config(entry.path)
    assert cfg == {
        "kind": "s3",
        "endpoint_override": s3.endpoint.split("://", 1)[1],
        "scheme": "http",
        "region": "us-east-1",
    }
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    assert secret not in json.dumps(cfg)
    rebuilt = arrow_filesystem_from_config(pickle.loads(pickle.dumps(cfg)))
    with rebuilt.open_input_file(path) as fh:
        assert fh.read() == payload


_EXECUTOR = """
import pickle, sys
import pyarrow.parquet as pq
from lakemark.storage import arrow_filesystem_from_config
cfg = pickle.loads(bytes.fromhex(sys.argv[1]))
print(pq.read_table(sys.argv[2], filesystem=arrow_filesystem_from_config(cfg)).num_rows)
"""


def test_config_rebuilds_the_filesystem_in_another_process(s3: Any, bucket: Any) -> None:
    """An executor has credentials in its environment but no endpoint: the config carries it."""
    bucket.put_object(Bucket=BUCKET, Key="pq/part-0.parquet", Body=_parquet_bytes())
    cfg = arrow_fs_config(f"s3://{BUCKET}/pq")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    env["PYTHONPATH"] = str(Path(__file__).parents[2] / "src")
    out = subprocess.run(
        [sys.executable, "-c", _EXECUTOR, pickle.dumps(cfg).hex(), f"{BUCKET}/pq/part-0.parquet"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "3"
