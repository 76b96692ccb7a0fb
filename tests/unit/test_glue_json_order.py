"""The field order of JSON records (issue 32): Glue lists a JSON frame's fields in the order
it meets them in the records, where Spark's inference sorts them by name."""

from __future__ import annotations

from lakemark.glue._jsonorder import field_order


def test_first_appearance_wins_at_every_level() -> None:
    text = "\n".join([
        '{"zeta": 1, "alpha": {"b": 1, "a": 2}, "items": [{"y": 1, "x": 2}]}',
        '{"new": true, "alpha": {"c": 3, "b": 0}, "zeta": 2}',
        '{"items": [{"w": 1}], "bad json',
    ])
    order = field_order([(text, True)])
    assert list(order) == ["zeta", "alpha", "items", "new"]
    assert list(order["alpha"]) == ["b", "a", "c"]
    assert list(order["items"]) == ["y", "x"]


def test_a_cut_sample_skips_its_last_line_and_multiline_documents() -> None:
    assert list(field_order([('{"b": 1, "a": 2}\n{"c": 1, "d"', False)])) == ["b", "a"]
    doc = '[{"q": 1, "p": 2}, {"r": 3}]'
    assert list(field_order([(doc, True)], multiline=True)) == ["q", "p", "r"]
    assert field_order([(doc[:10], False)], multiline=True) == {}
