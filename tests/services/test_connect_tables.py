"""Tables, ``format(...)``, JDBC, ``delta.tables`` and runtime lineage over Spark Connect, against
the suite's real Connect server (docs/connect.md).

The shape is a data team's scheduled scripts run with ``lakemark run --remote``: one writes and
reads Delta and Iceberg tables with ``format(...)`` (time travel, exactly-once tokens), one
takes the new rows of Delta, Iceberg and Hudi tables and of a PostgreSQL table by its bookmark
key; both plan and keep their bookmarks in the client, and Spark runs on the server.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from pgtest import PgSchema, jdbc_url, need_postgres

from conftest import ConnectServer, lakemark_cli, need_service

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from hudi_tables import HudiTableWriter  # noqa: E402

FORMATS = '''\
import sys
from pathlib import Path
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
lake, catalog = sys.argv[1], sys.argv[2]
first = spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string")
late = spark.createDataFrame([(3, "c")], "id long, v string")
first.write.format("delta").mode("append").save(lake)
for _ in range(2):  # a retried write with the same token commits once
    late.write.format("delta").mode("append").option("txnAppId", "load") \\
        .option("txnVersion", "1").save(lake)
print("DELTA", sorted(r.id for r in spark.read.format("delta").load(lake).collect()))
print("DELTA_V0", sorted(r.id for r in spark.read.format("delta").option("versionAsOf", 0)
                         .load(lake).collect()))
parts = lake + "_parts"
first.write.format("delta").partitionBy("v").save(parts)  # the default mode: a new table
first.write.format("delta").mode("ignore").save(parts)  # it exists: nothing written
try:
    first.write.format("delta").save(parts)
except Exception as exc:  # errorifexists on an existing table: lakemark's one line
    print("REFUSED", type(exc).__name__, str(exc))
print("PARTS", sorted(p.name for p in Path(parts).iterdir()),
      spark.read.format("delta").load(parts).count())
ice = spark.createDataFrame([(10, "x")], "id long, v string")
ice.write.format("iceberg").option("iceberg_catalog", catalog).mode("append").save("db.ev")
for _ in range(2):
    late.write.format("iceberg").option("iceberg_catalog", catalog).option("txnAppId", "load") \\
        .option("txnVersion", "1").mode("append").save("db.ev")
print("ICEBERG", sorted(r.id for r in spark.read.format("iceberg")
                        .option("iceberg_catalog", catalog).load("db.ev").collect()))
spark.conf.set("spark.sql.catalog.cat", "org.apache.iceberg.spark.SparkCatalog")
print("TABLE", sorted(r.id for r in spark.table("cat.db.ev").collect()),
      sorted(r.id for r in spark.read.table("cat.db.ev").collect()))
'''

TABLES = '''\
import sys
from lakemark import Job

lake, catalog, hudi, jdbc, table, user = sys.argv[1:7]
with Job("tables_in") as job:
    frames = {
        "delta": job.read_table(lake + "/delta", ctx="delta"),
        "iceberg": job.read_table("db.src", format="iceberg", ctx="iceberg",
                                  options={"iceberg_catalog": catalog}),
        "hudi": job.read_table(hudi, format="hudi", ctx="hudi"),
        "jdbc": job.read_jdbc(jdbc, table, user=user, keys=["id"], ctx="jdbc"),
    }
    for name, frame in frames.items():
        print(name.upper(), sorted(r.id for r in frame.collect()))
    job.write(frames["jdbc"].select("id"), lake + "/out", format="delta", ctx="out")
    job.commit()
'''

SEED = '''\
import sys
from lakemark import Job

lake, catalog, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Job("tables_seed") as job:
    rows = job.spark.range(first, first + 2).selectExpr("id", "'v' AS v")
    job.write(rows, lake + "/delta", format="delta", ctx="delta")
    job.write(rows, "db.src", format="iceberg", iceberg_catalog=catalog, ctx="iceberg")
    job.commit()
'''

DELTA_TABLES = '''\
import sys
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, v string").write \\
    .format("delta").save(sys.argv[1])
table = DeltaTable.forPath(spark, sys.argv[1])
table.delete("id = 1")
table.update("id = 2", {"v": "'bb'"})
changes = spark.createDataFrame([(3, "cc"), (4, "d")], "id long, v string")
table.alias("t").merge(changes.alias("s"), "t.id = s.id").whenMatchedUpdateAll() \\
    .whenNotMatchedInsertAll().execute()
print("ROWS", sorted((r.id, r.v) for r in table.toDF().collect()))
print("HISTORY", table.history().count())
'''

DELTA_TABLES_COLUMN = '''\
import sys
from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string").write.format("delta") \\
    .save(sys.argv[1])
print("WRITTEN")
DeltaTable.forPath(spark, sys.argv[1]).delete(F.col("id") == 1)
print("CHANGED")
'''

WRITE_TO = '''\
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.conf.set("spark.sql.catalog.cat", "org.apache.iceberg.spark.SparkCatalog")
df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string")
df.write.format("iceberg").save("cat.db.w")
print("WRITTEN")
df.writeTo("cat.db.w").overwritePartitions()
print("CHANGED")
'''

REFUSED = {
    "delta.tables": (DELTA_TABLES_COLUMN, "error: a DeltaTable.delete condition given as a "
                     "Column (give it as a SQL string) is not available over Spark Connect yet "
                     "(run it without --remote/SPARK_REMOTE)"),
    "writeTo": (WRITE_TO, "error: writeTo('cat.db.w').overwritePartitions(…) is not supported "
                "on Iceberg tables without the Iceberg runtime; use append(), create(), "
                "createOrReplace() or replace()"),
}


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    missing = [m for m in ("grpc", "grpc_status") if importlib.util.find_spec(m) is None]
    if missing:
        need_service(f"the Spark Connect client libraries ({', '.join(missing)}; "
                     "pip install 'lakemark[connect]')")


def _run(server: ConnectServer, tmp_path: Path, code: str, *args: str,
         env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    script = tmp_path / f"script_{abs(hash(code))}.py"
    script.write_text(code)
    return lakemark_cli("run", "--state", f"sqlite:///{tmp_path / 'state.db'}", "--remote",
                        server.endpoint, str(script), *args, env={**server.env, **(env or {})})


def test_format_delta_and_iceberg_in_a_remote_script(connect_server: ConnectServer,
                                                     tmp_path: Path) -> None:
    """``format("delta"|"iceberg")`` served by lakemark's Python data sources on the server:
    appends, ``versionAsOf`` time travel, a retried ``txnAppId``/``txnVersion`` write that
    commits once, the script's save mode and ``partitionBy`` (which Spark alone refuses for a
    Python data source), and lakemark's own one-line error."""
    (tmp_path / "iceberg").mkdir()
    catalog = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    done = _run(connect_server, tmp_path, FORMATS, str(tmp_path / "lake"), catalog,
                env={"LAKEMARK_ICEBERG_CATALOG": catalog})
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    assert "DELTA [1, 2, 3]" in out
    assert "DELTA_V0 [1, 2]" in out
    assert "ICEBERG [3, 10]" in out
    assert "TABLE [3, 10] [3, 10]" in out  # the plugin's catalog: LAKEMARK_ICEBERG_CATALOG
    assert "PARTS ['_delta_log', 'v=a', 'v=b'] 2" in out
    assert (f"REFUSED SinkError Delta table {tmp_path / 'lake'}_parts already exists (save "
            "mode 'errorifexists'); write with mode('append') or mode('overwrite')") in out


