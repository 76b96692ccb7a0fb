"""``merge_spec``: the pure check of a write's merge options (no Spark, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError, SinkError
from lakemark.sinks._merge import DELETE_FLAG, MergeSpec, merge_spec

names = st.text(alphabet="abcdefgh_", min_size=1, max_size=4)


@given(columns=st.lists(names, min_size=1, max_size=6, unique=True), data=st.data())
def test_keys_in_the_frame_give_a_spec_and_missing_ones_are_named(columns: list[str],
                                                                  data: st.DataObject) -> None:
    keys = data.draw(st.lists(st.sampled_from(columns), min_size=1, unique=True))
    spec = merge_spec(keys, "op = 'D'", None, format="delta", mode="append", columns=columns)
    assert spec == MergeSpec(tuple(keys), "op = 'D'", None)
    missing = data.draw(names.filter(lambda n: n not in columns))
    with pytest.raises(ConfigError, match=f"not in the DataFrame: {missing} "):
        merge_spec([*keys, missing], None, None, format="delta", mode="append", columns=columns)


@given(fmt=st.sampled_from(["parquet", "json", "csv", "orc"]))
def test_merge_needs_delta(fmt: str) -> None:
    with pytest.raises(ConfigError, match="merge_keys needs format .delta. or .iceberg."):
        merge_spec(["id"], None, None, format=fmt, mode="append", columns=["id"])


def test_bad_combinations_name_the_option() -> None:
    cols = ["id", "ts", "op"]
    for args, match in ((([], "op = 'D'", None), "delete_when applies to merges only"),
                        ((None, None, "ts"), "order_by applies to merges only"),
                        ((["id", "id"], None, None), "names column.s. twice: id"),
                        ((["id"], None, "id"), "order_by column 'id' is a merge key"),
                        ((["id"], "  ", None), "delete_when must be a SQL expression"),
                        ((["id"], None, "nope"), "order_by column 'nope'"),
                        (([""], None, None), "merge_keys must name columns")):
        with pytest.raises(ConfigError, match=match):
            merge_spec(*args, format="delta", mode="append", columns=cols)
    with pytest.raises(ConfigError, match="mode 'overwrite'"):
        merge_spec(["id"], None, None, format="delta", mode="overwrite", columns=cols)
    with pytest.raises(ConfigError, match="reserved"):
        merge_spec(["id"], None, None, format="delta", mode="append", columns=["id", DELETE_FLAG])
    assert merge_spec(None, None, None, format="parquet", mode="overwrite", columns=cols) is None


@given(columns=st.lists(names, min_size=2, max_size=6, unique=True), data=st.data())
def test_order_by_names_one_column_or_several_in_turn(columns: list[str],
                                                      data: st.DataObject) -> None:
    key, *rest = columns
    order = data.draw(st.lists(st.sampled_from(rest), min_size=1, unique=True))
    spec = merge_spec([key], None, order, format="delta", mode="append", columns=columns)
    assert spec is not None and spec.order_columns == tuple(order)
    assert spec.order_by == (order[0] if len(order) == 1 else tuple(order))
    with pytest.raises(ConfigError, match="order_by names a column twice"):
        merge_spec([key], None, [order[0], order[0]], format="delta", mode="append",
                   columns=columns)
    with pytest.raises(ConfigError, match=f"order_by column '{key}' is a merge key"):
        merge_spec([key], None, [*order, key], format="delta", mode="append", columns=columns)
    with pytest.raises(ConfigError, match="at least one column"):
        merge_spec([key], None, [], format="delta", mode="append", columns=columns)


rows_st = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 4)),
                             st.one_of(st.none(), st.integers(0, 3)),
                             st.integers(0, 2)), max_size=12)


@settings(deadline=None)  # the first example imports pyarrow
@given(rows=rows_st, ordered=st.booleans(), two=st.booleans())
def test_latest_row_per_key_on_arrow_matches_the_rule(rows: list[tuple[Any, Any, int]],
                                                      ordered: bool, two: bool) -> None:
    """The driver-side "latest wins" (``_latest_arrow``) against the rule written plainly:
    per key, the rows with the greatest order value (nulls skipped unless all are null) win;
    more than one winner, or several rows without an order, fails naming the key."""
    import pyarrow as pa

    from lakemark.sinks._location import resolve_target
    from lakemark.sinks._merge import _latest_arrow

    order = (["ts", "seq"] if two else "ts") if ordered else None
    spec = MergeSpec(("id",), None, tuple(order) if isinstance(order, list) else order)
    data = pa.table({"id": [r[0] for r in rows], "ts": [r[1] for r in rows],
                     "seq": [r[2] for r in rows], "n": list(range(len(rows)))},
                    schema=pa.schema([("id", pa.int64()), ("ts", pa.int64()),
                                      ("seq", pa.int64()), ("n", pa.int64())]))
    expected: dict[Any, int] = {}
    clash = set()
    for key in {r[0] for r in rows}:
        mine = [(i, r) for i, r in enumerate(rows) if r[0] == key]
        if not ordered:
            winners = mine
        else:
            def rank(r: tuple[Any, Any, int]) -> tuple[Any, ...]:
                # Spark's max over (ts[, seq]): a null ts sorts below every value
                return ((r[1] is not None, r[1] or 0),) + ((r[2],) if two else ())
            best = max(rank(r) for _, r in mine)
            winners = [(i, r) for i, r in mine if rank(r) == best]
        if len(winners) > 1:
            clash.add(key)
        else:
            expected[key] = winners[0][0]
    target = resolve_target("/tmp/lakemark-merge-spec")
    if clash:
        with pytest.raises(SinkError, match=r"key id=(\d+|None) (has two rows|occurs more)") \
                as err:
            _latest_arrow(data, spec, target)
        assert any(f"id={k!r} " in str(err.value) for k in clash)
        return
    got = _latest_arrow(data, spec, target).to_pylist()
    assert {r["id"]: r["n"] for r in got} == expected and len(got) == len(expected)
