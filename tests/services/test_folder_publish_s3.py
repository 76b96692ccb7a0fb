"""S3 folder targets are exactly-once too, on a real moto_server: a run writes its files under
the hidden ``_lakemark_staging/<write id>/`` prefix, records ``_lakemark_commits/….pending``,
publishes by server-side copies and then PUTs the commit record; a retry of a run whose output
was published skips, and a dead write's trace (``.pending`` without its commit record) is
removed, with the files it had already published, before the retry writes.

Crash tests run ``python -m lakemark ingest files SRC s3://…`` as subprocesses that SIGKILL
themselves at ``LAKEMARK_FAULT`` points; the subprocesses reach moto through
``AWS_ENDPOINT_URL`` (set in this process's environment by the ``moto_server`` fixture).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from lakemark import Job
from lakemark.errors import ConfigError, FormatError, SinkError
from lakemark.sinks import IdempotencyToken, committed_files, write_target
from lakemark._fault import FAULT_ENV, FAULT_WAIT_ENV
from lakemark.sinks._commit_log import FOLDER_COMMITS_ENV
from lakemark.sinks._location import is_hidden
from lakemark.sinks._write import folder_commit_run_id, folder_token_supported

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

pytestmark = [pytest.mark.services, pytest.mark.spark]

BUCKET = "lake"


@pytest.fixture
def lake(s3: Any) -> Any:
    """An empty bucket on moto_server; the S3 client."""
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def keys(client: Any, prefix: str) -> dict[str, int]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {o["Key"]: o["Size"] for page in pages for o in page.get("Contents", [])}


def visible(client: Any, prefix: str) -> list[str]:
    """Keys under ``prefix`` that a dataset reader treats as data (no ``_``/``.`` segment)."""
    return sorted(k for k in keys(client, prefix) if not is_hidden(k[len(prefix):]))


def hidden(client: Any, prefix: str) -> list[str]:
    return sorted(k for k in keys(client, prefix) if is_hidden(k[len(prefix):]))


def dataset_ids(s3: Any, prefix: str) -> list[int]:
    """What pyarrow's dataset reader sees under ``s3://lake/<prefix>`` (it skips paths with a
    ``_`` or ``.`` segment by default)."""
    endpoint = urlsplit(s3.endpoint)
    fs = pafs.S3FileSystem(endpoint_override=endpoint.netloc, scheme=endpoint.scheme,
                           region="us-east-1", access_key="testing", secret_key="testing")
    table = pads.dataset(f"{BUCKET}/{prefix.rstrip('/')}", filesystem=fs,
                         format="parquet").to_table()
    return sorted(table.column("id").to_pylist()) if table.num_rows else []


def test_s3_folder_targets_get_automatic_tokens() -> None:
    assert folder_token_supported(f"s3://{BUCKET}/out", "parquet")
    assert folder_token_supported(f"s3a://{BUCKET}/out", "json")
    assert not folder_token_supported(f"s3://{BUCKET}/out", "delta")


def test_same_token_twice_writes_one_copy(spark: Any, s3: Any, lake: Any) -> None:
    uri = f"s3://{BUCKET}/out/p"
    token = IdempotencyToken("j/sink", 3)
    df = spark.createDataFrame([(i, ["eu", "us"][i % 2]) for i in range(6)], "id long, r string")
    first = write_target(spark, df.repartition(2), uri, format="parquet", partition_by=["r"],
                         commit_token=token, commit_info={"lakemark.runId": "run-a"})
    assert (first.rows, first.skipped) == (6, False) and first.files >= 2
    objects = keys(lake, "out/p/")
    again = write_target(spark, df, uri, format="parquet", partition_by=["r"],
                         commit_token=token, commit_info={"lakemark.runId": "run-b"})
    assert (again.rows, again.files, again.skipped) == (0, 0, True)
    assert keys(lake, "out/p/") == objects, "the skipped write changed the prefix"
    assert dataset_ids(s3, "out/p") == list(range(6))

    data = visible(lake, "out/p/")
    assert len(data) == first.files
    assert sum(objects[k] for k in data) == first.bytes
    # Only the commit record is hidden: staging is gone, no .pending left.
    assert hidden(lake, "out/p/") == ["out/p/_lakemark_commits/j%2Fsink-3.json"]
    record = json.loads(lake.get_object(
        Bucket=BUCKET, Key="out/p/_lakemark_commits/j%2Fsink-3.json")["Body"].read())
    assert sorted(record["files"]) == sorted(k[len("out/p/"):] for k in data)
    assert (record["app_id"], record["version"], record["lakemark.runId"]) == ("j/sink", 3,
                                                                               "run-a")
    assert folder_commit_run_id(uri, token, "lakemark.runId") == "run-a"
    assert folder_commit_run_id(uri, IdempotencyToken("j/sink", 2), "lakemark.runId") is None

    # A lower version of the same app id is covered by the record; a higher one writes.
    lower = write_target(spark, df, uri, format="parquet", commit_token=IdempotencyToken(
        "j/sink", 1))
    assert lower.skipped
    higher = write_target(spark, df.limit(2), uri, format="parquet", partition_by=["r"],
                          commit_token=IdempotencyToken("j/sink", 4))
    assert (higher.rows, higher.skipped) == (2, False)
    assert dataset_ids(s3, "out/p") == sorted(list(range(6)) + [0, 1])


def test_writes_without_token_stage_too(spark: Any, lake: Any) -> None:
    """No token: staged and published all the same, but no commit records."""
    uri = f"s3://{BUCKET}/plain"
    df = spark.createDataFrame([(i,) for i in range(3)], "id long")
    r = write_target(spark, df, uri, format="json")
    assert r.rows == 3 and len(visible(lake, "plain/")) == r.files
    assert hidden(lake, "plain/") == []


def test_dead_write_trace_is_cleaned_before_the_retry(spark: Any, s3: Any, lake: Any,
                                                      tmp_path: Path, monkeypatch: Any) -> None:
    """A write that died mid-publish: its ``.pending`` record names a staging prefix (still
    holding a file) and a file it had already copied into place. The next write of that token
    removes both before writing, and commits with this attempt's run id."""
    monkeypatch.setenv(FOLDER_COMMITS_ENV, "folder")  # the old layout (opt-in)
    prefix = "out/dead/"
    stray = "part-00000-lm" + "d" * 32 + "-a0-000.parquet"
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([100, 101], pa.int64())}), buf)
    lake.put_object(Bucket=BUCKET, Key=prefix + stray, Body=buf.getvalue())
    lake.put_object(Bucket=BUCKET, Key=prefix + "_lakemark_staging/dead/" + stray,
                    Body=buf.getvalue())
    lake.put_object(Bucket=BUCKET, Key=prefix + "_lakemark_commits/j%2Fsink-1.pending",
                    Body=json.dumps({"staging": "dead", "files": [stray]}).encode())
    assert dataset_ids(s3, prefix) == [100, 101]  # the half-published run is visible
    assert committed_files(f"s3://{BUCKET}/out/dead") == []  # ...but not committed

    df = spark.createDataFrame([(i,) for i in range(4)], "id long")
    with Job("j", state=f"sqlite:///{tmp_path / 'dead.db'}", spark=spark) as job:
        result = job.write(df, f"s3://{BUCKET}/out/dead", format="parquet", ctx="sink")
    assert (result.rows, result.skipped) == (4, False)
    assert dataset_ids(s3, prefix) == [0, 1, 2, 3]
    assert prefix + stray not in keys(lake, prefix)
    assert hidden(lake, prefix) == [prefix + "_lakemark_commits/j%2Fsink-1.json"]
    record = json.loads(lake.get_object(
        Bucket=BUCKET, Key=prefix + "_lakemark_commits/j%2Fsink-1.json")["Body"].read())
    assert record["lakemark.runId"] == job.run_id
    assert sorted(record["files"]) == [k[len(prefix):] for k in visible(lake, prefix)]
    assert committed_files(f"s3://{BUCKET}/out/dead") == [
        f"s3://{BUCKET}/{k}" for k in visible(lake, prefix)]


