"""A Python job's read of a Parquet/ORC/Avro folder that takes no file (nothing new) keeps the
folder's columns — those of a file an earlier run took — so `select` and sinks work and write
nothing; Glue's from_catalog takes the catalog's (tests/spark/test_glue_*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_quarantine import write

from lakemark import Job
from lakemark.state import open_store

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_a_run_with_no_new_file_has_the_folders_columns(tmp_path: Path, spark: Any,
                                                        fmt: str) -> None:
    src = tmp_path / "in" / "day=1"
    write(fmt, src / f"a.{fmt}", 0, 3)
    state = f"sqlite:///{tmp_path / 's.db'}"

    def run() -> list[str]:
        store = open_store(state)
        with Job("j", state=store, spark=spark) as job:
            df = job.read_files(str(tmp_path / "in"), format=fmt, ctx="src")
            columns = list(df.columns)
            job.write(df.select("id", "day"), str(tmp_path / "out"), format="delta", ctx="out")
        store.close()
        return columns

    first = run()
    assert "id" in first and "day" in first
    again = run()  # a fresh Job, nothing new: the same columns, nothing written
    assert again == first
    ids = DeltaTable(str(tmp_path / "out")).to_pyarrow_table().column("id").to_pylist()
    assert sorted(ids) == [0, 1, 2]
