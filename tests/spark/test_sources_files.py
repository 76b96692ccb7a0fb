"""``lakemark.sources.read_files`` on local files with a real Spark session.

Inputs are written with pyarrow, fastavro or plain Python (never with Spark), under one
module-wide tree so the Spark work stays small. Each format is read from two partition folders
with a third file present but not planned, which must not show up.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from lakemark.errors import ConfigError, FormatError, ReadError
from lakemark.planning.files import FileEntry
from lakemark.sources import FORMATS, MODES, check_read_options, read_files

# Python workers must run this interpreter (it has pyarrow, fastavro and lakemark).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

pytestmark = pytest.mark.spark

UTC = dt.UTC


def entry(path: Path) -> FileEntry:
    st = path.stat()
    return FileEntry(st.st_mtime_ns // 1_000_000, str(path), st.st_size)


def put(path: Path, text: str) -> FileEntry:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return entry(path)


def rows_of(df: Any) -> list[dict[str, Any]]:
    return sorted((r.asDict(recursive=True) for r in df.collect()),
                  key=lambda r: json.dumps(r, default=str, sort_keys=True))


# -- inputs: three files per format, two of them planned ------------------------------------

PEOPLE = [
    {"id": 1, "name": "ann", "day": "2024-01-01"},
    {"id": 2, "name": "bob", "day": "2024-01-01"},
    {"id": 3, "name": "cy", "day": "2024-01-02"},
]


def _json(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "day"}) + "\n"
                            for r in rows))


def _csv(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("id,name\n" + "".join(f"{r['id']},{r['name']}\n" for r in rows))


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table({"id": pa.array([r["id"] for r in rows], pa.int64()),
                     "name": pa.array([r["name"] for r in rows], pa.string())})


def _xml(path: Path, rows: list[dict[str, Any]]) -> None:
    body = "".join(f'<person id="{r["id"]}"><name>{r["name"]}</name></person>' for r in rows)
    path.write_text(f'<?xml version="1.0"?>\n<people>\n{body}\n</people>\n')


def _text(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(f"{r['id']}:{r['name']}\n" for r in rows))


AVRO_SCHEMA = {
    "type": "record", "name": "Person",
    "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}],
}


def _avro(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(AVRO_SCHEMA),
                        [{"id": r["id"], "name": r["name"]} for r in rows])


WRITERS = {
    "json": _json,
    "csv": _csv,
    "parquet": lambda p, rows: pq.write_table(_table(rows), p),
    "orc": lambda p, rows: orc.write_table(_table(rows), p),
    "xml": _xml,
    "text": _text,
    "avro": _avro,
}
OPTIONS = {"csv": {"header": "true", "inferSchema": "true"}, "xml": {"rowTag": "person"}}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[FileEntry]]]:
    """Per format: the root and the two planned files (a third, unplanned one sits beside)."""
    base = tmp_path_factory.mktemp("sources")
    out = {}
    for fmt, write in WRITERS.items():
        root = base / fmt
        planned = []
        for name, rows in (("a", PEOPLE[:2]), ("b", PEOPLE[2:])):
            path = root / f"day={rows[0]['day']}" / f"{name}.{fmt}"
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path, rows)
            planned.append(entry(path))
        unplanned = root / "day=2024-01-03" / f"unplanned.{fmt}"
        unplanned.parent.mkdir(parents=True)
        write(unplanned, [{"id": 99, "name": "zed", "day": "2024-01-03"}])
        out[fmt] = (root, planned)
    return out


# -- argument checks -------------------------------------------------------------------------

def test_check_read_options_names_what_is_wrong() -> None:
    assert FORMATS == ("json", "csv", "parquet", "orc", "xml", "text", "avro")
    assert MODES == ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
    check_read_options("JSON", "failfast")
    check_read_options(" Parquet ")
    with pytest.raises(FormatError, match=r"'xls'.*json, csv, parquet, orc, xml, text, avro"):
        check_read_options("xls")
    with pytest.raises(ConfigError, match="'LENIENT'") as info:
        check_read_options("json", "LENIENT")
    assert not isinstance(info.value, FormatError)


def test_bad_arguments_raise_config_errors(spark: Any, tree: Any, tmp_path: Path) -> None:
    root, files = tree["json"]
    with pytest.raises(ConfigError, match="rowTag"):
        read_files(spark, files, root=str(root), format="xml")
    with pytest.raises(ConfigError, match="not a valid DDL"):
        read_files(spark, files, root=str(root), format="json", schema="id long,,")
    with pytest.raises(ConfigError, match="'path'"):
        read_files(spark, files, root=str(root), format="json", options={"path": "/x"})
    with pytest.raises(ConfigError, match="contradicts"):
        read_files(spark, files, root=str(root), format="json", mode="FAILFAST",
                   options={"mode": "DROPMALFORMED"})
    with pytest.raises(ConfigError, match="basePath"):
        read_files(spark, files, root=str(root), format="json", options={"basePath": "/else"})
    with pytest.raises(ConfigError, match="not under the source root"):
        read_files(spark, files, root=str(tmp_path), format="json")


# -- every format ----------------------------------------------------------------------------

EXPECTED_TYPES = {
    "json": [("id", "bigint"), ("name", "string"), ("day", "date")],
    "csv": [("id", "int"), ("name", "string"), ("day", "date")],
    "parquet": [("id", "bigint"), ("name", "string"), ("day", "date")],
    "orc": [("id", "bigint"), ("name", "string"), ("day", "date")],
    "xml": [("_id", "bigint"), ("name", "string"), ("day", "date")],
    "text": [("value", "string"), ("day", "date")],
    "avro": [("id", "bigint"), ("name", "string"), ("day", "date")],
}


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_each_format_reads_exactly_the_planned_files(spark: Any, tree: Any, fmt: str) -> None:
    root, files = tree[fmt]
    df = read_files(spark, files, root=str(root), format=fmt, options=OPTIONS.get(fmt))
    assert df.dtypes == EXPECTED_TYPES[fmt]
    got = rows_of(df)
    days = {1: dt.date(2024, 1, 1), 2: dt.date(2024, 1, 1), 3: dt.date(2024, 1, 2)}
    if fmt == "text":
        assert got == [{"value": f"{r['id']}:{r['name']}", "day": days[r["id"]]}
                       for r in PEOPLE]
    else:
        key = "_id" if fmt == "xml" else "id"
        assert got == [{key: r["id"], "name": r["name"], "day": days[r["id"]]} for r in PEOPLE]


def test_user_schema_and_partition_type(spark: Any, tree: Any) -> None:
    root, files = tree["json"]
    df = read_files(spark, files, root=str(root), format="json",
                    schema="name string, id int, day string")
    assert df.dtypes == [("name", "string"), ("id", "int"), ("day", "string")]
    assert sorted(df.collect()) == sorted(
        [(r["name"], r["id"], r["day"]) for r in PEOPLE])


def test_empty_file_list_touches_nothing(spark: Any, tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    df = read_files(spark, [], root=str(missing), format="parquet")
    assert df.schema.fields == [] and df.count() == 0
    typed = read_files(spark, [], root=str(missing), format="json", schema="id long, name string")
    assert typed.dtypes == [("id", "bigint"), ("name", "string")] and typed.count() == 0


def test_file_names_with_glob_characters(spark: Any, tmp_path: Path) -> None:
    odd = put(tmp_path / "k=1" / "a[1]{x}*.json", '{"v": 1}\n')
    put(tmp_path / "k=1" / "a1x.json", '{"v": 2}\n')  # what the glob would match
    df = read_files(spark, [odd], root=str(tmp_path), format="json")
    assert [tuple(r) for r in df.collect()] == [(1, 1)]



def test_many_small_files_are_read_in_one_partition_per_core(spark: Any, tmp_path: Path) -> None:
    files = [put(tmp_path / f"d={i % 3}" / f"f{i:03d}.json", f'{{"v": {i}}}\n')
             for i in range(320)]
    put(tmp_path / "d=0" / "unplanned.json", '{"v": -1}\n')
    df = read_files(spark, files, root=str(tmp_path), format="json")
    # Spark's own packing counts 4 MiB per file: 320 files make 10 tasks of 32 files.
    assert df.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism
    assert sorted(r.v for r in df.collect()) == list(range(320))
    spark.conf.set("spark.lakemark.mergeSmallFiles", "false")
    try:
        kept = read_files(spark, files, root=str(tmp_path), format="json")
        assert kept.rdd.getNumPartitions() >= 8
        spark.conf.set("spark.lakemark.mergeSmallFiles", "sometimes")
        with pytest.raises(ConfigError, match="spark.lakemark.mergeSmallFiles"):
            read_files(spark, files, root=str(tmp_path), format="json")
    finally:
        spark.conf.unset("spark.lakemark.mergeSmallFiles")

# -- malformed records -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def malformed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[FileEntry]]:
    root = tmp_path_factory.mktemp("malformed")
    good = put(root / "p=1" / "good.json", '{"id": 1, "name": "a"}\n')
    bad = put(root / "p=2" / "bad.json", '{"id": 2, "name": "b"}\n{not json\n{"id": 4}\n')
    return root, [good, bad]


def test_failfast_raises_read_error_naming_the_file(spark: Any, malformed: Any) -> None:
    root, files = malformed
    df = read_files(spark, files, root=str(root), format="json", mode="FAILFAST",
                    schema="id long, name string")
    with pytest.raises(ReadError, match=r"json.*bad\.json"):
        df.collect()
    with pytest.raises(ReadError, match="json"):  # derived frames keep the conversion
        df.select("id").where("id > 0").count()


def test_dropmalformed_drops_the_bad_line(spark: Any, malformed: Any) -> None:
    root, files = malformed
    df = read_files(spark, files, root=str(root), format="json", mode="dropmalformed")
    assert df.dtypes == [("id", "bigint"), ("name", "string"), ("p", "int")]
    assert sorted(tuple(r) for r in df.collect()) == [(1, "a", 1), (2, "b", 2), (4, None, 2)]


def test_permissive_keeps_the_bad_line(spark: Any, malformed: Any) -> None:
    root, files = malformed
    nulls = read_files(spark, files, root=str(root), format="json",
                       schema="id long, name string")
    assert sorted((tuple(r) for r in nulls.collect()), key=str) == sorted(
        [(1, "a", 1), (2, "b", 2), (None, None, 2), (4, None, 2)], key=str)
    kept = read_files(spark, files, root=str(root), format="json",
                      schema="id long, name string, _corrupt_record string")
    assert sorted((r.id, r._corrupt_record) for r in kept.collect() if r._corrupt_record) == [
        (None, "{not json")]
    inferred = read_files(spark, files, root=str(root), format="json")
    assert "_corrupt_record" in inferred.columns


def test_corrupt_parquet_raises_read_error(spark: Any, tmp_path: Path) -> None:
    bad = put(tmp_path / "x.parquet", "this is not parquet")
    with pytest.raises(ReadError):
        read_files(spark, [bad], root=str(tmp_path), format="parquet").collect()


# -- avro ------------------------------------------------------------------------------------

RICH_AVRO = {
    "type": "record", "name": "Rich", "namespace": "t",
    "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": ["null", "double"], "default": None},
        {"name": "raw", "type": "bytes"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                   "precision": 9, "scale": 2}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "inner", "type": {"type": "record", "name": "Inner",
                                   "fields": [{"name": "x", "type": ["null", "int"]}]}},
        {"name": "count", "type": ["int", "long"]},
    ],
}


def test_avro_types_follow_spark_avro(spark: Any, tmp_path: Path) -> None:
    record = {
        "flag": True, "small": 7, "ratio": 0.5, "score": None, "raw": b"\x00\x01",
        "day": dt.date(2024, 2, 29), "at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        "local": dt.datetime(2024, 1, 2, 3, 4, 5, 6), "clock": dt.time(1, 2, 3),
        "price": decimal.Decimal("12.34"), "uid": uuid.UUID(int=5), "color": "BLUE",
        "tags": ["a", "b"], "attrs": {"k": 1}, "inner": {"x": None}, "count": 3,
    }
    path = tmp_path / "g=x" / "rich.avro"
    path.parent.mkdir()
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(RICH_AVRO), [record])
    df = read_files(spark, [entry(path)], root=str(tmp_path), format="avro")
    assert df.dtypes == [
        ("flag", "boolean"), ("small", "int"), ("ratio", "float"), ("score", "double"),
        ("raw", "binary"), ("day", "date"), ("at", "timestamp"), ("local", "timestamp_ntz"),
        ("clock", "int"), ("price", "decimal(9,2)"), ("uid", "string"), ("color", "string"),
        ("tags", "array<string>"), ("attrs", "map<string,bigint>"), ("inner", "struct<x:int>"),
        ("count", "bigint"), ("g", "string"),
    ]
    assert all(f.nullable for f in df.schema.fields)
    row = df.collect()[0].asDict(recursive=True)
    del row["at"]  # collected in the Python process's time zone; checked as text below
    assert row == {
        **{k: v for k, v in record.items() if k != "at"},
        "raw": bytearray(b"\x00\x01"), "clock": 3_723_000, "uid": str(uuid.UUID(int=5)),
        "g": "x",
    }
    assert df.selectExpr("cast(at as string)").first()[0] == "2024-01-02 03:04:05"


def test_avro_union_without_spark_type_is_a_format_error(spark: Any, tmp_path: Path) -> None:
    schema = {"type": "record", "name": "U",
              "fields": [{"name": "v", "type": ["string", "int"]}]}
    path = tmp_path / "u.avro"
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), [{"v": "a"}])
    with pytest.raises(FormatError, match=r"u\.avro.*union \[string, int\]"):
        read_files(spark, [entry(path)], root=str(tmp_path), format="avro")


# -- the Arrow reader (what S3 uses) gives what Spark's readers give ---------------------------

@pytest.mark.parametrize("fmt", ["json", "csv", "parquet", "orc", "xml", "text"])
def test_arrow_reader_matches_spark_readers(spark: Any, tree: Any, fmt: str) -> None:
    from lakemark.sources._arrow_reader import read_with_arrow
    from lakemark.sources._options import make_request

    root, files = tree[fmt]
    native = read_files(spark, files, root=str(root), format=fmt, options=OPTIONS.get(fmt))
    request = make_request(fmt, "PERMISSIVE", OPTIONS.get(fmt), None, str(root))
    arrow = read_with_arrow(spark, request, files, str(root), None)
    assert arrow.schema == native.schema
    assert rows_of(arrow) == rows_of(native)


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"])
def test_arrow_reader_modes_match(spark: Any, malformed: Any, mode: str) -> None:
    from lakemark.sources._arrow_reader import read_with_arrow
    from lakemark.sources._errors import guard
    from lakemark.sources._options import make_request
    from pyspark.sql.types import StructType

    root, files = malformed
    if mode == "FAILFAST":  # inference meets the bad line: both fail at once
        with pytest.raises(ReadError, match=r"infer the schema of 2 json file.*Malformed"):
            read_files(spark, files, root=str(root), format="json", mode=mode)
        request = make_request("json", mode, None, None, str(root))
        with pytest.raises(ReadError, match=r"infer the schema of json.*Malformed"):
            read_with_arrow(spark, request, files, str(root), None)
    schema = "id long, name string" if mode == "FAILFAST" else None
    native = read_files(spark, files, root=str(root), format="json", mode=mode, schema=schema)
    request = make_request("json", mode, None, schema, str(root))
    struct = native.schema["id"], native.schema["name"]
    arrow = guard(read_with_arrow(spark, request, files, str(root),
                                  StructType(list(struct)) if schema else None), "json")
    assert arrow.schema == native.schema
    if mode == "FAILFAST":
        with pytest.raises(ReadError, match=r"malformed json record in .*bad\.json"):
            arrow.collect()
    else:
        assert rows_of(arrow) == rows_of(native)


TRICKY = {
    "json": ('{"a": 1, "b": "x"}\n\n   \n[{"a": 2}, {"a": 3, "b": "y"}]\r\n{"a": 4, "c": [1, 2]}',
             {}),
    "csv": ('a,b\n1,"two\nlines"\n\n# note\n3,"q ""x"""\n', {"header": "true", "multiLine": "true",
                                                        "comment": "#", "escape": '"'}),
    "xml": ('<root><!-- <item>no</item> --><item k="1"><item>inner</item><v>1</v></item>'
            '<item k="2"/><![CDATA[<item>no</item>]]><item k="3"><v>x &amp; y</v></item></root>',
            {"rowTag": "item"}),
    "text": ("one\r\ntwo\rthree\n\nfive", {}),
}


