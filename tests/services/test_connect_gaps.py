"""What a script does in classic mode, done over Spark Connect with the same result (issue 34):
plain-format ``s3://`` reads and writes without S3A, a Delta write's ``replaceWhere``, and
``df.writeTo`` of an Iceberg catalog's table. Each script runs twice as a data team's
scheduled job would — ``lakemark run`` in classic mode, then ``lakemark run --remote`` on the
suite's real Connect server — against moto_server and real Delta/Iceberg tables, and prints
the same lines both times (docs/connect.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ConnectServer, MotoServer, lakemark_cli, need_connect_client

pytestmark = [pytest.mark.services]

COMMON = '''\
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
where = sys.argv[1]


def show(tag, df):
    print(tag, df.schema.simpleString(), sorted(tuple(r) for r in df.collect()))


def err(tag, fn):
    try:
        fn()
        print(tag, "no error")
    except Exception as exc:
        print(tag, type(exc).__name__, str(exc).strip().splitlines()[0].replace(where, "W"))
'''

PLAIN_S3 = COMMON + '''
import io

import boto3
import pyarrow.orc

s3 = boto3.client("s3")
s3.create_bucket(Bucket=where)
for key, body in {"in/json/d=1/a.json": b'{"id":1,"v":"a"}\\n{"id":2,"v":"b"}\\n',
                  "in/json/d=2/b.json": b'{"id":3,"v":"c"}\\n',
                  "in/csv/a.csv": b"id;v\\n1;x\\n2;y\\n",
                  "in/bad/a.json": b'{"id":1}\\n{"id":\\n',
                  "in/text/a.txt": b"line one\\nline two\\n"}.items():
    s3.put_object(Bucket=where, Key=key, Body=body)
base = f"s3://{where}"


def folders(prefix):
    listed = s3.list_objects_v2(Bucket=where, Prefix=prefix).get("Contents", [])
    return sorted({o["Key"][len(prefix):].split("/")[0] for o in listed
                   if "/" in o["Key"][len(prefix):]})


js = spark.read.json(f"{base}/in/json")
show("JSON", js)
show("CSV", spark.read.option("header", True).option("sep", ";").csv(f"{base}/in/csv"))
show("CSV_SCHEMA", spark.read.schema("id long, v string").format("csv")
     .options(header="true", sep=";").load(f"{base}/in/csv"))
show("TEXT", spark.read.text(f"{base}/in/text"))
show("S3A", spark.read.json(f"s3a://{where}/in/json/d=2"))
err("FAILFAST", lambda: spark.read.option("mode", "FAILFAST").json(f"{base}/in/bad").collect())
js.write.partitionBy("d").parquet(f"{base}/out/pq")
print("FOLDERS", folders("out/pq/"))
show("PARQUET", spark.read.parquet(f"{base}/out/pq"))
err("AGAIN", lambda: js.write.parquet(f"{base}/out/pq"))
js.write.mode("ignore").parquet(f"{base}/out/pq")
js.where("id = 1").write.mode("append").partitionBy("d").parquet(f"{base}/out/pq")
show("APPENDED", spark.read.parquet(f"{base}/out/pq"))
js.where("id = 3").write.mode("overwrite").format("parquet").save(f"{base}/out/pq")
show("OVERWRITTEN", spark.read.parquet(f"{base}/out/pq"))
err("ORC_OUT", lambda: js.write.orc(f"{base}/out/orc"))
orc = io.BytesIO()
pyarrow.orc.write_table(pyarrow.table({"id": [7, 8]}), orc)
s3.put_object(Bucket=where, Key="in/orc/a.orc", Body=orc.getvalue())
show("ORC", spark.read.orc(f"{base}/in/orc"))
js.write.option("header", True).csv(f"{base}/out/csv")
show("CSV_OUT", spark.read.schema("id long, v string, d int").option("header", True)
     .csv(f"{base}/out/csv"))
js.write.mode("overwrite").json(f"{base}/out/json")
show("JSON_OUT", spark.read.json(f"{base}/out/json"))
err("TEXT_OUT", lambda: js.select("v").write.text(f"{base}/out/text"))
print("OUT", folders("out/"))
err("MODE", lambda: js.write.mode("sometimes").parquet(f"{base}/out/other"))
'''

TABLES = COMMON + '''
lake = where + "/lake"
df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, d string")
new = spark.createDataFrame([(3, "a")], "id long, d string")
df.write.format("delta").partitionBy("d").save(lake + "/parts")
new.write.format("delta").mode("overwrite").option("replaceWhere", "d = 'a'") \\
    .save(lake + "/parts")
show("RW_PARTITION", spark.read.format("delta").load(lake + "/parts"))
df.write.format("delta").save(lake + "/rows")
new.write.format("delta").mode("overwrite").option("replaceWhere", "d = 'a'") \\
    .save(lake + "/rows")
show("RW_ROWS", spark.read.format("delta").load(lake + "/rows"))
stray = spark.createDataFrame([(4, "b")], "id long, d string")
err("RW_STRAY", lambda: stray.write.format("delta").mode("overwrite")
    .option("replaceWhere", "d = 'a'").save(lake + "/rows"))
err("RW_APPEND", lambda: new.write.format("delta").mode("append")
    .option("replaceWhere", "d = 'a'").save(lake + "/rows"))
err("RW_BAD", lambda: new.write.format("delta").mode("overwrite")
    .option("replaceWhere", "nope = 1").save(lake + "/rows"))
show("RW_AFTER", spark.read.format("delta").load(lake + "/rows"))
for name in ("errorifexists", "default"):  # Spark's names of the default save mode
    df.write.mode(name).parquet(f"{lake}/mode_{name}")
    err("MODE_" + name, lambda: df.write.mode(name).parquet(f"{lake}/mode_{name}"))
for _ in range(2):  # no format but Delta's token: a Delta table, the retry writes nothing
    df.write.option("txnAppId", "a").option("txnVersion", "1").mode("append") \
        .save(lake + "/no_format")
show("NO_FORMAT", spark.read.format("delta").load(lake + "/no_format"))

spark.conf.set("spark.sql.catalog.cat", "org.apache.iceberg.spark.SparkCatalog")
df.writeTo("cat.db.w").partitionedBy("d").create()
err("CREATE_AGAIN", lambda: df.writeTo("cat.db.w").create())
spark.createDataFrame([(3, "c")], "id long, d string").writeTo("cat.db.w").append()
show("APPEND", spark.table("cat.db.w"))
err("OVERWRITE_PARTITIONS", lambda: df.writeTo("cat.db.w").overwritePartitions())
err("PROPERTY", lambda: df.writeTo("cat.db.w").tableProperty("k", "v").append())
err("APPEND_MISSING", lambda: df.writeTo("cat.db.none").append())
err("REPLACE_MISSING", lambda: df.writeTo("cat.db.none").replace())
spark.createDataFrame([(9, "z")], "id long, d string").writeTo("cat.db.w").createOrReplace()
show("REPLACED", spark.table("cat.db.w"))
df.writeTo("cat.db.n").createOrReplace()
show("CREATED", spark.table("cat.db.n"))

t = lake + "/sql"
df.write.format("delta").save(t)
spark.createDataFrame([(3, "c")], "id long, d string").write.format("delta").mode("append") \
    .save(t)
show("SQL", spark.sql(f"SELECT * FROM delta.`{t}` WHERE id > 1"))
show("SQL_V0", spark.sql(f"SELECT * FROM delta.`{t}` VERSION AS OF 0"))
show("SQL_BRACES", spark.sql(f"SELECT '{{x}}' AS s, id FROM delta.`{t}` WHERE id = 2"))
print("HISTORY", [r.operation for r in spark.sql(f"DESCRIBE HISTORY delta.`{t}`").collect()])
spark.sql(f"CREATE TABLE delta.`{lake}/ctas` USING delta AS SELECT * FROM delta.`{t}` "
          "WHERE id = 1")
show("CTAS", spark.read.format("delta").load(lake + "/ctas"))
spark.sql(f"INSERT INTO delta.`{t}` VALUES (4, 'd')")
show("UPDATED", spark.sql(f"UPDATE delta.`{t}` SET d = 'z' WHERE id = 4"))
show("DELETED", spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1"))
show("SQL_AFTER", spark.read.format("delta").load(t))
err("SQL_BAD", lambda: spark.sql(f"SELECT nope FROM delta.`{t}`").collect())
show("ICEBERG_SQL", spark.sql("SELECT id FROM cat.db.w WHERE id > 1"))
print("SNAPSHOTS", spark.sql("SELECT count(*) FROM cat.db.w.snapshots").collect()[0][0])

from lakemark.catalog._iceberg import load_iceberg_catalog, resolve_iceberg_catalog

catalog = load_iceberg_catalog(resolve_iceberg_catalog(None))
print("SPEC", [f.name for f in catalog.load_table("db.w").spec().fields],
      [f.name for f in catalog.load_table("db.n").spec().fields])
'''


@pytest.fixture(autouse=True)
def _client_libraries() -> None:
    need_connect_client()


def _both(server: ConnectServer, env: dict[str, str], tmp_path: Path, code: str,
          classic_arg: str, remote_arg: str, remote_env: dict[str, str] | None = None
          ) -> tuple[list[str], list[str]]:
    """The script's stdout lines from a classic ``lakemark run`` and a ``--remote`` one."""
    script = tmp_path / "job.py"
    script.write_text(code)
    state = f"sqlite:///{tmp_path / 'state.db'}"
    classic = lakemark_cli("run", "--state", state, str(script), classic_arg, env=env)
    assert classic.returncode == 0, classic.stderr[-3000:]
    remote = lakemark_cli("run", "--state", state, "--remote", server.endpoint, str(script),
                          remote_arg, env={**env, **(remote_env or {})})
    assert remote.returncode == 0, remote.stderr[-3000:]
    return classic.stdout.splitlines(), remote.stdout.splitlines()


