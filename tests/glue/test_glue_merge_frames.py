"""Glue's ``DynamicFrame.mergeDynamicFrame`` and ``assertErrorThreshold`` on a real local Spark.

As Glue documents the merge: a source record whose primary keys the staging frame has is
replaced by the staging record(s) with those keys; other source records stay, duplicates too;
a staging record whose keys the source lacks is not in the result.
"""

from __future__ import annotations

from typing import Any

import pytest

from lakemark.errors import ConfigError, ReadError
from lakemark.glue.dynamicframe import DynamicFrame

pytestmark = pytest.mark.spark


def _frame(spark: Any, rows: list[tuple[Any, ...]], schema: str, name: str) -> DynamicFrame:
    return DynamicFrame.fromDF(spark.createDataFrame(rows, schema).coalesce(1), None, name)


def _rows(frame: DynamicFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.toDF().collect()), key=repr)


def _failing_map() -> Any:
    """A record function made here so that the workers get it by value: it fails on the
    records with an even id."""
    def fail_on_even(rec: dict[str, Any]) -> dict[str, Any]:
        if rec["id"] % 2 == 0:
            raise ValueError("even")
        return rec
    return fail_on_even


def test_staging_records_replace_matches_and_the_rest_of_the_source_stays(spark: Any) -> None:
    source = _frame(spark, [(1, "a"), (2, "b"), (2, "b-dup"), (3, "c"), (None, "no key")],
                    "id long, v string", "source")
    staging = _frame(spark, [(2, "B"), (3, "C"), (3, "C2"), (4, "new"), (None, "null key")],
                     "id long, v string", "staging")
    merged = source.mergeDynamicFrame(staging, ["id"], transformation_ctx="merge")
    # 2: both source records go, the staging one comes; 3: both staging records come (not
    # de-duplicated); 1 and the null-key record stay; 4 and the staging null key are not added.
    assert _rows(merged) == sorted([(1, "a"), (2, "B"), (3, "C"), (3, "C2"), (None, "no key")],
                                   key=repr)
    assert merged.transformation_ctx == "merge" and merged.name == "source"
    unmatched = source.mergeDynamicFrame(
        _frame(spark, [(9, "x")], "id long, v string", "s"), "id")
    assert _rows(unmatched) == _rows(source)  # nothing matches: the source as it was


def test_composite_nested_keys_and_different_schemas(spark: Any) -> None:
    source = _frame(spark, [((1, "eu"), "a", 10), ((1, "us"), "b", 20), ((2, "eu"), "c", 30)],
                    "k struct<id: long, region: string>, v string, n long", "source")
    staging = _frame(spark, [(1, "us", "B", True), (2, "us", "x", False)],
                     "id long, region string, v string, flag boolean", "staging")
    # The staging frame keeps its keys at the top level: each key path is resolved per frame,
    # so the frames need the same key paths; here the source's are nested.
    with pytest.raises(ConfigError, match=r"primary key 'k.id' is not a field of the staging "
                                          r"frame \(fields: id, region, v, flag\)"):
        source.mergeDynamicFrame(staging, ["k.id", "k.region"])
    nested = staging.toDF().selectExpr("named_struct('id', id, 'region', region) AS k", "v",
                                       "flag")
    merged = source.mergeDynamicFrame(DynamicFrame.fromDF(nested, None, "staging"),
                                      ["k.id", "k.region"])
    got = sorted((r["k"]["id"], r["k"]["region"], r["v"], r["n"], r["flag"])
                 for r in merged.toDF().collect())
    # (1, us) replaced: the staging record has no n; the others have no flag; (2, us) not added
    assert got == [(1, "eu", "a", 10, None), (1, "us", "B", None, True), (2, "eu", "c", 30, None)]


def test_error_records_and_thresholds_carry_over(spark: Any) -> None:
    source = _frame(spark, [(1, "a"), (2, "b"), (3, "c"), (4, "d")], "id long, v string",
                    "source")
    mapped = source.map(_failing_map())  # records 2 and 4 fail: two error records
    staging = _frame(spark, [(3, "C")], "id long, v string", "staging")
    merged = mapped.mergeDynamicFrame(staging, ["id"], stageThreshold=1, totalThreshold=2)
    assert _rows(merged) == [(1, "a"), (3, "C")]
    assert merged.errorsCount() == 2 and merged.stageErrorsCount() == 0
    assert merged.assertErrorThreshold() is None
    # the staging frame's error records count too
    with pytest.raises(ReadError, match=r"MergeDynamicFrame \(transformation_ctx 'm'\): 2 error "
                                        r"record\(s\) .* more than totalThreshold=1"):
        staging.mergeDynamicFrame(mapped, ["id"], transformation_ctx="m", totalThreshold=1)


def test_assert_error_threshold_checks_the_frames_thresholds(spark: Any) -> None:
    source = _frame(spark, [(1, "a"), (2, "b"), (4, "d")], "id long, v string", "source")
    assert source.assertErrorThreshold() is None  # no thresholds, no errors
    mapped = source.map(_failing_map(), totalThreshold=2)  # 2 errors: allowed
    assert mapped.assertErrorThreshold() is None
    assert source.map(_failing_map()).assertErrorThreshold() is None  # errors, no limit
    # The transform checks its thresholds when called, so a frame lakemark made passes; a
    # frame whose recorded limit is below its error count fails, naming the transform.
    mapped._thresholds = ((0, 1), "Map")
    with pytest.raises(ReadError, match=r"^Map: 2 error record\(s\) .* more than "
                                        r"totalThreshold=1"):
        mapped.assertErrorThreshold()
    mapped._thresholds = ((1, 0), "Map")
    with pytest.raises(ReadError, match="more than stageThreshold=1"):
        mapped.assertErrorThreshold()


def test_bad_input_is_named(spark: Any) -> None:
    source = _frame(spark, [(1, "a")], "id long, v string", "source")
    with pytest.raises(ConfigError, match="stage_dynamic_frame must be a DynamicFrame"):
        source.mergeDynamicFrame(source.toDF(), ["id"])
    with pytest.raises(ConfigError, match="needs at least one primary key"):
        source.mergeDynamicFrame(source, [])
    with pytest.raises(ConfigError, match=r"primary key 'nope' is not a field of the source "
                                          r"frame \(fields: id, v\)"):
        source.mergeDynamicFrame(source, ["nope"])
    with pytest.raises(ConfigError, match="options must be a dict"):
        source.mergeDynamicFrame(source, ["id"], options="x")  # type: ignore[arg-type]
