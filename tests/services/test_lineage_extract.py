"""`lakemark lineage extract` against a real moto_server: catalog, jobs, scripts and extra
py files from S3; unsafe names, secrets and failing jobs; then a scan of what was written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.lineage import scan_folder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCRIPTS = FIXTURES / "lineage" / "scripts"

pytestmark = pytest.mark.services


def seed(server) -> None:  # type: ignore[no-untyped-def]
    s3 = server.client("s3")
    s3.create_bucket(Bucket="scripts")
    s3.put_object(Bucket="scripts", Key="jobs/args_driven.py",
                  Body=(SCRIPTS / "args_driven.py").read_bytes())
    s3.put_object(Bucket="scripts", Key="jobs/with_helpers.py",
                  Body=(SCRIPTS / "with_helpers.py").read_bytes())
    s3.put_object(Bucket="scripts", Key="lib/writers.py",
                  Body=(SCRIPTS / "helpers_writers.py").read_bytes())
    glue = server.client("glue")
    catalog = json.loads((FIXTURES / "catalog" / "123456789012-us-east-1" / "catalog" / "tables"
                          / "sales.json").read_text())
    glue.create_database(DatabaseInput={"Name": "sales"})
    for table in catalog["TableList"]:
        glue.create_table(DatabaseName="sales", TableInput={
            k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType",
                                  "Parameters") if k in table})
    for n in range(3):  # more than one page is not needed for moto; all must arrive
        glue.create_database(DatabaseInput={"Name": f"extra_{n}"})
    glue.create_connection(ConnectionInput={
        "Name": "crm", "ConnectionType": "JDBC",
        "ConnectionProperties": {"JDBC_CONNECTION_URL": "jdbc:postgresql://h:5432/crm",
                                 "USERNAME": "u", "PASSWORD": "TOPSECRET-pw"}})
    glue.create_job(Name="orders-by-args", Role="r",
                    Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/jobs/args_driven.py"},
                    DefaultArguments={"--source_db": "sales", "--source_table": "orders_parquet",
                                      "--env": "prod", "--target_path": "orders",
                                      "--db_password": "TOPSECRET-arg"})
    glue.create_job(Name="helpers", Role="r",
                    Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/jobs/with_helpers.py"},
                    DefaultArguments={"--extra-py-files": "s3://scripts/lib/writers.py",
                                      "--additional-python-modules": "pyarrow==14,requests"})
    glue.create_job(Name="../../escape", Role="r",
                    Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/jobs/args_driven.py"})
    glue.create_job(Name="broken", Role="r",
                    Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/missing.py"})


def test_extract_then_scan(s3, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed(s3)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["lineage", "extract", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "broken" in result.output and "skipped" in result.output
    [conn] = [p for p in out.iterdir() if p.is_dir()]
    assert conn.name.endswith("-us-east-1")
    dbs = json.loads((conn / "catalog" / "databases.json").read_text())["DatabaseList"]
    assert {d["Name"] for d in dbs} == {"sales", "extra_0", "extra_1", "extra_2"}
    tables = json.loads((conn / "catalog" / "tables" / "sales.json").read_text())["TableList"]
    assert {t["Name"] for t in tables} >= {"orders_parquet"}
    job = conn / "jobs" / "orders-by-args"
    assert (job / "script" / "args_driven.py").read_bytes() == \
        (SCRIPTS / "args_driven.py").read_bytes()
    helpers = conn / "jobs" / "helpers"
    assert (helpers / "extra-py-files" / "writers.py").is_file()
    assert (helpers / "libs" / "pip-requirements.txt").read_text().split() == \
        ["pyarrow==14", "requests"]
    # nothing outside the output folder; the unsafe job name became one safe folder
    assert not (tmp_path / "escape").exists()
    assert all(out.resolve() in p.resolve().parents for p in out.rglob("*"))
    assert any("escape" in p.name for p in (conn / "jobs").iterdir())
    # secrets are never written
    for path in out.rglob("*"):
        if path.is_file():
            assert "TOPSECRET" not in path.read_text(errors="replace"), path
    # the extracted folder scans
    jobs = {j.job: j for j in scan_folder(out)}
    outputs = [o.dataset.key for o in jobs["orders-by-args"].outputs]
    assert outputs == ["s3://prod-bucket/orders"]
    assert [o.dataset.key for o in jobs["helpers"].outputs] == ["s3://out/clean_orders"]
    assert "broken" not in jobs
