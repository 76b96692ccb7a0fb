"""Fields added inside a tracked column (planning/schema_nested.py, planning/schema.py): pure
Python, no JVM. ``address {city}`` observed as ``address {city, zip}`` is a new field named by
its path, never a silent change."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.planning.schema import Field, changes_between, decide
from lakemark.planning.schema_nested import (additions, holds_structs, path_text, with_fields,
                                             with_paths)


def struct(**fields: Any) -> dict[str, Any]:
    return {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True,
                                          "metadata": {}} for n, t in fields.items()]}


def array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


def mapping(value: Any) -> dict[str, Any]:
    return {"type": "map", "keyType": "string", "valueType": value,
            "valueContainsNull": True}


OLD = struct(city="string", items=array(struct(sku="string")), m=mapping(struct(n="long")))
NEW = struct(city="string", items=array(struct(sku="string", qty="long")),
             m=mapping(struct(n="long", unit="string")), zip="string")


def test_additions_walk_structs_arrays_and_maps() -> None:
    found = additions(OLD, NEW, ("address",))
    assert [(path_text(p), t) for p, t in found] == [
        ("address.items.element.qty", "long"), ("address.m.value.unit", "string"),
        ("address.zip", "string")]
    assert with_fields(OLD, [(p[1:], t) for p, t in found]) == NEW


def test_a_case_variant_and_a_type_change_are_not_additions() -> None:
    assert additions(struct(city="string"), struct(City="string", city="string")) == []
    assert additions(struct(city="string"), struct(city="long")) == []
    assert additions(array("long"), array("string")) == []
    assert additions("string", struct(a="long")) == []


def test_with_paths_types_from_the_observed_type_else_string() -> None:
    observed = struct(city="string", zip="long", geo=struct(lat="double"))
    grown = with_paths(struct(city="string"), [("zip",), ("geo",), ("odd",)], observed)
    assert grown == struct(city="string", zip="long", geo=struct(lat="double"), odd="string")
    assert with_paths(struct(city="string"), [("city",)]) == struct(city="string")


def test_with_paths_reads_a_map_value_from_the_structs_inference_made() -> None:
    """JSON inference makes a map column's objects a struct: its fields are the values."""
    observed = struct(k0=struct(n="long"), k1=struct(n="long", f=struct(x="long")))
    grown = with_paths(mapping(struct(n="long")), [("value", "f")], observed)
    assert grown == mapping(struct(n="long", f=struct(x="long")))


def test_path_text_quotes_names_that_need_it() -> None:
    assert path_text(("a.b", "c d", "x`y", "ok")) == "`a.b`.`c d`.`x``y`.ok"
    assert holds_structs(mapping(array(struct(a="long")))) and not holds_structs(array("long"))


@pytest.mark.parametrize("mode", ["addNewColumns", "rescue", "failOnNewColumns", "none"])
def test_decide_treats_nested_fields_as_the_mode_treats_new_columns(mode: str) -> None:
    tracked = [Field("id", "long"), Field("address", OLD)]
    decision = decide(tracked, [Field("id", "long"), Field("address", NEW)], mode)
    paths = ("address.items.element.qty", "address.m.value.unit", "address.zip")
    assert decision.new_fields == paths
    assert decision.type_changes == ()
    if mode == "addNewColumns":
        assert decision.changed and decision.added_fields == paths
        assert dict((f.name, f.type) for f in decision.schema)["address"] == NEW
        assert [c["column"] for c in decision.changes] == list(paths)
        assert decision.changes[-1]["path"] == ["address", "zip"]
    else:
        assert not decision.changed and list(decision.schema) == tracked
    if mode == "failOnNewColumns":
        assert decision.error is not None
        assert "new nested field(s) address.items.element.qty" in decision.error
    if mode == "none":
        assert decision.ignored_fields == paths


def test_a_hint_types_a_new_nested_field_and_leaves_tracked_fields_alone() -> None:
    from lakemark.planning.schema_hints import Hint

    tracked = [Field("address", struct(city="string"))]
    observed = [Field("address", struct(city="string", zip="long", geo=struct(lat="string")))]
    hints = [Hint("address", "string", ("zip",), (False,)),
             Hint("address", "double", ("geo", "lat"), (False, False)),
             Hint("address", "long", ("city",), (False,))]
    decision = decide(tracked, observed, "addNewColumns", hints=hints)
    assert decision.schema[0].type == struct(city="string", zip="string",
                                             geo=struct(lat="double"))
    assert decision.added_fields == ("address.zip", "address.geo")


def test_changes_between_lists_fields_added_inside_by_path() -> None:
    changes = changes_between([Field("a", struct(x="long"))],
                              [Field("a", struct(x="long", y=array(struct(z="long"))))])
    assert changes == [{"column": "a.y", "path": ["a", "y"], "change": "added",
                        "type": array(struct(z="long"))}]


names = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def types(draw: Any, depth: int = 0) -> Any:
    if depth >= 3:
        return draw(st.sampled_from(["long", "string"]))
    kind = draw(st.sampled_from(["atom", "struct", "array", "map"]))
    if kind == "atom":
        return draw(st.sampled_from(["long", "string"]))
    if kind == "array":
        return array(draw(types(depth + 1)))
    if kind == "map":
        return mapping(draw(types(depth + 1)))
    keys = draw(st.lists(names, unique=True, max_size=3))
    return struct(**{k: draw(types(depth + 1)) for k in keys})


def _drop(type_: Any, data: Any) -> Any:
    """``type_`` with some struct fields removed at any depth."""
    if isinstance(type_, dict) and type_["type"] == "struct":
        kept = [f for f in type_["fields"] if data.draw(st.booleans())]
        return {**type_, "fields": [{**f, "type": _drop(f["type"], data)} for f in kept]}
    if isinstance(type_, dict) and type_["type"] == "array":
        return {**type_, "elementType": _drop(type_["elementType"], data)}
    if isinstance(type_, dict) and type_["type"] == "map":
        return {**type_, "valueType": _drop(type_["valueType"], data)}
    return type_


def _leaves(type_: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if isinstance(type_, dict) and type_["type"] == "struct":
        return {p for f in type_["fields"] for p in _leaves(f["type"], (*path, f["name"]))}
    if isinstance(type_, dict) and type_["type"] == "array":
        return _leaves(type_["elementType"], (*path, "element"))
    if isinstance(type_, dict) and type_["type"] == "map":
        return _leaves(type_["valueType"], (*path, "value"))
    return {path}


@settings(max_examples=200, deadline=None)
@given(full=types(), data=st.data())
def test_evolving_an_older_type_keeps_every_leaf_of_the_newer_one(full: Any, data: Any) -> None:
    """Whatever was dropped from a type, adding what the full type adds gives every leaf
    back: under addNewColumns no nested field can be missed."""
    older = _drop(full, data)
    grown = with_fields(older, additions(older, full))
    assert _leaves(full) <= _leaves(grown)
