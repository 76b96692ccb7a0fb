"""File pruning and task planning of lakemark's Delta reader (pure Python, no JVM)."""

from __future__ import annotations

from hypothesis import given, strategies as st
from pyspark.sql.datasource import (EqualTo, GreaterThan, In, IsNotNull, IsNull, LessThan,
                                    Not, StringStartsWith)

from lakemark.tables._delta_read import plan_tasks, prune
from lakemark.tables._delta_snapshot import DataFileRef


def _file(name: str, p: object, low: int, high: int, size: int = 10) -> DataFileRef:
    return DataFileRef(name, size, 2, (("p", p),), (("a", low),), (("a", high),))


FILES = [_file("f0", 0, 0, 9), _file("f1", 1, 10, 19), _file("f2", None, 20, 29)]


def _names(filters: list[object]) -> list[str]:
    return [f.path for f in prune(FILES, filters, ["p"])]


def test_partition_values_prune_exactly() -> None:
    assert _names([EqualTo(("p",), 1)]) == ["f1"]
    assert _names([In(("p",), (0, 5))]) == ["f0"]
    assert _names([IsNull(("p",))]) == ["f2"]
    assert _names([IsNotNull(("p",))]) == ["f0", "f1"]
    assert _names([Not(EqualTo(("p",), 0))]) == ["f1", "f2"]  # SQL would drop null; Spark re-checks


def test_stats_prune_by_min_and_max() -> None:
    assert _names([GreaterThan(("a",), 19)]) == ["f2"]
    assert _names([LessThan(("a",), 10)]) == ["f0"]
    assert _names([EqualTo(("a",), 15), EqualTo(("p",), 1)]) == ["f1"]
    assert _names([EqualTo(("a",), 15), EqualTo(("p",), 0)]) == []


def test_filters_it_cannot_judge_keep_every_file() -> None:
    assert _names([StringStartsWith(("s",), "x")]) == ["f0", "f1", "f2"]
    assert _names([EqualTo(("a",), "not a number")]) == ["f0", "f1", "f2"]
    assert _names([EqualTo(("nested", "field"), 1)]) == ["f0", "f1", "f2"]


@given(st.lists(st.integers(min_value=0, max_value=10**9), max_size=60),
       st.integers(min_value=1, max_value=16))
def test_every_file_lands_in_exactly_one_task(sizes: list[int], parallelism: int) -> None:
    files = [DataFileRef(f"f{i}", s, None, ()) for i, s in enumerate(sizes)]
    tasks = plan_tasks(files, parallelism)
    planned = sorted(f.path for t in tasks for f in t.files)
    assert planned == sorted(f.path for f in files)
    assert all(t.files for t in tasks)
    assert [t.value for t in tasks] == list(range(len(tasks)))
