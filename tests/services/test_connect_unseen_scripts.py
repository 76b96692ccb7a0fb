"""Scripts lakemark was not written against, run classic and over Spark Connect, compared.

Each script of ``unseen_scripts/`` is an unmodified shape of a public Glue PySpark job or plain
PySpark lakehouse script (written here, not copied): nested ApplyMapping into partitioned
glueparquet, ResolveChoice spec lists, Relationalize, Map/Filter/DropNullFields/SelectFields,
Join + DropFields + Spigot, ``GlueContext(spark.sparkContext)``, a catalog table with Spark SQL
and ``getSink``, SplitFields/RenameField on nested paths, Delta MERGE/update/delete/history,
Iceberg writes and reads, UDFs, pandas UDFs, windows, temp views, writer options.

Every script runs twice in each mode in its own folder: once on the first batch of input,
once more after a second batch arrives. After each run the test takes what the script wrote
(rows and schema of every Parquet, Delta, CSV and JSON output, read here without Spark), the
lines it printed that start with ``OUT``, its exit status and its one ``error:`` line, and for
Glue jobs the files each source took in each run (the bookmark at work). Classic mode
(``lakemark run``) and Connect mode (``lakemark run --remote``) must give the same, or, for
what needs Spark's JVM in the client, Connect refuses the script in one line naming the call,
with the job's bookmark left as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from conftest import ConnectServer, lakemark_cli, need_connect_client

SCRIPTS = Path(__file__).resolve().parent / "unseen_scripts"
GLUE_BOOKMARKS = ("--job-bookmark-option", "job-bookmark-enable")


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _order(order_id: int, cid: str, name: str, city: str, country: str, amount: float,
           items: list[tuple[str, int]], status: str, day: str, version: int = 1) -> str:
    return json.dumps({
        "order_id": order_id, "amount": amount, "status": status, "day": day,
        "version": version,
        "customer": {"id": cid, "name": name, "address": {"city": city, "country": country}},
        "items": [{"sku": s, "qty": q} for s, q in items]}) + "\n"


#: The input of the first run, then what arrives before the second (relative path: text).
BATCHES: list[dict[str, str]] = [
    {
        "orders/b1.json": "".join([
            _order(1, "c1", "Ada", "Paris", "FR", 12.5, [("a", 2), ("b", 1)], "new",
                   "2026-01-01"),
            _order(2, "c2", "Grace", "Lyon", "FR", 25.0, [("c", 1)], "cancelled",
                   "2026-01-01"),
            _order(3, "c3", "Linus", "Oslo", "NO", 7.25, [("a", 1), ("d", 3)], "new",
                   "2026-01-02")]),
        "payments/p1.json": '{"id": 1, "amount": 10, "ref": "A1"}\n'
                            '{"id": 2, "amount": "12.50", "ref": 7}\n',
        "customers/c1.csv": "id,name,tier\nc1,Ada,gold\nc2,Grace,silver\nc3,Linus,gold\n",
    },
    {
        "orders/b2.json": "".join([
            _order(4, "c1", "Ada", "Paris", "FR", 30.0, [("e", 2)], "new", "2026-01-03"),
            _order(1, "c1", "Ada", "Paris", "FR", 15.0, [("a", 3)], "shipped", "2026-01-03",
                   version=2),
            _order(5, "c4", "Ken", "Tokyo", "JP", 9.0, [("a", 1)], "new", "2026-01-03")]),
        "payments/p2.json": '{"id": 3, "amount": 5, "ref": "C3"}\n',
        "customers/c2.csv": "id,name,tier\nc4,Ken,bronze\n",
    },
]


@dataclass
class Case:
    """One script: its arguments (``{root}`` is the case's folder), the Glue job name when it
    is a Glue job with bookmarks, and the one line Connect refuses it with, if it must."""

    script: str
    args: tuple[str, ...]
    job: str | None = None
    refused: str | None = None
    catalog: bool = False


def _glue(script: str, *args: str, **kw: Any) -> Case:
    job = script.removesuffix(".py")
    return Case(script, ("--JOB_NAME", job, *args, *GLUE_BOOKMARKS), job=job, **kw)


CASES = [
    _glue("glue_nested_mapping_partitioned.py", "--source_path", "{root}/in/orders",
          "--target_path", "{root}/out"),
    _glue("glue_choice_make_struct.py", "--payments", "{root}/in/payments", "--out",
          "{root}/out"),
    _glue("glue_relationalize_items.py", "--source", "{root}/in/orders", "--out", "{root}/out",
          "--TempDir", "{root}/tmp"),
    _glue("glue_map_filter_dropnull.py", "--source", "{root}/in/orders", "--out", "{root}/out"),
    _glue("glue_join_spigot.py", "--orders", "{root}/in/orders", "--customers",
          "{root}/in/customers", "--out", "{root}/out", "--sample", "{root}/out_sample"),
    _glue("glue_spark_context_from_session.py", "--source", "{root}/in/orders", "--out",
          "{root}/out"),
    _glue("glue_catalog_sql_sink.py", "--database", "shop", "--table", "orders", "--out",
          "{root}/out", "--min_amount", "8", catalog=True),
    _glue("glue_split_rename_nested.py", "--source", "{root}/in/orders", "--out", "{root}/out"),
    _glue("glue_hadoop_conf.py", "--source", "{root}/in/orders", "--out", "{root}/out",
          refused="error: SparkContext._jsc is not available over Spark Connect yet (run it "
                  "without --remote/SPARK_REMOTE)"),
    Case("delta_merge_upsert.py", ("{root}/in/orders", "{root}/out/orders")),
    Case("delta_update_delete_history.py", ("{root}/in/orders", "{root}/out/orders")),
    Case("iceberg_append_aggregate.py", ("{root}/in/orders",)),
    Case("window_udf_views.py", ("{root}/in/orders", "{root}/out")),
    Case("pandas_udf_csv.py", ("{root}/in/orders", "{root}/out")),
    Case("dataframe_writer_modes.py", ("{root}/in/customers", "{root}/in/orders", "{root}/out")),
    Case("cached_source_file_names.py", ("{root}/in/orders", "{root}/out")),
    Case("hive_builder_sql_table.py", ("{root}/in/customers", "{root}/in/orders", "{root}/out")),
    Case("rdd_map_to_df.py", ("{root}/in/orders", "{root}/out"),
         refused="error: DataFrame.rdd is not available over Spark Connect (it has no RDDs; "
                 "run it without --remote/SPARK_REMOTE)"),
]


def _catalog(root: Path) -> None:
    tables = root / "connection" / "catalog" / "tables"
    tables.mkdir(parents=True)
    (tables.parent / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "shop"}]}))
    (tables / "shop.json").write_text(json.dumps({"TableList": [{
        "Name": "orders", "DatabaseName": "shop", "TableType": "EXTERNAL_TABLE",
        "PartitionKeys": [], "Parameters": {"classification": "json"},
        "StorageDescriptor": {
            "Location": str(root / "in" / "orders") + "/",
            "Columns": [{"Name": "order_id", "Type": "bigint"},
                        {"Name": "amount", "Type": "double"},
                        {"Name": "customer",
                         "Type": "struct<id:string,name:string,address:struct<city:string,"
                                 "country:string>>"}],
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"}}}]}))


def _value(v: Any) -> Any:
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, dict):
        return {k: _value(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v if isinstance(v, (int, float, str, bool, type(None))) else str(v)


def _outputs(root: Path) -> dict[str, Any]:
    """What the script left in its folder, read without Spark: per folder of data files the
    sorted rows (Parquet, ORC, Delta: with the schema), or lines (CSV, JSON)."""
    seen: dict[str, Any] = {}
    tables: list[Path] = []
    for top in sorted(p for p in root.iterdir() if p.name.startswith("out")):
        for folder in sorted([top, *(p for p in top.rglob("*") if p.is_dir())]):
            rel = str(folder.relative_to(root))
            if any(t in folder.parents for t in tables) or "/." in rel:
                continue
            if (folder / "_delta_log").is_dir():
                tables.append(folder)
                from deltalake import DeltaTable

                table = DeltaTable(str(folder)).to_pyarrow_table()
                seen[rel] = {"schema": str(table.schema),
                             "rows": sorted(json.dumps(_value(r), sort_keys=True)
                                            for r in table.to_pylist())}
                continue
            files = [f for f in sorted(folder.iterdir()) if f.is_file()
                     and not f.name.startswith(("_", ".")) and not f.name.endswith(".crc")]
            rows: list[str] = []
            schemas: set[str] = set()
            headers: set[str] = set()
            for f in files:
                if ".parquet" in f.name:
                    table = pq.read_table(f)
                    schemas.add(str(table.schema.remove_metadata()))
                    rows += [json.dumps(_value(r), sort_keys=True) for r in table.to_pylist()]
                elif ".orc" in f.name:
                    from pyarrow import orc

                    table = orc.read_table(str(f))
                    schemas.add(str(table.schema))
                    rows += [json.dumps(_value(r), sort_keys=True) for r in table.to_pylist()]
                else:
                    import gzip

                    raw = f.read_bytes()
                    text = (gzip.decompress(raw) if f.name.endswith(".gz") else raw).decode()
                    lines = [line for line in text.splitlines() if line.strip()]
                    if ".csv" in f.name and lines:  # every CSV output here has a header
                        headers.add(lines.pop(0))
                    rows += lines
            if rows or (files and not any(p.is_dir() for p in folder.iterdir())):
                seen[rel] = {"schema": sorted(schemas), "headers": sorted(headers),
                             "rows": sorted(rows)}
    return seen


def _cli_json(root: Path, *args: str) -> Any:
    done = lakemark_cli(*args, "--state", f"sqlite:///{root / 'state.db'}", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _taken(root: Path, job: str) -> list[dict[str, Any]]:
    """Per run of ``job``: its status and the files (names under the input folder) each
    source took."""
    taken: list[dict[str, Any]] = []
    if not (root / "state.db").exists():
        return taken
    for run in _cli_json(root, "runs", "list", job):
        sources = _cli_json(root, "runs", "show", run["run_id"])["sources"]
        taken.append({"status": run["status"], "sources": {
            name: sorted(str(Path(f["path"]).relative_to(root / "in"))
                         for f in source.get("files", []))
            for name, source in sorted(sources.items())}})
    return taken


def run_case(case: Case, root: Path, server: ConnectServer, remote: bool) -> list[Any]:
    """Run ``case`` twice (second batch of input in between) in ``root``; what each run gave."""
    root.mkdir(parents=True)
    if case.catalog:
        _catalog(root)
    (root / "iceberg").mkdir()
    env = {**server.env, "PYSPARK_PYTHON": sys.executable,
           "LAKEMARK_ICEBERG_CATALOG": f"sqlite:///{root / 'iceberg' / 'catalog.db'}"}
    catalog = ["--catalog", str(root / "connection")] if case.catalog else []
    where = ["--remote", server.endpoint] if remote else []
    results: list[Any] = []
    for batch in BATCHES:
        for rel, text in batch.items():
            (root / "in" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "in" / rel).write_text(text)
        args = [a.replace("{root}", str(root)) for a in case.args]
        done = lakemark_cli("run", "--state", f"sqlite:///{root / 'state.db'}", *catalog,
                            *where, str(SCRIPTS / case.script), *args, env=env, timeout=600)
        printed = [line.replace(str(root), "ROOT") for line in done.stdout.splitlines()
                   if line.startswith("OUT")]
        errors = [line.replace(str(root), "ROOT") for line in done.stderr.splitlines()
                  if line.startswith("error:")]
        results.append({"rc": done.returncode, "printed": printed, "errors": errors,
                        "outputs": _outputs(root),
                        "stderr": done.stderr[-3000:]})
    if case.job:
        results.append({"taken": _taken(root, case.job)})
    return results


def _without_stderr(results: list[Any]) -> list[Any]:
    return [{k: v for k, v in r.items() if k != "stderr"} for r in results]


@pytest.mark.long  # four fresh `lakemark run` processes per script, two of them classic JVMs
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.script.removesuffix(".py"))
def test_an_unseen_script_gives_the_same_over_connect(connect_server: ConnectServer,
                                                      tmp_path: Path, case: Case) -> None:
    classic = run_case(case, tmp_path / "classic", connect_server, remote=False)
    assert all(r["rc"] == 0 for r in classic[:2]), classic[-2]["stderr"]
    assert classic[0]["outputs"] or classic[0]["printed"], "the script gave nothing to compare"
    remote = run_case(case, tmp_path / "remote", connect_server, remote=True)
    if case.refused is None:
        assert all(r["rc"] == 0 for r in remote[:2]), remote[0]["stderr"] + remote[1]["stderr"]
        assert _without_stderr(remote) == _without_stderr(classic)
        if case.job:  # the bookmark: the second run took only the second batch
            second = classic[-1]["taken"][1]["sources"]
            assert all(not any(f.endswith(("b1.json", "p1.json", "c1.csv")) for f in files)
                       for files in second.values()), second
    else:
        for result in remote[:2]:
            assert result["rc"] == 1, result["stderr"]
            assert result["errors"] == [case.refused], result["stderr"]
            assert result["outputs"] == {}
        if case.job:  # refused before job.init (no state at all) or after: no bookmark kept
            assert all(r["status"] == "FAILED" for r in remote[-1]["taken"])
            if (tmp_path / "remote" / "state.db").exists():
                state = _cli_json(tmp_path / "remote", "bookmark", "show", case.job)["state"]
                assert state == {}


def test_an_in_process_run_puts_the_connect_classes_back(connect_server: ConnectServer,
                                                         tmp_path: Path) -> None:
    """What ``lakemark run --remote`` lends the script (the session's ``sparkContext`` stand-in,
    a frame's ``rdd`` refused by name, ``persist``/``stop`` that unpersist what it cached) is
    pyspark's own again once the run ends, for a caller that goes on in the same process."""
    script = tmp_path / "log_level.py"
    script.write_text("from pyspark.sql import SparkSession\n"
                      "spark = SparkSession.builder.getOrCreate()\n"
                      "spark.sparkContext.setLogLevel('WARN')\n"
                      "spark.range(5).cache().count()\n"
                      "print('COUNT', spark.range(3).count())\n")
    code = f'''
from click.testing import CliRunner
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.session import SparkSession
from lakemark.cli import cli

rdd, persist, stop = (DataFrame.__dict__["rdd"], DataFrame.__dict__["persist"],
                     SparkSession.__dict__["stop"])
done = CliRunner().invoke(cli, ["run", "--state", {f"sqlite:///{tmp_path / 'state.db'}"!r},
                                "--remote", {connect_server.endpoint!r}, {str(script)!r}])
print("EXIT", done.exit_code, "COUNT 3" in done.output)
print("PUT BACK", "sparkContext" not in SparkSession.__dict__, DataFrame.__dict__["rdd"] is rdd,
      DataFrame.__dict__["persist"] is persist, SparkSession.__dict__["stop"] is stop)
'''
    env = {k: v for k, v in connect_server.env.items()
           if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env={**env, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-2:] == ["EXIT 0 True", "PUT BACK True True True True"], \
        done.stdout[-2000:] + done.stderr[-2000:]
