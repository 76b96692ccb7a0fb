"""Glue's transform classes (awsglue.transforms) and record functions on a real Spark session."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from lakemark.errors import ConfigError, UnsupportedError
from lakemark.glue import transforms as T
from lakemark.glue._choicetype import members
from lakemark.glue.dynamicframe import DynamicFrame, DynamicFrameCollection

pytestmark = pytest.mark.spark

ORDERS_SCHEMA = ("order_id string, customer struct<id: int, `first name`: string>, "
                 "amount string, qty int, note string")
ORDERS = [
    ("o1", (1, "Ann"), "10.5", 2, None),
    ("o2", (2, "Bob"), "oops", 0, None),
    ("o3", (1, "Ann"), "7", 5, None),
]


@pytest.fixture(scope="module")
def orders(spark):  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ORDERS, ORDERS_SCHEMA).coalesce(1)
    return DynamicFrame.fromDF(df, None, "orders")


def rows(frame: DynamicFrame, order: str = "order_id") -> list[dict[str, Any]]:
    df = frame.toDF()
    if order in df.columns:
        df = df.orderBy(order)
    return [r.asDict(recursive=True) for r in df.collect()]


# Glue's documented __call__ parameters, in order.
GLUE_SIGNATURES = {
    "ApplyMapping": ["frame", "mappings", "transformation_ctx", "info", "stageThreshold",
                     "totalThreshold"],
    "SelectFields": ["frame", "paths", "transformation_ctx", "info", "stageThreshold",
                     "totalThreshold"],
    "DropFields": ["frame", "paths", "transformation_ctx", "info", "stageThreshold",
                   "totalThreshold"],
    "RenameField": ["frame", "old_name", "new_name", "transformation_ctx", "info",
                    "stageThreshold", "totalThreshold"],
    "Filter": ["frame", "f", "transformation_ctx", "info", "stageThreshold", "totalThreshold"],
    "Map": ["frame", "f", "transformation_ctx", "info", "stageThreshold", "totalThreshold"],
    "Join": ["frame1", "frame2", "keys1", "keys2", "transformation_ctx"],
    "Relationalize": ["frame", "staging_path", "name", "options", "transformation_ctx", "info",
                      "stageThreshold", "totalThreshold"],
    "ResolveChoice": ["frame", "specs", "choice", "database", "table_name",
                      "transformation_ctx", "info", "stageThreshold", "totalThreshold"],
    "DropNullFields": ["frame", "transformation_ctx", "info", "stageThreshold",
                       "totalThreshold"],
    "SplitFields": ["frame", "paths", "name1", "name2", "transformation_ctx", "info",
                    "stageThreshold", "totalThreshold"],
    "SplitRows": ["frame", "comparison_dict", "name1", "name2", "transformation_ctx", "info",
                  "stageThreshold", "totalThreshold"],
    "Unbox": ["frame", "path", "format", "transformation_ctx", "info", "stageThreshold",
              "totalThreshold"],
    "UnnestFrame": ["frame", "transformation_ctx", "info", "stageThreshold", "totalThreshold"],
    "Spigot": ["frame", "path", "options", "transformation_ctx"],
    "SelectFromCollection": ["dfc", "key", "transformation_ctx"],
    "FlatMap": ["dfc", "BaseTransform", "frame_name", "transformation_ctx"],
    "ErrorsAsDynamicFrame": ["frame"],
}


def test_star_import_and_glue_keyword_names() -> None:
    namespace: dict[str, Any] = {}
    exec("from lakemark.glue.transforms import *", namespace)  # noqa: S102
    for name in [*GLUE_SIGNATURES, "Union", "MapToCollection", "FindMatches"]:
        assert name in namespace, name
    for name, expected in GLUE_SIGNATURES.items():
        params = [p for p in inspect.signature(getattr(T, name).__call__).parameters
                  if p != "self"]
        assert params[:len(expected)] == expected, name
        assert getattr(T, name).name() == name


def test_apply_mapping_transform_both_call_styles(orders: DynamicFrame) -> None:
    mappings = [("order_id", "string", "id", "string"),
                ("customer.`first name`", "string", "buyer.name", "string"),
                ("amount", "string", "amount", "double")]
    via_apply = T.ApplyMapping.apply(frame=orders, mappings=mappings, transformation_ctx="am")
    via_call = T.ApplyMapping()(orders, mappings)
    assert via_apply.transformation_ctx == "am"
    assert via_apply.schema() == via_call.schema()
    assert via_apply.schema().simpleString() == \
        "struct<id:string,buyer:struct<name:string>,amount:double>"
    assert [r["amount"] for r in rows(via_apply, "id")] == [10.5, None, 7.0]


def test_field_transforms(orders: DynamicFrame) -> None:
    picked = T.SelectFields.apply(frame=orders, paths=["order_id", "customer.id"])
    assert picked.schema().simpleString() == "struct<order_id:string,customer:struct<id:int>>"
    dropped = T.DropFields.apply(frame=orders, paths=["customer.`first name`", "note"])
    assert dropped.schema().simpleString() == \
        "struct<order_id:string,customer:struct<id:int>,amount:string,qty:int>"
    renamed = T.RenameField.apply(frame=orders, old_name="customer.`first name`",
                                  new_name="customer.first")
    assert renamed.schema()["customer"].dataType.fieldNames() == ["id", "first"]
    flat = T.UnnestFrame.apply(frame=orders)
    assert flat.toDF().columns[:3] == ["order_id", "customer.id", "customer.first name"]
    no_nulls = T.DropNullFields.apply(frame=orders)
    assert "note" not in no_nulls.schema().fieldNames() and "qty" in no_nulls.schema().fieldNames()
    resolved = T.ResolveChoice.apply(frame=orders, specs=[("amount", "cast:double")])
    assert resolved.schema()["amount"].dataType.simpleString() == "double"
    with pytest.raises(UnsupportedError, match="'explode'"):
        T.ResolveChoice.apply(frame=orders, specs=[("amount", "explode")])


# ------------------------------------------------------------------------------- Map and Filter

def test_map_adds_and_removes_keys_and_keeps_types(orders: DynamicFrame) -> None:
    def enrich(rec: dict[str, Any]) -> dict[str, Any]:
        rec["total"] = rec["qty"] * 1.5 if rec["qty"] else 0  # int for one record, float others
        rec["customer"]["tier"] = "gold" if rec["customer"]["id"] == 1 else None
        rec["tags"] = [rec["order_id"], "x"]
        del rec["note"]
        return rec

    out = T.Map.apply(frame=orders, f=enrich, transformation_ctx="m")
    schema = out.schema()
    assert schema.fieldNames() == ["order_id", "customer", "amount", "qty", "total", "tags"]
    assert schema["qty"].dataType.simpleString() == "int"  # the input's type is kept
    assert schema["total"].dataType.simpleString() == "double"
    assert schema["customer"].dataType.simpleString() == \
        "struct<id:int,first name:string,tier:string>"
    got = rows(out)
    assert got[0]["total"] == 3.0 and got[1]["total"] == 0.0
    assert got[0]["customer"] == {"id": 1, "first name": "Ann", "tier": "gold"}
    assert got[1]["customer"]["tier"] is None and got[2]["tags"] == ["o3", "x"]
    assert out.errorsCount() == 0


def test_map_with_a_number_in_some_records_and_text_in_others_makes_a_choice(
        orders: DynamicFrame) -> None:
    """Glue keeps both kinds of a Map result's field as a choice; nothing is turned to text."""
    def code(rec: dict[str, Any]) -> dict[str, Any]:
        return {"order_id": rec["order_id"], "code": 7 if rec["order_id"] == "o1" else "N/A"}

    out = T.Map.apply(frame=orders, f=code)
    assert [n for n, _ in members(out.schema()["code"].dataType)] == ["long", "string"]
    cols = out.resolveChoice(specs=[("code", "make_cols")])
    got = sorted((r["order_id"], r["code_long"], r["code_string"]) for r in rows(cols))
    assert got[0] == ("o1", 7, None) and all(g[1:] == (None, "N/A") for g in got[1:])
    as_long = [r["code"] for r in rows(out.resolveChoice(choice="cast:long"))]
    assert sorted(as_long, key=repr) == [7] + [None] * (len(got) - 1)


