"""Glue's error records and their thresholds: ``stageThreshold`` / ``totalThreshold``.

Glue documents ``stageThreshold`` as the most error records one transform may make before the
processing errors out (errors of earlier frames not counted) and ``totalThreshold`` as the most
in all, earlier frames included; 0, the default, sets no limit.
"""

from __future__ import annotations

from typing import Any

import pytest

from lakemark.errors import ConfigError, ReadError
from lakemark.glue import transforms as T
from lakemark.glue.dynamicframe import DynamicFrame

pytestmark = pytest.mark.spark

# Two records lack "score": a function reading it raises on them.
RECORDS = [{"id": 1, "score": 7}, {"id": 2}, {"id": 3, "score": 2}, {"id": 4},
           {"id": 5, "score": 9}]


@pytest.fixture(scope="module")
def frame(spark):  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(r["id"], r.get("score")) for r in RECORDS], "id long, score long")
    return DynamicFrame.fromDF(df.coalesce(1), None, "scores")


def _functions() -> tuple[Any, Any]:
    """The record functions, made here so that the workers get them by value."""
    def high(rec: dict[str, Any]) -> bool:
        if rec["score"] is None:
            raise KeyError("score")
        return bool(rec["score"] >= 5)

    def tag(rec: dict[str, Any]) -> dict[str, Any]:
        rec["double"] = rec["id"] * 2
        if rec["id"] == 5:
            raise ValueError("five")
        return rec
    return high, tag


_high, _tag = _functions()


def test_default_thresholds_keep_going_and_count_the_errors(frame: DynamicFrame) -> None:
    kept = T.Filter.apply(frame=frame, f=_high)
    assert sorted(r["id"] for r in kept.toDF().collect()) == [1, 5]
    assert kept.stageErrorsCount() == 2 and kept.errorsCount() == 2
    errors = kept.errorsAsDynamicFrame().toDF().collect()
    assert sorted(r["record"] for r in errors) == ['{"id": 2, "score": null}',
                                                   '{"id": 4, "score": null}']
    assert {r["transformation"] for r in errors} == {"Filter"}


def test_stage_threshold_fails_only_when_exceeded(frame: DynamicFrame) -> None:
    assert T.Filter.apply(frame=frame, f=_high, stageThreshold=2).count() == 2  # 2 is allowed
    with pytest.raises(ReadError, match=r"Filter \(transformation_ctx 'hi'\): 2 error record"
                       r"\(s\), more than stageThreshold=1"):
        T.Filter.apply(frame=frame, f=_high, transformation_ctx="hi", stageThreshold=1)
    with pytest.raises(ReadError, match="stageThreshold=1"):
        frame.filter(_high, stageThreshold=1)


def test_total_threshold_counts_the_frames_before(frame: DynamicFrame) -> None:
    kept = T.Filter.apply(frame=frame, f=_high)                      # 2 errors
    tagged = T.Map.apply(frame=kept, f=_tag, stageThreshold=1)       # 1 more, stage allows it
    assert tagged.stageErrorsCount() == 1 and tagged.errorsCount() == 3
    assert T.Map.apply(frame=kept, f=_tag, totalThreshold=3).count() == 1
    with pytest.raises(ReadError, match="3 error record.*more than totalThreshold=2"):
        T.Map.apply(frame=kept, f=_tag, totalThreshold=2)
    # A transform without record functions checks the errors it carries.
    with pytest.raises(ReadError, match="ApplyMapping.*totalThreshold=1"):
        T.ApplyMapping.apply(frame=tagged, mappings=[("id", "long", "id", "long")],
                             totalThreshold=1)


def test_bad_threshold_values_are_refused(frame: DynamicFrame) -> None:
    with pytest.raises(ConfigError, match="stageThreshold must be >= 0"):
        T.Filter.apply(frame=frame, f=_high, stageThreshold=-1)
    with pytest.raises(ConfigError, match="totalThreshold must be a whole number"):
        T.Map.apply(frame=frame, f=_tag, totalThreshold="many")
