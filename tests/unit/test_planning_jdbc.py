"""The JDBC key-range planner: every row inserted with a key beyond the bookmark is taken once.

Pure Python: no JVM, no database.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.jdbc import (
    JdbcKeys,
    JdbcState,
    KeyRange,
    decode_value,
    encode_value,
    evaluate,
    plan_jdbc,
)

KEYS2 = JdbcKeys(("a", "b"))


def extreme(rows: list[tuple[int, ...]], order: str) -> tuple[int, ...] | None:
    if not rows:
        return None
    return max(rows) if order == "asc" else min(rows)


@settings(max_examples=300, deadline=None)
@given(
    order=st.sampled_from(["asc", "desc"]),
    batches=st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3)), max_size=6),
                     max_size=6),
    width=st.integers(1, 2),
)
def test_rows_arriving_in_key_order_are_each_taken_exactly_once(
        order: str, batches: list[list[tuple[int, int]]], width: int) -> None:
    """Batches arrive with keys strictly beyond every earlier key (Glue's requirement, gaps
    allowed); across any sequence of runs every row is read once and none is skipped."""
    keys = JdbcKeys(("a", "b")[:width], order)
    table: list[tuple[int, ...]] = []
    state: JdbcState | None = None
    seen: list[tuple[int, ...]] = []
    sign = 1 if order == "asc" else -1
    for batch in batches:
        frontier = extreme(table, order)
        fresh = sorted({k[:width] for k in batch}, reverse=order == "desc")
        # Keep only keys strictly beyond everything in the table (the key rule).
        fresh = [k for k in fresh
                 if frontier is None or sign * ((k > frontier) - (k < frontier)) > 0]
        table.extend(fresh)
        plan = plan_jdbc(state, keys, extreme(table, order))
        taken = [r for r in table if plan.range.contains(r)]
        # The rendered predicate means the same as the range.
        pred = plan.range.predicate()
        assert taken == [r for r in table if evaluate(pred, dict(zip(keys.columns, r)))]
        seen.extend(taken)
        state = JdbcState.from_json(plan.next_state.to_json())
    assert sorted(seen) == sorted(table)
    assert len(seen) == len(set(seen))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=20,
                  unique=True),
    late=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=10, unique=True),
)
def test_pinned_upper_bound_keeps_rows_inserted_during_the_run_for_the_next(
        rows: list[tuple[int, int]], late: list[tuple[int, int]]) -> None:
    """The range is pinned at planning time: rows that arrive while the run reads are outside
    it, and the next run takes those beyond the bookmark; a retry reads the same range."""
    plan = plan_jdbc(None, KEYS2, max(rows))
    retry = plan_jdbc(None, KEYS2, max(rows))
    assert retry == plan
    table = rows + [r for r in late if r > max(rows)]  # keys beyond (the key rule)
    first = {r for r in table if plan.range.contains(r)}
    assert first == set(rows)
    nxt = plan_jdbc(plan.next_state, KEYS2, max(table))
    second = {r for r in table if nxt.range.contains(r)}
    assert first.isdisjoint(second)
    assert second == {r for r in table if r > max(rows)}


def test_composite_predicate_spelled_out() -> None:
    r = KeyRange(KEYS2, (1, 2), (5, 0))
    assert r.predicate() == (
        ((("a", ">", 1),), (("a", "=", 1), ("b", ">", 2))),
        ((("a", "<", 5),), (("a", "=", 5), ("b", "<=", 0))),
    )
    desc = KeyRange(JdbcKeys(("a",), "desc"), (9,), (3,))
    assert desc.predicate() == (((("a", "<", 9),),), ((("a", ">=", 3),),))
    assert KeyRange(KEYS2, None, None, empty=True).predicate() == ((),)
    assert not evaluate(((),), {"a": 1, "b": 1})


def test_empty_table_and_nothing_new() -> None:
    p = plan_jdbc(None, KEYS2, None)
    assert p.range.empty and p.next_state.last is None
    p = plan_jdbc(JdbcState(KEYS2, (3, 3)), KEYS2, (3, 3))
    assert p.range.empty and p.next_state.last == (3, 3)
    # A smaller maximum (rows deleted) never moves the bookmark back.
    p = plan_jdbc(JdbcState(KEYS2, (3, 3)), KEYS2, (2, 9))
    assert p.range.empty and p.next_state.last == (3, 3)


def test_changed_keys_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="reset the ctx"):
        plan_jdbc(JdbcState(KEYS2, (1, 1)), JdbcKeys(("a",)), (2,))
    with pytest.raises(ConfigError, match="jobBookmarkKeysSortOrder"):
        JdbcKeys(("a",), "up")
    with pytest.raises(ConfigError, match="jobBookmarkKeys"):
        JdbcKeys(())
    with pytest.raises(ConfigError, match="twice"):
        JdbcKeys(("a", "A"))
    with pytest.raises(ConfigError, match="not a 'files'|not a JDBC"):
        JdbcState.from_json({"kind": "files"})


@given(st.one_of(
    st.integers(), st.text(), st.decimals(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False), st.dates(),
    st.datetimes(), st.datetimes(timezones=st.just(dt.UTC)),
))
def test_key_values_round_trip_exactly(value: object) -> None:
    back = decode_value(encode_value(value))  # type: ignore[arg-type]
    assert type(back) is type(value) and back == value
    if isinstance(value, Decimal):
        assert str(back) == str(value)


@pytest.mark.parametrize("bad", [True, None, float("nan"), Decimal("Infinity"), b"x", [1]])
def test_unsupported_key_values_are_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="bookmark key"):
        encode_value(bad)  # type: ignore[arg-type]
