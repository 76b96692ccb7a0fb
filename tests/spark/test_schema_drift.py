"""Issue 23 on real Spark and Delta: a JSON source whose shape drifts, run after run.

The headline story: run 1 reads ``code: 5``; later files carry ``code: "X5"`` and a new field
``extra``. Without schema tracking every later run failed ("table has long, DataFrame has
string") and the job was stuck. With ``--schema-evolution`` no run fails, ``extra`` becomes a
column of the tracked schema and of the Delta table in the same run, and ``"X5"`` is kept,
with its file, in ``_rescued_data``: every value is recoverable from the table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


class Drift:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.runner = CliRunner()

    def put(self, name: str, rows: list[Any]) -> Path:
        path = self.src / name
        path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                                for r in rows))
        return path

    def cli(self, *args: str, ok: bool = True) -> Result:
        result = self.runner.invoke(cli, list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    def ingest(self, *extra: str, ok: bool = True) -> Result:
        return self.cli("ingest", "files", str(self.src), str(self.target), "--job", "j",
                        "--state", self.state, "--json", *extra, ok=ok)

    def rows(self) -> list[dict[str, Any]]:
        table = DeltaTable(str(self.target)).to_pyarrow_table().to_pylist()
        return sorted(table, key=lambda r: (r["id"],))


def out(result: Result) -> dict[str, Any]:
    return json.loads(result.output[result.output.index("{"):])


def test_drifting_json_runs_through_and_every_value_is_recoverable(spark: Any,
                                                                    tmp_path: Path) -> None:
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "code": 5}, {"id": 2, "code": 6}])
    first = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert first["schema"]["inferred"] and first["rows"] == 2
    b = lake.put("b.json", [{"id": 3, "code": "X5", "extra": "e3"}, {"id": 4, "code": 7}])
    second = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert second["status"] == "SUCCEEDED" and second["rows"] == 2
    assert second["schema"]["added_columns"] == ["extra"]
    assert second["schema"]["rescued_values"] == {"code": 1}
    table = DeltaTable(str(lake.target))
    assert [f.name for f in table.schema().fields] == ["id", "code", "_rescued_data", "extra"] \
        or {f.name for f in table.schema().fields} == {"id", "code", "extra", "_rescued_data"}
    rows = lake.rows()
    assert [(r["id"], r["code"], r["extra"]) for r in rows] == [
        (1, 5, None), (2, 6, None), (3, None, "e3"), (4, 7, None)]
    rescued = json.loads(rows[2]["_rescued_data"])
    assert rescued["code"] == "X5" and rescued["_file_path"].endswith(str(b))
    assert [r["_rescued_data"] for r in rows if r["id"] != 3] == [None, None, None]
    # A third run with nothing odd does not infer: the schema is the tracked one.
    lake.put("c.json", [{"id": 5, "code": 8, "extra": "e5"}])
    third = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert third["schema"]["inferred"] is False and third["rows"] == 1
    assert third["schema"]["tracked_version"] == 2
    # The history says which run added which column.
    show = lake.cli("schema", "show", "j", "source", "--state", lake.state, "--json")
    history = json.loads(show.output)["history"]
    assert [(h["version"], [c["column"] for c in h["changes"]], h["run_id"]) for h in history] \
        == [(1, ["code", "id"], first["run_id"]), (2, ["extra"], second["run_id"])]


def test_rescue_keeps_the_schema_and_rescues_new_columns(spark: Any, tmp_path: Path) -> None:
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "code": 5}])
    lake.ingest("--schema-evolution", "rescue")
    # b.json is read by Spark's JSON reader (fast path); c.json, whose key differs from a
    # column only in case, by the exact path: both end up in one frame.
    lake.put("b.json", [{"id": 2, "code": "X5", "extra": {"deep": [1, 2]}}, "{not json"])
    lake.put("c.json", [{"id": 6, "Code": 9, "extra": 1}])
    run = out(lake.ingest("--schema-evolution", "rescue"))
    assert run["schema"]["new_columns"] == ["extra"] and run["schema"]["corrupt_records"] == 1
    assert run["schema"]["rescued_new_columns"] == {"Code": 1, "extra": 2}
    assert {f.name for f in DeltaTable(str(lake.target)).schema().fields} == \
        {"id", "code", "_rescued_data"}
    rows = DeltaTable(str(lake.target)).to_pyarrow_table().to_pylist()
    rescued = [json.loads(r["_rescued_data"]) for r in rows if r["_rescued_data"]]
    by_id = {r["id"]: r for r in rows}
    assert by_id[2]["code"] is None
    full = next(r for r in rescued if "code" in r)
    assert full["code"] == "X5" and json.loads(full["extra"]) == {"deep": [1, 2]}
    assert (by_id[6]["code"], json.loads(by_id[6]["_rescued_data"])) == \
        (None, {"Code": "9", "extra": "1", "_file_path": json.loads(
            by_id[6]["_rescued_data"])["_file_path"]})
    assert any(r.get("_corrupt_record") == "{not json" for r in rescued)


def test_fail_on_new_columns_names_them_and_writes_nothing(spark: Any, tmp_path: Path) -> None:
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "code": 5}])
    lake.ingest("--schema-evolution", "failOnNewColumns")
    version = DeltaTable(str(lake.target)).version()
    before = lake.cli("bookmark", "show", "j", "--state", lake.state, "--json").output
    lake.put("b.json", [{"id": 2, "code": 6, "extra": 1, "more": True}])
    failed = lake.ingest("--schema-evolution", "failOnNewColumns", ok=False)
    assert failed.exit_code == 1 and "new column(s) extra, more" in failed.output
    assert DeltaTable(str(lake.target)).version() == version
    after = lake.cli("bookmark", "show", "j", "--state", lake.state, "--json").output
    assert json.loads(after)["state"] == json.loads(before)["state"]
    # The same files go through once the mode allows them.
    run = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert run["files"] == 1 and run["schema"]["added_columns"] == ["extra", "more"]


def test_none_ignores_new_columns_and_counts_them(spark: Any, tmp_path: Path) -> None:
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "code": 5}])
    lake.ingest("--schema-evolution", "none")
    lake.put("b.json", [{"id": 2, "code": 6, "extra": 1}, {"id": 3, "extra": 2}])
    run = out(lake.ingest("--schema-evolution", "none"))
    assert run["schema"]["ignored_columns"] == {"extra": 2}
    rows = lake.rows()
    assert {f.name for f in DeltaTable(str(lake.target)).schema().fields} == \
        {"id", "code", "_rescued_data"}
    assert [r["_rescued_data"] for r in rows] == [None, None, None]
    shown = lake.cli("runs", "show", run["run_id"], "--state", lake.state, "--json").output
    assert json.loads(shown)["schemas"]["source"]["ignored_columns"] == {"extra": 2}


def test_the_api_tracks_resets_and_infers_again(spark: Any, tmp_path: Path) -> None:
    from lakemark import Job

    src = tmp_path / "in" / "day=1"
    src.mkdir(parents=True)
    (src / "a.json").write_text('{"id": 1, "code": 5}\n')
    state = f"sqlite:///{tmp_path / 'state.db'}"
    with Job("api", state=state, spark=spark) as job:
        df = job.read_files(str(tmp_path / "in"), format="json", ctx="s",
                            schema_evolution="rescue", rescued_data_column="_bad")
        assert df.columns == ["code", "id", "day", "_bad"]
        assert [tuple(r) for r in df.collect()] == [(5, 1, 1, None)]
    (src / "b.json").write_text('{"id": 2, "code": "X5"}\n')
    with Job("api", state=state, spark=spark) as job:
        df = job.read_files(str(tmp_path / "in"), format="json", ctx="s",
                            schema_evolution="rescue", rescued_data_column=None)
        # No rescue column: the value is null; Spark's _corrupt_record column holds lines that
        # are not JSON (sinks set them aside), here none.
        assert df.columns == ["code", "id", "day", "_corrupt_record"]
        assert [tuple(r) for r in df.collect()] == [(None, 2, 1, None)]
    store = Job("api", state=state).store
    assert store.reset_source_schema("api") == ["s"]
    (src / "c.json").write_text('{"id": 3, "code": "X7"}\n')
    with Job("api", state=state, spark=spark) as job:
        df = job.read_files(str(tmp_path / "in"), format="json", ctx="s",
                            schema_evolution="addNewColumns")
        assert dict(df.dtypes)["code"] == "string"  # inferred again, from this run's file
        assert [r["code"] for r in df.collect()] == ["X7"]
    assert [h.reason for h in store.source_schema_history("api", "s")] == [
        "inferred", "reset", "inferred"]


def test_a_tracked_read_refuses_what_it_cannot_honour(spark: Any, tmp_path: Path) -> None:
    from lakemark import Job
    from lakemark.errors import ConfigError, FormatError

    (tmp_path / "a.orc").write_bytes(b"")
    state = f"sqlite:///{tmp_path / 'state.db'}"
    with Job("bad", state=state, spark=spark) as job:
        with pytest.raises(ConfigError, match="schema evolution mode 'grow'"):
            job.read_files(str(tmp_path), format="orc", ctx="s", schema_evolution="grow")
        with pytest.raises(FormatError, match="not orc"):
            job.read_files(str(tmp_path), format="orc", ctx="s2", schema_evolution="rescue")
        with pytest.raises(ConfigError, match="transformation_ctx"):
            job.read_files(str(tmp_path), format="json", schema_evolution="rescue")


def test_csv_values_that_do_not_fit_and_ragged_lines_are_rescued(spark: Any,
                                                                  tmp_path: Path) -> None:
    lake = Drift(tmp_path)
    (lake.src / "a.csv").write_text("id,code\n1,5\n2,6\n")
    opts = ("--format", "csv", "--option", "header=true", "--option", "inferSchema=true",
            "--schema-evolution", "addNewColumns")
    first = out(lake.ingest(*opts))
    assert first["rows"] == 2 and first["schema"]["inferred"]
    (lake.src / "b.csv").write_text("id,code,extra\n3,X5,e3\n4,7,e4\n5,8,e5,surplus\n")
    second = out(lake.ingest(*opts))
    assert second["status"] == "SUCCEEDED" and second["schema"]["added_columns"] == ["extra"]
    assert second["schema"]["rescued_values"] == {"code": 1}
    assert second["schema"]["corrupt_records"] == 1
    rows = {r["id"]: r for r in DeltaTable(str(lake.target)).to_pyarrow_table().to_pylist()}
    assert (rows[3]["code"], rows[3]["extra"]) == (None, "e3")
    assert json.loads(rows[3]["_rescued_data"])["code"] == "X5"
    assert (rows[4]["code"], rows[4]["_rescued_data"]) == (7, None)
    ragged = [json.loads(r["_rescued_data"]) for r in rows.values()
              if r["_rescued_data"] and "_corrupt_record" in r["_rescued_data"]]
    assert [r["_corrupt_record"] for r in ragged] == ["5,8,e5,surplus"]


def test_schema_hints_fix_types_over_inference(spark: Any, tmp_path: Path) -> None:
    import datetime
    import decimal

    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "ts": "2026-11-25T10:00:00Z", "amount": 12.5},
                        {"id": 2, "ts": "nope", "amount": 3}])
    hints = ("--schema-evolution", "addNewColumns",
             "--schema-hints", "ts timestamp, amount decimal(12,2), note string")
    run = out(lake.ingest(*hints))
    assert run["schema"]["rescued_values"] == {"ts": 1} and run["rows"] == 2
    fields = {f.name: f.type.type for f in DeltaTable(str(lake.target)).schema().fields}
    assert (fields["ts"], fields["amount"], fields["note"]) == \
        ("timestamp", "decimal(12,2)", "string")
    rows = lake.rows()
    assert rows[0]["ts"] == datetime.datetime(2026, 11, 25, 10, tzinfo=datetime.UTC)
    assert rows[1]["amount"] == decimal.Decimal("3.00")
    assert rows[1]["ts"] is None and json.loads(rows[1]["_rescued_data"])["ts"] == "nope"
    bad = lake.ingest("--schema-evolution", "off", "--schema-hints", "ts timestamp", ok=False)
    assert bad.exit_code == 2 and "not tracked (--schema-evolution off)" in bad.output
    lake.put("b.json", [{"id": 3}])  # hints are parsed when the run reads (Spark parses DDL)
    wrong = lake.ingest("--schema-evolution", "rescue", "--schema-hints", "ts nosuchtype",
                        ok=False)
    assert wrong.exit_code == 1 and "ts nosuchtype" in wrong.output
    assert out(lake.ingest("--schema-evolution", "rescue"))["files"] == 1  # b.json waited


def test_a_wider_value_is_rescued_and_never_blocks_the_job(spark: Any, tmp_path: Path) -> None:
    # delta-rs (deltalake 1.x) cannot widen a column's type (no typeWidening table feature):
    # a value that needs a wider type than the tracked one (int -> long here) is rescued,
    # and every later run goes on.
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "n": 5}])
    opts = ("--schema-evolution", "addNewColumns", "--schema-hints", "n int")
    out(lake.ingest(*opts))
    lake.put("b.json", [{"id": 2, "n": 2**40}, {"id": 3, "n": 7}])
    run = out(lake.ingest(*opts))
    assert run["status"] == "SUCCEEDED" and run["schema"]["rescued_values"] == {"n": 1}
    fields = {f.name: f.type.type for f in DeltaTable(str(lake.target)).schema().fields}
    assert fields["n"] == "integer"
    rows = lake.rows()
    assert [(r["id"], r["n"]) for r in rows] == [(1, 5), (2, None), (3, 7)]
    assert json.loads(rows[1]["_rescued_data"])["n"] == str(2**40)
    lake.put("c.json", [{"id": 4, "n": 8}])
    assert out(lake.ingest(*opts))["rows"] == 1


def test_the_key_scan_misses_no_untracked_key(spark: Any, tmp_path: Path) -> None:
    # The scan tries its pattern only where a key can start (after "{" or ","): a rare key
    # in one record of thousands, keys after whitespace or line breaks, a key holding an
    # escaped quote right before a known name, and a new key inside a tracked struct's
    # object (not a top-level column: not reported) must all come out right.
    from pyspark.sql.types import StructType

    from lakemark.planning.files import FileEntry
    from lakemark.sources._json_tracked import scan_keys
    from lakemark.sources._options import make_request

    lines = [json.dumps({"id": i, "code": i, "s": {"x": i}}) for i in range(3000)]
    lines[1234] = '{"id": 1, "code": 2, "rare": 3}'
    lines[2000] = '{ "id" : 1 ,\t"spaced"  : 2 }'
    lines[2500] = '{"id": 1, "a\\"code": 2}'
    lines[2600] = '{"id": 1, "code": "text with \\"fake\\": 1 inside"}'
    lines[2999] = '{"id": 1, "s": {"x": 1, "inner": 2}}'
    path = tmp_path / "a.json"
    path.write_text("\n".join(lines) + "\n")
    schema = StructType.fromJson({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in
        (("code", "long"), ("id", "long"),
         ("s", {"type": "struct", "fields": [{"name": "x", "type": "long", "nullable": True,
                                               "metadata": {}}]}))]})
    request = make_request("json", "PERMISSIVE", {}, None, str(tmp_path))
    entry = FileEntry(0, str(path), path.stat().st_size)
    scan = scan_keys(spark, request, [entry], str(tmp_path), schema)
    assert scan.keys == {"rare": 1, "spaced": 1, 'a"code': 1}
    # A whole file as one record (multiLine): keys after line breaks are found as well.
    multi = tmp_path / "m"
    multi.mkdir()
    (multi / "b.json").write_text('{\n  "id": 1,\n  "code": 2,\n  "late"\n  : 3\n}\n')
    entry = FileEntry(0, str(multi / "b.json"), (multi / "b.json").stat().st_size)
    request = make_request("json", "PERMISSIVE", {"multiLine": "true"}, None, str(multi))
    assert scan_keys(spark, request, [entry], str(multi), schema).keys == {"late": 1}


def test_a_new_top_level_key_named_like_a_nested_field_is_added(spark: Any,
                                                                 tmp_path: Path) -> None:
    # "x" is a field of the tracked struct "s"; a later file has a top-level "x" too. The key
    # scan cannot tell depth from the text, so it must not take "x" for a known key.
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "s": {"x": 1}}])
    lake.ingest("--schema-evolution", "addNewColumns")
    lake.put("b.json", [{"id": 2, "s": {"x": 2}}, {"id": 3, "s": {"x": 3}, "x": "top"}])
    run = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert run["schema"]["added_columns"] == ["x"]
    assert [(r["id"], r["s"], r["x"]) for r in lake.rows()] == \
        [(1, {"x": 1}, None), (2, {"x": 2}, None), (3, {"x": 3}, "top")]


def test_keys_differing_only_in_case_in_one_record_do_not_stick_the_job(spark: Any,
                                                                        tmp_path: Path) -> None:
    # Spark cannot infer a schema from a record holding both `code` and `Code` while the
    # session is case-insensitive; the first run must still go through, keep one `code`
    # column and rescue the other spelling, and the next run must too.
    lake = Drift(tmp_path)
    lake.put("a.json", [{"id": 1, "Code": 9, "code": 5}, {"id": 2, "code": 6}])
    first = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert first["status"] == "SUCCEEDED" and first["rows"] == 2
    assert {f.name for f in DeltaTable(str(lake.target)).schema().fields} == \
        {"id", "code", "_rescued_data"}
    by_id = {r["id"]: r for r in lake.rows()}
    assert by_id[1]["code"] == 5 and json.loads(by_id[1]["_rescued_data"])["Code"] == "9"
    assert by_id[2]["code"] == 6 and by_id[2]["_rescued_data"] is None
    lake.put("b.json", [{"id": 3, "code": 7, "CODE": 1}])
    second = out(lake.ingest("--schema-evolution", "addNewColumns"))
    assert second["status"] == "SUCCEEDED" and second["rows"] == 1
    row = {r["id"]: r for r in lake.rows()}[3]
    assert row["code"] == 7 and json.loads(row["_rescued_data"])["CODE"] == "1"
    assert spark.conf.get("spark.sql.caseSensitive") == "false"
