"""A table lakemark's ``format("delta")`` writer makes reads the same in another engine
(issue 20): Polars (``pl.read_delta`` and ``pl.scan_delta``), on a partitioned table after an
overwrite and a ``mergeSchema`` append. DuckDB's ``delta`` extension downloads itself at first
use from the internet, which the build machine cannot reach (docs/delta.md)."""

from __future__ import annotations

from typing import Any

import polars as pl


def test_polars_reads_what_lakemark_wrote(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "d1"), (2, "d2")], "id long, day string") \
        .write.format("delta").partitionBy("day").save(path)
    spark.createDataFrame([(3, "d1"), (4, "d3")], "id long, day string") \
        .write.format("delta").mode("overwrite").save(path)
    spark.createDataFrame([(5, "d3", "new")], "id long, day string, note string") \
        .write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    want: list[tuple[Any, ...]] = [(3, "d1", None), (4, "d3", None), (5, "d3", "new")]
    ours = spark.read.format("delta").load(path)
    assert sorted(tuple(r) for r in ours.select("id", "day", "note").collect()) == want
    frame = pl.read_delta(path)
    assert sorted(frame.select("id", "day", "note").iter_rows()) == want
    assert dict(frame.schema) == {"id": pl.Int64, "day": pl.String, "note": pl.String}
    lazy = pl.scan_delta(path).filter(pl.col("day") == "d3").select("id").collect()
    assert sorted(lazy["id"].to_list()) == [4, 5]
    old = pl.read_delta(path, version=0)
    assert sorted(old.select("id", "day").iter_rows()) == [(1, "d1"), (2, "d2")]
