"""The pure schema-evolution decision (planning.schema), property-tested over random schemas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.schema import (EVOLUTION_MODES, Field, changes_between, decide,
                                      effective_evolution_mode, name_key, new_columns,
                                      normalize_evolution_mode)

RESERVED = ("_rescued_data", "_corrupt_record")
TYPES = st.sampled_from(["long", "string", "double", "boolean",
                         {"type": "array", "elementType": "long", "containsNull": True}])
NAMES = st.sampled_from(["id", "code", "Code", " code", "extra", "EXTRA", "name", "ts",
                         "_rescued_data", "a", "A", "b"])


def fields(names: list[str], types: list[object]) -> list[Field]:
    return [Field(n, t) for n, t in zip(names, types)]


@st.composite
def schemas(draw: st.DrawFn, unique: bool = False) -> list[Field]:
    names = draw(st.lists(NAMES, max_size=8))
    out: list[Field] = []
    keys: set[str] = set()
    for n in names:
        if unique and (name_key(n) in keys or name_key(n) in {name_key(r) for r in RESERVED}):
            continue
        if any(f.name == n for f in out):  # an observation's names are distinct
            continue
        keys.add(name_key(n))
        out.append(Field(n, draw(TYPES)))
    return out


@settings(max_examples=300, deadline=None)
@given(tracked=schemas(unique=True), observed=schemas(), mode=st.sampled_from(EVOLUTION_MODES))
def test_tracked_columns_keep_their_place_and_type(tracked: list[Field], observed: list[Field],
                                                   mode: str) -> None:
    d = decide(tracked, observed, mode, reserved=RESERVED)
    assert list(d.schema[:len(tracked)]) == tracked
    names = [name_key(f.name) for f in d.schema]
    assert len(names) == len(set(names)), "no two columns equal up to case"
    assert not {name_key(r) for r in RESERVED} & set(names)
    if mode != "addNewColumns":
        assert list(d.schema) == tracked and not d.changed
    else:
        assert [f.name for f in d.added] == list(d.new_columns)
        assert list(d.schema) == tracked + list(d.added)


@settings(max_examples=300, deadline=None)
@given(tracked=schemas(unique=True), observed=schemas(), mode=st.sampled_from(EVOLUTION_MODES))
def test_every_observed_column_is_read_rescued_or_ignored(tracked: list[Field],
                                                          observed: list[Field],
                                                          mode: str) -> None:
    d = decide(tracked, observed, mode, reserved=RESERVED)
    in_schema = {f.name: f.type for f in d.schema}
    for f in observed:
        if name_key(f.name) in {name_key(r) for r in RESERVED}:
            continue
        fits = f.name in in_schema and (f.type == in_schema[f.name] or f.type is None)
        assert fits or f.name in d.rescued_columns or f.name in d.ignored_columns \
            or (mode == "failOnNewColumns" and f.name in d.new_columns), (f, d)


@settings(max_examples=300, deadline=None)
@given(tracked=schemas(unique=True), observed=schemas())
def test_fail_on_new_columns_names_each_new_column(tracked: list[Field],
                                                   observed: list[Field]) -> None:
    d = decide(tracked, observed, "failOnNewColumns", reserved=RESERVED)
    fresh = new_columns(tracked, [f.name for f in observed], RESERVED)
    assert (d.error is not None) == bool(fresh)
    for name in fresh:
        assert d.error is not None and name in d.error
    ignored = decide(tracked, observed, "none", reserved=RESERVED)
    assert list(ignored.ignored_columns) == fresh and ignored.error is None


@settings(max_examples=300, deadline=None)
@given(tracked=schemas(unique=True), observed=schemas(), mode=st.sampled_from(EVOLUTION_MODES))
def test_a_decided_schema_is_stable(tracked: list[Field], observed: list[Field],
                                    mode: str) -> None:
    """Deciding again over the same observation changes nothing (a retry agrees)."""
    first = decide(tracked, observed, mode, reserved=RESERVED)
    again = decide(list(first.schema), observed, mode, reserved=RESERVED)
    assert again.schema == first.schema and not again.changed
    assert changes_between(first.schema, again.schema) == []


@settings(max_examples=200, deadline=None)
@given(observed=schemas(), mode=st.sampled_from(EVOLUTION_MODES))
def test_the_first_run_takes_the_observed_columns(observed: list[Field], mode: str) -> None:
    d = decide(None, observed, mode, reserved=RESERVED)
    assert d.error is None
    keys = [name_key(f.name) for f in d.schema]
    assert len(keys) == len(set(keys))
    assert [c["column"] for c in d.changes] == [f.name for f in d.schema]


def test_the_drifting_code_column() -> None:
    tracked = [Field("code", "long"), Field("name", "string")]
    observed = [Field("code", "string"), Field("name", "string"), Field("extra", "string"),
                Field("Name", "string")]
    d = decide(tracked, observed, "addNewColumns", reserved=RESERVED)
    assert [f.name for f in d.schema] == ["code", "name", "extra"]
    assert d.schema[0].type == "long"
    assert d.type_changes == ("code",) and set(d.rescued_columns) == {"code", "Name"}
    assert d.changes == ({"column": "extra", "change": "added", "type": "string"},)
    r = decide(tracked, observed, "rescue", reserved=RESERVED)
    assert list(r.schema) == tracked and "extra" in r.rescued_columns


def test_modes_are_matched_case_insensitively_and_bad_ones_named() -> None:
    assert normalize_evolution_mode("ADDNEWCOLUMNS") == "addNewColumns"
    with pytest.raises(ConfigError, match="'grow'.*addNewColumns, rescue"):
        normalize_evolution_mode("grow")


def test_new_columns_need_types_to_be_added() -> None:
    with pytest.raises(ConfigError, match="extra"):
        decide([Field("a", "long")], [Field("extra")], "addNewColumns")
    assert decide([Field("a", "long")], [Field("extra")], "rescue").rescued_columns == ("extra",)


@settings(max_examples=200, deadline=None)
@given(tracked=st.one_of(st.none(), schemas(unique=True)), observed=schemas(),
       hints=schemas(unique=True), mode=st.sampled_from(EVOLUTION_MODES))
def test_hints_type_the_columns_that_enter_and_never_retype_tracked_ones(
        tracked: list[Field] | None, observed: list[Field], hints: list[Field],
        mode: str) -> None:
    d = decide(tracked, observed, mode, reserved=RESERVED, hints=hints)
    by_key = {name_key(h.name): h.type for h in hints}
    if tracked is not None:
        assert list(d.schema[:len(tracked)]) == tracked
    entered = d.schema if tracked is None else d.added
    for f in entered:
        if name_key(f.name) in by_key:
            assert f.type == by_key[name_key(f.name)]
    if tracked is None:  # every hinted column is in the first schema
        assert set(by_key) <= {name_key(f.name) for f in d.schema}


def test_a_hint_types_a_column_over_inference() -> None:
    d = decide(None, [Field("id", "long"), Field("ts", "string")], "addNewColumns",
               hints=[Field("ts", "timestamp"), Field("amount", "decimal(12,2)")])
    assert list(d.schema) == [Field("id", "long"), Field("ts", "timestamp"),
                              Field("amount", "decimal(12,2)")]


@pytest.mark.parametrize(("mode", "kwargs", "expected"), [
    (None, {"format": "json", "ctx": "src", "schema_given": False}, "addNewColumns"),
    (None, {"format": "CSV", "ctx": "src", "schema_given": False}, "addNewColumns"),
    (None, {"format": "avro", "ctx": "src", "schema_given": False}, "addNewColumns"),
    (None, {"format": "xml", "ctx": "src", "schema_given": False}, "addNewColumns"),
    (None, {"format": "json", "ctx": None, "schema_given": False}, None),
    (None, {"format": "json", "ctx": "src", "schema_given": True}, None),
    (None, {"format": "parquet", "ctx": "src", "schema_given": False}, None),
    (None, {"format": "json", "ctx": "src", "schema_given": False, "read_mode": "FAILFAST"}, None),
    ("off", {"format": "json", "ctx": "src", "schema_given": False}, None),
    ("OFF", {"format": "json", "ctx": "src", "schema_given": False}, None),
    ("rescue", {"format": "json", "ctx": "src", "schema_given": False}, "rescue"),
    ("failonnewcolumns", {"format": "parquet", "ctx": None, "schema_given": True},
     "failOnNewColumns"),
])
def test_the_default_tracks_what_can_be_tracked(mode: str | None, kwargs: dict[str, object],
                                                expected: str | None) -> None:
    assert effective_evolution_mode(mode, **kwargs) == expected


def test_an_unknown_mode_names_the_choices_and_off() -> None:
    with pytest.raises(ConfigError, match=r"'sometimes'.*addNewColumns.*\(or off\)"):
        effective_evolution_mode("sometimes", format="json", ctx="c", schema_given=False)
