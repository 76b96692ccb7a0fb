"""No credential of the secret corpus ever leaves lakemark: real commands as subprocesses (stdout,
stderr, the SQLite state file's bytes, runtime OpenLineage events), the state-URL errors, and
`lineage extract` against moto_server's Glue and S3 followed by `lineage analyze`/`scan` (the
extract folder and every lineage output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakemark.cli import cli
from secret_corpus import SHAPES, leaks

pytestmark = pytest.mark.services

ALL = " | ".join(text for text, _ in SHAPES)


def lakemark(*args: str, env: dict[str, str] | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=300)


def assert_no_leak(where: str, blob: str | bytes) -> None:
    found = leaks(blob)
    assert not found, f"{where} holds {found}"


def test_failed_run_leaks_nothing(tmp_path: Path) -> None:
    """A script whose job fails with every shape in its error, and logs them: nothing reaches
    stdout, stderr, the state file, `runs list/show` or the OpenLineage events."""
    state = tmp_path / "state"
    state.mkdir()
    url = f"sqlite:///{state / 'state.db'}"
    script = tmp_path / "leaky.py"
    script.write_text(
        "import logging, sys\n"
        "from lakemark import Job, ConfigError\n"
        f"TEXT = {ALL!r}\n"
        "with Job('leaky') as job:\n"
        "    logging.getLogger('lakemark.glue.script').warning('connecting with %s', TEXT)\n"
        "    if sys.argv[1:] == ['config']:\n"
        "        raise ConfigError('bad option: ' + TEXT)\n"
        "    raise RuntimeError('driver said: ' + TEXT)\n")
    events = tmp_path / "events.jsonl"
    env = {"LAKEMARK_OPENLINEAGE": f"file:{events}"}
    for variant in ("runtime", "config"):
        result = lakemark("run", "--state", url, str(script), variant, env=env)
        assert result.returncode != 0
        # the messages are printed (log line, traceback or error line), only without secrets
        assert "connecting with jdbc:oracle:thin:scott/***@//127.0.0.1:1521/orcl" in \
            " ".join(result.stderr.split())
        assert ("driver said:" if variant == "runtime" else "error: bad option:") in result.stderr
        assert_no_leak(f"stdout of run ({variant})", result.stdout)
        assert_no_leak(f"stderr of run ({variant})", result.stderr)
    listed = lakemark("runs", "list", "leaky", "--state", url, "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    runs = runs if isinstance(runs, list) else runs.get("runs", runs)
    assert len(runs) == 2 and all(r["status"] == "FAILED" for r in runs)
    assert "jdbc:oracle:thin:scott/***@//127.0.0.1:1521/orcl" in listed.stdout
    assert_no_leak("runs list --json", listed.stdout)
    shown = lakemark("runs", "show", runs[0]["run_id"], "--state", url)
    assert_no_leak("runs show", shown.stdout + shown.stderr)
    for path in state.iterdir():  # state.db, and its -wal/-shm while they exist
        assert_no_leak(f"state file {path.name}", path.read_bytes())
    assert events.is_file() and "FAIL" in events.read_text()
    assert_no_leak("OpenLineage events", events.read_bytes())


def test_state_urls_with_passwords_never_print_them(tmp_path: Path) -> None:
    url = "mysql://u:UnknownScheme09@127.0.0.1/x"
    by_option = lakemark("bookmark", "show", "j", "--state", url, cwd=tmp_path)
    by_env = lakemark("runs", "list", "j", env={"LAKEMARK_STATE": url}, cwd=tmp_path)
    for result in (by_option, by_env):
        assert result.returncode == 2 and "unknown scheme" in result.stderr
        assert "mysql://u:***@127.0.0.1/x" in result.stderr
        assert_no_leak("state URL error", result.stdout + result.stderr)
    runner = CliRunner()
    for text, _ in SHAPES:
        result = runner.invoke(cli, ["bookmark", "show", "j", "--state", text])
        assert result.exit_code != 0
        assert_no_leak(f"state URL {text[:20]}", result.output)


def seed(server, script: str) -> None:  # type: ignore[no-untyped-def]
    s3 = server.client("s3")
    s3.create_bucket(Bucket="scripts")
    s3.put_object(Bucket="scripts", Key="jobs/leaky.py", Body=script.encode())
    glue = server.client("glue")
    glue.create_database(DatabaseInput={"Name": "sales", "Description": SHAPES[0][0]})
    glue.create_connection(ConnectionInput={
        "Name": "oracle", "ConnectionType": "JDBC", "Description": ALL,
        "ConnectionProperties": {"JDBC_CONNECTION_URL": SHAPES[0][0], "USERNAME": "scott",
                                 "PASSWORD": "ConnPropPw41"}})
    glue.create_connection(ConnectionInput={
        "Name": "custom", "ConnectionType": "CUSTOM",
        "ConnectionProperties": {"CONNECTOR_URL": SHAPES[4][0], "CONNECTOR_TYPE": "Spark",
                                 "CONNECTOR_CLASS_NAME": SHAPES[14][0]}})
    arguments = {f"--shape{n}": text for n, (text, _) in enumerate(SHAPES)}
    arguments.update({"--DB_PWD": "PlainDbPwd42", "--api_key": "PlainApiKey43",
                      "--jdbc_url": SHAPES[4][0],
                      "--conf": "spark.hadoop.fs.s3a.secret.key=S3aConfSecret29",
                      "--source_path": "s3://in/orders/", "--target_path": "s3://out/orders/",
                      "--additional-python-modules":
                          "pyarrow==14,git+https://ci:PipIndexToken56@git.example.com/lib.git"})
    glue.create_job(Name="leaky", Role="r", Description=ALL,
                    Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/jobs/leaky.py"},
                    DefaultArguments=arguments,
                    NonOverridableArguments={"--secret_token": "NonOverridable44"})


SCRIPT = f'''import sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source_path", "target_path", "jdbc_url"])
gc = GlueContext(SparkContext())
spark = gc.spark_session
PASSWORD = "ScriptLiteralPw45"
ALL = {ALL!r}
orders = spark.read.json(args["source_path"])
crm = spark.read.format("jdbc").option("url", args["jdbc_url"]).option("dbtable", "crm.c") \\
    .option("password", "ScriptOptionPw46").load()
oracle = spark.read.jdbc({SHAPES[0][0]!r}, "hr.emp")
orders.join(crm, "id").select("id", "name").write.parquet(args["target_path"])
oracle.select("id").write.parquet("s3://out/{SHAPES[20][0].split("//")[1]}")
'''
EXTRA = ["ConnPropPw41", "PlainDbPwd42", "PlainApiKey43", "NonOverridable44",
         "ScriptLiteralPw45", "ScriptOptionPw46", "PipIndexToken56"]


def test_extract_and_every_lineage_output_leak_nothing(s3, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed(s3, SCRIPT)
    runner = CliRunner()
    out = tmp_path / "extract"
    result = runner.invoke(cli, ["lineage", "extract", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert_no_leak("extract output", result.output)
    [conn] = [p for p in out.iterdir() if p.is_dir()]
    job = json.loads((conn / "jobs" / "leaky" / "job.json").read_text())["Job"]
    assert job["DefaultArguments"]["--DB_PWD"] == "***"
    assert job["DefaultArguments"]["--source_path"] == "s3://in/orders/"
    connections = (conn / "catalog" / "connections.json").read_text()
    assert "jdbc:oracle:thin:scott/***@//127.0.0.1:1521/orcl" in connections
    assert (conn / "jobs" / "leaky" / "libs" / "pip-requirements.txt").read_text().split() == \
        ["pyarrow==14", "git+https://ci:***@git.example.com/lib.git"]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".py" for p in files)
    for path in files:
        blob = path.read_bytes()
        assert_no_leak(f"extract file {path.relative_to(out)}", blob)
        assert not [s for s in EXTRA if s.encode() in blob], path

    # lineage of the extracted folder, and of the original script with the run's secrets
    # given as run arguments (`--arg`), through every output format
    analyzed = tmp_path / "analyzed"
    result = runner.invoke(cli, ["lineage", "analyze", str(out), "--out", str(analyzed),
                                 "--arg", f"jdbc_url={SHAPES[5][0]}"])
    assert result.exit_code == 0, result.output
    assert_no_leak("analyze output", result.output)
    raw = tmp_path / "raw" / "123456789012-us-east-1" / "jobs" / "leaky"
    raw.mkdir(parents=True)
    (raw / "leaky.py").write_text(SCRIPT)
    outputs = {p.name: p.read_text() for p in analyzed.iterdir()}
    assert set(outputs) == {"openlineage.jsonl", "lineage.dot", "lineage.mmd", "lineage.json",
                            "lineage.html"}
    for fmt in ("openlineage", "dot", "mermaid", "json", "html"):
        result = runner.invoke(cli, ["lineage", "scan", str(tmp_path / "raw"), "--format", fmt,
                                     "--arg", f"jdbc_url={SHAPES[5][0]}",
                                     "--arg", "source_path=s3://in/orders/",
                                     "--arg", "target_path=s3://out/orders/"])
        assert result.exit_code == 0, result.output
        outputs[f"scan {fmt}"] = result.output
    lineage = json.loads(outputs["scan json"])
    assert {o["dataset"] for o in lineage[0]["outputs"]} >= {"s3://out/orders"}
    for name, text in outputs.items():
        assert_no_leak(name, text)
        assert not [s for s in EXTRA if s in text], name