@pytest.mark.parametrize("fmt", list(TRICKY))
def test_arrow_record_cutting_matches_spark(spark: Any, tmp_path: Path, fmt: str) -> None:
    from lakemark.sources._arrow_reader import read_with_arrow
    from lakemark.sources._options import make_request

    text, options = TRICKY[fmt]
    files = [put(tmp_path / "part=7" / f"tricky.{fmt}", text)]
    native = read_files(spark, files, root=str(tmp_path), format=fmt, options=options)
    request = make_request(fmt, "PERMISSIVE", options, None, str(tmp_path))
    arrow = read_with_arrow(spark, request, files, str(tmp_path), None)
    assert arrow.schema == native.schema
    assert rows_of(arrow) == rows_of(native)


def test_failfast_error_reaches_writers(spark: Any, malformed: Any, tmp_path: Path) -> None:
    root, files = malformed
    df = read_files(spark, files, root=str(root), format="json", mode="FAILFAST",
                    schema="id long, name string")
    with pytest.raises(ReadError, match=r"bad\.json"):
        df.write.mode("overwrite").parquet(str(tmp_path / "out"))


def test_arrow_xml_reader_keeps_or_fails_on_a_truncated_last_record(spark: Any,
                                                                     tmp_path: Path) -> None:
    # The Arrow reader (S3) cuts XML records itself: a file cut off inside its last record
    # must give that record to the mode (kept as corrupt, or a FAILFAST error naming the
    # file), never drop it. Inference puts `_corrupt_record` first, which from_xml mishandled
    # (every value of every record null).
    from lakemark.sources._arrow_reader import read_with_arrow
    from lakemark.sources._errors import guard
    from lakemark.sources._options import make_request, parse_schema

    files = [put(tmp_path / "t.xml", "<rows>\n<row><a>1</a></row>\n<row><a>2</a>\n")]

    def arrow(mode: str, schema: str | None) -> Any:
        request = make_request("xml", mode, {"rowTag": "row"}, schema, str(tmp_path))
        return guard(read_with_arrow(spark, request, files, str(tmp_path),
                                     parse_schema(schema)), "xml")

    kept = [tuple(r) for r in arrow("PERMISSIVE", "a long, _corrupt_record string").collect()]
    assert kept == [(1, None), (None, "<row><a>2</a>")]
    inferred = arrow("PERMISSIVE", None)
    assert inferred.columns == ["_corrupt_record", "a"]
    assert sorted((tuple(r) for r in inferred.collect()), key=str) == [
        ("<row><a>2</a>", None), (None, 1)]
    with pytest.raises(ReadError, match=r"malformed xml record in .*t\.xml"):
        arrow("FAILFAST", "a long").collect()