def test_plain_s3_reads_and_writes_over_connect_match_classic(
        s3: MotoServer, connect_server: ConnectServer, tmp_path: Path) -> None:
    """``spark.read.json/csv/text/orc/parquet`` and ``df.write…`` of ``s3://`` paths with no
    S3A: over Connect lakemark's read path and folder sink serve them as in a classic session —
    the same rows, Hive partition folders, save modes and one-line errors."""
    classic, remote = _both(connect_server, {**connect_server.env, **s3.env}, tmp_path,
                            PLAIN_S3, "lm-classic", "lm-remote")
    # a save mode Spark does not know: classic Spark refuses it in .mode() (its JVM checks
    # it); Connect's client keeps it until the write, where lakemark names path and mode
    assert [line for line in classic if line.startswith("MODE ")] == [
        'MODE AnalysisException [INVALID_SAVE_MODE] The specified save mode "sometimes" is '
        'invalid. Valid save modes include "append", "overwrite", "ignore", "error", '
        '"errorifexists", and "default". SQLSTATE: 42000']
    assert [line for line in remote if line.startswith("MODE ")] == [
        "MODE ConfigError writing s3://W/out/other: unknown save mode 'sometimes' (append, "
        "overwrite, ignore, error/errorifexists)"]
    assert [line for line in remote if not line.startswith("MODE ")] == [
        line for line in classic if not line.startswith("MODE ")]
    assert "JSON struct<id:bigint,v:string,d:int> [(1, 'a', 1), (2, 'b', 1), (3, 'c', 2)]" \
        in remote
    assert "FOLDERS ['d=1', 'd=2']" in remote
    assert "CSV_SCHEMA struct<id:bigint,v:string> [(1, 'x'), (2, 'y')]" in remote
    assert "S3A struct<id:bigint,v:string> [(3, 'c')]" in remote
    assert ("AGAIN ConfigError [PATH_ALREADY_EXISTS] Path s3://W/out/pq already exists. Set "
            'mode as "overwrite" to overwrite the existing path.') in remote
    assert ("APPENDED struct<id:bigint,v:string,d:int> [(1, 'a', 1), (1, 'a', 1), (2, 'b', 1), "
            "(3, 'c', 2)]") in remote
    assert ("TEXT_OUT UnsupportedError writing s3://W/out/text: format 'text' cannot be written "
            "to S3 without the S3A connector (lakemark writes parquet, json, csv, orc, delta)") \
        in remote
    assert "ORC struct<id:bigint> [(7,), (8,)]" in remote
    assert ("ORC_OUT FormatError writing orc to s3://W/out/orc needs Spark's S3A connector "
            "(org.apache.hadoop.fs.s3a.S3AFileSystem, from hadoop-aws), which is not on the "
            "classpath; without it lakemark writes only parquet, json, csv to S3") in remote
    assert "OUT ['csv', 'json', 'pq']" in remote
    assert any(line.startswith("FAILFAST ") and "no error" not in line for line in remote)


