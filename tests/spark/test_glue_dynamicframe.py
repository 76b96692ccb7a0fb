"""DynamicFrame and DynamicFrameCollection on a real local Spark session."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from lakemark.errors import ConfigError, UnsupportedError
from lakemark.glue._choicetype import members
from lakemark.glue._fieldpaths import ELEM, format_path, parse_path
from lakemark.glue.dynamicframe import DynamicFrame, DynamicFrameCollection

pytestmark = pytest.mark.spark

PEOPLE_SCHEMA = (
    "id int, Name string, `a.b` string, `x y` int, "
    "addr struct<city: string, zip: string, geo: struct<lat: double, lon: double>>, "
    "tags array<string>, items array<struct<sku: string, price: string>>, blank string"
)
PEOPLE_ROWS: list[tuple[Any, ...]] = [
    (1, "Ann", "dot1", 10, ("Oslo", "0150", (59.9, 10.7)), ["a", "b"],
     [("s1", "1.5"), ("s2", "x")], None),
    (2, "Bob", "dot2", 20, None, None, [], None),
    (3, "Cid", None, None, ("Rome", "00100", None), [], [("s3", "3")], None),
]


@pytest.fixture(scope="module")
def people(spark):  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(PEOPLE_ROWS, PEOPLE_SCHEMA).coalesce(1)
    return DynamicFrame.fromDF(df, None, "people")


def rows(frame: DynamicFrame, order: str = "id") -> list[dict[str, Any]]:
    df = frame.toDF()
    if order in df.columns:
        df = df.orderBy(order)
    return [r.asDict(recursive=True) for r in df.collect()]


# ------------------------------------------------------------------------------- field paths

def test_parse_path_dotted_quoted_and_arrays() -> None:
    assert parse_path("a.b.c") == ("a", "b", "c")
    assert parse_path("`a.b`.c") == ("a.b", "c")
    assert parse_path("`x y`") == ("x y",)
    assert parse_path("`we``ird`.z") == ("we`ird", "z")
    assert parse_path("items[].price", arrays=True) == ("items", ELEM, "price")
    assert format_path(("a.b", "c", ELEM, "x y")) == "`a.b`.c[].`x y`"
    for bad in ("", "a..b", "a.", "`open", "a[].b"):
        with pytest.raises(ConfigError):
            parse_path(bad)


# ------------------------------------------------------------------------ wrapping and access

def test_wraps_a_dataframe_and_hands_it_back(people: DynamicFrame, capsys) -> None:  # type: ignore[no-untyped-def]
    df = people.toDF()
    assert DynamicFrame(df, None, "n").toDF() is df
    assert people.name == "people" and people.glue_ctx is None
    assert people.count() == 3
    assert people.schema() == df.schema
    assert people.getNumPartitions() == 1
    assert people.repartition(3).getNumPartitions() == 3
    assert people.repartition(3).coalesce(2).getNumPartitions() == 2
    assert people.coalesce(4, shuffle=True, transformation_ctx="c").getNumPartitions() == 4
    people.show(2)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and json.loads(out[0])["Name"] == "Ann"
    people.printSchema()
    assert "addr" in capsys.readouterr().out


def test_rejects_what_it_does_not_provide(people: DynamicFrame) -> None:
    with pytest.raises(UnsupportedError, match="pyspark DataFrame"):
        DynamicFrame(object(), None)
    with pytest.raises(UnsupportedError, match="unnest_ddb_json"):
        people.unnest_ddb_json()
    with pytest.raises(ConfigError, match="toDF option .* needs a path"):
        people.toDF([("a", "cast:int")])
    with pytest.raises(AttributeError):
        people.withColumn  # noqa: B018 - DataFrame methods are not proxied
    with pytest.raises(UnsupportedError, match="DynamicFrame.write"):
        people.write("s3", {"path": "/tmp/x"})


def test_write_goes_through_the_glue_context(people: DynamicFrame) -> None:
    seen: dict[str, Any] = {}

    class Ctx:
        def write_dynamic_frame_from_options(self, **kwargs: Any) -> Any:
            seen.update(kwargs)
            return kwargs["frame"]

    frame = DynamicFrame(people.toDF(), Ctx(), "w")
    assert frame.write("s3", {"path": "s3://b/p"}, "json") is frame
    assert seen["connection_type"] == "s3" and seen["format"] == "json"


# ----------------------------------------------------------------------------- apply_mapping

def test_apply_mapping_renames_casts_nests_and_keeps_only_mapped(people: DynamicFrame) -> None:
    out = people.apply_mapping(
        [
            ("id", "int", "person_id", "long"),
            ("name", "string", "who.name", "string"),           # case-insensitive source
            ("`a.b`", "string", "who.`dotted.key`", "string"),  # back-quoted dotted names
            ("`x y`", "int", "score", "string"),
            ("addr.city", "string", "where.city", "string"),
            ("addr.geo.lat", "double", "where.lat", "decimal(6,2)"),
            ("tags", "array", "labels", "array"),
            ("items", "array"),                                 # invalid arity below
        ][:-1] + [("addr", "addr_copy")],
        transformation_ctx="map1",
    )
    assert out.transformation_ctx == "map1"
    assert out.toDF().schema.simpleString() == (
        "struct<person_id:bigint,who:struct<name:string,dotted.key:string>,score:string,"
        "where:struct<city:string,lat:decimal(6,2)>,labels:array<string>,"
        "addr_copy:struct<city:string,zip:string,geo:struct<lat:double,lon:double>>>"
    )
    got = rows(out, "person_id")
    assert got[0]["who"] == {"name": "Ann", "dotted.key": "dot1"}
    assert got[0]["score"] == "10" and str(got[0]["where"]["lat"]) == "59.90"
    assert got[1]["where"] == {"city": None, "lat": None} and got[1]["labels"] is None
    assert got[2]["addr_copy"]["zip"] == "00100"


def test_apply_mapping_unconvertible_values_become_null(people: DynamicFrame) -> None:
    out = people.apply_mapping([("Name", "string", "n", "int"), ("id", "int", "id", "int")])
    assert [r["n"] for r in rows(out)] == [None, None, None]


def test_apply_mapping_missing_source_yields_no_field_and_warns(people: DynamicFrame,
                                                                 caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.WARNING, logger="lakemark.glue"):
        out = people.apply_mapping([("id", "int", "id", "int"),
                                    ("nope.x", "string", "y", "string")])
    assert out.toDF().columns == ["id"]
    assert "nope.x" in caplog.text


def test_apply_mapping_case_sensitive_and_bad_mappings(people: DynamicFrame) -> None:
    out = people.apply_mapping([("name", "string", "n", "string"), ("id", "int", "id", "int")],
                               case_sensitive=True)
    assert out.toDF().columns == ["id"]
    with pytest.raises(UnsupportedError, match="3 parts"):
        people.apply_mapping([("id", "id", "int")])
    with pytest.raises(UnsupportedError, match="'geography'"):
        people.apply_mapping([("id", "int", "id", "geography")])
    with pytest.raises(ConfigError, match="given twice"):
        people.apply_mapping([("id", "int", "a", "int"), ("Name", "string", "a", "string")])
    with pytest.raises(ConfigError, match="both a value and a struct"):
        people.apply_mapping([("id", "int", "a", "int"), ("Name", "string", "a.b", "string")])


# ---------------------------------------------------------------- select / drop / rename / unnest

def test_select_fields_nested_and_missing(people: DynamicFrame) -> None:
    out = people.select_fields(["id", "addr.geo.lat", "`x y`", "nope"])
    assert out.schema().simpleString() == \
        "struct<id:int,x y:int,addr:struct<geo:struct<lat:double>>>"
    got = rows(out)
    assert got[0]["addr"] == {"geo": {"lat": 59.9}}
    assert got[1]["addr"] is None and got[2]["addr"] == {"geo": None}


def test_drop_fields_top_nested_quoted_and_in_arrays(people: DynamicFrame) -> None:
    out = people.drop_fields(["Name", "`a.b`", "addr.geo.lon", "addr.zip", "items[].price",
                              "missing.field"])
    schema = out.schema().simpleString()
    assert schema == ("struct<id:int,x y:int,addr:struct<city:string,geo:struct<lat:double>>,"
                      "tags:array<string>,items:array<struct<sku:string>>,blank:string>")
    got = rows(out)
    assert got[0]["items"] == [{"sku": "s1"}, {"sku": "s2"}]
    assert got[1]["addr"] is None


def test_rename_field_top_nested_in_place_and_moved(people: DynamicFrame) -> None:
    out = people.rename_field("`a.b`", "ab").rename_field("addr.city", "addr.town")
    assert out.schema().fieldNames()[:3] == ["id", "Name", "ab"]
    assert out.schema()["addr"].dataType.fieldNames() == ["town", "zip", "geo"]
    moved = people.rename_field("addr.geo.lat", "latitude").rename_field("`x y`", "meta.score")
    names = moved.schema().fieldNames()
    assert "latitude" in names and "x y" not in names
    assert moved.schema()["addr"].dataType["geo"].dataType.fieldNames() == ["lon"]
    got = rows(moved)
    assert got[0]["latitude"] == 59.9 and got[0]["meta"] == {"score": 10}
    nested_new = people.rename_field("id", "addr.pid")
    assert rows(nested_new, "Name")[0]["addr"]["pid"] == 1
    assert people.rename_field("no_such", "x").schema() == people.schema()
    with pytest.raises(ConfigError, match="already exists"):
        people.rename_field("Name", "ID")
    with pytest.raises(ConfigError, match="already exists"):
        people.rename_field("addr.city", "addr.zip")


def test_unnest_flattens_structs_with_dotted_names(people: DynamicFrame) -> None:
    out = people.unnest()
    assert out.toDF().columns == ["id", "Name", "a.b", "x y", "addr.city", "addr.zip",
                                  "addr.geo.lat", "addr.geo.lon", "tags", "items", "blank"]
    assert rows(out)[0]["addr.geo.lon"] == 10.7


def test_drop_null_fields(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(
        [(1, None, (None, 2), None), (2, None, (None, None), None)],
        "id int, empty string, s struct<gone: string, kept: int>, z void",
    )
    out = DynamicFrame.fromDF(df, None, "n").drop_null_fields()
    assert out.schema().simpleString() == "struct<id:int,s:struct<kept:int>>"


# --------------------------------------------------------------------------------- resolveChoice

def test_resolve_choice_specs(people: DynamicFrame) -> None:
    out = people.resolveChoice(specs=[
        ("id", "cast:string"),
        ("`x y`", "project:double"),
        ("Name", "make_cols"),
        ("addr.zip", "make_struct"),
        ("items[].price", "cast:double"),
        ("addr.geo.lat", "make_cols"),
        ("missing", "cast:int"),
    ])
    s = out.schema()
    assert s["id"].dataType.simpleString() == "string"
    assert s["x y"].dataType.simpleString() == "double"
    assert "Name_string" in s.fieldNames() and "Name" not in s.fieldNames()
    assert s["addr"].dataType["zip"].dataType.simpleString() == "struct<string:string>"
    assert s["addr"].dataType["geo"].dataType.fieldNames() == ["lat_double", "lon"]
    got = rows(out.resolveChoice(specs=[("id", "cast:int")]))
    assert got[0]["items"] == [{"sku": "s1", "price": 1.5}, {"sku": "s2", "price": None}]
    assert got[0]["addr"]["zip"] == {"string": "0150"}


def test_resolve_choice_errors_and_choice(people: DynamicFrame) -> None:
    with pytest.raises(UnsupportedError, match="'flatten'"):
        people.resolveChoice(specs=[("id", "flatten")])
    with pytest.raises(ConfigError, match="not both"):
        people.resolveChoice(specs=[("id", "cast:int")], choice="make_cols")
    with pytest.raises(UnsupportedError, match="'money'"):
        people.resolveChoice(specs=[("id", "cast:money")])
    with pytest.raises(ConfigError, match="data catalog"):
        people.resolveChoice(choice="match_catalog", database="db", table_name="t")
    assert people.resolveChoice(choice="make_cols").schema() == people.schema()


def test_resolve_choice_match_catalog_uses_the_context_catalog(people: DynamicFrame) -> None:
    class Table:
        def spark_ddl(self, include_partition_keys: bool = True) -> str:
            return "ID bigint, `x y` string, other int"

    class Catalog:
        def get_table(self, database: str, table_name: str) -> Table:
            assert (database, table_name) == ("db", "people")
            return Table()

    class Ctx:
        def catalog(self) -> Catalog:
            return Catalog()

    frame = DynamicFrame(people.toDF(), Ctx(), "p")
    out = frame.resolveChoice(choice="match_catalog", database="db", table_name="people")
    s = out.schema()
    assert s["id"].dataType.simpleString() == "bigint"
    assert s["x y"].dataType.simpleString() == "string"
    assert s["Name"].dataType.simpleString() == "string"
    assert "other" not in s.fieldNames()


# --------------------------------------------------------------------------------------- unbox

def test_unbox_json_inferred_and_with_schema_and_csv(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(
        [(1, '{"a": 1, "b": {"c": "x"}}', "1,foo"), (2, '{"a": 2}', "2,bar"), (3, None, None)],
        "id int, js string, line string",
    )
    frame = DynamicFrame.fromDF(df, None, "u")
    out = frame.unbox("js", "json")
    assert out.schema()["js"].dataType.simpleString() == "struct<a:bigint,b:struct<c:string>>"
    got = rows(out)
    assert got[0]["js"] == {"a": 1, "b": {"c": "x"}} and got[2]["js"] is None
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "a", "type": "string", "nullable": True, "metadata": {}}]})
    assert rows(frame.unbox("js", "json", withSchema=schema))[1]["js"] == {"a": "2"}
    csv = frame.unbox("line", "csv", separator=",")
    assert csv.schema()["line"].dataType.simpleString() == "struct<col0:int,col1:string>"
    assert rows(csv)[1]["line"] == {"col0": 2, "col1": "bar"}
    arrays = DynamicFrame.fromDF(spark.createDataFrame(
        [(['{"q": 1}', '{"q": 2}'],)], "docs array<string>"), None, "a").unbox("docs[]", "json")
    assert arrays.schema().simpleString() == "struct<docs:array<struct<q:bigint>>>"
    assert rows(arrays)[0]["docs"] == [{"q": 1}, {"q": 2}]
    with pytest.raises(UnsupportedError, match="'xml'"):
        frame.unbox("js", "xml")
    with pytest.raises(UnsupportedError, match="rowTag"):
        frame.unbox("js", "json", rowTag="x")
    with pytest.raises(ConfigError, match="not a string"):
        frame.unbox("id", "json")


# --------------------------------------------------------------------------- join / union / split

def test_join_on_two_keys_keeps_both_sides(spark) -> None:  # type: ignore[no-untyped-def]
    left = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, "a", "x"), (1, "b", "y"), (2, "a", "z"), (None, "a", "n")],
        "id int, k string, lv string"), None, "l")
    right = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, "a", 10), (2, "a", 20), (2, "b", 30), (None, "a", 0)],
        "rid int, rk string, rv int"), None, "r")
    out = left.join(["id", "k"], ["rid", "rk"], right, transformation_ctx="j")
    got = sorted((r["id"], r["k"], r["lv"], r["rv"]) for r in rows(out))
    assert got == [(1, "a", "x", 10), (2, "a", "z", 20)]
    assert out.toDF().columns == ["id", "k", "lv", "rid", "rk", "rv"]
    same = left.join("id", "id", left.select_fields(["id", "lv"]))
    assert same.toDF().columns == ["id", "k", "lv", ".id"]  # a shared non-key field once
    with pytest.raises(ConfigError, match="'nope'"):
        left.join(["nope"], ["rid"], right)
    with pytest.raises(ConfigError, match="as many keys"):
        left.join(["id", "k"], ["rid"], right)


def test_union_by_name_with_missing_and_conflicting_fields(spark) -> None:  # type: ignore[no-untyped-def]
    a = DynamicFrame.fromDF(spark.createDataFrame([(1, "x", 1)], "id int, v string, n int"), None,
                            "a")
    b = DynamicFrame.fromDF(spark.createDataFrame([(2, 5, 2.5)], "id long, v int, n double"), None,
                            "b")
    b2 = DynamicFrame.fromDF(spark.createDataFrame([("q", 3)], "extra string, id int"), None, "c")
    out = a.union(b).union(b2)
    schema = out.schema()
    assert [n for n, _ in members(schema["v"].dataType)] == ["int", "string"]  # Glue: a choice
    assert (schema["id"].dataType.simpleString(), schema["n"].dataType.simpleString(),
            schema.fieldNames()) == ("bigint", "double", ["id", "v", "n", "extra"])
    as_text = out.resolveChoice(specs=[("v", "cast:string")])
    assert sorted((r["id"], r["v"]) for r in rows(as_text)) == [(1, "x"), (2, "5"), (3, None)]
    split = out.resolveChoice(choice="make_cols")
    assert sorted((r["id"], r["v_int"], r["v_string"]) for r in rows(split)) == [
        (1, None, "x"), (2, 5, None), (3, None, None)]
    d = DynamicFrame.fromDF(spark.sql("select date'2024-01-02' as t, true as flag"), None, "d")
    ts = DynamicFrame.fromDF(spark.sql("select timestamp'2024-01-03 04:05:06' as t, 1 as flag"),
                             None, "t")
    mixed = d.union(ts)
    assert mixed.schema()["t"].dataType.simpleString() == "timestamp"
    assert [n for n, _ in members(mixed.schema()["flag"].dataType)] == ["int", "boolean"]
    flags = mixed.resolveChoice(specs=[("flag", "cast:string")]).toDF().collect()
    assert sorted(r["flag"] for r in flags) == ["1", "true"]


def test_split_fields_and_split_rows(people: DynamicFrame) -> None:
    dfc = people.split_fields(["id", "addr.city"], "picked", "rest")
    assert isinstance(dfc, DynamicFrameCollection) and dfc.keys() == ["picked", "rest"]
    assert dfc["picked"].schema().simpleString() == "struct<id:int,addr:struct<city:string>>"
    assert "id" not in dfc["rest"].schema().fieldNames()
    assert dfc["rest"].schema()["addr"].dataType.fieldNames() == ["zip", "geo"]
    split = people.split_rows({"`x y`": {">": 5, "<=": 10}}, "low", "other")
    assert [r["id"] for r in rows(split.select("low"))] == [1]
    assert [r["id"] for r in rows(split["other"])] == [2, 3]  # null x y goes to the rest
    with pytest.raises(UnsupportedError, match="'~'"):
        people.split_rows({"id": {"~": 1}}, "a", "b")
    with pytest.raises(ConfigError, match="'nope'"):
        people.split_rows({"nope": {">": 1}}, "a", "b")
    with pytest.raises(ConfigError, match="two different names"):
        people.split_fields(["id"], "same", "same")


# ------------------------------------------------------------------------------ spigot / errors

def test_spigot_writes_a_json_sample(people: DynamicFrame, tmp_path: Path) -> None:
    target = tmp_path / "sample"
    assert people.spigot(str(target), {"topk": 2}) is people
    lines = [json.loads(line) for p in sorted(target.glob("part-*"))
             for line in p.read_text().splitlines()]
    assert len(lines) == 2 and {"id", "Name"} <= set(lines[0])
    people.spigot(str(target), {"prob": 0.0})
    assert sum(len(p.read_text().splitlines()) for p in target.glob("part-*")) == 0
    with pytest.raises(UnsupportedError, match="sampleSize"):
        people.spigot(str(target), {"sampleSize": 3})


def test_plain_frames_have_no_error_records(people: DynamicFrame) -> None:
    assert people.errorsCount() == 0 and people.stageErrorsCount() == 0
    errors = people.errorsAsDynamicFrame()
    assert errors.count() == 0 and errors.toDF().columns == ["transformation", "error", "record"]


# -------------------------------------------------------------------------------- relationalize

def test_relationalize_flattens_and_pivots_nested_arrays(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(
        [
            (1, ("Ann", "Lee"), [("fax", ["1", "2"]), ("tel", [])], ["x"]),
            (2, None, None, []),
        ],
        "pid int, name struct<first: string, last: string>, "
        "contacts array<struct<type: string, phones: array<string>>>, tags array<string>",
    )
    dfc = DynamicFrame.fromDF(df, None, "src").relationalize("root", "/tmp/unused-staging")
    assert dfc.keys() == ["root", "root_contacts", "root_contacts.val.phones", "root_tags"]
    root = rows(dfc["root"], "pid")
    assert list(root[0]) == ["pid", "name.first", "name.last", "contacts", "tags"]
    assert root[0]["name.first"] == "Ann" and root[1]["contacts"] is None
    contacts = dfc.select("root_contacts").toDF()
    assert contacts.columns == ["id", "index", "contacts.val.type", "contacts.val.phones"]
    c = sorted((r["index"], r["contacts.val.type"], r["id"], r["contacts.val.phones"])
               for r in contacts.collect())
    assert [x[:2] for x in c] == [(0, "fax"), (1, "tel")]
    assert c[0][2] == root[0]["contacts"]
    phones = dfc["root_contacts.val.phones"].toDF()
    assert phones.columns == ["id", "index", "contacts.val.phones.val"]
    got = sorted((r["id"], r["index"], r["contacts.val.phones.val"]) for r in phones.collect())
    assert got == [(c[0][3], 0, "1"), (c[0][3], 1, "2")]
    tags = rows(dfc["root_tags"], "index")
    assert tags == [{"id": root[0]["tags"], "index": 0, "tags.val": "x"}]
    assert dfc["root_tags"].name == "root_tags"
    with pytest.raises(UnsupportedError, match="bogus"):
        DynamicFrame.fromDF(df, None, "src").relationalize("root", "/tmp/x", {"bogus": 1})


# ------------------------------------------------------------------------------------ collection

def test_collection_access_map_and_flatmap(people: DynamicFrame) -> None:
    a = people.select_fields(["id"])
    b = people.select_fields(["Name"])
    dfc = DynamicFrameCollection({"a": a, "b": b}, None)
    assert len(dfc) == 2 and list(dfc) == ["a", "b"] and "a" in dfc
    assert dfc.values() == [a, b] and dfc.select("b") is b
    with pytest.raises(ConfigError, match="'c'.*a, b"):
        dfc.select("c")
    seen: list[str] = []

    def rename(frame: DynamicFrame, ctx: str) -> DynamicFrame:
        seen.append(ctx)
        return frame.rename_field(frame.schema().fieldNames()[0], "only")

    mapped = dfc.map(rename, transformation_ctx="m")
    assert seen == ["m:a", "m:b"]
    assert [f.schema().fieldNames() for f in mapped.values()] == [["only"], ["only"]]
    flat = dfc.flatMap(lambda frame, ctx: frame.split_fields(
        frame.schema().fieldNames(), frame.name + "_x" if frame.name else "x", "y")
        if frame is a else frame)
    assert flat.keys() == ["people_x", "y", "b"]
    with pytest.raises(ConfigError):
        DynamicFrameCollection({"a": people.toDF()}, None)  # type: ignore[dict-item]


def test_join_of_a_shared_field_with_two_types_is_a_choice(spark) -> None:  # type: ignore[no-untyped-def]
    """Glue merges the records of a join; a shared field typed differently on the two sides
    becomes a choice that resolveChoice settles without losing a value."""
    left = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, "ABC0"), (2, "x2"), (3, None)], "id int, code string"), None, "l")
    right = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, None), (2, 22), (3, 33)], "rid int, code bigint"), None, "r")
    out = left.join(["id"], ["rid"], right)
    assert [n for n, _ in members(out.schema()["code"].dataType)] == ["long", "string"]
    cols = out.resolveChoice(specs=[("code", "make_cols")])
    assert cols.toDF().columns == ["id", "code_long", "rid", "code_string"]
    assert sorted((r["id"], r["code_long"], r["code_string"]) for r in rows(cols)) == [
        (1, None, "ABC0"), (2, 22, None), (3, 33, None)]
    assert sorted((r["id"], r["code"]) for r in rows(out.resolveChoice(choice="cast:string"))) \
        == [(1, "ABC0"), (2, "22"), (3, "33")]
    kept = out.filter(lambda rec: isinstance(rec["code"], str))
    assert [r["id"] for r in rows(kept)] == [1]
    assert out.toDF().schema["code"].dataType.simpleString() == "struct<long:bigint,string:string>"
