"""``operation`` / ``operationParameters`` as Delta on Spark records them (issue 32): delta-rs's
own commit records mapped (tables written by deltalake here, no Spark), lakemark's recorded
names shown as recorded, Delta-Spark's records shown as written."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, write_deltalake

from lakemark.planning.delta_history import record, spark_view, write_record


def _views(path: Path) -> list[tuple[str | None, dict[str, str | None] | None]]:
    return [spark_view(c) for c in reversed(DeltaTable(str(path)).history())]


def test_delta_rs_records_map_to_delta_on_spark(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"a": [1, 2], "p": ["x", "y"]}), partition_by=["p"])
    write_deltalake(str(path), pa.table({"a": [3], "p": ["x"]}), mode="append")
    write_deltalake(str(path), pa.table({"a": [4], "p": ["x"]}), mode="overwrite",
                    predicate="p = 'x'")
    table = DeltaTable(str(path))
    table.update({"a": "a + 1"}, predicate="a > 3")
    table.delete("a = 2")
    table.merge(pa.table({"a": [9], "p": ["z"]}), "s.a = t.a", source_alias="s",
                target_alias="t").when_not_matched_insert_all().execute()
    write_deltalake(str(path), pa.table({"a": [5], "p": ["z"]}), mode="append")
    table = DeltaTable(str(path))
    table.optimize.compact()
    table.restore(1)
    table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    views = _views(path)
    assert [v[0] for v in views] == ["WRITE", "WRITE", "WRITE", "UPDATE", "DELETE", "MERGE",
                                     "WRITE", "OPTIMIZE", "RESTORE", "VACUUM START", "VACUUM END"]
    assert views[0][1] == {"mode": "ErrorIfExists", "partitionBy": '["p"]'}
    assert views[1][1] == {"mode": "Append", "partitionBy": '["p"]'}
    assert views[2][1] == {"mode": "Overwrite", "partitionBy": '["p"]', "predicate": "p = 'x'"}
    assert views[3][1] == {"predicate": '["a > 3"]'}
    assert views[4][1] == {"predicate": '["a = 2"]'}
    merge = views[5][1] or {}
    assert json.loads(merge["predicate"] or "") == ["t.a = s.a"]
    assert json.loads(merge["notMatchedPredicates"] or "") == [{"actionType": "insert"}]
    assert merge["matchedPredicates"] == "[]" and merge["notMatchedBySourcePredicates"] == "[]"
    assert views[7][1] == {"predicate": "[]", "zOrderBy": "[]", "auto": "false"}
    assert views[8][1] == {"version": "1", "timestamp": None}
    assert (views[9][1] or {})["retentionCheckEnabled"] == "false"
    assert views[10][1] == {"status": "COMPLETED"}


def test_create_table_records(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int64()), ("p", pa.string())])
    DeltaTable.create(str(tmp_path / "c"), schema, partition_by=["p"], description="d",
                      configuration={"delta.appendOnly": "false"})
    assert _views(tmp_path / "c") == [("CREATE TABLE", {
        "isManaged": "false", "description": "d", "partitionBy": '["p"]',
        "properties": '{"delta.appendOnly": "false"}'})]


def test_lakemark_records_win_and_spark_records_pass_through(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"a": [1]}), commit_properties=CommitProperties(
        custom_metadata=write_record("errorifexists", [])))
    write_deltalake(str(path), pa.table({"a": [1]}), mode="overwrite",
                    commit_properties=CommitProperties(custom_metadata=record(
                        "REPLACE TABLE", {"isManaged": "false", "description": None})))
    assert _views(path) == [("WRITE", {"mode": "ErrorIfExists", "partitionBy": "[]"}),
                            ("REPLACE TABLE", {"isManaged": "false", "description": None})]
    spark = {"operation": "CREATE TABLE AS SELECT", "engineInfo": "Apache-Spark/3.5.3 "
             "Delta-Lake/3.3.0", "operationParameters": {"isManaged": "true",
                                                         "partitionBy": "[]"}}
    assert spark_view(spark) == ("CREATE TABLE AS SELECT", {"isManaged": "true",
                                                            "partitionBy": "[]"})
    assert spark_view({"operation": "UPDATE", "operationParameters": {"predicate": "x"}}) == (
        "UPDATE", {"predicate": "x"})  # no engine: as written
