"""The nesting check beyond JSON lines on local files: XML elements, Avro schemas, and the
per-record check lakemark's own reader of S3 objects applies (sources/_inspect_depth.py)."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest

from lakemark.planning import FileEntry
from lakemark.sources._inspect import inspect_files
from lakemark.sources._inspect_depth import _xml_depth, record_depth_problem


def _entry(path: Path) -> FileEntry:
    return FileEntry(1000, str(path), path.stat().st_size)


def _xml_nest(levels: int) -> str:
    """``levels`` levels of elements (structs) around a value element."""
    text = "<v>x &lt;a&gt;</v>"
    for i in range(levels):
        text = f"<n{i % 3} k='1'>{text}</n{i % 3}>"
    return text


def _xml(*rows: str) -> str:
    return ("<?xml version='1.0'?>\n<!-- <row><a><b> not markup -->\n<rows>\n"
            + "\n".join(f"<row><id>{i}</id>{r}</row>" for i, r in enumerate(rows))
            + "\n</rows>\n")


def test_an_xml_row_nested_deeper_than_parquet_allows_is_found(tmp_path: Path) -> None:
    deep, ok = tmp_path / "deep.xml", tmp_path / "ok.xml"
    deep.write_text(_xml("<a>1</a>", _xml_nest(100)))  # the row + 100 levels = 101
    ok.write_text(_xml(_xml_nest(99), "<w/>" * 300))  # 100 levels; wide, not deep
    [bad] = inspect_files([_entry(deep), _entry(ok)], format="xml",
                          options={"rowTag": "row"})
    assert bad.entry.path == str(deep)
    assert "a record nested 101 levels deep (elements of a <row> row), deeper than the 100" \
        in bad.reason


def test_a_row_tag_with_a_namespace_prefix_is_checked_on_local_files_too(tmp_path: Path) -> None:
    """``rowTag=ns:row``: the driver's check of a local file finds the deep row, as the
    reader's record check of an S3 object does."""
    deep = tmp_path / "deep.xml"
    deep.write_text(_xml("<a>1</a>", _xml_nest(100)).replace("row>", "ns:row>"))
    [bad] = inspect_files([_entry(deep)], format="xml", options={"rowTag": "ns:row"})
    assert "a record nested 101 levels deep (elements of a <ns:row> row)" in bad.reason
    record = f"<ns:row>{_xml_nest(100)}</ns:row>"
    assert "101 levels deep" in (record_depth_problem(record, "xml", "ns:row") or "")


def test_xml_is_read_a_chunk_at_a_time_and_markup_cut_anywhere_counts_the_same() -> None:
    """The driver's XML check streams the file (a large file is never held whole): markup
    cut by a chunk's end, inside a comment, CDATA or instruction holding tags, counts as
    the whole text does."""
    text = (b"<?xml version='1.0'?>\n<!DOCTYPE rows>\n<rows>"
            b"<row><id>1</id><!-- <a><b><c> --><x:n><![CDATA[<a><b>]]><m>2</m></x:n></row>"
            b"<row><?pi <a><b> ?><p><q><r>3</r></q></p><e/></row>"
            b"<row><w><v/></w></row></rows>")
    whole = _xml_depth([text], b"row")
    assert whole == 3  # row > p > q (r holds the value)
    for size in (1, 2, 3, 5, 7, 11):
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        assert _xml_depth(pieces, b"row") == whole, size
    deep = _xml("<a>1</a>", _xml_nest(100)).encode()
    assert _xml_depth([deep[i:i + 64] for i in range(0, len(deep), 64)], b"row") == 101


def test_an_avro_schema_nested_deeper_than_parquet_allows_is_found(tmp_path: Path) -> None:
    def schema(levels: int) -> dict[str, object]:
        inner: object = "long"
        for i in range(levels - 1):
            inner = {"type": "record", "name": f"r{i}", "fields": [{"name": "c", "type": inner}]}
        return {"type": "record", "name": "top",
                "fields": [{"name": "c", "type": ["null", {"type": "array", "items": inner}]}]}

    def value(levels: int) -> dict[str, object]:
        inner: object = 1
        for _ in range(levels - 1):
            inner = {"c": inner}
        return {"c": [inner]}

    for name, levels in (("deep.avro", 100), ("ok.avro", 98)):  # + top record + array
        with open(tmp_path / name, "wb") as out:
            fastavro.writer(out, fastavro.parse_schema(schema(levels)), [value(levels)])
    bad = inspect_files([_entry(tmp_path / "deep.avro"), _entry(tmp_path / "ok.avro")],
                        format="avro")
    assert [b.entry.path for b in bad] == [str(tmp_path / "deep.avro")]
    assert "its schema nests 101 levels deep" in bad[0].reason


@pytest.mark.parametrize(("fmt", "deep", "ok"), [
    ("json", json.dumps({"a": json.loads("[" * 100 + "]" * 100)}),
     json.dumps({"a": json.loads("[" * 99 + "]" * 99), "s": "[" * 500})),
    ("xml", f"<row>{_xml_nest(100)}</row>", f"<row>{_xml_nest(99)}{'<w/>' * 200}</row>"),
])
def test_the_readers_record_check_names_depth_and_limit(fmt: str, deep: str, ok: str) -> None:
    problem = record_depth_problem(deep, fmt, "row")
    assert problem is not None and "deeper than the 100 levels" in problem
    assert "101 levels deep" in problem
    assert record_depth_problem(ok, fmt, "row") is None
