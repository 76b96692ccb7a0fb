"""Glue choice types as lakemark holds them (``lakemark.glue._choicetype``); no Spark session."""

from __future__ import annotations

from pyspark.sql import types as T

from lakemark.glue._choicetype import (
    choice_paths,
    choice_type,
    glue_tree,
    has_choice,
    is_choice,
    members,
    plain_type,
)
from lakemark.glue._fieldpaths import ELEM


def test_a_choice_has_one_member_per_type_in_a_fixed_order() -> None:
    c = choice_type([T.StringType(), T.LongType(), T.StringType()])
    assert is_choice(c) and [n for n, _ in members(c)] == ["long", "string"]
    assert choice_type([T.LongType(), T.StringType()]) == c
    assert choice_type([c, T.DoubleType()]) == choice_type([T.DoubleType(), T.StringType(),
                                                            T.LongType()])
    assert not is_choice(T.StructType([T.StructField("long", T.LongType())]))
    assert not is_choice(T.StructType([]))


def test_plain_type_is_a_struct_named_by_type_at_any_depth() -> None:
    c = choice_type([T.LongType(), T.StringType()])
    schema = T.StructType([
        T.StructField("id", c),
        T.StructField("items", T.ArrayType(T.StructType([T.StructField("price", c)]))),
        T.StructField("n", T.IntegerType()),
    ])
    assert has_choice(schema) and not has_choice(T.StructType([T.StructField("n", T.LongType())]))
    assert plain_type(schema).simpleString() == (
        "struct<id:struct<long:bigint,string:string>,"
        "items:array<struct<price:struct<long:bigint,string:string>>>,n:int>")
    assert choice_paths(schema) == [("id",), ("items", ELEM, "price")]


def test_glue_tree_prints_a_choice_as_glue_does() -> None:
    schema = T.StructType([
        T.StructField("provider id", choice_type([T.LongType(), T.StringType()])),
        T.StructField("addr", T.StructType([T.StructField("zip", T.LongType())])),
    ])
    assert glue_tree(schema) == "\n".join([
        "root",
        "|-- provider id: choice",
        "|    |-- long",
        "|    |-- string",
        "|-- addr: struct",
        "|    |-- zip: long",
    ])
