"""JSON read into a DynamicFrame: a field of numbers in some records and text in others is
Glue's ``choice(long, string)``, and ``resolveChoice`` settles it without losing a value.

Spark alone types such a field ``string`` (``10001`` becomes the text ``"10001"``), so
``make_cols`` had no ``_long`` column and ``cast:long`` could not tell a JSON number from text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark.glue import GlueContext
from lakemark.glue._choicetype import is_choice, members

pytestmark = pytest.mark.spark

LINES = [
    '{"id": 1, "provider": 10001, "zip": "02134", "flag": true, "price": 1.5}',
    '{"id": 2, "provider": "ABC0", "zip": "10001", "flag": "n/a", "price": "free"}',
    '{"id": 3, "provider": 10002, "zip": "90210", "flag": false, "price": 2}',
    '{"id": 4, "provider": null, "zip": null}',
    '{"id": 5}',
]


def _source(tmp_path: Path) -> str:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / "part1.json").write_text("\n".join(LINES[:3]) + "\n")
    (folder / "part2.json").write_text("\n".join(LINES[3:]) + "\n")
    return str(folder)


def _read(glue: GlueContext, path: str, ctx: str = "") -> Any:
    return glue.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [path]}, format="json",
        transformation_ctx=ctx)


def _by_id(df: Any) -> dict[int, dict[str, Any]]:
    return {r["id"]: r.asDict(recursive=True) for r in df.collect()}


def test_mixed_json_fields_are_choices(spark: Any, tmp_path: Path) -> None:
    frame = _read(GlueContext(spark.sparkContext), _source(tmp_path))
    fields = {f.name: f.dataType for f in frame.schema().fields}
    assert [name for name, _ in members(fields["provider"])] == ["long", "string"]
    assert [name for name, _ in members(fields["flag"])] == ["boolean", "string"]
    assert [name for name, _ in members(fields["price"])] == ["double", "string"]
    # Only strings (zip codes that look like numbers): a string, as in Glue, not a choice.
    assert fields["zip"].simpleString() == "string" and not is_choice(fields["zip"])
    assert fields["id"].simpleString() == "bigint"

    cols = _by_id(frame.resolveChoice(specs=[("provider", "make_cols")]).toDF())
    assert [(cols[i]["provider_long"], cols[i]["provider_string"]) for i in range(1, 6)] == [
        (10001, None), (None, "ABC0"), (10002, None), (None, None), (None, None)]
    assert cols[1]["zip"] == "02134"
    cast = _by_id(frame.resolveChoice(specs=[("provider", "cast:long")]).toDF())
    assert [cast[i]["provider"] for i in range(1, 6)] == [10001, None, 10002, None, None]
    text = _by_id(frame.resolveChoice(specs=[("provider", "project:string")]).toDF())
    assert [text[i]["provider"] for i in range(1, 4)] == [None, "ABC0", None]
    prices = _by_id(frame.resolveChoice(specs=[("price", "make_struct")]).toDF())
    assert prices[1]["price"] == {"double": 1.5, "string": None}
    assert prices[2]["price"] == {"double": None, "string": "free"}
    assert prices[3]["price"] == {"double": 2.0, "string": None}


def test_bookmarked_json_source_with_choices(spark: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from lakemark.glue.job import Job

    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 'state.db'}")
    glue = GlueContext(spark.sparkContext)
    path = _source(tmp_path)
    job = Job(glue)
    job.init("json-choices", {"job_bookmark_option": "job-bookmark-enable"})
    frame = _read(glue, path, ctx="src")
    assert frame.count() == 5
    assert is_choice(frame.schema()["provider"].dataType)
    job.commit()

    (Path(path) / "part3.json").write_text('{"id": 6, "provider": "XYZ9"}\n')
    job = Job(glue)
    job.init("json-choices", {"job_bookmark_option": "job-bookmark-enable"})
    frame = _read(glue, path, ctx="src")
    assert [r["provider"] for r in frame.toDF().collect()] == ["XYZ9"]  # one type: no choice
    job.commit()


def test_to_df_options_and_apply_mapping_on_choices(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql.types import LongType, StringType

    from lakemark.glue.dynamicframe import ResolveOption

    frame = _read(GlueContext(spark.sparkContext), _source(tmp_path))
    df = frame.toDF([ResolveOption("provider", "Project", LongType()),
                     ResolveOption("price", "Cast", StringType()),
                     ResolveOption("flag", "KeepAsStruct")])
    assert dict(df.dtypes)["provider"] == "bigint" and dict(df.dtypes)["price"] == "string"
    assert dict(df.dtypes)["flag"] == "struct<boolean:boolean,string:string>"
    got = _by_id(df)
    assert [got[i]["provider"] for i in (1, 2, 3)] == [10001, None, 10002]
    assert [got[i]["price"] for i in (1, 2, 3)] == ["1.5", "free", "2.0"]
    with pytest.raises(Exception, match="Missing target type"):
        frame.toDF([ResolveOption("provider", "Cast")])

    # Athena type names, dotted and back-quoted targets, on a choice source.
    mapped = frame.apply_mapping([
        ("provider", "choice", "provider_id", "varchar"),
        ("id", "long", "meta.id", "tinyint"),
        ("zip", "string", "`zip.code`", "varchar(5)"),
        ("price", "choice", "price", "decimal(10,2)"),
    ]).toDF()
    assert [(f.name, f.dataType.simpleString()) for f in mapped.schema.fields] == [
        ("provider_id", "string"), ("meta", "struct<id:tinyint>"), ("zip.code", "string"),
        ("price", "decimal(10,2)")]
    rows = {r["meta"]["id"]: r.asDict(recursive=True) for r in mapped.collect()}
    assert [rows[i]["provider_id"] for i in (1, 2, 3)] == ["10001", "ABC0", "10002"]
    assert [str(rows[i]["price"]) for i in (1, 2, 3)] == ["1.50", "None", "2.00"]
    assert rows[1]["zip.code"] == "02134"


def test_mixed_fields_inside_structs_are_choices(spark: Any, tmp_path: Path) -> None:
    """Glue types a struct's field by each record too: ``project:long`` on ``p.qty`` gives
    null for the text ``"2"`` (Spark alone would have typed it string and cast it to 2)."""
    folder = tmp_path / "nested" / "month=02"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text("\n".join([
        '{"id": 1, "p": {"qty": 5, "sku": "A", "deep": {"v": 1}}, "tag": "x"}',
        '{"id": 2, "p": {"qty": "2", "sku": "B", "deep": {"v": "one"}}, "tag": "y"}',
        '{"id": 3, "p": null, "tag": "z"}',
        '{"id": 4, "p": {"sku": "D"}, "tag": "w"}',
    ]) + "\n")
    glue = GlueContext(spark.sparkContext)
    frame = glue.create_dynamic_frame.from_options(
        connection_type="s3", format="json",
        connection_options={"paths": [str(tmp_path / "nested")], "recurse": True})
    p = frame.schema()["p"].dataType
    assert [n for n, _ in members(p["qty"].dataType)] == ["long", "string"]
    assert [n for n, _ in members(p["deep"].dataType["v"].dataType)] == ["long", "string"]
    assert p["sku"].dataType.simpleString() == "string"  # strings only: no choice
    assert frame.schema()["month"].dataType.simpleString() == "int"  # from_options: Spark's
    rows = _by_id(frame.resolveChoice(specs=[("p.qty", "project:long")]).toDF())
    assert [rows[i]["p"]["qty"] if rows[i]["p"] else "null p" for i in range(1, 5)] == [
        5, None, "null p", None]
    assert rows[2]["p"]["sku"] == "B" and rows[2]["tag"] == "y" and rows[2]["month"] == 2
    cols = _by_id(frame.resolveChoice(specs=[("p.deep.v", "make_cols")]).toDF())
    assert (cols[1]["p"]["deep"]["v_long"], cols[2]["p"]["deep"]["v_string"]) == (1, "one")


def test_fields_keep_the_records_order(spark: Any, tmp_path: Path) -> None:
    """Spark sorts inferred JSON fields by name; Glue keeps the order of the records."""
    folder = tmp_path / "ordered" / "day=01"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text("\n".join([
        '{"zeta": 1, "alpha": {"b": 1, "a": "x"}, "items": [{"y": 1, "x": 2}], "mix": 1}',
        '{"zeta": 2, "alpha": null, "items": null, "mix": "two", "late": "z"}',
    ]) + "\n")
    glue = GlueContext(spark.sparkContext)
    frame = glue.create_dynamic_frame.from_options(
        connection_type="s3", format="json",
        connection_options={"paths": [str(tmp_path / "ordered")], "recurse": True})
    schema = frame.schema()
    assert [f.name for f in schema.fields] == ["zeta", "alpha", "items", "mix", "late", "day"]
    assert [f.name for f in schema["alpha"].dataType.fields] == ["b", "a"]
    assert [f.name for f in schema["items"].dataType.elementType.fields] == ["y", "x"]
    assert is_choice(schema["mix"].dataType)
    rows = {r["zeta"]: r.asDict(recursive=True) for r in frame.toDF().collect()}
    assert rows[1]["alpha"] == {"b": 1, "a": "x"} and rows[1]["items"] == [{"y": 1, "x": 2}]
    assert rows[2]["alpha"] is None and rows[2]["items"] is None and rows[2]["late"] == "z"
    # create_data_frame (a Spark DataFrame) keeps Spark's order
    df = glue.create_data_frame.from_options(
        connection_type="s3", format="json",
        connection_options={"paths": [str(tmp_path / "ordered")], "recurse": True})
    assert df.columns[:3] == ["alpha", "items", "late"]
