"""Upserts into Iceberg tables (``merge_keys``) on real Spark and a real SQLite SQL catalog.

The Delta merge's rules (docs/upserts.md) on an Iceberg table: update-all/insert-all by key,
``delete_when`` deletes, ``order_by`` picks the latest row per key, a key twice without an order
fails before anything is written; exactly once (the token in every snapshot of the merge's one
commit; a retry skips); a commit that lost a race runs again on the new snapshot; the CLI's
``--target-format iceberg --merge-key``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark._fault import FAULT_WAIT_ENV
from lakemark.errors import ConfigError, SinkError
from lakemark.sinks import IdempotencyToken, write_target
from lakemark.sinks._iceberg import APP_ID_KEY, APP_VERSION_KEY, WRITE_ID_KEY

pytestmark = pytest.mark.spark

SRC = Path(__file__).resolve().parents[2] / "src"
SCHEMA = "id long, name string, op string, ts long"


class Lake:
    """A SQLite SQL catalog and a state store in ``tmp``."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.catalog = f"sqlite:///{tmp / 'iceberg' / 'catalog.db'}"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.warehouse = (tmp / "iceberg" / "warehouse").as_uri()

    def table(self, name: str = "db.customers") -> Any:
        return SqlCatalog("lakemark", uri=self.catalog,
                          warehouse=self.warehouse).load_table(name)

    def rows(self, name: str = "db.customers") -> dict[int | None, tuple[Any, ...]]:
        got = self.table(name).scan().to_arrow().to_pylist()
        assert len({r["id"] for r in got}) == len(got), got  # one row per key
        return {r["id"]: (r["name"], r["op"], r["ts"]) for r in got}

    def operations(self, name: str = "db.customers") -> list[str]:
        return [s.summary.operation.value for s in self.table(name).snapshots()]


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


def _merge(spark: Any, lake: Lake, rows: list[tuple[Any, ...]], **kwargs: Any) -> Any:
    df = spark.createDataFrame(rows, SCHEMA)
    args: dict[str, Any] = {"merge_keys": ["id"], "delete_when": "op = 'D'", "order_by": "ts"}
    args.update(kwargs)
    return write_target(spark, df, "db.customers", format="iceberg",
                        iceberg_catalog=lake.catalog, **args)


def test_merge_updates_deletes_inserts_exactly_once(spark: Any, lake: Lake) -> None:
    first = _merge(spark, lake, [(1, "Ada", "I", 1), (2, "Bob", "I", 1), (3, "Cy", "I", 1),
                                 (3, "Cy 2", "U", 2), (9, "gone", "D", 1)])
    assert (first.rows, first.skipped) == (3, False)  # a new table: latest rows, no deletes
    assert lake.rows() == {1: ("Ada", "I", 1), 2: ("Bob", "I", 1), 3: ("Cy 2", "U", 2)}
    token = IdempotencyToken("customers/out", 2)
    changes = [(2, "Bob B.", "U", 2), (2, "Robert", "U", 3), (3, None, "D", 3),
               (4, "Dee", "I", 2), (5, "never", "D", 2), (None, "no key", "I", 1)]
    second = _merge(spark, lake, changes, token=token)
    merged = {1: ("Ada", "I", 1), 2: ("Robert", "U", 3), 4: ("Dee", "I", 2),
              None: ("no key", "I", 1)}
    assert lake.rows() == merged
    assert (second.rows, second.skipped) == (4, False)  # 1 update, 1 delete, 2 inserts
    assert second.table_version == lake.table().current_snapshot().snapshot_id
    table = lake.table()
    ours = [s for s in table.snapshots()
            if s.summary.additional_properties.get(APP_ID_KEY) == "customers/out"]
    assert [s.summary.operation.value for s in ours][-1] == "append"  # after the rewrite
    assert [s.summary.operation.value for s in ours][0] in ("overwrite", "delete")
    assert {s.summary.additional_properties[APP_VERSION_KEY] for s in ours} == {"2"}
    assert len({s.summary.additional_properties[WRITE_ID_KEY] for s in ours}) == 1
    assert not any(t.delete_files for t in table.scan().plan_files())  # copy-on-write
    again = _merge(spark, lake, changes, token=token)  # a retried run: skipped
    assert again.skipped and lake.rows() == merged
    assert len(lake.table().snapshots()) == len(table.snapshots())