def test_pending_left_after_the_commit_record_keeps_the_files(spark: Any, s3: Any,
                                                               lake: Any) -> None:
    """Died between the commit record and removing ``.pending``: the retry is skipped, the
    committed files stay, the leftover ``.pending`` goes."""
    uri = f"s3://{BUCKET}/out/late"
    token = IdempotencyToken("j/sink", 5)
    df = spark.createDataFrame([(i,) for i in range(3)], "id long")
    first = write_target(spark, df, uri, format="parquet", commit_token=token)
    files = visible(lake, "out/late/")
    lake.put_object(Bucket=BUCKET, Key="out/late/_lakemark_commits/j%2Fsink-5.pending",
                    Body=json.dumps({"staging": "gone",
                                     "files": [k[len("out/late/"):] for k in files]}).encode())
    again = write_target(spark, df, uri, format="parquet", commit_token=token)
    assert again.skipped and not first.skipped
    assert visible(lake, "out/late/") == files
    assert hidden(lake, "out/late/") == ["out/late/_lakemark_commits/j%2Fsink-5.json"]
    assert dataset_ids(s3, "out/late") == [0, 1, 2]


class Ingest:
    """A local source folder, an S3 parquet target and a state file; ``ingest files`` runs."""

    def __init__(self, tmp: Path, s3: Any, client: Any, layout: str = "folder") -> None:
        self.layout = layout  # where commit records go (LAKEMARK_FOLDER_COMMITS)
        self.src = tmp / "in"
        self.src.mkdir()
        self.prefix = "ingest/out/"
        self.target = f"s3://{BUCKET}/ingest/out"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.s3 = s3
        self.client = client
        self.next_id = 0
        self.files = 0

    def arrive(self, n: int) -> None:
        (self.src / f"f{self.files:04d}.json").write_text(
            "".join(json.dumps({"id": i}) + "\n" for i in range(self.next_id, self.next_id + n)))
        self.next_id += n
        self.files += 1

    def run(self, fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_WAIT_ENV)}
        env.update(self.s3.env)  # AWS_ENDPOINT_URL → moto_server, fake credentials
        env[FOLDER_COMMITS_ENV] = self.layout
        if fault:
            env[FAULT_ENV] = fault
        cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(self.src), self.target,
               "--job", "fold", "--state", self.state, "--json", "--target-format", "parquet",
               "--master", "local[1]"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)

    def killed(self, fault: str) -> None:
        out = self.run(fault)
        assert out.returncode == -9, (fault, out.returncode, out.stderr[-2000:])

    def succeed(self) -> dict[str, Any]:
        out = self.run()
        assert out.returncode == 0, out.stderr[-2000:]
        return dict(json.loads(out.stdout))

    def ids(self) -> list[int]:
        return dataset_ids(self.s3, self.prefix)

    def staging(self) -> list[str]:
        return [k for k in keys(self.client, self.prefix + "_lakemark_staging/")]

    def sibling_staging(self) -> list[str]:
        """Keys under the staging prefix beside the target (the default layout)."""
        return list(keys(self.client, self.prefix.rstrip("/") + "__lakemark_staging/"))

    def pending(self) -> list[str]:
        return [k for k in keys(self.client, self.prefix + "_lakemark_commits/")
                if k.endswith(".pending")]


