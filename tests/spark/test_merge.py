"""Upserts and deletes (``job.write(..., merge_keys=...)``) on local Spark with real Delta tables
(deltalake) and a real SQLite state store: insert/update/delete across runs, latest wins,
duplicate keys and bad options refused before anything is written, and a retried run whose
merge already committed does not merge again (the token is in the merge's own commit), and one
killed before its merge leaves the table as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from lakemark import Job
from lakemark.errors import ConfigError, SinkError
from lakemark.state import open_store

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
KILLED = -9


def rows(path: Path) -> dict[int, tuple[Any, ...]]:
    """The table as ``{id: (other columns...)}``; fails if an id occurs twice."""
    table = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    out = {r["id"]: tuple(v for k, v in sorted(r.items()) if k != "id") for r in table}
    assert len(out) == len(table), table
    return out


def txns(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for log in sorted((path / "_delta_log").glob("*.json")):
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "txn" in action:
                out[action["txn"]["appId"]] = action["txn"]["version"]
    return out


def bookmark(state: str, job: str) -> tuple[int, Any]:
    """The job's committed run number and state."""
    store = open_store(state)
    try:
        found = dict(store.get_bookmark(job).to_json())
        return found["run"], found["state"]
    finally:
        store.close()


SCHEMA = "id long, name string, op string, ts long"


def test_insert_update_delete_across_runs(spark: Any, tmp_path: Path) -> None:
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"

    def run(data: list[tuple[Any, ...]]) -> Any:
        with Job("m", state=state) as job:
            return job.write(spark.createDataFrame(data, SCHEMA), str(target), ctx="out",
                             merge_keys=["id"], delete_when="op = 'D'", order_by="ts")

    first = run([(1, "a", "I", 1), (2, "b", "I", 1), (3, "gone", "D", 1)])
    assert rows(target) == {1: ("a", "I", 1), 2: ("b", "I", 1)}
    assert first.rows == 2 and not first.skipped
    second = run([(2, "b2", "U", 2), (4, "d", "I", 2)])
    assert rows(target) == {1: ("a", "I", 1), 2: ("b2", "U", 2), 4: ("d", "I", 2)}
    assert second.rows == 2  # one updated, one inserted
    run([(1, None, "D", 3), (9, None, "D", 3)])
    assert rows(target) == {2: ("b2", "U", 2), 4: ("d", "I", 2)}
    # each run's token is in the commit of its merge
    assert txns(target) == {"m/out": 3}
    history = DeltaTable(str(target)).history()
    assert [h["operation"] for h in history[:2]] == ["MERGE", "MERGE"]


def test_latest_row_per_key_wins(spark: Any, tmp_path: Path) -> None:
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame([(1, "old", "I", 1), (2, "x", "I", 1)], SCHEMA),
                  str(target), ctx="out", merge_keys="id", order_by="ts")
    changes = [(1, "v3", "U", 30), (1, "v1", "U", 10), (1, "v2", "U", 20),
               (2, "back", "I", 9), (2, None, "D", 5), (5, "new", "I", 1), (5, None, "D", 2)]
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame(changes, SCHEMA), str(target), ctx="out",
                  merge_keys=["id"], order_by="ts", delete_when="op = 'D'")
        run_id = job.run_id
    assert rows(target) == {1: ("v3", "U", 30), 2: ("back", "I", 9)}
    store = open_store(state)
    try:
        sink = {i.ctx: dict(i.plan) for i in store.run_inputs(run_id)}["sink:out"]
    finally:
        store.close()
    assert sink["merge"] == {"keys": ["id"], "delete_when": "op = 'D'", "order_by": "ts"}
    assert (sink["status"], sink["rows"]) == ("committed", 2)  # 1 and 2 updated; 5 never in


