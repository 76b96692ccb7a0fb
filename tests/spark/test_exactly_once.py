"""Exactly-once runs on local Spark with real Delta tables and a real SQLite state store.

* explicit idempotent writes (``txnAppId``/``txnVersion``) through the Python API, the Glue
  writers and ``lakemark ingest files``: the seed's semantics, skipped writes reported, bad
  input refused before anything is written or recorded;
* automatic tokens ``<job>/<ctx>`` at the run number for every Delta sink with a ctx;
* pinned replay: a retried run whose failed attempt committed a sink replays exactly that
  attempt's input (the manifest says ``pinned``), one whose failed attempt committed nothing
  plans afresh (``replanned``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark import Job
from lakemark.cli import cli
from lakemark.errors import ConfigError, StateError
from lakemark.sinks import IdempotencyToken
from lakemark.state import open_store

pytestmark = pytest.mark.spark


def write_json(path: Path, first: int, n: int, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(first, first + n)))
    os.utime(path, (mtime, mtime))


def table_ids(path: Path) -> list[int]:
    return sorted(DeltaTable(str(path)).to_pyarrow_table().column("id").to_pylist())


def txns(path: Path) -> dict[str, int]:
    """Every txn action in the table's log: app id -> highest version."""
    out: dict[str, int] = {}
    for log in sorted((path / "_delta_log").glob("*.json")):
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "txn" in action:
                out[action["txn"]["appId"]] = max(out.get(action["txn"]["appId"], -1),
                                                  action["txn"]["version"])
    return out


class Lake:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
    def arrive(self, first: int, n: int) -> None:
        """A new source file, modified now (so within the MaxBand window: tracked by path)."""
        write_json(self.src / f"f{first:05d}.json", first, n, time.time())

    def job(self, name: str = "j") -> Job:
        return Job(name, state=self.state)

    def manifest(self, run_id: str) -> dict[str, Any]:
        store = open_store(self.state)
        try:
            return {i.ctx: dict(i.plan) for i in store.run_inputs(run_id)}
        finally:
            store.close()