@pytest.mark.long
def test_ingest_to_s3_killed_after_publish_then_mid_write(tmp_path: Path, s3: Any,
                                                          lake: Any) -> None:
    f = Ingest(tmp_path, s3, lake)
    f.arrive(3)
    f.killed("after-sink-commit")  # published with its commit record; the run not committed
    assert f.ids() == [0, 1, 2]
    assert sorted(keys(lake, f.prefix + "_lakemark_commits/")) == [
        f.prefix + "_lakemark_commits/fold%2Ftarget-1.json"]
    f.arrive(2)  # arrives before the retry: the retry must replay, not widen
    retry = f.succeed()
    assert (retry["run"], retry["attempt"], retry["skipped"], retry["files"]) == (1, 1, True, 1)
    assert f.ids() == [0, 1, 2], "the retry appended the run again"

    before = visible(lake, f.prefix)
    f.arrive(4)
    f.killed("mid-write")  # the executors wrote the staged files; nothing published
    assert any(k.endswith(".parquet") for k in f.staging()), "the kill came after the write"
    assert f.pending() == [f.prefix + "_lakemark_commits/fold%2Ftarget-2.pending"]
    assert visible(lake, f.prefix) == before
    assert f.ids() == [0, 1, 2], "pyarrow's reader saw staged files"
    assert committed_files(f.target) == [f"s3://{BUCKET}/{k}" for k in before]

    again = f.succeed()
    assert (again["run"], again["attempt"], again["skipped"], again["rows"]) == (2, 1, False, 6)
    assert f.ids() == list(range(9))
    assert f.staging() == [] and f.pending() == []
    assert sorted(keys(lake, f.prefix + "_lakemark_commits/")) == [
        f.prefix + "_lakemark_commits/fold%2Ftarget-1.json",
        f.prefix + "_lakemark_commits/fold%2Ftarget-2.json"]
    records = [json.loads(lake.get_object(Bucket=BUCKET, Key=k)["Body"].read())
               for k in sorted(keys(lake, f.prefix + "_lakemark_commits/"))]
    assert sorted(p for r in records for p in r["files"]) == [
        k[len(f.prefix):] for k in visible(lake, f.prefix)]


