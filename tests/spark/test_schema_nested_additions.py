"""Issue 31 finding 4: a field added inside a struct (``address {city}`` arriving as
``address {city, zip}``) never vanishes. Under ``addNewColumns`` it joins the tracked schema
and the Delta table (``address.zip``); under ``rescue`` the value is kept in
``_rescued_data``; ``failOnNewColumns`` fails naming the path; ``none`` drops and counts it.
Run on both JSON read paths (the fast path and the exact path taken by files holding a key
that differs from a column only in case), and on XML and Avro sources."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


class Lake:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.runner = CliRunner()
        self.age = 1000

    def put(self, name: str, rows: list[Any]) -> Path:
        path = self.src / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        if self.age:  # the first file is older than the first run; later ones are new
            old = time.time() - self.age
            os.utime(path, (old, old))
            self.age = 0
        return path

    def cli(self, *args: str, ok: bool = True) -> Result:
        result = self.runner.invoke(cli, list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    def ingest(self, *extra: str, ok: bool = True) -> Result:
        return self.cli("ingest", "files", str(self.src), str(self.target), "--job", "j",
                        "--state", self.state, "--json", *extra, ok=ok)

    def rows(self) -> dict[int, dict[str, Any]]:
        table = DeltaTable(str(self.target)).to_pyarrow_table().to_pylist()
        return {r["id"]: r for r in table}


def out(result: Result) -> dict[str, Any]:
    text = result.output
    return json.loads(text[text.index('{\n  "run_id"'):])


def _rescued(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["_rescued_data"]) if row["_rescued_data"] else {}


FIRST = {"id": 1, "address": {"city": "Oslo"},
         "items": [{"sku": "a"}], "m": {"k": {"n": 1}}}
LATER = {"id": 2, "address": {"city": "Rome", "zip": "00100", "geo": {"lat": 41.9}},
         "items": [{"sku": "b", "qty": 3}], "m": {"k": {"n": 2, "unit": "kg"}}}
PATHS = ["address.geo", "address.zip", "items.element.qty", "m.value.unit"]
#: m is read as a map of structs (a hint: JSON inference makes objects structs)
HINT = ("--schema-hints", "m map<string, struct<n: bigint>>")


@pytest.mark.parametrize("exact", [False, True], ids=["fast", "exact"])
def test_add_new_columns_evolves_nested_fields_into_the_table(spark: Any, tmp_path: Path,
                                                               exact: bool) -> None:
    lake = Lake(tmp_path)
    lake.put("a.json", [FIRST])
    lake.ingest(*HINT)
    later = dict(LATER, **({"ID": 9} if exact else {}))
    lake.put("b.json", [later])
    # A hint on a new nested field's path types it (inference would say bigint).
    run = out(lake.ingest("--schema-hints", "items.element.qty double"))
    assert sorted(run["schema"]["added_columns"]) == PATHS
    items = next(f for f in DeltaTable(str(lake.target)).schema().fields if f.name == "items")
    assert "double" in str(items.type)
    row = lake.rows()[2]
    assert row["address"] == {"city": "Rome", "zip": "00100", "geo": {"lat": 41.9}}
    assert row["items"] == [{"sku": "b", "qty": 3}]
    assert dict(row["m"]) == {"k": {"n": 2, "unit": "kg"}}
    assert _rescued(row).get("address") is None
    assert lake.rows()[1]["address"] == {"city": "Oslo", "zip": None, "geo": None}
    shown = lake.cli("schema", "show", "j", "--state", lake.state).output
    assert "address.zip" in shown and "items.element.qty" in shown
    history = json.loads(lake.cli("schema", "show", "j", "--state", lake.state,
                                  "--json").output)["history"]
    added = {c["column"] for h in history for c in h["changes"]}
    assert set(PATHS) <= added
    # A third run with the same shape adds nothing more.
    lake.put("c.json", [dict(LATER, id=3)])
    assert out(lake.ingest())["schema"]["added_columns"] == []
    assert lake.rows()[3]["address"]["zip"] == "00100"


@pytest.mark.parametrize("exact", [False, True], ids=["fast", "exact"])
def test_rescue_keeps_nested_additions_in_rescued_data(spark: Any, tmp_path: Path,
                                                       exact: bool) -> None:
    lake = Lake(tmp_path)
    lake.put("a.json", [FIRST])
    lake.ingest("--schema-evolution", "rescue", *HINT)
    lake.put("b.json", [dict(LATER, **({"ID": 9} if exact else {})), dict(FIRST, id=3)])
    run = out(lake.ingest("--schema-evolution", "rescue"))
    assert sorted(run["schema"]["new_columns"]) == PATHS
    assert {p: run["schema"]["rescued_new_columns"][p] for p in PATHS} == {p: 1 for p in PATHS}
    rows = lake.rows()
    rescued = _rescued(rows[2])
    assert json.loads(rescued["address"]) == LATER["address"]
    assert json.loads(rescued["items"]) == LATER["items"]
    assert json.loads(rescued["m"]) == LATER["m"]
    assert rows[2]["address"]["city"] == "Rome"
    assert _rescued(rows[3]) == {}
    assert {f.name for f in DeltaTable(str(lake.target)).schema().fields} == \
        {"id", "address", "items", "m", "_rescued_data"}


def test_fail_and_none_name_the_nested_path(spark: Any, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.put("a.json", [FIRST])
    lake.ingest("--schema-evolution", "failOnNewColumns", *HINT)
    version = DeltaTable(str(lake.target)).version()
    lake.put("b.json", [LATER])
    failed = lake.ingest("--schema-evolution", "failOnNewColumns", ok=False)
    assert failed.exit_code == 1
    assert "new nested field(s) address.geo, address.zip" in failed.output
    assert DeltaTable(str(lake.target)).version() == version
    run = out(lake.ingest("--schema-evolution", "none"))
    assert run["schema"]["ignored_columns"] == {p: 1 for p in PATHS}
    row = lake.rows()[2]
    assert row["address"] == {"city": "Rome"} and row["_rescued_data"] is None
    # On the exact path (a file with a case-variant key) none drops them too.
    lake.put("c.json", [dict(LATER, id=3, ID=3)])
    run = out(lake.ingest("--schema-evolution", "none"))
    assert run["schema"]["ignored_columns"] == {p: 1 for p in PATHS}
    row = lake.rows()[3]
    assert row["address"] == {"city": "Rome"} and set(_rescued(row)) == {"ID", "_file_path"}


def _avro(path: Path, address: list[tuple[str, str]], rows: list[dict[str, Any]]) -> None:
    import fastavro

    record = {"type": "record", "name": "address",
              "fields": [{"name": n, "type": ["null", t]} for n, t in address]}
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "address", "type": ["null", record]}]}
    with path.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), rows)


@pytest.mark.parametrize("mode", ["addNewColumns", "rescue", "failOnNewColumns", "none"])
def test_avro_nested_fields_follow_the_mode(spark: Any, tmp_path: Path, mode: str) -> None:
    lake = Lake(tmp_path)
    _avro(lake.src / "a.avro", [("city", "string")], [{"id": 1, "address": {"city": "Oslo"}}])
    old = time.time() - 1000
    os.utime(lake.src / "a.avro", (old, old))
    lake.ingest("--format", "avro", "--schema-evolution", mode)
    _avro(lake.src / "b.avro", [("city", "string"), ("zip", "string")],
          [{"id": 2, "address": {"city": "Rome", "zip": "00100"}}, {"id": 3, "address": None}])
    result = lake.ingest("--format", "avro", "--schema-evolution", mode,
                         ok=mode != "failOnNewColumns")
    if mode == "failOnNewColumns":
        assert result.exit_code == 1 and "new nested field(s) address.zip" in result.output
        assert set(lake.rows()) == {1}
        return
    schema = out(result)["schema"]
    assert schema["new_columns"] == ["address.zip"]
    row = lake.rows()[2]
    if mode == "addNewColumns":
        assert schema["added_columns"] == ["address.zip"]
        assert row["address"] == {"city": "Rome", "zip": "00100"}
        assert row["_rescued_data"] is None
    elif mode == "rescue":
        assert schema["rescued_new_columns"] == {"address.zip": 1}
        assert json.loads(_rescued(row)["address"]) == {"city": "Rome", "zip": "00100"}
    else:
        assert schema["ignored_columns"] == {"address.zip": 1}
        assert row["address"] == {"city": "Rome"} and row["_rescued_data"] is None


XML_A = "<rows><row><id>1</id><address><city>Oslo</city></address></row></rows>"
XML_B = ("<rows><row><id>2</id><address><city>Rome</city><zip>00100</zip></address></row>"
         "<row><id>3</id><address><city>Bern</city></address></row></rows>")


@pytest.mark.parametrize("mode", ["addNewColumns", "rescue", "failOnNewColumns", "none"])
def test_xml_nested_fields_follow_the_mode(spark: Any, tmp_path: Path, mode: str) -> None:
    lake = Lake(tmp_path)
    (lake.src / "a.xml").write_text(XML_A)
    old = time.time() - 1000
    os.utime(lake.src / "a.xml", (old, old))
    args = ("--format", "xml", "--option", "rowTag=row", "--schema-evolution", mode)
    lake.ingest(*args)
    (lake.src / "b.xml").write_text(XML_B)
    result = lake.ingest(*args, ok=mode != "failOnNewColumns")
    if mode == "failOnNewColumns":
        assert result.exit_code == 1 and "new nested field(s) address.zip" in result.output
        return
    schema = out(result)["schema"]
    assert schema["new_columns"] == ["address.zip"]
    rows = lake.rows()
    assert rows[3]["address"] == ({"city": "Bern", "zip": None} if mode == "addNewColumns"
                                  else {"city": "Bern"})
    if mode == "addNewColumns":
        assert rows[2]["address"] == {"city": "Rome", "zip": 100} or \
            rows[2]["address"]["zip"] in ("00100", 100)
        assert rows[2]["_rescued_data"] is None
    elif mode == "rescue":
        assert _rescued(rows[2])["address"] == \
            "<address><city>Rome</city><zip>00100</zip></address>"
    else:
        assert schema["ignored_columns"] == {"address.zip": 1}
        assert rows[2]["address"] == {"city": "Rome"} and rows[2]["_rescued_data"] is None


def test_iceberg_target_takes_nested_fields(spark: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    from lakemark.catalog._iceberg import WAREHOUSE_ENV

    warehouse = tmp_path / "iceberg" / "warehouse"
    warehouse.mkdir(parents=True)
    monkeypatch.setenv(WAREHOUSE_ENV, str(warehouse))
    catalog = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    lake = Lake(tmp_path)
    lake.put("a.json", [FIRST])
    args = ("ingest", "files", str(lake.src), "--table", "db.t", "--target-format", "iceberg",
            "--iceberg-catalog", catalog, "--job", "j", "--state", lake.state, "--json")
    lake.cli(*args, *HINT)
    lake.put("b.json", [LATER])
    run = out(lake.cli(*args))
    assert sorted(run["schema"]["added_columns"]) == PATHS
    table = SqlCatalog("lakemark", uri=catalog, warehouse=warehouse.as_uri()).load_table("db.t")
    rows = {r["id"]: r for r in table.scan().to_arrow().to_pylist()}
    assert rows[2]["address"] == {"city": "Rome", "zip": "00100", "geo": {"lat": 41.9}}
    assert rows[2]["items"] == [{"sku": "b", "qty": 3}]
    assert rows[1]["address"]["zip"] is None