def test_duplicate_key_without_order_fails_before_writing(spark: Any, tmp_path: Path) -> None:
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame([(1, "a", "I", 1)], SCHEMA), str(target), ctx="out",
                  merge_keys=["id"])
    before = DeltaTable(str(target)).version()
    committed = bookmark(state, "m")
    dup = spark.createDataFrame([(1, "b", "U", 2), (7, "c", "I", 2), (7, "d", "I", 3)], SCHEMA)
    with pytest.raises(SinkError, match=r"key id=7 occurs more than once.*nothing was written"):
        with Job("m", state=state) as job:
            job.write(dup, str(target), ctx="out", merge_keys=["id"])
    tie = spark.createDataFrame([(7, "c", "I", 3), (7, "d", "I", 3)], SCHEMA)
    with pytest.raises(SinkError, match=r"key id=7 has two rows with the same latest 'ts'"):
        with Job("m", state=state) as job:
            job.write(tie, str(target), ctx="out", merge_keys=["id"], order_by="ts")
    assert DeltaTable(str(target)).version() == before
    assert rows(target) == {1: ("a", "I", 1)}
    assert bookmark(state, "m") == committed


def test_bad_merge_options_are_refused_naming_them(spark: Any, tmp_path: Path) -> None:
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    df = spark.createDataFrame([(1, "a", "I", 1)], SCHEMA)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"merge_keys": ["id"], "format": "parquet"}, "merge_keys needs format 'delta'"),
        ({"merge_keys": ["nope"]}, r"merge key column\(s\) not in the DataFrame: nope"),
        ({"merge_keys": ["id"], "order_by": "when"}, "order_by column 'when'"),
        ({"merge_keys": ["id"], "mode": "overwrite"}, "mode 'overwrite'"),
        ({"delete_when": "op = 'D'"}, "delete_when applies to merges only"),
        ({"merge_keys": ["id"], "delete_when": "nope = 1"}, "delete_when 'nope = 1'"),
    ]
    with Job("m", state=state) as job:
        for kwargs, match in cases:
            with pytest.raises(ConfigError, match=match):
                job.write(df, str(target), ctx=f"c{len(match)}", **kwargs)
        job.fail("test over")
    assert not target.exists()
    # a key column the existing table lacks
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame([(1, "a")], "id long, name string"), str(target),
                  ctx="out")
    with pytest.raises(ConfigError, match=r"merge key column\(s\) name2 not in Delta table"):
        with Job("m", state=state) as job:
            job.write(spark.createDataFrame([(1, "a", "x")], "id long, name string, name2 string"),
                      str(target), ctx="out", merge_keys=["name2"])
    assert DeltaTable(str(target)).version() == 0


CRASHING_RUN = """
import sys
from lakemark import Job
from lakemark.spark import get_spark
spark = get_spark(master="local[1]")
target, state, name = sys.argv[1:4]
df = spark.createDataFrame([(1, "one", 1, "U"), (2, "two", 1, "D"), (3, "three", 1, "I")],
                           "id long, name string, n long, op string")
with Job("m", state=state) as job:
    job.write(df, target, ctx="out", merge_keys=["id"], delete_when="op = 'D'")
"""


@pytest.mark.parametrize("fault", [pytest.param("mid-write", marks=pytest.mark.long),
                                   pytest.param("after-sink-commit", marks=pytest.mark.long)])
def test_run_killed_around_the_merge_then_retried_merges_once(spark: Any, tmp_path: Path,
                                                              fault: str) -> None:
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame([(1, "a", 10, "I"), (2, "b", 20, "I")],
                                        "id long, name string, n long, op string"),
                  str(target), ctx="out")
    script = tmp_path / "run.py"
    script.write_text(CRASHING_RUN)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "LAKEMARK_FAULT": fault}
    killed = subprocess.run([sys.executable, str(script), str(target), state, "m"], env=env,
                            capture_output=True, text=True, timeout=600)
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    merged = {1: (1, "one", "U"), 3: (1, "three", "I")}  # (n, name, op)
    before = {1: (10, "a", "I"), 2: (20, "b", "I")}
    assert rows(target) == (merged if fault == "after-sink-commit" else before)  # never half
    env.pop("LAKEMARK_FAULT")
    retried = subprocess.run([sys.executable, str(script), str(target), state, "m"], env=env,
                             capture_output=True, text=True, timeout=600)
    assert retried.returncode == 0, retried.stderr[-2000:]
    assert DeltaTable(str(target)).version() == 1  # one merge commit, whichever attempt made it
    assert rows(target) == merged
    assert txns(target) == {"m/out": 2}