def test_reader_recipe_reads_only_committed_files(spark: Any, s3: Any, lake: Any) -> None:
    """The documented recipe: give pyarrow the files ``committed_files`` names (here with a
    published-but-uncommitted file next to them, as a reader listing mid-publish would see)."""
    uri = f"s3://{BUCKET}/recipe"
    df = spark.createDataFrame([(i, ["eu", "us"][i % 2]) for i in range(4)], "id long, r string")
    write_target(spark, df, uri, format="parquet", partition_by=["r"],
                 commit_token=IdempotencyToken("j/sink", 1))
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([99], pa.int64())}), buf)
    extra = "recipe/r=eu/part-00000-lm" + "e" * 32 + "-a0-000.parquet"
    lake.put_object(Bucket=BUCKET, Key=extra, Body=buf.getvalue())
    endpoint = urlsplit(s3.endpoint)
    fs = pafs.S3FileSystem(endpoint_override=endpoint.netloc, scheme=endpoint.scheme,
                           region="us-east-1", access_key="testing", secret_key="testing")
    files = committed_files(uri)
    assert files == [f"s3://{BUCKET}/{k}" for k in visible(lake, "recipe/") if k != extra]
    table = pads.dataset([u.removeprefix("s3://") for u in files], filesystem=fs,
                         format="parquet", partitioning="hive",
                         partition_base_dir=f"{BUCKET}/recipe").to_table()
    assert sorted(zip(table.column("id").to_pylist(), table.column("r").to_pylist())) == [
        (0, "eu"), (1, "us"), (2, "eu"), (3, "us")]
    assert 99 in dataset_ids(s3, "recipe")  # a plain listing sees the uncommitted file


