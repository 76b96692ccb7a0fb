"""Hudi copy-on-write tables as bookmarked sources (issue 22, item 6):
``Job.read_table(path, format="hudi", ctx=...)`` on tables written by tests/hudi_tables.py —
incremental runs, a write still pending holding the pin back, a retry replaying its pinned
range, change instants refused or skipped, rewind and reset, ``runs show``/``bookmark show``,
and an ``s3://`` table read without S3A."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lakemark import Job
from lakemark.cli import cli
from lakemark.errors import SourceError
from lakemark.state import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from hudi_tables import HudiTableWriter  # noqa: E402

pytest.importorskip("hudi")


def _row(i: int, day: str = "2026-01-01") -> dict[str, Any]:
    return {"id": i, "name": f"n{i}", "day": day}


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


def test_runs_take_new_inserts_once_and_rewind_reset_and_cli_work(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "events", f"sqlite:///{tmp_path}/state.db"
    w = HudiTableWriter(table)
    c1 = w.insert([_row(1), _row(2, "2026-01-02")])
    taken: list[list[tuple[int, str]]] = []

    def run(between: tuple[str, str] | None = None, **options: str) -> str:
        window = {"bookmark": "pause", "from_run_id": between[0],
                  "to_run_id": between[1]} if between else {}
        with Job("h", state=state, spark=spark, **window) as job:  # type: ignore[arg-type]
            df = job.read_table(str(table), format="hudi", ctx="ev", options=options or None)
            taken.append(sorted((r.id, r._hoodie_commit_time) for r in df.collect()))
            return job.run_id

    first = run()
    assert taken == [[(1, c1), (2, c1)]]
    c2 = w.insert([_row(3)], merge_into=True)  # rewrites the group holding row 1
    pending = w.insert([_row(9, "2026-01-09")], state="inflight")
    c4 = w.insert([_row(4, "2026-01-03")])
    second = run()  # pinned below the pending write: c2 only
    assert taken[-1] == [(3, c2)]
    assert _manifest(state, "h", "ev")["pending_instant"] == pending
    w.rollback(pending)  # the failed write is rolled back
    c6 = w.insert([_row(5, "2026-01-03")], merge_into=True)
    third = run()
    assert taken[-1] == [(4, c4), (5, c6)]
    run()
    assert taken[-1] == []
    shown = _cli("runs", "show", first, "--state", state)
    assert f"snapshot as of instant {c1}" in shown
    assert f"instants after {c1} to {c2}" in _cli("runs", "show", second, "--state", state)
    details = json.loads(_cli("runs", "show", third, "--state", state, "--json"))
    assert details["sources"]["ev"]["range"]["take"] == [c4, c6]
    assert [Path(f["path"]).name.split("_")[-1] for f in details["sources"]["ev"]["files"]] \
        == [f"{c6}.parquet"]  # one file group, its latest slice, filtered by commit time
    assert f"read up to instant {c6}" in _cli("bookmark", "show", "h", "--state", state)
    run(between=(first, third))  # job-bookmark-from/-to: what the runs after first took
    assert [i for i, _ in taken[-1]] == [3, 4, 5]
    _cli("bookmark", "rewind", "h", "--to", second, "--state", state)
    run()
    assert taken[-1] == [(4, c4), (5, c6)]
    _cli("bookmark", "reset", "h", "--ctx", "ev", "--state", state)
    run()
    assert [i for i, _ in taken[-1]] == [1, 2, 3, 4, 5]


def test_change_instants_fail_the_run_unless_skipped_and_retry_replays(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "events", f"sqlite:///{tmp_path}/state.db"
    w = HudiTableWriter(table)
    w.insert([_row(1), _row(2)])
    with Job("h", state=state, spark=spark) as job:
        assert job.read_table(str(table), format="hudi", ctx="ev").count() == 2
    update = w.upsert([{"id": 1, "name": "changed", "day": "2026-01-01"}])
    c3 = w.insert([_row(3)], merge_into=True)
    with pytest.raises(SourceError) as info, Job("h", state=state, spark=spark) as job:
        job.read_table(str(table), format="hudi", ctx="ev")
    assert str(info.value) == (
        f"Hudi table {table}: instant {update} (upsert) updates, deletes or replaces rows, and "
        "a Hudi table source takes inserts only: set skipChangeCommits=true to skip such "
        "instants (their rows are then not read)")
    store = open_store(state)
    before = store.get_bookmark("h").state["ev"]["instant"]
    store.close()
    assert before < update  # nothing moved
    # An attempt that fails after reading: its retry replays the recorded range exactly,
    # though the table moved on in between.
    options = {"skipChangeCommits": "true"}
    with pytest.raises(RuntimeError), Job("h", state=state, spark=spark) as job:
        df = job.read_table(str(table), format="hudi", ctx="ev", options=options)
        assert [(r.id, r.name) for r in df.collect()] == [(3, "n3")]
        raise RuntimeError("the job's own code fails")
    c4 = w.insert([_row(4)])
    copy = str(tmp_path / "copy")
    # The retry reads the same range and commits its sink, then fails: the next attempt
    # replays that attempt's range (its sink write is skipped by the run's token).
    with pytest.raises(RuntimeError), Job("h", state=state, spark=spark) as job:
        df = job.read_table(str(table), format="hudi", ctx="ev", options=options)
        job.write(df.select("id", "name"), copy, ctx="copy")
        raise RuntimeError("fails after the sink committed")
    w.insert([_row(5)])
    with Job("h", state=state, spark=spark) as job:
        df = job.read_table(str(table), format="hudi", ctx="ev", options=options)
        assert [(r.id, r.name) for r in df.collect()] == [(3, "n3")]
        job.write(df.select("id", "name"), copy, ctx="copy")
    assert _manifest(state, "h", "sink:copy")["status"] == "skipped"
    assert _manifest(state, "h", "ev")["replay"]["case"] == "pinned"
    assert sorted(r.id for r in spark.read.format("delta").load(copy).collect()) == [3]
    assert _manifest(state, "h", "ev")["range"]["skipped"] == [update]
    assert _manifest(state, "h", "ev")["range"]["through"] == c3
    with Job("h", state=state, spark=spark) as job:
        df = job.read_table(str(table), format="hudi", ctx="ev")
        assert sorted(r.id for r in df.collect()) == [4, 5]
    assert _manifest(state, "h", "ev")["range"]["take"][0] == c4


@pytest.mark.long  # the pyarrow data source on the executors: slow to start in a suite run
def test_s3_table_without_s3a(spark, s3, tmp_path):  # type: ignore[no-untyped-def]
    client = s3.client("s3")
    client.create_bucket(Bucket="lake")
    local = tmp_path / "events"
    w = HudiTableWriter(local)
    w.insert([_row(1), _row(2, "2026-01-02")])

    def upload() -> None:
        for path in local.rglob("*"):
            if path.is_file():
                client.upload_file(str(path), "lake", f"events/{path.relative_to(local)}")

    upload()
    state = f"sqlite:///{tmp_path}/state.db"
    with Job("s3h", state=state, spark=spark) as job:
        df = job.read_table("s3://lake/events", format="hudi", ctx="ev")
        assert sorted(r.id for r in df.collect()) == [1, 2]
    w.insert([_row(3)], merge_into=True)
    upload()
    with Job("s3h", state=state, spark=spark) as job:
        df = job.read_table("s3://lake/events", format="hudi", ctx="ev")
        assert [r.id for r in df.collect()] == [3]


def test_bad_input_is_refused_by_name_before_anything_is_recorded(spark, tmp_path):  # type: ignore[no-untyped-def]
    from lakemark.errors import ConfigError, FormatError, UnsupportedError

    state = f"sqlite:///{tmp_path}/state.db"
    HudiTableWriter(tmp_path / "mor", table_type="MERGE_ON_READ").insert([_row(1)])
    (tmp_path / "plain").mkdir()
    with Job("bad", state=state, spark=spark) as job:
        with pytest.raises(UnsupportedError, match="is a MERGE_ON_READ table"):
            job.read_table(str(tmp_path / "mor"), format="hudi", ctx="a")
        with pytest.raises(SourceError, match="plain is not a Hudi table"):
            job.read_table(str(tmp_path / "plain"), format="hudi", ctx="b")
        with pytest.raises(ConfigError, match="option 'versionAsOf' is not supported for Hudi"):
            job.read_table(str(tmp_path / "mor"), format="hudi", ctx="c",
                           options={"versionAsOf": "1"})
        with pytest.raises(FormatError, match="unknown target format 'hudi'"):
            job.write(spark.createDataFrame([(1,)], "id long"), str(tmp_path / "out"),
                      format="hudi", ctx="out")
        run_id = job.run_id
    store = open_store(state)
    assert store.run_inputs(run_id) == []
    assert store.get_bookmark("bad").state == {}
    store.close()


_KILLED_RUN = """
import sys
from lakemark import Job
from lakemark.spark import get_spark

