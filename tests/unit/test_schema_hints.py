"""Schema hints on nested fields (issue 23, item 4): the pure parsing and application
(``planning/schema_hints.py``) and how :func:`decide` takes them, without Spark."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.schema import Field, decide
from lakemark.planning.schema_hints import Hint, hinted_type, parse_hints, resolve_hints

ATOMS = ["long", "string", "double", "boolean", "timestamp", "decimal(12,2)", "integer"]


def struct(*fields: tuple[str, Any]) -> dict[str, Any]:
    return {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True,
                                          "metadata": {}} for n, t in fields]}


def array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


def mapping(key: Any, value: Any) -> dict[str, Any]:
    return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}


def hints(text: str, *types: Any) -> list[Hint]:
    return resolve_hints(parse_hints(text), types)


def at(type_: Any, path: list[str]) -> Any:
    """The type at ``path`` inside ``type_`` (names matched up to case)."""
    for name in path:
        if type_["type"] == "struct":
            type_ = next(f["type"] for f in type_["fields"] if f["name"].lower() == name.lower())
        elif type_["type"] == "array":
            type_ = type_["elementType"]
        else:
            type_ = type_["keyType" if name.lower() == "key" else "valueType"]
    return type_


# --- parsing ---------------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                max_size=8).filter(lambda s: s.strip() == s and s.strip())


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@settings(max_examples=100, deadline=None)
@given(paths=st.lists(st.lists(names, min_size=1, max_size=4), min_size=1, max_size=4),
       colon=st.booleans())
def test_any_backquoted_path_parses_back_to_its_names(paths: list[list[str]],
                                                      colon: bool) -> None:
    text = ", ".join(".".join(quote(n) for n in p) + (": " if colon else " ") + "map<string,int>"
                     for p in paths)
    parsed = parse_hints(text)
    assert [list(e.path) for e in parsed] == paths
    assert {e.type_text for e in parsed} == {"map<string,int>"}
    assert all(all(e.quoted) for e in parsed)


def test_auto_loader_spellings_parse() -> None:
    parsed = parse_hints("id bigint, payload.amount decimal(12, 2), a.b.c timestamp, "
                         "tags.element string, m.key string, m.value.n int, "
                         "`a.b`.c int, `my col` struct<x: int, y: array<int>>")
    assert [(e.path, e.type_text) for e in parsed] == [
        (("id",), "bigint"), (("payload", "amount"), "decimal(12, 2)"),
        (("a", "b", "c"), "timestamp"), (("tags", "element"), "string"),
        (("m", "key"), "string"), (("m", "value", "n"), "int"), (("a.b", "c"), "int"),
        (("my col",), "struct<x: int, y: array<int>>")]


@pytest.mark.parametrize(("text", "named"), [
    ("id bigint,", "stray comma"), ("id", "'id'"), ("a-b int", "'a-b int'"),
    ("a. int", "'a. int'"), ("`a int", "unbalanced quote"), ("a struct<x int", "brackets"),
    ("payload.amount", "'payload.amount'"), (" ", "non-empty")])
def test_a_malformed_hint_is_named(text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        parse_hints(text)


def test_conflicting_hints_are_named_and_a_repeat_counts_once() -> None:
    with pytest.raises(ConfigError, match="'s.a int' and 'S.A string' conflict"):
        hints("s.a int, S.A string", "integer", "string")
    with pytest.raises(ConfigError, match="'s struct<a: int>' and 's.b string' conflict"):
        hints("s struct<a: int>, s.b string", struct(("a", "integer")), "string")
    with pytest.raises(ConfigError, match="'t.element.x int' and 't.element long'"):
        hints("t.element.x int, t.element long", "integer", "long")
    assert len(hints("s.a int, s.a integer, s.b int", "integer", "integer", "integer")) == 2


# --- application -----------------------------------------------------------------------------

atoms = st.sampled_from(ATOMS)
field_names = st.sampled_from(["a", "b", "C", "amount", "element", "key"])


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(st.tuples(field_names, inner), min_size=1, max_size=3,
                 unique_by=lambda f: f[0].lower()).map(lambda fs: struct(*fs)),
        inner.map(array), inner.map(lambda value: mapping("string", value)))


#: A struct, array or map, nested up to three levels deep.
types = containers(st.one_of(atoms, containers(st.one_of(atoms, containers(atoms)))))


@st.composite
def type_and_path(draw: st.DrawFn) -> tuple[Any, list[str]]:
    """A type and a path that goes through it (possibly ending at a field it lacks)."""
    type_ = draw(types)
    path: list[str] = []
    here = type_
    while isinstance(here, dict) and (not path or draw(st.booleans())):
        if here["type"] == "struct":
            names_ = [f["name"] for f in here["fields"]] + ["new"]
            name = draw(st.sampled_from(names_))
            path.append(name.upper() if draw(st.booleans()) else name)
            if name == "new":
                break
            here = at(here, [name])
        elif here["type"] == "array":
            path.append("element")
            here = here["elementType"]
        else:
            side = draw(st.sampled_from(["key", "value"]))
            path.append(side)
            here = here["keyType" if side == "key" else "valueType"]
    return type_, path


@settings(max_examples=150, deadline=None)
@given(case=type_and_path(), hinted=atoms)
def test_a_nested_hint_types_its_field_and_nothing_else(case: tuple[Any, list[str]],
                                                        hinted: str) -> None:
    type_, path = case
    if path[-1] == "key":
        hinted = "string"  # a map's keys are text (a struct field named key: no matter)
    hint = Hint("col", hinted, tuple(path), (False,) * len(path))
    out = hinted_type(type_, [hint])
    assert at(out, path) == hinted
    assert hinted_type(out, [hint]) == out  # applying it again changes nothing
    # Every sibling on the way keeps its type.
    here, there = type_, out
    for name in path:
        if here["type"] == "struct":
            before = {f["name"]: f["type"] for f in here["fields"]}
            after = {f["name"]: f["type"] for f in there["fields"]}
            same = [n for n in before if n.lower() != name.lower()]
            assert {n: after[n] for n in same} == {n: before[n] for n in same}
            if not any(n.lower() == name.lower() for n in before):
                break
        elif here["type"] == "map":
            other = "valueType" if name == "key" else "keyType"
            assert there[other] == here[other]
        here, there = at(here, [name]), at(there, [name])


@settings(max_examples=100, deadline=None)
@given(path=st.lists(st.sampled_from(["a", "element", "value", "b"]), min_size=1,
                     max_size=4), hinted=atoms, key=st.booleans())
def test_a_hint_on_an_absent_column_makes_what_its_path_needs(path: list[str],
                                                             hinted: str, key: bool) -> None:
    if key:  # the keys of a map (text) at the end
        path, hinted = [*path, "key"], "string"
    out = hinted_type(None, [Hint("col", hinted, tuple(path), (False,) * len(path))])
    assert at(out, path) == hinted
    here = out
    for name in path:  # element: an array; key/value: a map; else a struct
        assert here["type"] == {"element": "array", "key": "map", "value": "map"}.get(
            name, "struct")
        here = at(here, [name])


def test_a_backquoted_element_is_a_struct_field_when_made_up() -> None:
    [hint] = hints("tags.`element` int", "integer")
    assert hinted_type(None, [hint]) == struct(("element", "integer"))


@pytest.mark.parametrize(("text", "type_", "message"), [
    ("id.x int", "long", "id is long, not a struct, array or map"),
    ("p.q.r int", struct(("q", "string")), "p.q is string"),
    ("tags.x int", array("string"), "tags is an array; name its elements tags.element"),
    ("m.x int", mapping("string", "long"), "m is a map; name its keys m.key"),
    ("m.key int", mapping("string", "long"), "map keys are text"),
    ("m.key int", None, "map keys are text"),
])
def test_a_path_through_a_field_that_has_none_is_refused(text: str, type_: Any,
                                                         message: str) -> None:
    with pytest.raises(ConfigError, match=f"schema hint '{text}': {message}"):
        hinted_type(type_, hints(text, "integer"))


# --- in the evolution decision ---------------------------------------------------------------

def test_first_run_types_inferred_nested_fields_and_makes_the_missing_ones() -> None:
    inferred = [Field("id", "long"),
                Field("payload", struct(("amount", "double"), ("note", "string"))),
                Field("tags", array("long"))]
    given_ = hints("payload.amount decimal(12,2), payload.at timestamp, tags.element string, "
                   "meta.src.host string, m.value int",
                   "decimal(12,2)", "timestamp", "string", "string", "integer")
    d = decide(None, inferred, "addNewColumns", hints=given_)
    assert list(d.schema) == [
        Field("id", "long"),
        Field("payload", struct(("amount", "decimal(12,2)"), ("note", "string"),
                                ("at", "timestamp"))),
        Field("tags", array("string")),
        Field("meta", struct(("src", struct(("host", "string"))))),
        Field("m", mapping("string", "integer"))]
    assert all(type(f) is Field for f in d.schema)  # hints do not leak into the schema


def test_a_tracked_column_keeps_its_type_and_a_new_one_takes_its_nested_hints() -> None:
    tracked = [Field("payload", struct(("amount", "double")))]
    given_ = hints("payload.amount decimal(12,2), extra.n int", "decimal(12,2)", "integer")
    d = decide(tracked, tracked + [Field("extra", struct(("n", "long"), ("s", "string")))],
               "addNewColumns", hints=given_)
    assert list(d.schema) == tracked + [Field("extra", struct(("n", "integer"),
                                                              ("s", "string")))]
    assert decide(tracked, tracked, "rescue", hints=given_).schema == tuple(tracked)


@pytest.mark.parametrize("tracked", [None, [Field("id", "long")]])
def test_a_hint_through_an_atomic_column_fails_first_and_later_runs(
        tracked: list[Field] | None) -> None:
    with pytest.raises(ConfigError, match="schema hint 'id.x int': id is long"):
        decide(tracked, [Field("id", "long")], "addNewColumns",
               hints=hints("id.x int", "integer"))


def test_a_case_variant_is_rescued_not_hinted() -> None:
    # Inference saw "p" (a struct) and "P" (a string): the hint applies to the kept column.
    d = decide(None, [Field("p", struct(("x", "long"))), Field("P", "string")],
               "addNewColumns", hints=hints("p.x int", "integer"))
    assert list(d.schema) == [Field("p", struct(("x", "integer")))]
    assert d.rescued_columns == ("P",)
