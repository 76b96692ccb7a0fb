"""Issue 23, item 4 on real Spark and Delta: schema hints on nested fields (``a.b type``,
``tags.element``, ``m.value``), for JSON, XML and Avro sources; refused on CSV and for paths
through a column that has no fields, before anything is written."""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


class Lake:
    def __init__(self, tmp: Path, format: str) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.format = format
        self.runner = CliRunner()

    def ingest(self, *extra: str, ok: bool = True) -> Result:
        result = self.runner.invoke(cli, [
            "ingest", "files", str(self.src), str(self.target), "--job", "j", "--state",
            self.state, "--json", "--format", self.format, *extra], catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    def rows(self) -> dict[Any, dict[str, Any]]:
        return {r["id"]: r for r in DeltaTable(str(self.target)).to_pyarrow_table().to_pylist()}


def out(result: Result) -> dict[str, Any]:
    return json.loads(result.output[result.output.index("{"):])


def test_json_nested_hints_type_fields_and_rescue_misfits(
        spark: Any, tmp_path: Path) -> None:
    lake = Lake(tmp_path, "json")
    a = lake.src / "a.json"
    a.write_text(json.dumps({"id": 1, "payload": {"amount": 12.5, "note": "n"},
                             "tags": [1, 2], "d": {"e": {"at": "2026-01-02T03:04:05Z"}}})
                 + "\n" +
                 json.dumps({"id": 2, "payload": {"amount": "abc", "note": "m"},
                             "tags": [3], "d": {"e": {"at": "never"}}}) + "\n")
    hints = ("--schema-evolution", "addNewColumns", "--schema-hints",
             "payload.amount decimal(12,2), tags.element string, D.e.at timestamp, "
             "meta.`src host` string, later.n int")
    first = out(lake.ingest(*hints))
    assert first["rows"] == 2
    rows = lake.rows()
    assert rows[1]["payload"] == {"amount": decimal.Decimal("12.50"), "note": "n"}
    assert rows[1]["tags"] == ["1", "2"] and rows[1]["meta"] is None
    assert rows[1]["d"]["e"]["at"].isoformat() == "2026-01-02T03:04:05+00:00"
    # A value that does not fit a hinted nested type: the field is null, and the text of its
    # struct is rescued under its column's name (Spark keeps the struct's other fields).
    assert rows[2]["payload"] == {"amount": None, "note": "m"}
    assert rows[2]["d"] == {"e": {"at": None}}
    rescued = json.loads(rows[2]["_rescued_data"])
    assert json.loads(rescued["payload"]) == {"amount": "abc", "note": "m"}
    assert json.loads(rescued["d"]) == {"e": {"at": "never"}}
    assert rescued["_file_path"].endswith(str(a))
    assert first["schema"]["rescued_values"] == {"payload": 1, "d": 1}
    # The tracked schema has the hinted types, and the fields the files did not have yet.
    fields = {f.name: f.type for f in DeltaTable(str(lake.target)).schema().fields}
    assert str(fields["payload"].fields[0].type) == "PrimitiveType(\"decimal(12,2)\")"
    assert [f.name for f in fields["meta"].fields] == ["src host"]
    assert str(fields["later"].fields[0].type) == "PrimitiveType(\"integer\")"


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_json_nested_hints_reach_a_column_added_later_not_a_tracked_one(
        spark: Any, tmp_path: Path) -> None:
    lake = Lake(tmp_path, "json")
    (lake.src / "a.json").write_text(json.dumps({"id": 1, "payload": {"amount": 2.5}}) + "\n")
    out(lake.ingest("--schema-evolution", "addNewColumns"))
    (lake.src / "b.json").write_text(json.dumps(
        {"id": 3, "payload": {"amount": 7}, "extra": {"n": 5, "s": "x"}}) + "\n")
    second = out(lake.ingest("--schema-evolution", "addNewColumns", "--schema-hints",
                             "payload.amount decimal(5,1), extra.n decimal(5,1), extra.t date"))
    assert second["schema"]["added_columns"] == ["extra"]
    rows = lake.rows()
    assert rows[3]["payload"]["amount"] == 7.0  # tracked: keeps its double
    assert rows[3]["extra"] == {"n": decimal.Decimal("5.0"), "s": "x", "t": None}


def test_bad_nested_hints_fail_before_anything_is_written(spark: Any, tmp_path: Path) -> None:
    lake = Lake(tmp_path, "json")
    (lake.src / "a.json").write_text(json.dumps({"id": 1, "p": {"x": 1}}) + "\n")
    evolve = ("--schema-evolution", "addNewColumns", "--schema-hints")
    for hint, says in [("id.x int", "schema hint 'id.x int': id is long, not a struct"),
                       ("p.x int, P.X string", "conflict"),
                       ("p.x.y int", "p.x is long"),
                       ("p..x int", "expected a column name"),
                       ("p.x nosuchtype", "schema hint 'p.x nosuchtype'")]:
        failed = lake.ingest(*evolve, hint, ok=False)
        assert failed.exit_code != 0 and says in failed.output, (hint, failed.output)
    assert not lake.target.exists()
    assert out(lake.ingest(*evolve, "p.x int"))["files"] == 1  # a.json waited
    assert lake.rows()[1]["p"] == {"x": 1}
    (lake.src / "b.json").write_text(json.dumps({"id": 2}) + "\n")
    failed = lake.ingest(*evolve, "id.x int", ok=False)  # a later run refuses it too
    assert "id is long" in failed.output and len(lake.rows()) == 1
    (tmp_path / "c").mkdir()
    csv = Lake(tmp_path / "c", "csv")
    (csv.src / "a.csv").write_text("id,p\n1,2\n")
    failed = csv.ingest("--option", "header=true", *evolve, "p.x int", ok=False)
    assert "a CSV source has no nested fields" in failed.output
    assert not csv.target.exists()


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_xml_and_avro_nested_hints_type_fields_and_rescue_misfits(spark: Any,
                                                                  tmp_path: Path) -> None:
    import fastavro

    (tmp_path / "x").mkdir()
    xml = Lake(tmp_path / "x", "xml")
    a = xml.src / "a.xml"
    a.write_text("<rows><row id='1'><p><amount>12.5</amount><note>n</note></p></row>"
                 "<row id='2'><p><amount>abc</amount><note>m</note></p></row></rows>")
    hints = ("--schema-evolution", "addNewColumns", "--schema-hints",
             "p.amount decimal(12,2), p.at timestamp")
    run = out(xml.ingest("--option", "rowTag=row", *hints))
    assert run["rows"] == 2 and run["schema"]["rescued_values"] == {"p": 1}
    rows = {r["_id"]: r for r in DeltaTable(str(xml.target)).to_pyarrow_table().to_pylist()}
    assert rows[1]["p"] == {"amount": decimal.Decimal("12.50"), "note": "n", "at": None}
    assert rows[2]["p"] is None  # XML: the whole element is rescued, as XML
    assert json.loads(rows[2]["_rescued_data"])["p"] == \
        "<p><amount>abc</amount><note>m</note></p>"

    (tmp_path / "v").mkdir()
    avro = Lake(tmp_path / "v", "avro")
    def record(name: str) -> dict[str, Any]:
        return {"type": "record", "name": name, "fields": [{"name": "n", "type": "int"}]}

    schema = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "p", "type": record("p")},
        {"name": "q", "type": record("q")}]}
    with (avro.src / "a.avro").open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [{"id": 1, "p": {"n": 5},
                                                            "q": {"n": 6}}])
    run = out(avro.ingest("--schema-evolution", "addNewColumns", "--schema-hints",
                          "p.n decimal(12,2), p.extra string, q.n string"))
    assert run["schema"]["rescued_values"] == {"q": 1}
    [row] = DeltaTable(str(avro.target)).to_pyarrow_table().to_pylist()
    # An int fits decimal(12,2) and a field the writer lacks is null; an int is not a
    # string, so q (its file's every value) is rescued as JSON under its column's name.
    assert row["p"] == {"n": decimal.Decimal("5.00"), "extra": None} and row["q"] is None
    assert json.loads(json.loads(row["_rescued_data"])["q"]) == {"n": 6}