table, state, copy = sys.argv[1:4]
spark = get_spark("local[1]")
with Job("k", state=state, spark=spark) as job:
    df = job.read_table(table, format="hudi", ctx="ev")
    job.write(df.select("id", "name"), copy, ctx="copy")
"""


@pytest.mark.long  # a second Spark process
def test_a_run_killed_after_its_sink_committed_is_replayed_exactly(spark, tmp_path):  # type: ignore[no-untyped-def]
    import os
    import subprocess

    from crash_support import KILLED, SRC

    from lakemark._fault import FAULT_ENV

    table, state = tmp_path / "events", f"sqlite:///{tmp_path}/state.db"
    copy = str(tmp_path / "copy")
    w = HudiTableWriter(table)
    c1 = w.insert([_row(1), _row(2)])
    env = {**os.environ, FAULT_ENV: "after-sink-commit",
           "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH"))
                                         if p)}
    killed = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(table), state, copy],
                            capture_output=True, text=True, timeout=900, env=env)
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert _manifest(state, "k", "ev")["range"]["through"] == c1
    c2 = w.insert([_row(3)], merge_into=True)  # the table moves on before the retry
    for _ in range(2):  # the retry replays the killed attempt's snapshot, then c2 follows
        with Job("k", state=state, spark=spark) as job:
            df = job.read_table(str(table), format="hudi", ctx="ev")
            job.write(df.select("id", "name"), copy, ctx="copy")
    assert _manifest(state, "k", "ev")["range"]["take"] == [c2]
    ids = sorted(r.id for r in spark.read.format("delta").load(copy).collect())
    assert ids == [1, 2, 3]
