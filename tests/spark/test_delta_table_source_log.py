"""A Delta table source plans later runs from commit files alone (issue 20: planning flat in
the table's history): no snapshot loaded — proved by a checkpoint that cannot be read — the
schema and settings carried in the bookmark and advanced over the range's metaData/protocol
actions; a replaced table, a log cleaned up past the bookmark, an old bookmark without the
carried state, and a retried incremental run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from lakemark import Job
from lakemark.errors import SourceError, UnsupportedError
from lakemark.state import open_store

LOG = "_delta_log"


def _append(path: Path, ids: list[int], **kw) -> None:  # type: ignore[no-untyped-def]
    write_deltalake(str(path), pa.table({"id": pa.array(ids, pa.int64())}), mode="append",
                    **kw)


def _commit(path: Path, version: int) -> Path:
    return path / LOG / f"{version:020d}.json"


def _plan(state: str, job: str) -> dict:  # type: ignore[type-arg]
    """The manifest entry of ctx ``src`` in the job's last run."""
    store = open_store(state)
    try:
        last = store.list_runs(job)[-1]
        return next(dict(i.plan) for i in store.run_inputs(last.run_id) if i.ctx == "src")
    finally:
        store.close()


def _run(state: str, spark, table: Path, job: str = "j") -> dict:  # type: ignore[no-untyped-def,type-arg]
    """One run that plans (builds the frame, reads nothing) and commits; its manifest entry."""
    with Job(job, state=state, spark=spark) as j:
        j.read_table(str(table), ctx="src")
    return _plan(state, job)


def test_an_incremental_run_reads_commit_files_and_no_snapshot(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    for i in range(3):
        _append(table, [i])
    DeltaTable(str(table)).create_checkpoint()  # version 2
    first = _run(state, spark, table)
    assert first["table_state"] == "loaded" and first["range"]["mode"] == "snapshot"
    _append(table, [3])
    _append(table, [4])
    write_deltalake(str(table), pa.table({"id": pa.array([5], pa.int64()), "x": ["new"]}),
                    mode="append", schema_mode="merge")  # version 5 adds a column
    # Make any snapshot of the table unreadable: its checkpoint is garbage now, so deltalake
    # cannot open it; the run must get by with commit files and what its bookmark carries.
    checkpoint = table / LOG / f"{2:020d}.checkpoint.parquet"
    good = checkpoint.read_bytes()
    checkpoint.write_bytes(b"garbage")
    with pytest.raises(Exception, match="footer"):
        DeltaTable(str(table))
    with Job("j", state=state, spark=spark) as job:
        df = job.read_table(str(table), ctx="src")
        assert df.columns == ["id", "x"]
        assert sorted(tuple(r) for r in df.collect()) == [(3, None), (4, None), (5, "new")]
    plan = _plan(state, "j")
    assert plan["table_state"] == "carried" and plan["latest_version"] == 5
    assert plan["range"] == {"from_version": 3, "to_version": 5, "mode": "commits"}
    assert json.loads(plan["next_state"]["schema"])["fields"][1]["name"] == "x"

    # Another engine upgrades the protocol to a reader feature lakemark cannot honour: the run
    # is refused, naming the feature and the version; the bookmark stays.
    _commit(table, 6).write_text(
        json.dumps({"commitInfo": {"timestamp": 1, "operation": "SET TBLPROPERTIES"}}) + "\n"
        + json.dumps({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                   "readerFeatures": ["variantType"],
                                   "writerFeatures": ["variantType"]}}) + "\n")
    with pytest.raises(UnsupportedError, match=r"uses reader feature\(s\) variantType \(since "
                                               r"version 6\)"):
        _run(state, spark, table)
    store = open_store(state)
    assert store.get_bookmark("j").state["src"]["version"] == 5
    store.close()
    checkpoint.write_bytes(good)


def test_replaced_tables_and_cleaned_up_logs_fail_naming_what_to_do(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    for i in range(3):
        _append(table, [i])
    _run(state, spark, table)                       # snapshot at version 2
    # Log cleanup removed the bookmark's own commit file (a checkpoint at 3 covers it): the
    # run cannot check the table by it, so deltalake opens the table; then carried again.
    _append(table, [3])
    DeltaTable(str(table)).create_checkpoint()
    for version in range(3):
        _commit(table, version).unlink()
    plan = _run(state, spark, table)
    assert (plan["table_state"], plan["planned_files"]) == ("loaded", 1)
    _append(table, [4])
    plan = _run(state, spark, table)
    assert (plan["table_state"], plan["range"]["to_version"]) == ("carried", 4)

    # Cleanup past the bookmark (versions 4 and 5 gone): the run names the missing version.
    _append(table, [5])
    _append(table, [6])
    DeltaTable(str(table)).create_checkpoint()      # version 6
    for version in (3, 4, 5):
        _commit(table, version).unlink()
    with pytest.raises(SourceError, match=r"commit file of version 5 .* is missing; if the log "
                                          r"was cleaned up since the last run, reset the ctx"):
        _run(state, spark, table)

    # The table deleted and written anew, longer than the bookmark's version 4 ...
    shutil.rmtree(table)
    for i in range(6):
        _append(table, [i])
    with pytest.raises(SourceError, match=r"was replaced since the last run \(its commit file "
                                          r"of version 4 is not the one the bookmark read\)"):
        _run(state, spark, table)
    # ... or shorter.
    shutil.rmtree(table)
    _append(table, [0])
    with pytest.raises(SourceError, match="is at version 0, behind the bookmark's version 4"):
        _run(state, spark, table)


def test_an_old_bookmark_and_a_retried_run(spark, tmp_path):  # type: ignore[no-untyped-def]
    table, state = tmp_path / "t", f"sqlite:///{tmp_path}/state.db"
    _append(table, [0])
    _append(table, [1])
    # A bookmark as lakemark wrote it before it carried the table's state (version 0).
    store = open_store(state)
    run = store.begin_run("j", "enable", host="test", pid=1, lease_timeout_s=60)
    table_id = DeltaTable(str(table)).metadata().id
    store.commit_run(run.run_id, {"src": {"kind": "delta-table", "source": str(table),
                                          "version": 0, "table_id": table_id, "cdf": False}},
                     update_bookmark=True)
    store.close()
    plan = _run(state, spark, table)
    assert (plan["table_state"], plan["range"]["from_version"]) == ("loaded", 1)
    assert plan["next_state"]["commit_sha256"] and plan["next_state"]["schema"]

    # A run that fails after planning versions 2..3; its retry replays exactly that range
    # (from the carried state) even though version 4 came meanwhile.
    _append(table, [2])
    _append(table, [3])
    with pytest.raises(RuntimeError, match="boom"), Job("j", state=state, spark=spark) as job:
        job.read_table(str(table), ctx="src")
        raise RuntimeError("boom")
    _append(table, [4])
    plan = _run(state, spark, table)
    assert (plan["table_state"], plan["planned_files"]) == ("carried", 2)
    assert plan["range"] == {"from_version": 2, "to_version": 3, "mode": "commits"}
    plan = _run(state, spark, table)
    assert (plan["table_state"], plan["range"]["from_version"], plan["latest_version"]) == (
        "carried", 4, 4)