def test_tables_hudi_and_jdbc_take_new_rows_by_bookmark_over_connect(
        connect_server: ConnectServer, tmp_path: Path) -> None:
    """``Job.read_table`` (Delta, Iceberg, Hudi), ``Job.read_jdbc`` with a bookmark key and
    ``Job.write`` to Delta and Iceberg tables over Connect: the second run takes only what came
    after the first. Runtime column lineage is left out with one line; the run goes on."""
    user = need_postgres()
    pg = PgSchema(user, "lm_connect_")
    try:
        table = f"{pg.schema}.orders"
        pg.sql(f"CREATE TABLE {table} (id bigint PRIMARY KEY, amount double precision)")
        pg.sql(f"INSERT INTO {table} SELECT g, g FROM generate_series(1, 3) g")
        lake, hudi = tmp_path / "lake", tmp_path / "hudi"
        (tmp_path / "iceberg").mkdir()
        catalog = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
        writer = HudiTableWriter(hudi)
        writer.insert([{"id": 1, "name": "a", "day": "2026-01-01"}])
        lineage = tmp_path / "lineage.jsonl"
        env = {"LAKEMARK_OPENLINEAGE": f"file:{lineage}"}
        args = (str(lake), catalog, str(hudi), jdbc_url(), table, user)

        seeded = _run(connect_server, tmp_path, SEED, str(lake), catalog, "1")
        assert seeded.returncode == 0, seeded.stderr[-3000:]
        first = _run(connect_server, tmp_path, TABLES, *args, env=env)
        assert first.returncode == 0, first.stderr[-3000:]
        assert first.stdout.splitlines() == ["DELTA [1, 2]", "ICEBERG [1, 2]", "HUDI [1]",
                                             "JDBC [1, 2, 3]"]
        assert ("lakemark: column lineage is not available over Spark Connect yet (the run's "
                "lineage has no column facet)") in first.stderr.splitlines()
        events = [json.loads(line) for line in lineage.read_text().splitlines()]
        assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
        assert all("columnLineage" not in json.dumps(e) for e in events)

        seeded = _run(connect_server, tmp_path, SEED, str(lake), catalog, "3")
        assert seeded.returncode == 0, seeded.stderr[-3000:]
        writer.insert([{"id": 2, "name": "b", "day": "2026-01-02"}])
        pg.sql(f"INSERT INTO {table} VALUES (4, 4), (5, 5)")
        second = _run(connect_server, tmp_path, TABLES, *args)
        assert second.returncode == 0, second.stderr[-3000:]
        assert second.stdout.splitlines() == ["DELTA [3, 4]", "ICEBERG [3, 4]", "HUDI [2]",
                                              "JDBC [4, 5]"]
    finally:
        pg.close()
    from deltalake import DeltaTable

    assert sorted(DeltaTable(str(lake / "out")).to_pyarrow_table().column("id").to_pylist()) \
        == [1, 2, 3, 4, 5]