def test_map_failing_record_is_dropped_and_counted(orders: DynamicFrame) -> None:
    def parse(rec: dict[str, Any]) -> dict[str, Any]:
        rec["amount"] = float(rec["amount"])  # "oops" raises
        return rec

    out = orders.map(parse)
    assert sorted(r["order_id"] for r in rows(out)) == ["o1", "o3"]
    assert out.schema()["amount"].dataType.simpleString() == "double"
    assert out.errorsCount() == 1 and out.stageErrorsCount() == 1
    later = out.select_fields(["order_id"])
    assert later.errorsCount() == 1 and later.stageErrorsCount() == 0
    errors = T.ErrorsAsDynamicFrame.apply(frame=later).toDF().collect()
    assert len(errors) == 1 and errors[0]["transformation"] == "Map"
    assert "ValueError" in errors[0]["error"]
    assert json.loads(errors[0]["record"])["order_id"] == "o2"
    not_a_dict = orders.map(lambda rec: None if rec["qty"] == 0 else rec)
    assert not_a_dict.count() == 2 and not_a_dict.errorsCount() == 1
    with pytest.raises(ConfigError, match="function"):
        orders.map("not callable")  # type: ignore[arg-type]
    all_fail = orders.map(lambda rec: rec["missing"])
    assert all_fail.schema() == orders.schema() and all_fail.count() == 0
    assert all_fail.errorsCount() == 3
    with pytest.raises(ConfigError, match="object"):
        orders.map(lambda rec: {"x": object()})