def test_replace_where_write_to_and_sql_over_connect_match_classic(
        connect_server: ConnectServer, tmp_path: Path) -> None:
    """A ``format("delta")`` write's ``replaceWhere`` (over a partition column and over a data
    column: the rows it does not select are kept), the save mode named ``errorifexists`` or
    ``default`` (Connect's client alone refuses both names), ``df.writeTo`` of an Iceberg catalog's
    table (``create`` with ``partitionedBy``, ``append``, ``createOrReplace``; the rest refused
    by name) and ``spark.sql`` on Delta and Iceberg tables (``delta.`path```, ``VERSION AS OF``,
    ``DESCRIBE HISTORY``, CTAS, ``INSERT``, ``DELETE``, a metadata table) over Connect, as in
    classic mode."""
    (tmp_path / "classic").mkdir()
    (tmp_path / "remote").mkdir()

    def env(kind: str) -> dict[str, str]:
        return {**connect_server.env,
                "LAKEMARK_ICEBERG_CATALOG": f"sqlite:///{tmp_path / kind / 'catalog.db'}"}

    script = tmp_path / "job.py"
    script.write_text(TABLES)
    state = f"sqlite:///{tmp_path / 'state.db'}"
    outputs = []
    for kind, extra in (("classic", ()), ("remote", ("--remote", connect_server.endpoint))):
        done = lakemark_cli("run", "--state", state, *extra, str(script),
                            str(tmp_path / kind), env=env(kind))
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(done.stdout.splitlines())
    classic, remote = outputs
    assert remote == classic
    assert "RW_PARTITION struct<id:bigint,d:string> [(2, 'b'), (3, 'a')]" in remote
    assert "RW_ROWS struct<id:bigint,d:string> [(2, 'b'), (3, 'a')]" in remote
    assert "RW_AFTER struct<id:bigint,d:string> [(2, 'b'), (3, 'a')]" in remote
    assert ("RW_STRAY SinkError writing Delta table W/lake/rows: the DataFrame has rows that do "
            "not match replaceWhere \"d = 'a'\" (Delta's replaceWhere constraint; nothing was "
            "written)") in remote
    assert ("MODE_default AnalysisException [PATH_ALREADY_EXISTS] Path file:W/lake/mode_default "
            'already exists. Set mode as "overwrite" to overwrite the existing path. SQLSTATE: '
            "42K04") in remote
    assert "NO_FORMAT struct<id:bigint,d:string> [(1, 'a'), (2, 'b')]" in remote
    assert "APPEND struct<id:bigint,d:string> [(1, 'a'), (2, 'b'), (3, 'c')]" in remote
    assert ("OVERWRITE_PARTITIONS UnsupportedError writeTo('cat.db.w').overwritePartitions(…) "
            "is not supported on Iceberg tables without the Iceberg runtime; use append(), "
            "create(), createOrReplace() or replace()") in remote
    assert "REPLACED struct<id:bigint,d:string> [(9, 'z')]" in remote
    assert "CREATED struct<id:bigint,d:string> [(1, 'a'), (2, 'b')]" in remote
    assert "SPEC ['d'] []" in remote
    assert "SQL struct<id:bigint,d:string> [(2, 'b'), (3, 'c')]" in remote
    assert "SQL_V0 struct<id:bigint,d:string> [(1, 'a'), (2, 'b')]" in remote
    assert "SQL_BRACES struct<s:string,id:bigint> [('{x}', 2)]" in remote
    assert "HISTORY ['WRITE', 'WRITE']" in remote
    assert "CTAS struct<id:bigint,d:string> [(1, 'a')]" in remote
    assert "DELETED struct<num_affected_rows:bigint> [(1,)]" in remote
    assert "UPDATED struct<num_affected_rows:bigint> [(1,)]" in remote
    assert "SQL_AFTER struct<id:bigint,d:string> [(2, 'b'), (3, 'c'), (4, 'z')]" in remote
    assert "ICEBERG_SQL struct<id:bigint> [(9,)]" in remote