def test_delta_tables_api_with_sql_conditions_over_connect(connect_server: ConnectServer,
                                                           tmp_path: Path) -> None:
    """``DeltaTable.delete/update/merge`` with SQL-string conditions (and aliased frames in a
    merge) are served over Connect: Spark checks each condition against the frame on the server,
    and the table changes as in a classic session."""
    done = _run(connect_server, tmp_path, DELTA_TABLES, str(tmp_path / "lake"))
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    assert "ROWS [(2, 'bb'), (3, 'cc'), (4, 'd')]" in out
    assert "HISTORY 4" in out


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_what_connect_cannot_serve_is_refused_by_name(connect_server: ConnectServer,
                                                      tmp_path: Path, what: str) -> None:
    """A ``DeltaTable`` condition given as a Column is printed as SQL through the JVM, and
    ``df.writeTo(…).overwritePartitions()`` of an Iceberg catalog's table is refused in classic
    mode too (lakemark's Iceberg sink has no dynamic partition overwrite): over Connect both
    are refused in one line by name, and the table is left as it was."""
    code, line = REFUSED[what]
    lake = tmp_path / "lake"
    (tmp_path / "iceberg").mkdir()
    catalog = f"sqlite:///{tmp_path / 'iceberg' / 'catalog.db'}"
    done = _run(connect_server, tmp_path, code, str(lake),
                env={"LAKEMARK_ICEBERG_CATALOG": catalog})
    assert done.returncode == 1, done.stderr[-3000:]
    assert "WRITTEN" in done.stdout and "CHANGED" not in done.stdout
    assert done.stderr.strip().splitlines() == [line]
    if what == "delta.tables":
        from deltalake import DeltaTable

        assert sorted(DeltaTable(str(lake)).to_pyarrow_table().column("id").to_pylist()) \
            == [1, 2]
    else:
        from lakemark.catalog._iceberg import load_iceberg_catalog, resolve_iceberg_catalog

        table = load_iceberg_catalog(resolve_iceberg_catalog(catalog)).load_table("db.w")
        assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]