def test_cli_merge_key_worked_example(spark: Any, tmp_path: Path) -> None:
    """docs/upserts.md's worked example through ``lakemark ingest files --merge-key``."""
    from click.testing import CliRunner

    from lakemark.cli import cli

    landing, target = tmp_path / "landing", tmp_path / "lake"
    landing.mkdir()
    state = f"sqlite:///{tmp_path / 's.db'}"
    args = ["ingest", "files", str(landing), str(target), "--job", "customers", "--merge-key",
            "id", "--delete-when", "op = 'D'", "--state", state, "--json"]

    def lines(name: str, *records: dict[str, Any]) -> None:
        (landing / name).write_text("".join(json.dumps(r) + "\n" for r in records))

    lines("001.json", *({"id": i, "name": n, "op": "I", "updated_at": 1}
                        for i, n in ((1, "Ada"), (2, "Bob"), (3, "Cy"))))
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    lines("002.json", {"id": 2, "name": "Bob B.", "op": "U", "updated_at": 2},
          {"id": 2, "name": "Robert", "op": "U", "updated_at": 3},
          {"id": 3, "name": None, "op": "D", "updated_at": 2},
          {"id": 4, "name": "Dee", "op": "I", "updated_at": 2})
    failed = CliRunner().invoke(cli, args)  # key 2 twice, no --order-by
    assert failed.exit_code != 0 and "key id=2 occurs more than once" in failed.output
    assert bookmark(state, "customers")[0] == 1
    second = CliRunner().invoke(cli, [*args, "--order-by", "updated_at"],
                                catch_exceptions=False)
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["rows"] == 3
    assert rows(target) == {1: ("Ada", "I", 1), 2: ("Robert", "U", 3), 4: ("Dee", "I", 2)}
    for extra, message in ((["--target-format", "parquet"], "Iceberg targets only"),
                           (["--write-mode", "overwrite"], "--write-mode overwrite"),
                           (["--partition-by", "op"], "--partition-by")):
        refused = CliRunner().invoke(cli, [*args, *extra])
        assert refused.exit_code == 2 and message in refused.output, refused.output
    refused = CliRunner().invoke(cli, [*args[:6], "--order-by", "ts", "--state", state])
    assert refused.exit_code == 2 and "go with --merge-key" in refused.output


def test_merge_into_a_partitioned_s3_table_by_a_compound_key(spark: Any, s3: Any) -> None:
    """On moto_server (S3 without the S3A connector): the table is read back with Spark."""
    from lakemark.sinks import IdempotencyToken, write_target

    s3.client("s3").create_bucket(Bucket="lake")
    schema = "day string, id long, v string"
    write_target(spark, spark.createDataFrame([("d1", 1, "a"), ("d1", 2, "b"), ("d2", 1, "c")],
                                              schema),
                 "s3://lake/t", partition_by=["day"])
    token = IdempotencyToken("job", 7)
    changes = spark.createDataFrame([("d1", 2, "B"), ("d2", 1, None), ("d2", 5, "e")], schema)
    first = write_target(spark, changes, "s3://lake/t", merge_keys=["day", "id"], token=token)
    again = write_target(spark, changes, "s3://lake/t", merge_keys=["day", "id"], token=token)
    assert (first.skipped, first.rows, again.skipped) == (False, 3, True)
    back = spark.read.format("delta").load("s3://lake/t")
    assert sorted(tuple(r) for r in back.select("day", "id", "v").collect()) == [
        ("d1", 1, "a"), ("d1", 2, "B"), ("d2", 1, None), ("d2", 5, "e")]


