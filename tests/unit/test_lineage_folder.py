"""Lineage input folders (offline, hand-made), the CLI, and the security rules: a scanned
script is never executed or imported, names cannot escape the output folder, secrets are not
written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.lineage import load_folders, resolve_arguments, scan_folder
from lakemark.lineage._names import inside, safe_component

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCRIPTS = FIXTURES / "lineage" / "scripts"


def make_folder(tmp_path: Path) -> Path:
    conn = tmp_path / "in" / "123456789012-us-east-1"
    shutil.copytree(FIXTURES / "catalog" / "123456789012-us-east-1" / "catalog",
                    conn / "catalog")
    job = conn / "jobs" / "orders-by-args"
    (job / "script").mkdir(parents=True)
    shutil.copy(SCRIPTS / "args_driven.py", job / "script" / "main.py")
    (job / "job.json").write_text(json.dumps({"Job": {
        "Name": "orders-by-args",
        "Command": {"Name": "glueetl", "ScriptLocation": "s3://scripts/main.py"},
        "DefaultArguments": {"--source_db": "sales", "--source_table": "orders_parquet",
                             "--env": "dev", "--target_path": "default"},
        "NonOverridableArguments": {"--target_path": "orders"},
    }}))
    helpers = conn / "jobs" / "helpers-job"
    (helpers / "extra-py-files").mkdir(parents=True)
    shutil.copy(SCRIPTS / "with_helpers.py", helpers / "with_helpers.py")
    import zipfile
    with zipfile.ZipFile(helpers / "extra-py-files" / "helpers.zip", "w") as z:
        z.writestr("helpers/__init__.py", "")
        z.writestr("helpers/cleaning.py", (SCRIPTS / "helpers_cleaning.py").read_text())
    shutil.copy(SCRIPTS / "helpers_writers.py", helpers / "extra-py-files" / "writers.py")
    return tmp_path / "in"


def test_arguments_resolve_as_glue_does() -> None:
    job = {"DefaultArguments": {"--a": "1", "--b": "1", "--c": "1"},
           "NonOverridableArguments": {"--c": "3"}}
    assert resolve_arguments(job, {"--b": "2", "--c": "2"}) == {"a": "1", "b": "2", "c": "3"}


def test_scan_offline_folder_with_job_json_zip_helpers_and_run_arguments(tmp_path: Path) -> None:
    root = make_folder(tmp_path)
    [conn] = load_folders(root)
    assert (conn.account, conn.region) == ("123456789012", "us-east-1")
    jobs = {j.job: j for j in scan_folder(root, run_arguments={"--env": "prod",
                                                                "--target_path": "x"})}
    args_job = jobs["orders-by-args"]
    assert [o.dataset.key for o in args_job.outputs] == ["s3://prod-bucket/orders"]
    assert args_job.namespace == "glue://123456789012-us-east-1"
    helpers = jobs["helpers-job"]
    assert [o.dataset.key for o in helpers.outputs] == ["s3://out/clean_orders"]
    assert {c for c, _ in helpers.outputs[0].columns} == {"id", "customer"}
    assert not helpers.warnings


def test_cli_scan_and_analyze_write_openlineage_dot_mermaid(tmp_path: Path) -> None:
    root = make_folder(tmp_path)
    runner = CliRunner()
    out = tmp_path / "ol.jsonl"
    result = runner.invoke(cli, ["lineage", "scan", str(root), "--format", "openlineage",
                                 "--out", str(out), "--include", "orders-*"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(events) == 1
    event = events[0]
    assert event["eventType"] == "COMPLETE" and event["job"]["name"] == "orders-by-args"
    [inp] = event["inputs"]
    assert inp["namespace"] == "s3://sales-lake-123456789012" and inp["name"] == "curated/orders"
    assert inp["facets"]["symlinks"]["identifiers"][0]["name"] == "table/sales/orders_parquet"
    [output] = event["outputs"]
    fields = output["facets"]["columnLineage"]["fields"]
    assert fields["order_id"]["inputFields"][0]["field"] == "order_id"
    assert fields["order_id"]["inputFields"][0]["transformations"][0]["subtype"] == "IDENTITY"
    folder = tmp_path / "report"
    result = runner.invoke(cli, ["lineage", "analyze", str(root), "--out", str(folder)])
    assert result.exit_code == 0, result.output
    assert (folder / "lineage.dot").read_text().startswith("digraph lineage {")
    assert "flowchart LR" in (folder / "lineage.mmd").read_text()
    assert "orders-by-args" in (folder / "lineage.html").read_text()
    assert len((folder / "openlineage.jsonl").read_text().splitlines()) == 2
    bad = runner.invoke(cli, ["lineage", "scan", str(tmp_path / "report")])
    assert bad.exit_code == 1 and "not a lineage input folder" in bad.output


def test_a_harmful_script_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    job = tmp_path / "in" / "jobs" / "evil" / "script"
    job.mkdir(parents=True)
    (job / "evil.py").write_text(
        "import os, pathlib, shutil, subprocess\n"
        f"pathlib.Path({str(marker)!r}).write_text('x')\n"
        f"os.system('touch {marker}')\n"
        "subprocess.run(['rm', '-rf', '/'])\n"
        "exec(\"open('/tmp/also', 'w')\")\n"
        "df = spark.read.json('s3://in/a')\n"
        "df.write.json('s3://out/b')\n"
    )
    # a module of the same name as one it imports, placed where an import would find it
    (tmp_path / "in" / "jobs" / "evil" / "extra-py-files").mkdir()
    (tmp_path / "in" / "jobs" / "evil" / "extra-py-files" / "shutil.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n")
    [result] = scan_folder(tmp_path / "in")
    assert not marker.exists()
    assert [o.dataset.key for o in result.outputs] == ["s3://out/b"]


def test_names_cannot_escape_the_output_folder(tmp_path: Path) -> None:
    for name in ["..", ".", "../../etc/passwd", "/abs/path", "a/../../b", "", "..\\x", "a\0b"]:
        component = safe_component(name)
        assert "/" not in component and "\\" not in component and "\0" not in component
        assert component not in ("", ".", "..") and not component.startswith(".")
        path = inside(tmp_path, name)
        assert tmp_path.resolve() in path.resolve().parents
    assert safe_component("orders_daily-v2") == "orders_daily-v2"
    assert safe_component("a/b") != safe_component("a_b")


def test_scan_sends_openlineage_events_to_an_http_endpoint(tmp_path: Path) -> None:
    import http.server
    import threading

    received: list[tuple[str, str | None, dict]] = []  # type: ignore[type-arg]

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the handler API
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers.get("Authorization"), json.loads(body)))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/lineage"
        root = make_folder(tmp_path)
        result = CliRunner().invoke(cli, ["lineage", "scan", str(root), "--send", url,
                                          "--api-key", "k1", "--out", str(tmp_path / "x.json")])
        assert result.exit_code == 0, result.output
    finally:
        server.shutdown()
        server.server_close()
    assert sorted(e["job"]["name"] for _, _, e in received) == ["helpers-job", "orders-by-args"]
    assert {(path, auth) for path, auth, _ in received} == {("/api/v1/lineage", "Bearer k1")}
    bad = CliRunner().invoke(cli, ["lineage", "scan", str(root), "--send", url])
    assert bad.exit_code == 1 and "cannot send OpenLineage events" in bad.output


def test_symlinks_leaving_the_job_folder_are_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("df = spark.read.json('s3://secret/place')\ndf.write.json('s3://x/y')\n")
    job = tmp_path / "in" / "jobs" / "linked"
    (job / "script").mkdir(parents=True)
    (job / "extra-py-files").mkdir()
    (job / "script" / "main.py").symlink_to(secret)
    (job / "extra-py-files" / "lib.py").symlink_to(secret)
    [result] = scan_folder(tmp_path / "in")
    assert result.inputs == () and result.outputs == ()
    text = " ".join(w.message for w in result.warnings)
    assert "main.py resolves outside the job folder" in text
    assert "lib.py resolves outside the job folder" in text
