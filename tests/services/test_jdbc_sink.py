"""Exactly-once JDBC sinks against the real PostgreSQL (127.0.0.1:5432, db ``test``) and MariaDB
(127.0.0.1:3306, root) of the project's machines.

Issue 31's story: an unmodified Glue script reads ten rows with a bookmark and writes them to a
database table through ``write_dynamic_frame.from_jdbc_conf`` (or ``from_options``); the run is
SIGKILLed (``LAKEMARK_FAULT``) after the write and before the job's commit, then retried: the
table holds exactly the ten rows, once.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pgtest import PgSchema, jdbc_url, need_postgres

from lakemark import Job
from lakemark._fault import FAULT_ENV

pytestmark = [pytest.mark.services, pytest.mark.spark]

SRC = Path(__file__).resolve().parents[2] / "src"
MARIA_HOST = os.environ.get("LAKEMARK_TEST_MYSQLHOST", "127.0.0.1")
MARIA_PORT = int(os.environ.get("LAKEMARK_TEST_MYSQLPORT", "3306"))
MARIA_USER = os.environ.get("LAKEMARK_TEST_MYSQLUSER", "root")

SCRIPT = '''\
import sys
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "dbtable", "how", "url", "user"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
orders = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
if args["how"] == "jdbc_conf":
    glueContext.write_dynamic_frame.from_jdbc_conf(
        frame=orders, catalog_connection="warehouse",
        connection_options={"dbtable": args["dbtable"]}, transformation_ctx="to_db")
else:
    glueContext.write_dynamic_frame.from_options(
        frame=orders, connection_type=args["how"],
        connection_options={"url": args["url"], "user": args["user"],
                            "dbtable": args["dbtable"]},
        transformation_ctx="to_db")
job.commit()
'''


class Setup:
    """A source folder, a Glue script, a catalog with the connection, a state store."""

    def __init__(self, tmp: Path, url: str, user: str) -> None:
        self.source = tmp / "landing"
        self.source.mkdir()
        self.script = tmp / "etl.py"
        self.script.write_text(SCRIPT)
        self.url, self.user = url, user
        catalog = tmp / "catalog" / "catalog"
        (catalog / "tables").mkdir(parents=True)
        (catalog / "databases.json").write_text('{"DatabaseList": []}')
        (catalog / "connections.json").write_text(json.dumps({"ConnectionList": [{
            "Name": "warehouse", "ConnectionType": "JDBC",
            "ConnectionProperties": {"JDBC_CONNECTION_URL": url, "USERNAME": user}}]}))
        self.catalog = tmp / "catalog"
        self.state = f"sqlite:///{tmp / 'state.db'}"

    def arrive(self, name: str, ids: range) -> None:
        (self.source / name).write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n"
                                                for i in ids))

    def run(self, dbtable: str, how: str = "jdbc_conf",
            fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        if fault:
            env[FAULT_ENV] = fault
        cmd = [sys.executable, "-m", "lakemark", "run", "--state", self.state, "--catalog",
               str(self.catalog), "--master", "local[1]", str(self.script), "--JOB_NAME",
               "to-db", "--job-bookmark-option", "job-bookmark-enable", "--source",
               str(self.source), "--dbtable", dbtable, "--how", how, "--url", self.url,
               "--user", self.user]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture
def pg() -> Any:
    db = PgSchema(need_postgres(), "lm_sink_")
    yield db
    db.close()


def pg_ids(pg: PgSchema, table: str = "orders") -> list[int]:
    return sorted(r[0] for r in pg.sql(f'SELECT id FROM "{pg.schema}"."{table}"'))


def pg_tables(pg: PgSchema) -> list[str]:
    return sorted(r[0] for r in pg.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
        (pg.schema,)))


@pytest.mark.parametrize("fault", ["after-sink-commit", "before-job-commit", "mid-write"])
def test_a_glue_jdbc_write_killed_before_the_commit_and_retried_holds_each_row_once(
    pg: PgSchema, tmp_path: Path, fault: str,
) -> None:
    setup = Setup(tmp_path, jdbc_url(), pg.user)
    setup.arrive("a.json", range(10))
    dbtable = f"{pg.schema}.orders"
    killed = setup.run(dbtable, fault=fault)
    assert killed.returncode == -9, killed.stderr
    landed = fault != "mid-write"  # mid-write: the rows are staged, not moved
    assert pg_ids(pg) == (list(range(10)) if landed else [])
    retry = setup.run(dbtable)
    assert retry.returncode == 0, retry.stderr
    assert pg_ids(pg) == list(range(10))  # exactly the ten rows, once
    [(app_id, version, rows)] = pg.sql(
        f'SELECT app_id, version, rows_written FROM "{pg.schema}"."_lakemark_commits"')
    assert (app_id, version, rows) == ("to-db/to_db", 1, 10)
    assert pg_tables(pg) == ["_lakemark_commits", "orders"]  # no staging table left
    # The next run takes only the new file, and its token is the next run number.
    setup.arrive("b.json", range(10, 13))
    assert setup.run(dbtable).returncode == 0
    assert pg_ids(pg) == list(range(13))


def test_a_python_api_jdbc_write_is_skipped_by_its_token_and_bad_input_changes_nothing(
    pg: PgSchema, tmp_path: Path, spark: Any,
) -> None:
    """``Job.write_jdbc``: the same token a second time writes nothing; a bad table name is
    refused with a one-line error before anything is created."""
    from lakemark.errors import ConfigError
    from lakemark.sinks import IdempotencyToken, JdbcTarget, write_jdbc_table
    from lakemark.sources.jdbc import spark_url_options

    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    state = f"sqlite:///{tmp_path / 's.db'}"
    with Job("api", state=state, spark=spark) as job:
        result = job.write_jdbc(df, jdbc_url(), f"{pg.schema}.t", ctx="out", user=pg.user)
    assert (result.rows, result.skipped) == (2, False)
    from lakemark.state import open_store

    store = open_store(state)
    [sink] = [i.plan for i in store.run_inputs(job.run.run_id) if i.ctx == "sink:out"]
    store.close()
    assert (sink["format"], sink["status"], sink["rows"], sink["dbtable"]) == (
        "jdbc", "committed", 2, f"{pg.schema}.t")
    assert sink["token"]["app_id"] == "api/out" and sink["url"] == jdbc_url()
    target = JdbcTarget({**spark_url_options(jdbc_url()), "dbtable": f"{pg.schema}.t",
                         "user": pg.user, "driver": "org.postgresql.Driver"})
    again = write_jdbc_table(df, target, IdempotencyToken("api/out", 1))
    assert (again.rows, again.skipped) == (0, True)
    assert pg_ids(pg, "t") == [1, 2]
    with pytest.raises(ConfigError, match="dbtable"):
        write_jdbc_table(df, JdbcTarget({**target.options, "dbtable": "a.b.c.d"}),
                         IdempotencyToken("api/out", 2))
    assert pg_tables(pg) == ["_lakemark_commits", "t"]


def test_a_jdbc_write_without_a_run_token_warns_that_it_is_not_exactly_once(
    pg: PgSchema, spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    df = spark.createDataFrame([(1, "a")], "id long, name string")
    with caplog.at_level(logging.WARNING, logger="lakemark"), \
            Job("untracked", state=f"sqlite:///{tmp_path / 's.db'}", spark=spark,
                bookmark="disable") as job:
        job.write_jdbc(df, jdbc_url(), f"{pg.schema}.t", ctx="out", user=pg.user)
    warned = [r.getMessage() for r in caplog.records if "not exactly-once" in r.getMessage()]
    assert len(warned) == 1 and f"{pg.schema}.t" in warned[0]
    assert pg_ids(pg, "t") == [1]
    assert pg_tables(pg) == ["t"]  # no token table, no staging table


def test_a_glue_write_to_mariadb_killed_after_the_write_is_not_duplicated(
    tmp_path: Path,
) -> None:
    """The same sink serves MySQL and MariaDB (``from_options`` with connection_type mysql)."""
    from conftest import need_service

    try:
        import pymysql

        conn = pymysql.connect(host=MARIA_HOST, port=MARIA_PORT, user=MARIA_USER,
                               autocommit=True, connect_timeout=5)
    except Exception as exc:  # noqa: BLE001 - no pymysql, or no server
        need_service(f"MariaDB is not reachable at {MARIA_HOST}:{MARIA_PORT}: {exc}")
        raise AssertionError("unreachable") from exc
    db = f"lm_sink_{os.getpid()}_{tmp_path.name[-8:]}".replace("-", "_")

    def sql(statement: str) -> list[Any]:
        with conn.cursor() as cur:
            cur.execute(statement)
            return list(cur.fetchall())

    sql(f"CREATE DATABASE `{db}`")
    try:
        setup = Setup(tmp_path, f"jdbc:mariadb://{MARIA_HOST}:{MARIA_PORT}/{db}", MARIA_USER)
        setup.arrive("a.json", range(10))
        killed = setup.run("orders", how="mysql", fault="before-job-commit")
        assert killed.returncode == -9, killed.stderr
        retry = setup.run("orders", how="mysql")
        assert retry.returncode == 0, retry.stderr
        assert sorted(r[0] for r in sql(f"SELECT id FROM `{db}`.orders")) == list(range(10))
        assert sorted(r[0] for r in sql(f"SHOW TABLES FROM `{db}`")) == [
            "_lakemark_commits", "orders"]
    finally:
        sql(f"DROP DATABASE `{db}`")
        conn.close()


def test_the_token_table_is_per_target_and_identifiers_are_quoted(pg: PgSchema,
                                                                 spark: Any) -> None:
    """A table name that needs quoting, and a second target beside the first: each has its
    own token row in the same ``_lakemark_commits``."""
    from lakemark.sinks import IdempotencyToken, JdbcTarget, write_jdbc_table

    df = spark.createDataFrame([(1, "x")], "id long, name string")
    for table in ('Odd "Name"', "plain"):
        target = JdbcTarget({"url": jdbc_url(), "user": pg.user, "driver": "org.postgresql.Driver",
                             "dbtable": f'"{pg.schema}"."{table.replace(chr(34), chr(34) * 2)}"'})
        assert not write_jdbc_table(df, target, IdempotencyToken("j/out", 1)).skipped
    assert len(pg.sql(f'SELECT * FROM "{pg.schema}"."_lakemark_commits"')) == 2
    assert pg.sql(f'SELECT id FROM "{pg.schema}"."Odd ""Name"""') == [(1,)]