def test_merges_write_the_change_data_feed_when_the_table_has_it_on(spark: Any,
                                                                   tmp_path: Path) -> None:
    """With ``delta.enableChangeDataFeed=true`` a merge's commit carries its change data
    (deltalake writes ``_change_data`` files), so a reader of the feed sees the updates (pre-
    and post-image) and deletes of every merge, and the inserts of merges and appends."""
    import pyarrow as pa

    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"

    def run(data: list[tuple[Any, ...]]) -> int:
        with Job("m", state=state) as job:
            result = job.write(spark.createDataFrame(data, SCHEMA), str(target), ctx="out",
                               merge_keys=["id"], delete_when="op = 'D'", order_by="ts")
        assert result.table_version is not None
        return result.table_version

    run([(1, "a", "I", 1), (2, "b", "I", 1), (3, "c", "I", 1)])
    DeltaTable(str(target)).alter.set_table_properties({"delta.enableChangeDataFeed": "true"})
    merged = run([(1, "a2", "U", 2), (1, "a3", "U", 3), (2, None, "D", 2), (4, "d", "I", 2),
                  (5, "e", "I", 2), (5, None, "D", 3)])
    assert rows(target) == {1: ("a3", "U", 3), 3: ("c", "I", 1), 4: ("d", "I", 2)}
    assert any((target / "_change_data").rglob("*.parquet"))

    def feed(version: int) -> list[tuple[Any, ...]]:
        changes = pa.table(DeltaTable(str(target)).load_cdf(starting_version=version,
                                                            ending_version=version).read_all())
        return sorted((r["_change_type"], r["id"], r["name"], r["_commit_version"])
                      for r in changes.to_pylist())

    assert feed(merged) == [("delete", 2, "b", merged), ("insert", 4, "d", merged),
                            ("update_postimage", 1, "a3", merged),
                            ("update_preimage", 1, "a", merged)]
    again = run([(3, None, "D", 4), (4, "d2", "U", 4)])  # the next link sees this one too
    assert feed(again) == [("delete", 3, "c", again), ("update_postimage", 4, "d2", again),
                           ("update_preimage", 4, "d", again)]
    with Job("m", state=state) as job:  # an append into the table: its rows are inserts
        appended = job.write(spark.createDataFrame([(8, "h", "I", 5)], SCHEMA), str(target),
                             ctx="out").table_version
    assert appended is not None and feed(appended) == [("insert", 8, "h", appended)]


def test_merge_with_merge_schema_adds_the_new_input_columns(spark: Any, tmp_path: Path) -> None:
    """``mergeSchema`` with a merge: the input's new column joins the table (nullable) before
    the merge; updated and inserted rows carry it, untouched rows have null. Without the option
    the new column fails the run naming it, before anything is written."""
    target, state = tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    with Job("m", state=state) as job:
        job.write(spark.createDataFrame([(1, "a", "I", 1), (2, "b", "I", 1)], SCHEMA),
                  str(target), ctx="out")
    wider = spark.createDataFrame([(1, "a2", "U", 2, "a@x"), (3, "c", "I", 2, "c@x")],
                                  SCHEMA + ", email string")
    with pytest.raises(SinkError, match="email"):
        with Job("m", state=state) as job:
            job.write(wider, str(target), ctx="out", merge_keys=["id"])
    assert DeltaTable(str(target)).version() == 0
    with Job("m", state=state) as job:
        result = job.write(wider, str(target), ctx="out", merge_keys=["id"],
                           options={"mergeSchema": "true"})
    assert result.rows == 2
    assert rows(target) == {1: ("a@x", "a2", "U", 2), 2: (None, "b", "I", 1),  # sorted by name
                            3: ("c@x", "c", "I", 2)}
    assert txns(target) == {"m/out": 2}