def test_staged_publish_on_s3_store_without_spark(s3: Any, lake: Any) -> None:
    """The publish steps over :class:`S3Store` alone: a writer that uploads into staging, a
    damaged ``.pending`` record that must not delete anything outside the run's data files."""
    from lakemark.sinks._publish import S3Store, staged_publish, staging_folder

    store = S3Store(BUCKET, "raw/t")
    lake.put_object(Bucket=BUCKET, Key="raw/keep.csv", Body=b"x")
    lake.put_object(Bucket=BUCKET, Key="raw/t/_lakemark_commits/other-1.json", Body=b"{}")
    lake.put_object(Bucket=BUCKET, Key="raw/t/_lakemark_commits/a-2.pending", Body=json.dumps(
        {"staging": "../..", "files": ["../keep.csv", "_lakemark_commits/other-1.json",
                                       "/raw/keep.csv", "gone.csv"]}).encode())

    def write(write_id: str) -> None:
        base = f"raw/t/{staging_folder(write_id)}/"
        lake.put_object(Bucket=BUCKET, Key=base + "d=1/a.csv", Body=b"1\n")
        lake.put_object(Bucket=BUCKET, Key=base + "b.csv", Body=b"22\n")
        lake.put_object(Bucket=BUCKET, Key=base + "_SUCCESS", Body=b"")

    published = staged_publish(store, IdempotencyToken("a", 2), {"k": "v"}, write)
    assert (sorted(published.files), published.bytes) == (["b.csv", "d=1/a.csv"], 5)
    assert sorted(keys(lake, "raw/")) == [
        "raw/keep.csv", "raw/t/_lakemark_commits/a-2.json",
        "raw/t/_lakemark_commits/other-1.json", "raw/t/b.csv", "raw/t/d=1/a.csv"]
    record = json.loads(lake.get_object(
        Bucket=BUCKET, Key="raw/t/_lakemark_commits/a-2.json")["Body"].read())
    assert (record["files"], record["k"]) == (["b.csv", "d=1/a.csv"], "v")

    # A name already taken is refused before anything is published; the trace is undone.
    def clash(write_id: str) -> list[str]:
        lake.put_object(Bucket=BUCKET, Key=f"raw/t/{staging_folder(write_id)}/b.csv", Body=b"9")
        return ["b.csv"]

    with pytest.raises(SinkError, match="already exists"):
        staged_publish(store, IdempotencyToken("a", 3), {}, clash)
    assert lake.get_object(Bucket=BUCKET, Key="raw/t/b.csv")["Body"].read() == b"22\n"
    assert not [k for k in keys(lake, "raw/t/") if "staging" in k or k.endswith(".pending")]


def test_bad_input_writes_nothing(spark: Any, lake: Any) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    token = IdempotencyToken("j/sink", 1)
    with pytest.raises(FormatError, match="S3A"):
        write_target(spark, df, f"s3://{BUCKET}/o", format="orc", commit_token=token)
    with pytest.raises(ConfigError, match="not supported"):
        write_target(spark, df, f"s3://{BUCKET}/o", format="json", commit_token=token,
                     options={"bogus": "1"})
    with pytest.raises(SinkError, match="does not exist"):
        write_target(spark, df, "s3://no-such-bucket/o", format="json", commit_token=token)
    assert keys(lake, "") == {}


@pytest.mark.long
def test_ingest_to_s3_keeps_commit_records_out_of_the_prefix(tmp_path: Path, s3: Any,
                                                             lake: Any) -> None:
    """The default layout (issue 32): the same kills as above, and the prefix holds only the
    data files — commit records are in the state store, staging is beside the prefix (and
    gone after each write), even while a killed write waits for its retry."""
    f = Ingest(tmp_path, s3, lake, layout="store")
    f.arrive(3)
    f.killed("after-sink-commit")  # published, commit record in the store; run not committed
    assert f.ids() == [0, 1, 2]
    assert hidden(lake, f.prefix) == []
    assert committed_files(f.target, f.state) == [
        f"s3://{BUCKET}/{k}" for k in visible(lake, f.prefix)]
    f.arrive(2)
    retry = f.succeed()
    assert (retry["run"], retry["attempt"], retry["skipped"], retry["files"]) == (1, 1, True, 1)
    assert f.ids() == [0, 1, 2], "the retry appended the run again"

    before = visible(lake, f.prefix)
    f.arrive(4)
    f.killed("mid-write")  # staged files beside the prefix, a pending row in the store
    assert any(k.endswith(".parquet") for k in f.sibling_staging())
    assert f.staging() == [] and hidden(lake, f.prefix) == []
    assert f.ids() == [0, 1, 2]
    assert committed_files(f.target, f.state) == [f"s3://{BUCKET}/{k}" for k in before]

    again = f.succeed()
    assert (again["run"], again["attempt"], again["skipped"], again["rows"]) == (2, 1, False, 6)
    assert f.ids() == list(range(9))
    data = visible(lake, f.prefix)
    assert sorted(keys(lake, f.prefix)) == data  # nothing but data files under the prefix
    assert f.sibling_staging() == []
    assert all(k.endswith(".parquet") for k in data)
    assert committed_files(f.target, f.state) == [f"s3://{BUCKET}/{k}" for k in data]
