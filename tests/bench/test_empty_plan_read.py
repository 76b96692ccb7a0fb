"""A run with nothing new reads an empty frame that needs no Python worker (bench finding:
``createDataFrame([])`` cost seconds per empty run, more than the rest of the run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark.sources import read_files

pytestmark = pytest.mark.spark


def test_empty_plan_reads_a_frame_without_partitions(spark: Any, tmp_path: Path) -> None:
    df = read_files(spark, [], root=str(tmp_path / "none"), format="json",
                    schema="id long, name string")
    assert df.rdd.getNumPartitions() == 0
    assert df.dtypes == [("id", "bigint"), ("name", "string")] and df.count() == 0
    df.write.parquet(str(tmp_path / "out"))
    back = spark.read.parquet(str(tmp_path / "out"))
    assert back.dtypes == df.dtypes and back.count() == 0
