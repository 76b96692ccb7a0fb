"""``replaceWhere`` predicates on partition columns -> deltalake partition filters."""

from __future__ import annotations

import pytest

from lakemark.errors import UnsupportedError
from lakemark.tables._replace_where import partition_filters


def test_comparisons_and_lists_joined_by_and() -> None:
    assert partition_filters("day = '2024-01-01'", ["day"], table="t") == [("day", "=",
                                                                            "2024-01-01")]
    assert partition_filters("(Day >= '2024-01-01' AND `day` <> 'x')", ["day"], table="t") == [
        ("day", ">=", "2024-01-01"), ("day", "!=", "x")]
    assert partition_filters("p in (1, 2) and q not in ('a and b', 'it''s')", ["p", "q"],
                             table="t") == [("p", "in", ["1", "2"]),
                                            ("q", "not in", ["a and b", "it's"])]


@pytest.mark.parametrize("expr, says", [
    ("x = 1", "not a partition column"),
    ("day = '1' or day = '2'", "not a comparison"),
    ("upper(day) = 'A'", "not a comparison"),
    ("day = other", "not a comparison"),
])
def test_what_it_cannot_take_is_refused_by_name(expr: str, says: str) -> None:
    with pytest.raises(UnsupportedError, match=says):
        partition_filters(expr, ["day"], table="t")