def test_a_writer_that_lost_its_lease_commits_nothing(pg: PgSchema, spark: Any) -> None:
    """The lease is checked inside the transaction, just before it commits: a fenced writer
    rolls back — no rows, no token, no staging table — and a later writer of the token writes."""
    from lakemark.errors import LeaseLost
    from lakemark.sinks import IdempotencyToken, JdbcTarget, write_jdbc_table

    df = spark.createDataFrame([(1, "x"), (2, "y")], "id long, name string")
    target = JdbcTarget({"url": jdbc_url(), "user": pg.user, "driver": "org.postgresql.Driver",
                         "dbtable": f"{pg.schema}.t"})

    def fenced() -> None:
        raise LeaseLost("the lease of run r1 was taken over", job_name="j", holder_run_id="r2",
                        generation=1, holder_generation=2)

    with pytest.raises(LeaseLost):
        write_jdbc_table(df, target, IdempotencyToken("j/out", 1), before_commit=fenced)
    assert pg_ids(pg, "t") == []
    assert pg.sql(f'SELECT * FROM "{pg.schema}"."_lakemark_commits"') == []
    assert pg_tables(pg) == ["_lakemark_commits", "t"]
    assert write_jdbc_table(df, target, IdempotencyToken("j/out", 1)).rows == 2
    assert pg_ids(pg, "t") == [1, 2]
