"""Issue 23 for XML and Avro sources: tracked schemas, evolution modes and rescued data.

Avro files carry their writer's schema, so drift arrives as a field whose type changed
(``code`` written as a string where the tracked column is ``long``), a new field, or a field
renamed in case only. XML drifts as JSON does: a value that does not parse as its column's
type, a new element or attribute, a malformed record. Every value ends up either in its
column or in ``_rescued_data`` with its file; nothing is dropped without being counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli
from lakemark.errors import ReadError

pytestmark = pytest.mark.spark


def write_avro(path: Path, fields: list[tuple[str, Any]], rows: list[dict[str, Any]]) -> Path:
    import fastavro

    schema = {"type": "record", "name": "r", "fields": [
        {"name": n, "type": t if isinstance(t, list) else ["null", t]} for n, t in fields]}
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), rows)
    return path


def run(runner: CliRunner, *args: str, ok: bool = True) -> Result:
    result = runner.invoke(cli, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def out(result: Result) -> dict[str, Any]:
    return json.loads(result.output[result.output.index("{"):])


def test_avro_drift_is_added_widened_or_rescued_run_after_run(spark: Any, tmp_path: Path
                                                               ) -> None:
    src, target = tmp_path / "in", tmp_path / "table"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    runner = CliRunner()
    ingest = ("ingest", "files", str(src), str(target), "--job", "j", "--state", state,
              "--format", "avro", "--json", "--schema-evolution", "addNewColumns")
    write_avro(src / "a.avro", [("id", "long"), ("code", "long")],
               [{"id": 1, "code": 5}, {"id": 2, "code": 6}])
    first = out(run(runner, *ingest))
    assert first["rows"] == 2 and first["schema"]["added_columns"] == []
    # b: code is now a string, a new field; c: id written as int (fits long), Code in case.
    b = write_avro(src / "b.avro", [("id", "long"), ("code", "string"), ("extra", "double")],
                   [{"id": 3, "code": "X5", "extra": 1.5}, {"id": 4, "code": None,
                                                            "extra": None}])
    write_avro(src / "c.avro", [("id", "int"), ("Code", "long"), ("code", "long")],
               [{"id": 5, "Code": 9, "code": 7}])
    second = out(run(runner, *ingest))
    schema = second["schema"]
    assert second["status"] == "SUCCEEDED" and second["rows"] == 3
    assert schema["added_columns"] == ["extra"] and schema["inferred"] is False
    assert schema["rescued_values"] == {"code": 1}
    assert schema["rescued_new_columns"] == {"Code": 1}
    fields = {f.name: f.type.type for f in DeltaTable(str(target)).schema().fields}
    assert fields == {"id": "long", "code": "long", "extra": "double",
                      "_rescued_data": "string"}
    rows = {r["id"]: r for r in DeltaTable(str(target)).to_pyarrow_table().to_pylist()}
    assert [(rows[i]["code"], rows[i]["extra"]) for i in (1, 3, 4, 5)] == [
        (5, None), (None, 1.5), (None, None), (7, None)]
    three = json.loads(rows[3]["_rescued_data"])
    assert three == {"code": "X5", "_file_path": b.as_uri()}
    assert json.loads(rows[5]["_rescued_data"])["Code"] == "9"
    assert rows[4]["_rescued_data"] is None  # a null fits any column: nothing to rescue
    shown = run(runner, "runs", "show", second["run_id"], "--state", state, "--json").output
    assert json.loads(shown)["schemas"]["source"]["rescued_values"] == {"code": 1}


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_avro_modes_rescue_fail_and_none(spark: Any, tmp_path: Path) -> None:
    from lakemark import Job
    from lakemark.errors import SchemaEvolutionError

    src = tmp_path / "in"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    write_avro(src / "a.avro", [("id", "long"), ("code", "long")], [{"id": 1, "code": 5}])

    def read(job: Job, ctx: str, mode: str) -> list[dict[str, Any]]:
        df = job.read_files(str(src), format="avro", ctx=ctx, schema_evolution=mode)
        return [r.asDict() for r in df.orderBy("id").collect()]

    with Job("j", state=state, spark=spark) as job:  # one first run per mode's source
        for ctx in ("r", "n", "f"):
            read(job, ctx, "addNewColumns")
    write_avro(src / "b.avro", [("id", "long"), ("code", "string"),
                                ("tags", {"type": "array", "items": "string"}),
                                ("odd", ["null", "string", "long"])],  # no Spark type
               [{"id": 2, "code": "X5", "tags": ["a", "b"], "odd": "a"},
                {"id": 3, "code": None, "tags": None, "odd": 7}])
    with Job("j", state=state, spark=spark) as job:
        rescued = read(job, "r", "rescue")
        ignored = read(job, "n", "none")
    assert list(rescued[0]) == ["id", "code", "_rescued_data"]
    assert (rescued[0]["code"], json.loads(rescued[0]["_rescued_data"])["tags"]) == \
        (None, '["a","b"]')
    assert [json.loads(r["_rescued_data"])["odd"] for r in rescued] == ["a", "7"]
    assert [(r["id"], r["code"]) for r in ignored] == [(2, None), (3, None)]
    assert set(json.loads(ignored[0]["_rescued_data"])) == {"code", "_file_path"}
    assert ignored[1]["_rescued_data"] is None  # odd and tags are ignored (mode none)
    with Job("j", state=state, spark=spark) as job, \
            pytest.raises(SchemaEvolutionError, match=r"new column\(s\) tags, odd"):
        read(job, "f", "failOnNewColumns")


def test_xml_drift_is_added_or_rescued_and_malformed_records_are_kept(spark: Any,
                                                                      tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "table"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    runner = CliRunner()
    ingest = ("ingest", "files", str(src), str(target), "--job", "j", "--state", state,
              "--format", "xml", "--option", "rowTag=row", "--json",
              "--schema-evolution", "addNewColumns")
    (src / "day=1").mkdir()
    (src / "day=1" / "a.xml").write_text(
        '<rows><row id="1"><code>5</code><s><x>1</x></s></row>\n'
        '<row id="2"><code>6</code><s><x>2</x></s></row></rows>\n')
    first = out(run(runner, *ingest))
    assert first["rows"] == 2 and first["schema"]["inferred"]
    b = src / "day=2" / "b.xml"
    b.parent.mkdir()
    b.write_text(
        '<rows><row id="3"><code>X5</code><extra>e3</extra><s><x>3</x></s></row>\n'
        '<row id="4"><Code>9</Code><code>7</code><s><x>4</x><y>new</y></s></row>\n'
        '<row id="5"><code>8</code><broken></row>\n'
        '<row id="6"><code>10</code><s><x>zz</x></s></row></rows>\n')
    second = out(run(runner, *ingest))
    schema = second["schema"]
    assert second["status"] == "SUCCEEDED" and second["rows"] == 4
    assert schema["added_columns"] == ["extra", "s.y"]  # y: a new field inside s (issue 31)
    assert schema["rescued_values"] == {"code": 1, "s": 1}
    assert schema["rescued_new_columns"] == {"Code": 1} and schema["corrupt_records"] == 1
    table = DeltaTable(str(target)).to_pyarrow_table().to_pylist()
    rows = {r["_id"]: r for r in table if r["_id"] is not None}
    assert [(rows[i]["code"], rows[i]["extra"], rows[i]["s"], rows[i]["day"])
            for i in (1, 3, 4, 6)] == [(5, None, {"x": 1, "y": None}, 1),
                                       (None, "e3", {"x": 3, "y": None}, 2),
                                       (7, None, {"x": 4, "y": "new"}, 2), (10, None, None, 2)]
    assert json.loads(rows[3]["_rescued_data"]) == {"code": "X5", "_file_path": b.as_uri()}
    four = json.loads(rows[4]["_rescued_data"])
    assert four == {"Code": "9", "_file_path": b.as_uri()}
    assert json.loads(rows[6]["_rescued_data"])["s"] == "<s><x>zz</x></s>"
    broken = [json.loads(r["_rescued_data"]) for r in table if r["_id"] is None]
    assert [r["_corrupt_record"] for r in broken] == ['<row id="5"><code>8</code><broken></row>']


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_xml_modes_rescue_fail_and_none(spark: Any, tmp_path: Path) -> None:
    from lakemark import Job
    from lakemark.errors import ConfigError, SchemaEvolutionError

    src = tmp_path / "in"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    (src / "a.xml").write_text("<r><row><id>1</id><code>5</code></row></r>")

    def read(job: Job, ctx: str, mode: str, **extra: Any) -> list[dict[str, Any]]:
        df = job.read_files(str(src), format="xml", ctx=ctx, schema_evolution=mode,
                            options={"rowTag": "row"}, **extra)
        return [r.asDict() for r in df.orderBy("id").collect()]

    with Job("j", state=state, spark=spark) as job:
        for ctx in ("r", "n", "f"):
            read(job, ctx, "addNewColumns")
        with pytest.raises(ConfigError, match="rowTag"):
            job.read_files(str(src), format="xml", ctx="s", schema_evolution="rescue")
    (src / "b.xml").write_text('<r><row at="x"><id>2</id><code>X5</code><tag>a</tag>'
                               '<tag>b</tag></row></r>')
    with Job("j", state=state, spark=spark) as job:
        rescued = read(job, "r", "rescue", rescued_data_column="_bad")
        ignored = read(job, "n", "none", rescued_data_column=None)
    assert list(rescued[0]) == ["code", "id", "_bad"] and rescued[0]["code"] is None
    bad = json.loads(rescued[0]["_bad"])
    assert (bad["code"], bad["_at"], bad["tag"]) == ("X5", "x", "<tag>a</tag><tag>b</tag>")
    assert ignored == [{"code": None, "id": 2, "_corrupt_record": None}]
    with Job("j", state=state, spark=spark) as job, \
            pytest.raises(SchemaEvolutionError, match=r"new column\(s\) _at, tag"):
        read(job, "f", "failOnNewColumns")


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_tracked_avro_reads_every_type_as_the_untracked_reader(spark: Any, tmp_path: Path
                                                               ) -> None:
    import datetime as dt
    import decimal
    import uuid

    import fastavro

    from lakemark import Job
    from lakemark.sources import read_files
    from lakemark.storage import list_files

    src = tmp_path / "in"
    src.mkdir()
    schema = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"},
        {"name": "s", "type": ["null", {"type": "record", "name": "S", "fields": [
            {"name": "x", "type": "int"}, {"name": "t", "type": ["null", "string"]}]}]},
        {"name": "arr", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "double"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "d", "type": {"type": "int", "logicalType": "date"}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                 "scale": 2}},
        {"name": "b", "type": "bytes"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
    ]})

    def row(i: int) -> dict[str, Any]:
        return {"id": i, "s": {"x": i, "t": "t"}, "arr": [1, 2], "m": {"k": 1.5},
                "ts": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "d": dt.date(2026, 1, 2),
                "dec": decimal.Decimal("12.34"), "b": b"\x00\x01", "e": "B",
                "u": uuid.UUID(int=i), "tm": dt.time(1, 2, 3)}

    state = f"sqlite:///{tmp_path / 'state.db'}"
    for name in ("a", "b"):
        with (src / f"{name}.avro").open("wb") as out:
            fastavro.writer(out, schema, [row(ord(name))])
        with Job("t", state=state, spark=spark) as job:
            tracked = job.read_files(str(src), format="avro", ctx="c",
                                     schema_evolution="addNewColumns")
            got = [r.asDict(recursive=True) for r in tracked.collect()]
    plain = read_files(spark, [f for f in list_files(str(src)).files
                               if f.path.endswith("b.avro")], root=str(src), format="avro")
    assert tracked.dtypes == [*plain.dtypes, ("_rescued_data", "string")]
    assert got == [{**r.asDict(recursive=True), "_rescued_data": None}
                   for r in plain.collect()]


def test_text_values_follow_the_datetime_reader_options(spark: Any, tmp_path: Path) -> None:
    # Spark's XML, CSV and JSON readers parse dates and timestamps with timestampFormat,
    # timestampNTZFormat and dateFormat; a value that does not parse with the pattern does not
    # fit (a custom pattern turns off CAST's formats) and is rescued, as any misfit. JSON
    # files with a case-variant key take the exact path (every record parsed), which must
    # read them as the fast path (Spark's JSON reader) does.
    import datetime as dt

    from lakemark import Job

    formats = {"timestampFormat": "dd/MM/yyyy HH:mm", "timestampNTZFormat": "dd.MM.yyyy HH:mm",
               "dateFormat": "dd/MM/yyyy"}
    for folder in ("x", "c", "j"):
        (tmp_path / folder).mkdir()
    (tmp_path / "x" / "a.xml").write_text(
        "<r><row><k>1</k><t>02/01/2026 03:04</t><d>02/01/2026</d><n>02.01.2026 03:04</n></row>"
        "<row><k>2</k><t>2026-01-02T03:04:05</t><d>2026-01-02</d><n>02/01/2026 03:04</n>"
        "</row></r>")
    (tmp_path / "c" / "a.csv").write_text(
        "k,t,d,n\n1,02/01/2026 03:04,02/01/2026,02.01.2026 03:04\n"
        "2,2026-01-02T03:04:05,2026-01-02,02/01/2026 03:04\n")
    good = {"t": "02/01/2026 03:04", "d": "02/01/2026", "n": "02.01.2026 03:04"}
    bad = {"t": "2026-01-02T03:04:05", "d": "2026-01-02", "n": "02/01/2026 03:04"}
    (tmp_path / "j" / "a.json").write_text(json.dumps({"k": 1, **good}) + "\n"
                                           + json.dumps({"k": 2, **bad}) + "\n")
    (tmp_path / "j" / "b.json").write_text(json.dumps({"k": 3, "K": 0, **good}) + "\n"
                                           + json.dumps({"k": 4, **bad}) + "\n")
    hints = "k int, t timestamp, d date, n timestamp_ntz"
    state = f"sqlite:///{tmp_path / 'state.db'}"
    got = {}
    with Job("j", state=state, spark=spark) as job:
        for fmt, extra in (("xml", {"rowTag": "row"}), ("csv", {"header": "true"}),
                           ("json", {})):
            df = job.read_files(str(tmp_path / fmt[0]), format=fmt, ctx=fmt,
                                options={**formats, **extra}, schema_evolution="rescue",
                                schema_hints=hints)
            got[fmt] = [r.asDict() for r in df.orderBy("k").collect()]
    plain = (spark.read.format("xml").options(rowTag="row", **formats).schema(hints)
             .load(str(tmp_path / "x" / "a.xml")).collect()[0].asDict())
    for fmt, rows in got.items():
        for first, second in zip(rows[::2], rows[1::2], strict=True):
            assert (first["t"], first["d"], first["n"]) == (
                plain["t"], dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 3, 4)), fmt
            assert first["t"] is not None
            assert set(json.loads(first["_rescued_data"] or "{}")) <= {"K", "_file_path"}
            assert (second["t"], second["d"], second["n"]) == (None, None, None), fmt
            rescued = json.loads(second["_rescued_data"])
            assert {k: rescued[k] for k in bad} == bad, fmt
    assert len(got["json"]) == 4 and json.loads(got["json"][2]["_rescued_data"])["K"] == "0"


FEED_NS = ('xmlns="http://example.org/ns" '
           'xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#"')


def test_a_drifting_namespaced_feed_loses_nothing(spark: Any, tmp_path: Path) -> None:
    # An Atom-like feed as producers write it: namespaces declared on the root, attributes,
    # repeated elements (an array), an empty element, CDATA, a UTF-8 BOM; then an ISO-8859-1
    # file with non-ASCII text, a new namespaced element and values that no longer fit.
    from lakemark import Job

    src = tmp_path / "in"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    (src / "a.xml").write_bytes(("\ufeff" + f'<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<feed {FEED_NS}>\n<entry id="e1" xml:lang="en"><title>Caf\u00e9</title>'
        '<geo:lat>48.85</geo:lat><category term="food"/><category term="news"/>'
        '<summary><![CDATA[<b>bold</b> & more]]></summary><empty/>'
        '<published>2026-01-02T03:04:05Z</published><price currency="EUR">5</price>'
        '<author><name>A</name></author></entry>\n'
        '<entry id="e2"><title>Two</title><geo:lat>1.5</geo:lat><category term="x"/>'
        '<empty>e</empty><price>6</price></entry>\n</feed>\n').encode())

    def read() -> list[dict[str, Any]]:
        with Job("j", state=state, spark=spark) as job:
            df = job.read_files(str(src), format="xml", ctx="feed", options={"rowTag": "entry"},
                                schema_evolution="addNewColumns")
            return sorted((r.asDict(recursive=True) for r in df.collect()),
                          key=lambda r: r["_id"])

    first = read()
    assert [(r["_id"], r["_xml:lang"], r["title"], r["geo:lat"], r["category"], r["empty"])
            for r in first] == [
        ("e1", "en", "Caf\u00e9", 48.85, [{"_term": "food"}, {"_term": "news"}], None),
        ("e2", None, "Two", 1.5, [{"_term": "x"}], "e")]
    assert first[0]["summary"] == "<b>bold</b> & more"
    assert first[0]["published"] is not None
    assert [(r["price"]["_VALUE"], r["price"]["_currency"]) for r in first] == [
        (5, "EUR"), (6, None)]  # a plain <price> is the struct's value, as Spark reads it
    assert first[0]["author"] == {"name": "A"}
    assert [r["_rescued_data"] for r in first] == [None, None]
    b = src / "b.xml"
    b.write_bytes((f'<?xml version="1.0" encoding="ISO-8859-1"?>\n<feed {FEED_NS} '
        'xmlns:media="http://search.yahoo.com/mrss/">\n<entry id="e3" xml:lang="de">'
        '<title>M\u00fcller &amp; S\u00f6hne</title><geo:lat>n/a</geo:lat>'
        '<category term="a"/><media:thumbnail url="http://x/y.jpg" width="10"/>'
        '<summary><![CDATA[\u00fcn\u00ef <i>x</i>]]></summary><published>gestern</published>'
        '<author><name>B</name><name>C</name></author></entry>\n<entry id="e4">'
        '<title>\u00c7a</title><category term="b"><label>B</label></category>'
        '<author><name>X</name></author><author><name>Y</name></author></entry>\n'
        '</feed>\n').encode("latin-1"))
    three, four = read()  # the run reads b.xml only
    assert (three["title"], three["summary"], three["category"], three["media:thumbnail"]) == (
        "M\u00fcller & S\u00f6hne", "\u00fcn\u00ef <i>x</i>", [{"_term": "a", "label": None}],
        {"_url": "http://x/y.jpg", "_width": 10})
    assert (three["geo:lat"], three["published"]) == (None, None)
    # Repeated where the tracked type holds one name: Spark would keep the last only.
    assert json.loads(three["_rescued_data"]) == {
        "geo:lat": "n/a", "published": "gestern", "_file_path": b.as_uri(),
        "author": "<author><name>B</name><name>C</name></author>"}
    # label: a new field inside category's structs, added (issue 31)
    assert (four["title"], four["category"]) == ("\u00c7a", [{"_term": "b", "label": "B"}])
    assert "category" not in json.loads(four["_rescued_data"])
    assert json.loads(four["_rescued_data"])["author"] == \
        "<author><name>X</name></author><author><name>Y</name></author>"
    assert (three["author"], four["author"]) == (None, None)
    # Latin-1 bytes with no declaration are not UTF-8: the run fails naming the file rather
    # than replacing the characters.
    (src / "c.xml").write_bytes("<feed><entry id='e5'><title>\u00e9</title></entry></feed>"
                                .encode("latin-1"))
    with pytest.raises(ReadError, match=r"c\.xml as utf-8: byte \d+ is not utf-8 text"):
        read()


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_a_drifting_avro_producer_loses_nothing(spark: Any, tmp_path: Path) -> None:
    # A producer's schema evolves as Avro allows: new fields with defaults, a new enum
    # symbol, a wider decimal, a nested int become long; logical types (uuid,
    # timestamp-millis, decimal bytes) and nullable unions throughout; a late producer still
    # writes the old schema. Every value is in its column or in _rescued_data.
    import datetime as dt
    import decimal
    import uuid

    import fastavro

    from lakemark import Job

    src = tmp_path / "in"
    src.mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"

    def schema(v2: bool) -> Any:
        user = {"type": "record", "name": "User", "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": ["null", "long" if v2 else "int"], "default": None}]}
        fields: list[dict[str, Any]] = [
            {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "kind", "type": {"type": "enum", "name": "Kind",
                                      "symbols": ["CLICK", "VIEW", *(["BUY"] if v2 else [])]}},
            {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                                 "precision": 12 if v2 else 9, "scale": 2}],
             "default": None},
            {"name": "user", "type": ["null", user], "default": None},
            {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []}]
        if v2:
            fields += [{"name": "country", "type": "string", "default": "DE"},
                       {"name": "props", "type": ["null", {"type": "map", "values": "string"}],
                        "default": None}]
        return fastavro.parse_schema({"type": "record", "name": "Event",
                                      "namespace": "com.example", "fields": fields})

    when = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)

    def event(i: int, **values: Any) -> dict[str, Any]:
        return {"id": str(uuid.UUID(int=i)), "ts": when, "kind": "VIEW", "amount": None,
                "user": None, "tags": [], **values}

    def write(name: str, v2: bool, rows: list[dict[str, Any]]) -> Path:
        with (src / name).open("wb") as out:
            fastavro.writer(out, schema(v2), rows)
        return src / name

    def read() -> dict[int, dict[str, Any]]:
        with Job("j", state=state, spark=spark) as job:
            df = job.read_files(str(src), format="avro", ctx="ev",
                                schema_evolution="addNewColumns")
            return {uuid.UUID(r["id"]).int: r.asDict(recursive=True) for r in df.collect()}

    write("a.avro", False, [event(1, kind="CLICK", amount=decimal.Decimal("12.50"),
                                  user={"name": "Zo\u00eb", "age": 30}, tags=["a"]),
                            event(2)])
    first = read()
    assert (first[1]["amount"], first[1]["user"], first[1]["kind"]) == (
        decimal.Decimal("12.50"), {"name": "Zo\u00eb", "age": 30}, "CLICK")
    assert first[1]["ts"] == first[2]["ts"] is not None
    b = write("b.avro", True, [event(3, kind="BUY", amount=decimal.Decimal("1234567890.12"),
                                     user={"name": "Ann", "age": 2**40}, tags=["x"],
                                     country="FR", props={"k": "v"}),
                               event(4, country="DE")])
    write("c.avro", False, [event(5, amount=decimal.Decimal("0.01"),
                                  user={"name": "Old", "age": None})])
    second = read()
    three = second[3]
    assert (three["kind"], three["tags"], three["country"], three["props"]) == (
        "BUY", ["x"], "FR", {"k": "v"})
    assert (three["amount"], three["user"]) == (None, None)  # a wider type: rescued
    assert json.loads(three["_rescued_data"]) == {
        "amount": "1234567890.12", "user": '{"name":"Ann","age":1099511627776}',
        "_file_path": b.as_uri()}
    assert (second[4]["country"], second[4]["_rescued_data"]) == ("DE", None)
    assert (second[5]["amount"], second[5]["user"], second[5]["_rescued_data"]) == (
        decimal.Decimal("0.01"), {"name": "Old", "age": None}, None)
    cut = write("d.avro", True, [event(6, country="x" * 2000)])
    cut.write_bytes(cut.read_bytes()[:-1000])  # a file cut off inside its data block
    # Set aside (quarantined) with its reason, never half-read: the run goes on without it.
    assert read() == {}
    from lakemark.state import open_store

    store = open_store(state)
    try:
        [aside] = store.quarantined("j")
    finally:
        store.close()
    assert aside.path.endswith("d.avro") and aside.reason