def test_filter_keeps_schema_and_counts_errors(orders: DynamicFrame) -> None:
    out = T.Filter.apply(frame=orders, f=lambda rec: float(rec["amount"]) > 8)
    assert out.schema() == orders.schema()
    assert [r["order_id"] for r in rows(out)] == ["o1"]
    assert out.errorsCount() == 1
    nested = orders.filter(lambda rec: rec["customer"]["first name"] == "Ann")
    assert [r["order_id"] for r in rows(nested)] == ["o1", "o3"] and nested.errorsCount() == 0


# ------------------------------------------------------------------- frames, collections, splits

def test_join_union_and_relationalize_transforms(spark, orders: DynamicFrame) -> None:  # type: ignore[no-untyped-def]
    customers = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, "Ann", "NO"), (2, "Bob", "SE"), (2, "Bobby", "SE")],
        "cid int, cname string, country string"), None, "customers")
    joined = T.Join.apply(frame1=orders, frame2=customers,
                          keys1=["customer.id", "customer.`first name`"],
                          keys2=["cid", "cname"], transformation_ctx="j")
    assert sorted((r["order_id"], r["country"]) for r in rows(joined)) == \
        [("o1", "NO"), ("o2", "SE"), ("o3", "NO")]
    both = T.Union.apply(frame1=orders.select_fields(["order_id"]),
                         frame2=customers.select_fields(["cname"]))
    assert both.count() == 6 and both.schema().fieldNames() == ["order_id", "cname"]
    nested = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, [[1, 2], [3]])], "k int, grid array<array<int>>"), None, "n")
    dfc = T.Relationalize.apply(frame=nested, staging_path="/tmp/x", name="g",
                                transformation_ctx="r")
    assert dfc.keys() == ["g", "g_grid", "g_grid.val"]
    assert dfc["g_grid.val"].toDF().columns == ["id", "index", "grid.val.val"]
    cells = sorted((r["index"], r["grid.val.val"]) for r in dfc["g_grid.val"].toDF().collect())
    assert cells == [(0, 1), (0, 3), (1, 2)]
    assert T.Relationalize()(nested).keys()[0] == "roottable"


def test_split_and_collection_transforms(orders: DynamicFrame) -> None:
    fields = T.SplitFields.apply(frame=orders, paths=["order_id", "qty"], name1="a", name2="b")
    assert fields.keys() == ["a", "b"]
    assert fields["a"].schema().fieldNames() == ["order_id", "qty"]
    assert T.SplitFields.apply(frame=orders, paths=["qty"]).keys() == ["frame1", "frame2"]
    split = T.SplitRows.apply(frame=orders, comparison_dict={"qty": {">=": 2}})
    assert [r["order_id"] for r in rows(split["frame1"])] == ["o1", "o3"]
    assert [r["order_id"] for r in rows(split["frame2"])] == ["o2"]
    chosen = T.SelectFromCollection.apply(dfc=split, key="frame2")
    assert chosen is split["frame2"]
    mapped = T.FlatMap.apply(dfc=split, BaseTransform=T.DropFields, frame_name="frame",
                             transformation_ctx="fm", paths=["note", "amount"])
    assert isinstance(mapped, DynamicFrameCollection) and mapped.keys() == ["frame1", "frame2"]
    assert mapped["frame1"].schema().fieldNames() == ["order_id", "customer", "qty"]
    resolved = T.FlatMap.apply(dfc=split, BaseTransform=T.ResolveChoice, frame_name="frame",
                               specs=[("qty", "cast:string")])
    assert resolved["frame2"].schema()["qty"].dataType.simpleString() == "string"
    to_coll = T.MapToCollection.apply(dfc=split, callable=lambda fr, ctx: fr.select_fields(["qty"]))
    assert to_coll["frame1"].schema().fieldNames() == ["qty"]
    with pytest.raises(ConfigError, match="DynamicFrameCollection"):
        T.SelectFromCollection.apply(dfc=orders, key="x")


def test_unbox_and_spigot_transforms(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = DynamicFrame.fromDF(spark.createDataFrame(
        [(1, '{"k": [1, 2]}'), (2, '{"k": []}')], "id int, payload string"), None, "u")
    out = T.Unbox.apply(frame=frame, path="payload", format="json")
    assert out.schema()["payload"].dataType.simpleString() == "struct<k:array<bigint>>"
    assert T.Spigot.apply(frame=out, path=str(tmp_path / "s"), options={"topk": 1}) is out
    written = [line for p in (tmp_path / "s").glob("part-*") for line in p.read_text().splitlines()]
    assert len(written) == 1 and "payload" in json.loads(written[0])


def test_unsupported_transforms_say_so(orders: DynamicFrame) -> None:
    for cls in (T.FindMatches, T.FindIncrementalMatches, T.FillMissingValues):
        with pytest.raises(UnsupportedError, match=cls.__name__):
            cls.apply(frame=orders)
    with pytest.raises(ConfigError, match="frame must be a DynamicFrame"):
        T.SelectFields.apply(frame=orders.toDF(), paths=["x"])