def runner_json(lake: Lake, *args: str) -> Any:
    result = CliRunner().invoke(cli, [*args, "--state", lake.state, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


# -- explicit tokens ---------------------------------------------------------------------------
def test_job_write_with_explicit_token_is_skipped_when_recorded(spark: Any, lake: Lake) -> None:
    df = spark.createDataFrame([(1,), (2,)], "id long")
    with lake.job() as job:
        first = job.write(df, str(lake.target), ctx="t", token=IdempotencyToken("daily", 5))
    with lake.job() as job:
        again = job.write(df, str(lake.target), ctx="t",
                          options={"txnAppId": "daily", "txnVersion": "5"})
        other = job.write(df, str(lake.target), ctx="u",
                          options={"txnAppId": "other", "txnVersion": "1"})
        run_id = job.run_id
    assert (first.skipped, first.rows) == (False, 2)
    assert (again.skipped, again.rows) == (True, 0)
    assert (other.skipped, other.rows) == (False, 2)
    assert table_ids(lake.target) == [1, 1, 2, 2]
    assert txns(lake.target) == {"daily": 5, "other": 1}
    sinks = lake.manifest(run_id)
    assert sinks["sink:t"]["status"] == "skipped" and sinks["sink:t"]["skipped"] is True
    assert sinks["sink:t"]["token"] == {"app_id": "daily", "version": 5}
    assert sinks["sink:t"]["token_source"] == "explicit"
    assert sinks["sink:u"]["status"] == "committed"


def test_token_options_bad_input_changes_nothing(spark: Any, lake: Lake) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    with lake.job() as job:
        for options, match in (({"txnAppId": "a"}, "txnVersion is missing"),
                               ({"txnVersion": "1"}, "txnAppId is missing"),
                               ({"txnAppId": "a", "txnVersion": "x"}, "txnVersion"),
                               ({"txnAppId": "a", "txnVersion": "-1"}, "txnVersion"),
                               ({"txnAppId": " ", "txnVersion": "1"}, "txnAppId")):
            with pytest.raises(ConfigError, match=match):
                job.write(df, str(lake.target), ctx="t", options=options)
        with pytest.raises(ConfigError, match="Delta and Iceberg targets only"):
            job.write(df, str(lake.target) + "_pq", format="parquet",
                      options={"txnAppId": "a", "txnVersion": "1"})
        run_id = job.run_id
        job.fail("test over")
    assert not lake.target.exists() and not Path(str(lake.target) + "_pq").exists()
    assert not any(k.startswith("sink:") for k in lake.manifest(run_id))


def test_glue_writers_take_txn_options(spark: Any, tmp_path: Path) -> None:
    from lakemark.glue import GlueContext
    from lakemark.glue._write import write_options_sink

    glue = GlueContext(spark.sparkContext)
    df = spark.createDataFrame([(1,), (2,)], "id long")
    target = tmp_path / "glue_table"

    def write(connection: dict[str, Any], fmt_options: dict[str, Any] | None = None) -> Any:
        return write_options_sink(glue, df, "s3", {"path": str(target), **connection}, "delta",
                                  fmt_options, None)

    assert not write({"txnAppId": "g", "txnVersion": 3}).skipped
    assert write({}, {"txnAppId": "g", "txnVersion": "2"}).skipped  # format_options work too
    assert write({"txnAppId": "g", "txnVersion": "3"}).skipped
    assert not write({"txnAppId": "g", "txnVersion": "4"}).skipped
    with pytest.raises(ConfigError, match="txnVersion"):
        write({"txnAppId": "g"})
    with pytest.raises(ConfigError, match="txnAppId is given twice"):
        write({"txnAppId": "g", "txnVersion": "9"}, {"txnAppId": "h"})
    assert table_ids(target) == [1, 1, 2, 2]
    assert txns(target) == {"g": 4}


def test_ingest_cli_txn_options(spark: Any, lake: Lake) -> None:
    runner = CliRunner()

    def ingest(*extra: str) -> Any:
        return runner.invoke(cli, ["ingest", "files", str(lake.src), str(lake.target), "--job",
                                   "j", "--state", lake.state, "--json", *extra],
                             catch_exceptions=False)

    lake.arrive(0, 3)
    bad = ingest("--txn-app-id", "nightly")
    assert bad.exit_code == 2 and "--txn-version is missing" in bad.output
    bad = ingest("--txn-app-id", "nightly", "--txn-version", "1", "--target-format", "parquet")
    assert bad.exit_code == 2 and "Delta and Iceberg targets only" in bad.output
    bad = ingest("--txn-app-id", "nightly", "--txn-version", "-1")
    assert bad.exit_code == 2 and "--txn-version" in bad.output
    store = open_store(lake.state)
    assert store.list_runs("j") == []  # refused before any state change
    store.close()
    assert not lake.target.exists()

    first = ingest("--txn-app-id", "nightly", "--txn-version", "7")
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["rows"] == 3 and not json.loads(first.output)["skipped"]
    lake.arrive(3, 2)
    again = ingest("--txn-app-id", "nightly", "--txn-version", "7")
    out = json.loads(again.output)
    assert out["skipped"] is True and out["rows"] == 0, again.output
    assert table_ids(lake.target) == [0, 1, 2]
    assert txns(lake.target) == {"nightly": 7}


# -- automatic tokens --------------------------------------------------------------------------
def test_automatic_token_is_job_ctx_at_the_run_number(spark: Any, lake: Lake) -> None:
    lake.arrive(0, 2)
    for _ in range(2):
        with lake.job("orders") as job:
            df = job.read_files(str(lake.src), format="json", ctx="src")
            job.write(df, str(lake.target), ctx="out")
            run = job.run.run
            run_id = job.run_id
        lake.arrive(10 * run, 1)
    assert txns(lake.target) == {"orders/out": 2}
    sink = lake.manifest(run_id)["sink:out"]
    assert sink["token"] == {"app_id": "orders/out", "version": run}
    assert sink["token_source"] == "automatic"
    # Pause and disable runs do not advance the run number: they get no automatic token.
    with Job("orders", state=lake.state, bookmark="disable") as job:
        df = job.read_files(str(lake.src), format="json", ctx="src")
        assert not job.write(df, str(lake.target), ctx="out").skipped
    assert txns(lake.target) == {"orders/out": 2}


def test_a_sink_ctx_is_written_once_per_run(spark: Any, lake: Lake) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    with lake.job() as job:
        job.write(df, str(lake.target), ctx="out")
        with pytest.raises(ConfigError, match="written twice"):
            job.write(df, str(lake.target), ctx="out")
    assert table_ids(lake.target) == [1]


def test_a_token_the_state_store_does_not_know_fails_loudly(spark: Any, lake: Lake,
                                                             tmp_path: Path) -> None:
    """A table that recorded <job>/<ctx> at this run number while no attempt of this run wrote
    it (e.g. the state database was replaced): the run fails instead of skipping silently."""
    df = spark.createDataFrame([(1,)], "id long")
    with lake.job() as job:
        job.write(df, str(lake.target), ctx="out")
    fresh = Job("j", state=f"sqlite:///{tmp_path / 'other.db'}")
    with pytest.raises(StateError, match="does not match the table"):
        with fresh:
            fresh.write(df, str(lake.target), ctx="out")
    assert fresh.run.status == "FAILED"
    assert table_ids(lake.target) == [1]


# -- pinned replay -----------------------------------------------------------------------------
def test_retry_after_a_committed_sink_replays_the_recorded_input(spark: Any, lake: Lake) -> None:
    lake.arrive(0, 3)
    with pytest.raises(RuntimeError, match="crash after the sink commit"):
        with lake.job() as job:
            df = job.read_files(str(lake.src), format="json", ctx="src")
            job.write(df, str(lake.target), ctx="out")
            failed = job.run_id
            raise RuntimeError("crash after the sink commit")
    lake.arrive(3, 2)  # arrives before the retry: must wait for the next run
    with lake.job() as job:
        df = job.read_files(str(lake.src), format="json", ctx="src")
        assert job.write(df, str(lake.target), ctx="out").skipped
        retry, number, attempt = job.run_id, job.run.run, job.run.attempt
    assert (number, attempt) == (1, 1)
    source = lake.manifest(retry)["src"]
    assert source["replay"]["case"] == "pinned"
    assert source["replay"]["from_attempt"] == failed
    assert source["replay"]["committed_sinks"] == ["sink:out"]
    assert source["planned_files"] == 1
    assert lake.manifest(failed)["src"]["next_state"] == source["next_state"]
    shown = runner_json(lake, "runs", "show", retry)
    assert shown["sources"]["src"]["replay"]["case"] == "pinned"
    assert shown["sinks"]["out"]["status"] == "skipped"
    with lake.job() as job:  # the next run takes what arrived meanwhile
        df = job.read_files(str(lake.src), format="json", ctx="src")
        job.write(df, str(lake.target), ctx="out")
        assert lake.manifest(job.run_id)["src"]["replay"] == {"case": "first-attempt"}
    assert table_ids(lake.target) == [0, 1, 2, 3, 4]


def test_retry_after_a_failure_before_any_commit_plans_afresh(spark: Any, lake: Lake) -> None:
    lake.arrive(0, 3)
    with pytest.raises(RuntimeError):
        with lake.job() as job:
            job.read_files(str(lake.src), format="json", ctx="src")
            raise RuntimeError("crash before writing")
    lake.arrive(3, 2)
    with lake.job() as job:
        df = job.read_files(str(lake.src), format="json", ctx="src")
        assert not job.write(df, str(lake.target), ctx="out").skipped
        source = lake.manifest(job.run_id)["src"]
    assert source["replay"]["case"] == "replanned"
    assert source["planned_files"] == 2
    assert table_ids(lake.target) == [0, 1, 2, 3, 4]


def test_sink_commit_found_in_the_table_when_the_manifest_missed_it(spark: Any,
                                                                  lake: Lake) -> None:
    """A kill between the Delta commit and the manifest update: the retry finds the commit by
    the attempt's run id in the table's commit info and still pins the input."""
    lake.arrive(0, 2)
    job = lake.job()
    job.start()
    df = job.read_files(str(lake.src), format="json", ctx="src")
    job.write(df, str(lake.target), ctx="out")
    failed = job.run_id
    store = open_store(lake.state)
    entry = {i.ctx: dict(i.plan) for i in store.run_inputs(failed)}["sink:out"]
    entry["status"] = "writing"  # what a kill right after the Delta commit leaves
    store.record_plan(failed, "sink:out", entry, [])
    store.close()
    job.fail("killed")
    lake.arrive(2, 2)
    with lake.job() as retry:
        df = retry.read_files(str(lake.src), format="json", ctx="src")
        assert retry.write(df, str(lake.target), ctx="out").skipped
        assert lake.manifest(retry.run_id)["src"]["replay"]["case"] == "pinned"
    assert table_ids(lake.target) == [0, 1]


def test_appending_a_source_that_took_no_file_runs_no_spark_job_and_no_commit(
    spark: Any, lake: Lake
) -> None:
    lake.arrive(0, 3)
    with lake.job() as job:
        job.write(job.read_files(str(lake.src), format="json", ctx="src"), str(lake.target),
                  ctx="out")
    version = DeltaTable(str(lake.target)).version()
    sc = spark.sparkContext
    with lake.job() as job:
        df = job.read_files(str(lake.src), format="json", ctx="src")
        sc.setJobGroup("lakemark-empty-write", "the write of a run with nothing new")
        try:
            result = job.write(df, str(lake.target), ctx="out")
        finally:
            sc.setJobGroup("other", "")
        run_id = job.run_id
    assert list(sc.statusTracker().getJobIdsForGroup("lakemark-empty-write")) == []
    assert (result.rows, result.files, result.skipped) == (0, 0, False)
    assert DeltaTable(str(lake.target)).version() == version  # no empty commit
    assert lake.manifest(run_id)["sink:out"]["status"] == "nothing-to-write"
    lake.arrive(3, 2)
    with lake.job() as job:
        job.write(job.read_files(str(lake.src), format="json", ctx="src"), str(lake.target),
                  ctx="out")
    assert table_ids(lake.target) == [0, 1, 2, 3, 4]
