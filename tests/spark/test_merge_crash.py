"""A merge (``lakemark ingest files --merge-key``) killed at each named point of the run leaves
the Delta table as before or as after, never half, and the rerun merges it exactly once; a merge
racing an append by another writer follows Delta's conflict rules: deltalake refuses the merge's
commit (the append added data the merge should have read), lakemark merges again on the new
snapshot, and no row is lost or doubled.

Each case runs ``ingest files`` in real processes (``tests/crash_support.py``). Killing at every
point is slow, so the matrix runs with ``-m long``; the default run keeps the race and the kill
in ``tests/spark/test_merge.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
import pytest
from crash_support import KILLED, run_ingest, start_held
from deltalake import DeltaTable

from lakemark._fault import FAULT_POINTS

pytestmark = pytest.mark.spark

JOB = "merge-crash"
MERGE = ["--merge-key", "id", "--delete-when", "op = 'D'", "--order-by", "ts"]


def land(folder: Path, name: str, rows: list[tuple[int, str, str, int]]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("".join(
        json.dumps({"id": i, "name": n, "op": op, "ts": ts}) + "\n" for i, n, op, ts in rows))


def table(target: Path) -> dict[int, tuple[str, str, int]]:
    data = DeltaTable(str(target)).to_pyarrow_table().to_pylist()
    out = {r["id"]: (r["name"], r["op"], r["ts"]) for r in data}
    assert len(out) == len(data), f"a key occurs twice: {data}"
    return out


def merges(target: Path) -> int:
    return sum(1 for h in DeltaTable(str(target)).history() if h["operation"] == "MERGE")


FIRST = [(1, "a", "I", 1), (2, "b", "I", 1), (3, "c", "I", 1)]
SECOND = [(1, "a2", "U", 2), (1, "a3", "U", 3), (2, "b", "D", 2), (4, "d", "I", 2),
          (5, "e", "I", 2), (5, "e", "D", 3)]
BEFORE = {1: ("a", "I", 1), 2: ("b", "I", 1), 3: ("c", "I", 1)}
AFTER = {1: ("a3", "U", 3), 3: ("c", "I", 1), 4: ("d", "I", 2)}


@pytest.mark.long
@pytest.mark.parametrize("fault", FAULT_POINTS)
def test_merge_killed_at_each_point_leaves_before_or_after_then_merges_once(
        tmp_path: Path, fault: str) -> None:
    src, target, state = tmp_path / "in", tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    land(src, "f0.json", FIRST)
    assert run_ingest(str(src), str(target), job=JOB, state=state, extra=MERGE).returncode == 0
    land(src, "f1.json", SECOND)
    killed = run_ingest(str(src), str(target), job=JOB, state=state, fault=fault, extra=MERGE)
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert table(target) in (BEFORE, AFTER)  # never half
    committed = table(target) == AFTER
    assert committed == (fault in ("after-sink-commit", "before-job-commit",
                                   "during-job-commit"))
    retried = run_ingest(str(src), str(target), job=JOB, state=state, extra=MERGE)
    assert retried.returncode == 0, retried.stderr[-2000:]
    assert json.loads(retried.stdout)["skipped"] is committed
    assert table(target) == AFTER and merges(target) == 1
    land(src, "f2.json", [(3, "c", "D", 4), (6, "f", "I", 4)])
    last = run_ingest(str(src), str(target), job=JOB, state=state, extra=MERGE)
    assert last.returncode == 0, last.stderr[-2000:]
    assert table(target) == {1: ("a3", "U", 3), 4: ("d", "I", 2), 6: ("f", "I", 4)}
    assert merges(target) == 2


def test_merge_racing_an_append_merges_again_on_the_new_snapshot(tmp_path: Path) -> None:
    """The merge stops after opening the table (``mid-write``: input checked, deltalake's
    merge not begun); another writer appends rows, one with a key the merge updates; the
    merge's commit is refused (deltalake: "a concurrent transaction added new data"), it is
    merged again on the new snapshot: the appended key is updated, not doubled."""
    import pyarrow as pa
    from deltalake import write_deltalake

    src, target, state = tmp_path / "in", tmp_path / "t", f"sqlite:///{tmp_path / 's.db'}"
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("op", pa.string()),
                        ("ts", pa.int64())])
    write_deltalake(str(target), pa.table({"id": [1, 2], "name": ["a", "b"], "op": ["I", "I"],
                                           "ts": [1, 1]}, schema=schema))
    land(src, "f0.json", [(1, "a2", "U", 2), (7, "g2", "U", 2), (8, "h", "I", 2)])
    gate = tmp_path / "gate"
    proc, reached = start_held(str(src), str(target), job=JOB, state=state, point="mid-write",
                               gate=gate, extra=MERGE)
    try:
        assert reached, proc.communicate()[1][-2000:]
        write_deltalake(str(target), pa.table({"id": [7, 9], "name": ["g", "i"],
                                               "op": ["I", "I"], "ts": [1, 1]}, schema=schema),
                        mode="append")  # the other writer: key 7 is one the merge updates
    finally:
        gate.touch()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    assert table(target) == {1: ("a2", "U", 2), 2: ("b", "I", 1), 7: ("g2", "U", 2),
                             8: ("h", "I", 2), 9: ("i", "I", 1)}
    history = DeltaTable(str(target)).history()
    assert [h["operation"] for h in history[:2]] == ["MERGE", "WRITE"]  # merged after it
    assert json.loads(out)["rows"] == 3
    assert DeltaTable(str(target)).transaction_version(f"{JOB}/target") == 1