def test_inserts_only_is_an_append_bad_input_writes_nothing_merge_schema_adds(
        spark: Any, lake: Lake) -> None:
    _merge(spark, lake, [(1, "a", "I", 1)])
    _merge(spark, lake, [(2, "b", "I", 1), (3, "c", "I", 1)])
    assert lake.operations() == ["append", "append"]  # incremental readers take it
    before = len(lake.table().snapshots())
    with pytest.raises(SinkError, match=r"Iceberg table db.customers: key id=1 occurs more "
                                        r"than once .* \(nothing was written\)"):
        _merge(spark, lake, [(1, "x", "U", 2), (1, "y", "U", 3)], order_by=None)
    with pytest.raises(SinkError, match="key id=1 has two rows with the same latest 'ts'"):
        _merge(spark, lake, [(1, "x", "U", 2), (1, "y", "U", 2)])
    with pytest.raises(ConfigError, match="option.s. compression are not supported with "
                                          "merge_keys on Iceberg table db.customers"):
        _merge(spark, lake, [(1, "x", "U", 2)], options={"compression": "zstd"})
    with pytest.raises(ConfigError, match="partition_by cannot be combined with merge_keys"):
        _merge(spark, lake, [(1, "x", "U", 2)], partition_by=["op"])
    narrow = spark.createDataFrame([(1, "x")], "id long, name string")
    with pytest.raises(SinkError, match="column.s. 'op', 'ts' are missing from the DataFrame"):
        write_target(spark, narrow, "db.customers", format="iceberg", merge_keys=["id"],
                     iceberg_catalog=lake.catalog, options={"mergeSchema": "true"})
    assert len(lake.table().snapshots()) == before
    assert lake.rows() == {1: ("a", "I", 1), 2: ("b", "I", 1), 3: ("c", "I", 1)}
    wide = spark.createDataFrame([(1, "A", "U", 2, "x"), (4, "d", "I", 2, "y")],
                                 SCHEMA + ", tier string")
    result = write_target(spark, wide, "db.customers", format="iceberg", merge_keys=["id"],
                          iceberg_catalog=lake.catalog, options={"mergeSchema": "true"})
    assert result.rows == 2  # the new column joins in the merge's own commit
    assert len(lake.table().snapshots()) == before + 2  # overwrite (key 1) + append
    got = {r["id"]: (r["name"], r["tier"]) for r in lake.table().scan().to_arrow().to_pylist()}
    assert got == {1: ("A", "x"), 2: ("b", None), 3: ("c", None), 4: ("d", "y")}


def test_compound_string_keys(spark: Any, lake: Lake) -> None:
    schema = "region string, id long, name string"
    first = spark.createDataFrame([("eu", 1, "a"), ("us", 1, "b"), ("eu", 2, "c")], schema)
    second = spark.createDataFrame([("us", 1, "B"), ("eu", 3, "d"), ("us", 2, "e")], schema)
    for df in (first, second):
        write_target(spark, df, "db.pairs", format="iceberg", merge_keys=["region", "id"],
                     iceberg_catalog=lake.catalog)
    got = lake.table("db.pairs").scan().to_arrow().to_pylist()
    assert sorted((r["region"], r["id"], r["name"]) for r in got) == [
        ("eu", 1, "a"), ("eu", 2, "c"), ("eu", 3, "d"), ("us", 1, "B"), ("us", 2, "e")]


