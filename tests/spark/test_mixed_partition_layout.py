"""A file source whose new files sit partly at the root and partly under ``key=value`` folders
reads every file's rows: Spark's partition discovery alone keeps only the files under the
partition folders, so a root file was read as no row and still taken by the bookmark. Files
outside the partition folders get null partition columns (docs/schema.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_quarantine import OLD, write

from lakemark import Job
from lakemark.state import open_store

pytestmark = pytest.mark.spark


def _file(fmt: str, path: Path, first: int, n: int) -> None:
    if fmt not in ("csv", "xml"):
        write(fmt, path, first, n)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = range(first, first + n)
    if fmt == "csv":
        path.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in ids))
    else:
        path.write_text("<rows>" + "".join(f"<r><id>{i}</id><name>n{i}</name></r>" for i in ids)
                        + "</rows>\n")
    os.utime(path, (OLD, OLD))


@pytest.mark.parametrize("fmt,evolution", [
    ("json", None), ("json", "off"), ("csv", None), ("csv", "off"), ("parquet", None),
    ("orc", None), ("avro", None), ("avro", "off"), ("xml", None), ("xml", "off"),
])
@pytest.mark.parametrize("name", ["a", "z"])  # the root file listed before or after the folder
def test_root_files_beside_partition_folders_keep_their_rows(
        tmp_path: Path, spark: Any, fmt: str, evolution: str | None, name: str) -> None:
    root = tmp_path / "in"
    options = {"csv": {"header": "true"}, "xml": {"rowTag": "r"}}.get(fmt)
    _file(fmt, root / f"{name}.{fmt}", 0, 2)
    _file(fmt, root / "day=1" / f"p.{fmt}", 10, 3)
    state = f"sqlite:///{tmp_path / 's.db'}"

    def run() -> list[tuple[Any, Any]]:
        store = open_store(state)
        with Job("j", state=store, spark=spark) as job:
            df = job.read_files(str(root), format=fmt, ctx="src", options=options,
                                schema_evolution=evolution)
            if "day" not in df.columns:  # a run with nothing new may not know the folders
                rows = [tuple(r) for r in df.collect()]
            else:
                rows = sorted((int(r["id"]), r["day"]) for r in df.select("id", "day").collect())
                job.write(df.select("id", "day"), str(tmp_path / "out"), format="delta",
                          ctx="out")
        store.close()
        return rows

    assert run() == [(0, None), (1, None), (10, 1), (11, 1), (12, 1)]
    store = open_store(state)
    tracked = store.get_source_schema("j", "src")
    store.close()
    if tracked is not None:  # a tracked schema holds the data columns, not the partition's
        assert tracked.fields is not None
        assert "day" not in {f["name"] for f in tracked.fields}
    assert run() == []  # both files taken, nothing new
    out = DeltaTable(str(tmp_path / "out")).to_pyarrow_table()
    assert sorted((int(i), d) for i, d in zip(out.column("id").to_pylist(),
                                               out.column("day").to_pylist(), strict=True)) == [
        (0, None), (1, None), (10, 1), (11, 1), (12, 1)]


def test_an_untracked_read_keeps_the_root_files_rows(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "in"
    _file("json", root / "root.json", 0, 1)
    _file("json", root / "day=1" / "p.json", 10, 1)
    with Job("j", state=f"sqlite:///{tmp_path / 's.db'}", spark=spark) as job:
        df = job.read_files(str(root), format="json")
        assert sorted((r["id"], r["day"]) for r in df.collect()) == [(0, None), (10, 1)]
