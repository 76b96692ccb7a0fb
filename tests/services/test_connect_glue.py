"""Glue scripts under ``lakemark run --remote``, against the suite's real Spark Connect server.

The scripts are the shapes of tests/glue/scripts, unmodified: a Glue-generated catalog job
(``SparkContext()`` → ``GlueContext``, ``from_catalog`` with bookmarks, ``ApplyMapping``, a
JSON sink) and a hand-written DynamicFrame job (``from_options`` JSON and CSV, ``Filter`` with
a Python function, ``Join``, ``RenameField``, ``DropFields``, ``ResolveChoice``, a Parquet
sink). What needs Spark's JVM in the client is refused in one line naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from conftest import ConnectServer, lakemark_cli, need_connect_client

SCRIPTS = Path(__file__).resolve().parents[1] / "glue" / "scripts"


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _csv_table(name: str, location: Path, columns: list[str]) -> dict[str, Any]:
    """A header-less CSV table as a Glue crawler records it."""
    return {
        "Name": name, "DatabaseName": "database",
        "StorageDescriptor": {
            "Columns": [{"Name": c, "Type": "string"} for c in columns],
            "Location": str(location) + "/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "SerdeInfo": {
                "SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                "Parameters": {"field.delim": ","}},
        },
        "PartitionKeys": [], "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv", "delimiter": ","},
    }


def _run(server: ConnectServer, tmp: Path, script: Path, *args: str, remote: bool = True,
         ok: bool = True) -> Any:
    env = dict(server.env)
    where = ["--remote", server.endpoint] if remote else []
    if not remote:
        env["SPARK_REMOTE"] = server.endpoint
    catalog = ["--catalog", str(tmp / "connection")] if (tmp / "connection").exists() else []
    done = lakemark_cli("run", "--state", f"sqlite:///{tmp / 'state.db'}", *catalog, *where,
                        str(script), *args, env=env, timeout=600)
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done


def _cli(tmp: Path, *args: str) -> Any:
    done = lakemark_cli(*args, "--state", f"sqlite:///{tmp / 'state.db'}", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _catalog(tmp: Path, table: dict[str, Any]) -> None:
    catalog = tmp / "connection" / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "database"}]}))
    (catalog / "tables" / "database.json").write_text(json.dumps({"TableList": [table]}))


def test_a_generated_catalog_script_over_connect_takes_only_new_files(
        connect_server: ConnectServer, tmp_path: Path) -> None:
    data = tmp_path / "relatedqueries"
    data.mkdir()
    (data / "q1.csv").write_text("spark,10\nglue,20\n")
    (data / "q2.csv").write_text("delta,30\n")
    _catalog(tmp_path, _csv_table("relatedqueries_csv", data, ["col0", "col1"]))
    out = tmp_path / "out"
    script = tmp_path / "sample.py"
    script.write_text((SCRIPTS / "seed_sample.py").read_text().replace("s3://input_path",
                                                                       str(out)))
    args = ("--JOB_NAME", "queries", "--job-bookmark-option", "job-bookmark-enable")

    _run(connect_server, tmp_path, script, *args)
    (data / "q3.csv").write_text("hudi,40\n")
    _run(connect_server, tmp_path, script, *args, remote=False)  # SPARK_REMOTE

    rows = [json.loads(line) for f in sorted(out.glob("*.json"))
            for line in f.read_text().splitlines() if line.strip()]
    assert sorted((r["name"], r["number"]) for r in rows) == [
        ("delta", "30"), ("glue", "20"), ("hudi", "40"), ("spark", "10")]
    runs = _cli(tmp_path, "runs", "list", "queries")
    assert [(r["run"], r["status"]) for r in runs] == [(1, "SUCCEEDED"), (2, "SUCCEEDED")]
    taken = [sorted(Path(f["path"]).name for f in
                    _cli(tmp_path, "runs", "show", r["run_id"])["sources"]["datasource0"]["files"])
             for r in runs]
    assert taken == [["q1.csv", "q2.csv"], ["q3.csv"]]


def test_a_dynamicframe_script_over_connect(connect_server: ConnectServer,
                                            tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    (events / "e.json").write_text("\n".join(json.dumps(r) for r in [
        {"id": 1, "user": {"id": "u1"}, "payload": {"kind": "click", "value": 3}},
        {"id": 2, "user": {"id": "u2"}, "payload": {"kind": "view", "value": 5}},
        {"id": 3, "user": {"id": "u2"}, "payload": {"kind": "click", "value": 7}},
    ]) + "\n")
    users = tmp_path / "users"
    users.mkdir()
    (users / "u.csv").write_text("uid,full name\nu1,Ada\nu2,Grace\n")
    out = tmp_path / "out"
    result = _run(connect_server, tmp_path, SCRIPTS / "dynamicframe_style.py", "--JOB_NAME",
                  "df", "--events", str(events), "--users", str(users), "--out", str(out),
                  "--job-bookmark-option", "job-bookmark-enable")
    assert "ROWS 2" in result.stdout  # Filter's Python function ran on the server
    rows = sorted(pq.read_table(str(out)).to_pylist(), key=lambda r: r["event_id"])
    assert rows == [
        {"event_id": 1, "user_id": "u1", "name": "Ada", "value": 3.0},
        {"event_id": 3, "user_id": "u2", "name": "Grace", "value": 7.0},
    ]
    assert set(_cli(tmp_path, "bookmark", "show", "df")["state"]) == {"events", "users"}


RECORD_ERRORS = '''\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Filter, Map
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src"])
sc = SparkContext.getOrCreate()
sc.setLogLevel("WARN")
glue = GlueContext(sc)
print("PARALLELISM", glue.sparkContext.defaultParallelism)
job = Job(glue)
job.init(args["JOB_NAME"], args)
frame = glue.create_dynamic_frame.from_options(
    "s3", {"paths": [args["src"]]}, format="json", transformation_ctx="src")
big = Filter.apply(frame=frame, f=lambda r: 100 / r["amount"] < 50, transformation_ctx="big")
print("KEPT", sorted(r["id"] for r in big.toDF().collect()))
print("ERRORS", big.errorsCount(), big.stageErrorsCount())
for row in big.errorsAsDynamicFrame().toDF().collect():
    print("ERROR", row["transformation"], row["error"].split(":")[0], row["record"])
inverse = Map.apply(frame=frame, f=lambda r: {"id": r["id"], "inverse": 1 / r["amount"],
                                              "tags": {"big": r["amount"] > 3}},
                    transformation_ctx="inverse")
print("SCHEMA", inverse.toDF().schema.simpleString())
print("MAPPED", sorted((r["id"], r["inverse"], r["tags"]["big"])
                       for r in inverse.toDF().collect()))
print("MAP ERRORS", inverse.errorsCount())
job.commit()
'''


def test_record_functions_and_their_error_records_over_connect(
        connect_server: ConnectServer, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_text("".join(json.dumps({"id": i, "amount": a}) + "\n"
                                        for i, a in [(1, 1), (2, 0), (3, 4), (4, 10)]))
    script = tmp_path / "errors.py"
    script.write_text(RECORD_ERRORS)
    done = _run(connect_server, tmp_path, script, "--JOB_NAME", "errs", "--src", str(src),
                "--job-bookmark-option", "job-bookmark-enable")
    assert "PARALLELISM 2" in done.stdout  # the server's local[2], through the stand-in
    assert "KEPT [3, 4]" in done.stdout  # 100/1 is not < 50; 100/0 fails: an error record
    assert "ERRORS 1 1" in done.stdout
    assert 'ERROR Filter ZeroDivisionError {"id": 2, "amount": 0}' in done.stdout
    # Map: the output schema inferred from every record on the server, as in classic mode
    assert "SCHEMA struct<id:bigint,inverse:double,tags:struct<big:boolean>>" in done.stdout
    assert ("MAPPED [(1, 1.0, False), (3, 0.25, True), (4, 0.1, True)]") in done.stdout
    assert "MAP ERRORS 1" in done.stdout


MERGE = '''\
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from pyspark.context import SparkContext

sc = SparkContext.getOrCreate()
glue = GlueContext(sc)
print("USER", sc.sparkUser())
spark = glue.spark_session
source = DynamicFrame.fromDF(spark.createDataFrame(
    [(1, "a"), (2, "b"), (2, "b2"), (3, "c")], "id long, v string"), glue, "source")
staging = DynamicFrame.fromDF(spark.createDataFrame(
    [(2, "B"), (4, "D")], "id long, v string"), glue, "staging")
merged = source.mergeDynamicFrame(staging, ["id"], transformation_ctx="merge")
merged.assertErrorThreshold()
print("MERGED", sorted(tuple(r) for r in merged.toDF().collect()))
'''


def test_merge_dynamic_frame_and_spark_user_over_connect(connect_server: ConnectServer,
                                                          tmp_path: Path) -> None:
    import getpass

    script = tmp_path / "merge.py"
    script.write_text(MERGE)
    done = _run(connect_server, tmp_path, script)
    env = connect_server.env
    user = env.get("SPARK_USER") or env.get("USER") or getpass.getuser()
    assert f"USER {user}" in done.stdout  # answered by the stand-in, no JVM
    # 2's records replaced by the staging one; 4 (no match in the source) not added
    assert "MERGED [(1, 'a'), (2, 'B'), (3, 'c')]" in done.stdout


REFUSED = '''\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "use"])
glue = GlueContext(SparkContext.getOrCreate())
job = Job(glue)
job.init(args["JOB_NAME"], args)
frame = glue.create_dynamic_frame.from_options(
    "s3", {"paths": [args["src"]]}, format="json", transformation_ctx="src")
if args["use"] == "partitions":
    print(frame.getNumPartitions())
else:
    SparkContext.getOrCreate().parallelize([1, 2]).count()
job.commit()
'''


@pytest.mark.parametrize(("use", "named"), [
    ("partitions", "DynamicFrame.getNumPartitions"),
    ("rdd", "SparkContext.parallelize"),
])
def test_what_needs_the_jvm_is_refused_by_name_and_keeps_the_bookmark(
        connect_server: ConnectServer, tmp_path: Path, use: str, named: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_text('{"id": 1}\n')
    script = tmp_path / "refused.py"
    script.write_text(REFUSED)
    done = _run(connect_server, tmp_path, script, "--JOB_NAME", "refused", "--src", str(src),
                "--use", use, "--job-bookmark-option", "job-bookmark-enable", ok=False)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {named} is not available over Spark Connect yet (run it "
                      "without --remote/SPARK_REMOTE)"]
    runs = _cli(tmp_path, "runs", "list", "refused")
    assert [r["status"] for r in runs] == ["FAILED"]
    assert _cli(tmp_path, "bookmark", "show", "refused")["state"] == {}


def test_choice_columns_and_resolve_choice_over_connect(connect_server: ConnectServer,
                                                        tmp_path: Path) -> None:
    """AWS's resolveChoice tutorial shape (tests/glue/scripts/payments_resolve_choice.py): a
    crawled CSV id column of longs with two text ids is choice(long, string) over Connect too,
    and each strategy keeps every value as in classic mode."""
    data = tmp_path / "claims"
    data.mkdir()
    lines = ["DRG Definition,Provider Id,Provider Name,Total Discharges"]
    lines += [f"039 - X,{10001 + i},Hospital {i},{20 + i * 10}" for i in range(4)]
    lines += ["948 - Y,ABC0,Clinic A,12", "948 - Y,ABC1,Clinic B,40"]
    (data / "part-0.csv").write_text("\n".join(lines) + "\n")
    cols = [("drg definition", "string"), ("provider id", "bigint"),
            ("provider name", "string"), ("total discharges", "bigint")]
    catalog = tmp_path / "connection" / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "payments"}]}))
    (catalog / "tables" / "payments.json").write_text(json.dumps({"TableList": [{
        "Name": "claims", "DatabaseName": "payments",
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t} for n, t in cols],
            "Location": str(data) + "/",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}}},
        "PartitionKeys": [],
        "Parameters": {"classification": "csv", "skip.header.line.count": "1"}}]}))
    out = tmp_path / "out"
    result = _run(connect_server, tmp_path, SCRIPTS / "payments_resolve_choice.py",
                  "--JOB_NAME", "claims", "--out", str(out))
    assert "|-- provider id: choice\n|    |-- long\n|    |-- string" in result.stdout

    def rows(name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for f in sorted((out / name).glob("*.json"))
                for line in f.read_text().splitlines() if line.strip()]

    longs = [10001, 10002, 10003, 10004]
    for name in ("cast", "project", "match_catalog"):
        assert sorted((r.get("provider id") for r in rows(name)), key=repr) == \
            sorted(longs + [None, None], key=repr)
    cols_rows = rows("make_cols")
    assert sorted(r["provider id_string"] for r in cols_rows
                  if "provider id_string" in r) == ["ABC0", "ABC1"]
    structs = [r["provider id"] for r in rows("make_struct")]
    assert sorted(s["long"] for s in structs if "long" in s) == longs
    assert sorted(((r.get("provider id"), r["total discharges"]) for r in rows("busy")),
                  key=repr) == [(10003, 40), (10004, 50), (None, 40)]
