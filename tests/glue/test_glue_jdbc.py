"""The seed's JDBC sample script (``hr.emp`` keyed by ``empno``) run unmodified by
``lakemark run`` against the real PostgreSQL through a catalog entry and a catalog connection."""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import DATABASE, HOST, PORT, jdbc_url, need_postgres
from test_glue_scripts import SCRIPTS, GlueEnv

pytestmark = [pytest.mark.spark, pytest.mark.services]

PASSWORD = "glue-Pw-31337"
COLUMNS = [("ename", "text", "string"), ("hrly_rate", "numeric(38,0)", "decimal(38,0)"),
           ("comm", "numeric(7,2)", "decimal(7,2)"), ("hiredate", "timestamp", "timestamp"),
           ("empno", "numeric(5,0)", "decimal(5,0)"), ("mgr", "numeric(5,0)", "decimal(5,0)"),
           ("photo", "text", "string"), ("job", "text", "string"),
           ("deptno", "numeric(3,0)", "decimal(3,0)"), ("ssn", "numeric(9,0)", "decimal(9,0)"),
           ("sal", "numeric(7,2)", "decimal(7,2)")]


@pytest.fixture
def pg_schema() -> Iterator[tuple[Any, str, str]]:
    import psycopg

    user = need_postgres()
    schema = f"lm_hr_{uuid.uuid4().hex[:10]}"
    conn = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user, autocommit=True)
    conn.execute(f'CREATE SCHEMA "{schema}"')
    cols = ", ".join(f"{name} {pg_type}" for name, pg_type, _ in COLUMNS)
    conn.execute(f'CREATE TABLE "{schema}".emp ({cols}, PRIMARY KEY (empno))')
    yield conn, schema, user
    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    conn.close()


def insert(conn: Any, schema: str, empnos: list[int]) -> None:
    for n in empnos:
        conn.execute(
            f'INSERT INTO "{schema}".emp (ename, hrly_rate, comm, hiredate, empno, mgr, job, '
            "deptno, ssn, sal) VALUES (%s, 40, 1.5, TIMESTAMP '1981-02-20 00:00:00', %s, 7839, "
            "'CLERK', 10, 123456789, 800.00)",
            (f"E{n}", n),
        )


def out_rows(folder: Path) -> list[dict[str, str]]:
    rows = []
    for f in sorted(folder.rglob("*.csv")):
        with f.open() as fh:
            rows.extend(csv.DictReader(fh))
    return rows


def test_seed_jdbc_sample_takes_only_rows_inserted_after_run_1(
        tmp_path: Path, pg_schema: tuple[Any, str, str]) -> None:
    conn, schema, user = pg_schema
    glue = GlueEnv(tmp_path)
    (glue.catalog / "connections.json").write_text(json.dumps({"ConnectionList": [{
        "Name": "hr-postgres", "ConnectionType": "JDBC",
        "ConnectionProperties": {"JDBC_CONNECTION_URL": jdbc_url(), "USERNAME": user,
                                 "PASSWORD": PASSWORD},
    }]}))
    glue.add_table("hr", {
        "Name": "emp",
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t} for n, _, t in COLUMNS],
            "Location": f"{DATABASE}.{schema}.emp",
            "SerdeInfo": {"Parameters": {}},
        },
        "PartitionKeys": [],
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "postgresql", "connectionName": "hr-postgres"},
    })
    out = tmp_path / "employees"
    script = tmp_path / "etl.py"
    # Unmodified but for the output folder (s3://hr/employees → a local folder).
    script.write_text((SCRIPTS / "seed_jdbc_sample.py").read_text()
                      .replace("s3://hr/employees", str(out)))
    args = ("--JOB_NAME", "hr-emp", "--job-bookmark-option", "job-bookmark-enable")

    insert(conn, schema, [7369, 7499, 7521])  # empno has gaps: explicit key, as in the seed
    glue.run(script, *args)
    assert sorted(r["empno"] for r in out_rows(out)) == ["7369", "7499", "7521"]
    insert(conn, schema, [7566, 9000])
    second = glue.run(script, *args)
    assert sorted(r["empno"] for r in out_rows(out)) == ["7369", "7499", "7521", "7566", "9000"]

    runs = glue.cli("runs", "list", "hr-emp")
    assert [(r["run"], r["status"]) for r in runs] == [(1, "SUCCEEDED"), (2, "SUCCEEDED")]
    shown = glue.cli("runs", "show", runs[1]["run_id"])
    rng = shown["sources"]["datasource0"]["range"]
    assert rng["after"] == [{"type": "decimal", "value": "7521"}]
    assert rng["through"] == [{"type": "decimal", "value": "9000"}]
    bookmark = glue.cli("bookmark", "show", "hr-emp")
    assert bookmark["state"]["datasource0"]["keys"] == ["empno"]
    # The connection's password is in no output, state or manifest.
    state_file = Path(glue.state.removeprefix("sqlite:///"))
    assert PASSWORD.encode() not in state_file.read_bytes()
    assert PASSWORD not in second.stdout + second.stderr
    assert PASSWORD not in json.dumps(shown)
