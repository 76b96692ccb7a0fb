"""Delta tables as bookmarked sources (issue 20, item 4): ``Job.read_table`` on real tables
written by deltalake and by lakemark's sink — incremental runs, the retry of a killed run
replaying its pinned range, commits that remove data (refused, skipped, or read as the change
data feed), rewind and reset, ``runs show``/``bookmark show``, and an ``s3://`` table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from deltalake import DeltaTable, write_deltalake

from lakemark import Job
from lakemark.cli import cli
from lakemark.errors import SourceError
from lakemark.state import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import delta_chain  # noqa: E402
from crash_support import KILLED  # noqa: E402

CDF = {"delta.enableChangeDataFeed": "true"}


def _rows(df, *cols):  # type: ignore[no-untyped-def]
    return sorted(tuple(r[c] for c in cols) for r in df.collect())


def _append(path: Path, ids: list[int], part: str = "a", **kw) -> None:  # type: ignore[no-untyped-def]
    write_deltalake(str(path), pa.table({"id": pa.array(ids, pa.int64()),
                                         "p": [part] * len(ids)}), mode="append", **kw)


def _manifest(state: str, job: str, ctx: str) -> dict:  # type: ignore[type-arg]
    store = open_store(state)
    try:
        last = store.list_runs(job)[-1]
        return next(dict(i.plan) for i in store.run_inputs(last.run_id) if i.ctx == ctx)
    finally:
        store.close()


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_runs_take_only_new_commits_and_rewind_and_reset_work(spark, tmp_path):  # type: ignore[no-untyped-def]
    from lakemark.sinks import write_target

    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    # version 0 by lakemark's sink (partitioned), then appends by deltalake
    write_target(spark, spark.createDataFrame([(1, "a"), (2, "b")], "id long, p string"),
                 str(table), format="delta", mode="append", partition_by=["p"])
    taken: list[list[tuple[int, str]]] = []

    def run() -> str:
        with Job("j", state=state, spark=spark) as job:
            df = job.read_table(str(table), ctx="src")
            taken.append(_rows(df, "id", "p"))
            job.write(df, str(tmp_path / "copy"), ctx="copy")
            return job.run_id

    first = run()
    _append(table, [3], "a")
    _append(table, [4, 5], "c")
    second = run()
    third = run()
    assert taken == [[(1, "a"), (2, "b")], [(3, "a"), (4, "c"), (5, "c")], []]
    assert _manifest(state, "j", "src")["range"] == {"from_version": 3, "to_version": 2,
                                                     "mode": "commits"}
    assert _manifest(state, "j", "sink:copy")["status"] == "nothing-to-write"
    assert "snapshot at version 0" in _cli("runs", "show", first, "--state", state)
    assert "versions 1 to 2 (table state carried from the bookmark)" in \
        _cli("runs", "show", second, "--state", state)
    assert "(table opened with deltalake)" in _cli("runs", "show", first, "--state", state)
    assert "no new version" in _cli("runs", "show", third, "--state", state)
    details = json.loads(_cli("runs", "show", second, "--state", state, "--json"))
    assert details["sources"]["src"]["range"]["to_version"] == 2
    assert len(details["sources"]["src"]["files"]) == 2
    assert "read up to version 2" in _cli("bookmark", "show", "j", "--state", state)

    _cli("bookmark", "rewind", "j", "--to", first, "--state", state)
    run()
    _cli("bookmark", "reset", "j", "--ctx", "src", "--state", state)
    run()
    assert taken[3:] == [[(3, "a"), (4, "c"), (5, "c")],
                         [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "c")]]


def test_a_commit_that_removes_data_fails_the_run_unless_skipped(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    _append(table, [1, 2])
    with Job("j", state=state, spark=spark) as job:
        assert job.read_table(str(table), ctx="src").count() == 2
    DeltaTable(str(table)).delete("id = 1")
    _append(table, [3])
    with pytest.raises(SourceError) as info, Job("j", state=state, spark=spark) as job:
        job.read_table(str(table), ctx="src")
    message = str(info.value)
    assert "\n" not in message
    assert f"Delta table {table}: version 1 (DELETE) removes or rewrites data" in message
    assert "skipChangeCommits=true" in message and "delta.enableChangeDataFeed" in message
    store = open_store(state)
    assert store.get_bookmark("j").state["src"]["version"] == 0  # nothing moved
    store.close()
    with Job("j", state=state, spark=spark) as job:
        df = job.read_table(str(table), ctx="src", options={"skipChangeCommits": "true"})
        assert _rows(df, "id") == [(3,)]
    assert _manifest(state, "j", "src")["skipped_commits"] == [1]


def test_change_data_feed_gives_inserts_updates_and_deletes(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    _append(table, [1, 2, 3], configuration=CDF)
    options = {"readChangeFeed": "true"}
    with Job("j", state=state, spark=spark) as job:
        df = job.read_table(str(table), ctx="src", options=options)
        assert _rows(df, "id", "_change_type", "_commit_version") == [
            (1, "insert", 0), (2, "insert", 0), (3, "insert", 0)]
    dt = DeltaTable(str(table))
    dt.update({"p": "'z'"}, predicate="id = 2")
    DeltaTable(str(table)).delete("id = 3")
    _append(table, [4])
    with Job("j", state=state, spark=spark) as job:
        df = job.read_table(str(table), ctx="src", options=options)
        assert [f.name for f in df.schema.fields] == ["id", "p", "_change_type",
                                                      "_commit_version", "_commit_timestamp"]
        assert _rows(df, "id", "p", "_change_type", "_commit_version") == [
            (2, "a", "update_preimage", 1), (2, "z", "update_postimage", 1),
            (3, "a", "delete", 2), (4, "a", "insert", 3)]
        assert df.where("_commit_timestamp is null").count() == 0
    # without the option, the same table refuses the rewrite and names the option to use
    with pytest.raises(SourceError, match="readChangeFeed=true"), \
            Job("k", state=state, spark=spark) as job:
        job.read_table(str(table), ctx="src", options={"startingVersion": "1"})


def test_retry_replays_the_pinned_range_after_a_kill(spark, tmp_path):  # type: ignore[no-untyped-def]
    lake, state = tmp_path, f"sqlite:///{tmp_path}/state.db"
    delta_chain.write_batch(lake, 0, range(0, 20))
    killed = delta_chain.run_process(lake, state, kill="silver:after-sink-commit")
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    killed_range = _manifest(state, "silver", "bronze")["range"]
    assert killed_range == {"from_version": 0, "to_version": 0, "mode": "snapshot"}
    delta_chain.write_batch(lake, 1, range(20, 30))
    delta_chain.bronze(lake, state, spark)          # bronze moves on to version 1
    delta_chain.silver(lake, state, spark)          # the retry: the killed attempt's range
    assert _manifest(state, "silver", "bronze")["range"] == killed_range
    assert _manifest(state, "silver", "sink:silver")["status"] == "skipped"
    delta_chain.silver(lake, state, spark)          # the next run: version 1
    assert _manifest(state, "silver", "bronze")["range"] == {
        "from_version": 1, "to_version": 1, "mode": "commits"}
    ids = sorted(DeltaTable(str(lake / "silver")).to_pyarrow_table().column("id").to_pylist())
    assert ids == [i for i in range(30) if i % 7]


def test_s3_table_source(spark, s3, tmp_path):  # type: ignore[no-untyped-def]
    s3.client("s3").create_bucket(Bucket="lake")
    options = {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ALLOW_HTTP": "true",
               "AWS_REGION": "us-east-1"}
    write_deltalake("s3://lake/t", pa.table({"id": [1, 2], "p": ["x", "y"]}),
                    partition_by=["p"], storage_options=options)
    state = f"sqlite:///{tmp_path}/state.db"
    with Job("s3j", state=state, spark=spark) as job:
        assert _rows(job.read_table("s3://lake/t", ctx="src"), "id", "p") == [
            (1, "x"), (2, "y")]
    write_deltalake("s3://lake/t", pa.table({"id": [3], "p": ["x"]}), mode="append",
                    storage_options=options)
    with Job("s3j", state=state, spark=spark) as job:
        assert _rows(job.read_table("s3://lake/t", ctx="src"), "id", "p") == [(3, "x")]
    # planned from the bookmark's carried state and the commit files on S3, no snapshot
    assert _manifest(state, "s3j", "src")["table_state"] == "carried"


def test_glue_reads_with_a_ctx_and_catalog_names_go_through_the_bookmark(  # type: ignore[no-untyped-def]
        spark, tmp_path, monkeypatch):
    from lakemark.glue import GlueContext
    from lakemark.glue.job import Job as GlueJob

    table = tmp_path / "bronze"
    _append(table, [1, 2])
    catalog = tmp_path / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "tables" / "lake.json").write_text(json.dumps({"TableList": [{
        "Name": "bronze", "DatabaseName": "lake", "Parameters": {"classification": "delta"},
        "StorageDescriptor": {"Location": str(table), "Columns": []}}]}))
    monkeypatch.setenv("LAKEMARK_CATALOG", str(catalog))
    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path}/state.db")
    glue = GlueContext(spark.sparkContext)

    def run() -> tuple[list[tuple[int]], list[tuple[int]], list[tuple[int]]]:
        job = GlueJob(glue)
        job.init("g", {"job_bookmark_option": "job-bookmark-enable"})
        by_path = glue.create_data_frame.from_options(
            connection_type="s3", connection_options={"paths": [str(table)]}, format="delta",
            transformation_ctx="by_path")
        by_catalog = glue.create_data_frame.from_catalog(
            database="lake", table_name="bronze", transformation_ctx="by_catalog")
        by_name = glue.active_job().read_table("lake.bronze", ctx="by_name")
        out = (_rows(by_path, "id"), _rows(by_catalog, "id"), _rows(by_name, "id"))
        job.commit()
        return out

    assert run() == ([(1,), (2,)],) * 3
    _append(table, [3])
    assert run() == ([(3,)],) * 3