def test_a_commit_that_lost_a_race_merges_again_on_the_new_snapshot(
        spark: Any, lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer appends key 7 while the merge (which upserts key 7) stands at its
    ``mid-write`` barrier: our commit fails, the merge runs again on the new snapshot and
    updates the racer's row — one row for key 7, none lost."""
    import pyarrow as pa

    _merge(spark, lake, [(1, "a", "I", 1)])
    gate = lake.tmp / "gate"
    monkeypatch.setenv(FAULT_WAIT_ENV, f"mid-write={gate}")
    outcome: dict[str, Any] = {}

    def merge() -> None:
        try:
            outcome["result"] = _merge(spark, lake, [(7, "ours", "U", 5), (1, "A", "U", 2)],
                                       token=IdempotencyToken("race/out", 1))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = exc

    worker = threading.Thread(target=merge)
    worker.start()
    reached = Path(f"{gate}.reached")
    while not reached.exists() and worker.is_alive():
        worker.join(timeout=0.05)
    assert reached.exists(), outcome
    racer = lake.table()
    racer.append(pa.Table.from_pylist([{"id": 7, "name": "theirs", "op": "I", "ts": 1}],
                                      schema=racer.schema().as_arrow()))
    gate.touch()
    worker.join()
    assert "error" not in outcome, outcome.get("error")
    assert lake.rows() == {1: ("A", "U", 2), 7: ("ours", "U", 5)}
    assert outcome["result"].rows == 2


def test_cli_ingest_merges_into_an_iceberg_table(spark: Any, lake: Lake) -> None:
    from click.testing import CliRunner

    from lakemark.cli import cli

    landing = lake.tmp / "landing"
    landing.mkdir()
    args = ["ingest", "files", str(landing), "--job", "customers", "--target-format",
            "iceberg", "--table", "db.customers", "--iceberg-catalog", lake.catalog,
            "--merge-key", "id", "--delete-when", "op = 'D'", "--order-by", "ts",
            "--state", lake.state, "--json"]

    def lines(name: str, *records: dict[str, Any]) -> None:
        (landing / name).write_text("".join(json.dumps(r) + "\n" for r in records))

    lines("001.json", *({"id": i, "name": n, "op": "I", "ts": 1}
                        for i, n in ((1, "Ada"), (2, "Bob"), (3, "Cy"))))
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    lines("002.json", {"id": 2, "name": "Bob B.", "op": "U", "ts": 2},
          {"id": 2, "name": "Robert", "op": "U", "ts": 3},
          {"id": 3, "name": None, "op": "D", "ts": 2},
          {"id": 4, "name": "Dee", "op": "I", "ts": 2})
    second = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["rows"] == 3
    assert lake.rows() == {1: ("Ada", "I", 1), 2: ("Robert", "U", 3), 4: ("Dee", "I", 2)}
    summary = lake.table().current_snapshot().summary.additional_properties
    assert (summary[APP_ID_KEY], summary[APP_VERSION_KEY]) == ("customers/target", "2")
    refused = CliRunner().invoke(cli, [*args, "--partition-by", "op"])
    assert refused.exit_code == 2 and "--partition-by" in refused.output


@pytest.mark.long
def test_retry_after_merge_commit_does_not_merge_twice(spark: Any, lake: Lake) -> None:
    """A run killed right after its merge committed is retried: the retry finds the token in
    the table and skips the merge (the table is as after one merge)."""
    script = lake.tmp / "job.py"
    script.write_text(textwrap.dedent(f"""
        from lakemark import Job
        with Job("m", state={lake.state!r}) as job:
            df = job.spark.createDataFrame([(1, "A", "U", 2), (2, None, "D", 2), (3, "c", "I", 2)],
                                           {SCHEMA!r})
            job.write(df, "db.customers", format="iceberg", ctx="out", merge_keys=["id"],
                      delete_when="op = 'D'", iceberg_catalog={lake.catalog!r})
    """))
    _merge(spark, lake, [(1, "a", "I", 1), (2, "b", "I", 1)])
    env = {**os.environ, "PYTHONPATH": str(SRC), "LAKEMARK_FAULT": "after-sink-commit"}
    killed = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    merged = {1: ("A", "U", 2), 3: ("c", "I", 2)}
    assert lake.rows() == merged
    snapshots = len(lake.table().snapshots())
    env.pop("LAKEMARK_FAULT")
    retried = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                             text=True, timeout=600)
    assert retried.returncode == 0, retried.stderr[-2000:]
    assert lake.rows() == merged and len(lake.table().snapshots()) == snapshots
