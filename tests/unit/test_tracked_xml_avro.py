"""The pure parts of the tracked XML and Avro reads: what fits, how files are planned, how a
record's values are split (no JVM: Spark's type classes only)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

from pyspark.sql import types as T

from lakemark.sources._avro_tracked import FileFields, fits, merge_fields, plan_files, value_text
from lakemark.sources._xml_tracked import XmlOptions, known_type, parse_record


def test_only_lossless_conversions_fit() -> None:
    assert fits(T.IntegerType(), T.LongType()) and fits(T.IntegerType(), T.DoubleType())
    assert fits(T.FloatType(), T.DoubleType()) and fits(T.NullType(), T.StringType())
    assert not fits(T.LongType(), T.IntegerType()) and not fits(T.LongType(), T.DoubleType())
    assert not fits(T.StringType(), T.LongType()) and not fits(T.LongType(), T.StringType())
    assert fits(T.DecimalType(5, 2), T.DecimalType(7, 3))
    assert not fits(T.DecimalType(5, 2), T.DecimalType(5, 1))
    assert fits(T.IntegerType(), T.DecimalType(12, 2)) and not fits(T.LongType(),
                                                                      T.DecimalType(12, 2))
    small = T.StructType([T.StructField("a", T.IntegerType())])
    wide = T.StructType([T.StructField("a", T.LongType()), T.StructField("b", T.StringType())])
    assert fits(small, wide) and not fits(wide, small)
    assert fits(T.ArrayType(T.IntegerType()), T.ArrayType(T.LongType()))


def test_first_types_win_unless_a_later_one_widens_them() -> None:
    headers = [FileFields("a", (("id", T.IntegerType()), ("code", T.LongType()))),
               FileFields("b", (("id", T.LongType()), ("code", T.StringType()),
                                ("odd", None), ("p", T.StringType())))]
    assert merge_fields(headers, {"p"}) == [("id", T.LongType()), ("code", T.LongType())]


def test_files_are_planned_field_by_field() -> None:
    schema = T.StructType([T.StructField("id", T.LongType()),
                           T.StructField("code", T.LongType())])
    headers = [FileFields("a", (("id", T.IntegerType()), ("code", T.StringType()),
                                ("Code", T.LongType()), ("extra", T.StringType()))),
               FileFields("b", (("id", T.LongType()), ("code", T.LongType())))]
    of, plans = plan_files(headers, schema, rescue_new=False)
    first, second = plans[of["a"]], plans[of["b"]]
    assert first.take == (("id", "id"),) and first.ignore == ("extra",)
    assert first.rescue == (("code", "code"), ("Code", "Code"))
    assert second.take == (("id", "id"), ("code", "code")) and not second.rescue
    _, plans = plan_files(headers[:1], schema, rescue_new=True)
    assert plans[0].rescue[-1] == ("extra", "extra") and not plans[0].ignore


def test_rescued_avro_values_are_text() -> None:
    assert [value_text(v) for v in ("X5", 5, 1.5, True, decimal.Decimal("1.20"),
                                     dt.date(2026, 1, 2), b"\x00\x01")] == \
        ["X5", "5", "1.5", "true", "1.20", "2026-01-02", "AAE="]
    assert value_text({"a": [1, None], "b": b"\x00"}) == '{"a":[1,null],"b":"AA=="}'


def test_an_xml_record_splits_into_plain_and_structured_values() -> None:
    options = XmlOptions("row", null_value="NA")
    struct = T.StructType([T.StructField("x", T.LongType())])
    known = {"s": known_type(struct)}
    record = ('<row id="7"> <code> 5 </code><n>NA</n><t>a</t><t>b</t>'
              '<s><x>1</x></s><u><x>1</x><y>2</y></u></row>')
    plain, structured, odd = parse_record(record, options, known)  # type: ignore[misc]
    assert plain == {"_id": "7", "code": "5", "n": None}
    assert structured == {"t": "<t>a</t><t>b</t>", "s": "<s><x>1</x></s>",
                          "u": "<u><x>1</x><y>2</y></u>"}
    assert odd == []
    _, _, odd = parse_record('<row><s a="1"><x>1</x></s></row>', options, known)  # type: ignore[misc]
    assert odd == ["s"]  # an attribute the struct does not name
    assert parse_record("<row><a></row>", options, known) is None


def test_an_unclosed_row_keeps_the_rest_of_the_file() -> None:
    from lakemark.sources._records import xml_records

    text = "<r><row><a>1</a></row>\n<row><a>2</a>\n<row><a>3</a></row></r>"
    assert list(xml_records(text, "row")) == [
        "<row><a>1</a></row>", "<row><a>2</a>\n<row><a>3</a></row></r>"]
    truncated = "<r><row><a>1</a></row>\n<row a='x'><a>2</a>\n"
    assert list(xml_records(truncated, "row"))[-1] == "<row a='x'><a>2</a>"
    closed = "<r><row/><row><a>1</a></row><!-- <row> --><![CDATA[<row>]]></r>"
    assert list(xml_records(closed, "row")) == ["<row/>", "<row><a>1</a></row>"]


def test_xml_names_are_read_as_written_with_prefixes_declared_anywhere() -> None:
    # Feeds declare their namespaces on the document's root, outside the records: Spark's
    # XML reader names columns as written (geo:lat, _xml:lang), and so must a record's parse.
    record = ('<entry xmlns:m="urn:m" id="1" xml:lang="en"><geo:lat>1.5</geo:lat>'
              '<m:thumb url="u"/><title>x</title></entry>')
    plain, structured, _ = parse_record(record, XmlOptions("entry"), {})  # type: ignore[misc]
    assert plain == {"_id": "1", "_xml:lang": "en", "geo:lat": "1.5", "title": "x"}
    assert structured == {"m:thumb": '<m:thumb url="u" />'}
    plain, structured, _ = parse_record(  # type: ignore[misc]
        record, XmlOptions("entry", ignore_namespace=True), {})
    assert plain == {"_id": "1", "_lang": "en", "lat": "1.5", "title": "x"}
    assert structured == {"thumb": '<thumb url="u" />'}


def test_an_xml_file_is_decoded_by_its_bom_or_declaration() -> None:
    from lakemark.sources._records import xml_encoding, xml_records, xml_text
    from lakemark.sources._tasks import TaskSpec, _decode, _records

    latin = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<r><row>Jos\u00e9</row></r>'
    assert xml_text(latin.encode("latin-1")) == latin
    assert xml_encoding(b"\xef\xbb\xbf<r/>") == "utf-8-sig"
    assert xml_encoding(b"\xef\xbb\xbf<r/>", "UTF-8") == "utf-8-sig"
    assert xml_encoding(latin.encode("latin-1"), "cp1252") == "cp1252"  # the option wins
    assert xml_encoding(b"<r/>") == "utf-8"
    assert xml_text("\ufeff<r>\u00e9</r>".encode()) == "<r>\u00e9</r>"
    # The untracked (Arrow) reader cuts such a file, and ignoreNamespace rows, as Spark does.
    data = ('<?xml version="1.0" encoding="ISO-8859-1"?><f xmlns:g="u"><g:row>\u00e9</g:row>'
            '<row>2</row></f>').encode("latin-1")
    spec = TaskSpec({}, "xml", options=(("rowtag", "row"), ("ignorenamespace", "true")))
    assert list(_records(_decode(data, spec), spec)) == ["<g:row>\u00e9</g:row>", "<row>2</row>"]
    assert list(xml_records("<f><g:row/><row/></f>", "row")) == ["<row/>"]


def test_bytes_not_of_the_xml_encoding_fail_naming_the_file(tmp_path: Path) -> None:
    import pyarrow.fs as pafs
    import pytest

    from lakemark.errors import ReadError
    from lakemark.sources._xml_tracked import XmlRows

    path = tmp_path / "latin.xml"
    path.write_bytes("<r><row><n>Jos\u00e9</n></row></r>".encode("latin-1"))  # no declaration
    rows = XmlRows(XmlOptions("row"))
    with pytest.raises(ReadError, match=r"latin\.xml as utf-8: byte 14 .*option encoding"):
        list(rows.batches(pafs.LocalFileSystem(), str(path), str(path)))
    declared = XmlRows(XmlOptions("row", encoding="latin-1"))
    [table] = list(declared.batches(pafs.LocalFileSystem(), str(path), str(path)))
    assert table.column("__lm_texts").to_pylist() == [[("n", "Jos\u00e9")]]


def test_an_element_repeated_where_its_type_holds_one_does_not_fit() -> None:
    # Spark's from_xml keeps the last of repeated elements read into a struct: a value lost
    # without a word, so the whole element is a misfit (rescued as XML) instead.
    options = XmlOptions("row")
    person = T.StructType([T.StructField("name", T.StringType())])
    columns = {"a": known_type(person), "b": known_type(T.ArrayType(person)),
               "m": known_type(T.MapType(T.StringType(), T.StringType()))}
    record = ("<row><a><name>x</name></a><a><name>y</name></a><b><name>x</name></b>"
              "<b><name>y</name></b><m><k>1</k></m><m><k>2</k></m></row>")
    _, _, odd = parse_record(record, options, columns)  # type: ignore[misc]
    assert odd == ["a", "m"]
    _, _, odd = parse_record("<row><a><name>x</name><name>y</name></a></row>",  # type: ignore[misc]
                             options, columns)
    assert odd == ["a"]
    _, _, odd = parse_record("<row><b><name>x</name></b></row>", options,  # type: ignore[misc]
                             columns)
    assert odd == []


def test_snappy_avro_files_are_read_without_cramjam(tmp_path: Path) -> None:
    # Spark and many producers write Avro snappy-compressed; fastavro needs cramjam for it.
    import io
    import zlib

    import fastavro
    import pyarrow as pa
    import pytest

    from lakemark.sources._avro import avro_batches
    from lakemark.sources._avro_codecs import snappy_block

    schema = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "s", "type": "string"}]})
    rows = [{"id": i, "s": "x" * i} for i in range(50)]

    def snappy_file() -> bytes:  # fastavro's pure-Python writer, given a snappy block writer
        import fastavro._write_py as pure

        def write_block(encoder: Any, block: bytes, _level: Any) -> None:
            compressed = pa.Codec("snappy").compress(block, asbytes=True)
            encoder.write_long(len(compressed) + 4)
            encoder._fo.write(compressed)  # noqa: SLF001 - fastavro's encoder
            encoder.write_crc32(block)

        before = pure.BLOCK_WRITERS["snappy"]
        pure.BLOCK_WRITERS["snappy"] = write_block
        try:
            out = io.BytesIO()
            pure.writer(out, schema, rows, codec="snappy")
        finally:
            pure.BLOCK_WRITERS["snappy"] = before
        return out.getvalue()

    blob = snappy_file()
    assert fastavro.reader(io.BytesIO(blob)).codec == "snappy"
    target = pa.schema([("id", pa.int64()), ("s", pa.string())])
    tables = list(avro_batches(io.BytesIO(blob), target, False))
    assert pa.concat_tables(tables).to_pylist() == rows
    block = b"hello snappy"
    body = pa.Codec("snappy").compress(block, asbytes=True)
    framed = io.BytesIO(bytes([(len(body) + 4) * 2]) + body
                        + zlib.crc32(block).to_bytes(4, "big"))
    assert snappy_block(framed).read() == block
    bad = io.BytesIO(bytes([(len(body) + 4) * 2]) + body + b"\x00\x00\x00\x00")
    with pytest.raises(ValueError, match="CRC-32"):
        snappy_block(bad)
