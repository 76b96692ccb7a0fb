"""The ``lakemark`` command as a scheduler sees it: exit statuses, clean exits, no JVM (no
``pyspark`` import at all) for commands and runs that have nothing for Spark to do, output that
survives a pipe, and bad input refused before a run is opened.

Every command here runs as its own process (``python -m lakemark``), as cron or Airflow would
start it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPEATS = 20


def lakemark(*args: str, cwd: Path | None = None, importtime: bool = False,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "lakemark", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=dict(os.environ, **(env or {})))


def imported_modules(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def lines_without_importtime(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]


@pytest.fixture
def folder(tmp_path: Path) -> dict[str, str]:
    """An empty landing folder, a target path and a state URL."""
    (tmp_path / "landing").mkdir()
    return {"source": str(tmp_path / "landing"), "target": str(tmp_path / "lake"),
            "state": f"sqlite:///{tmp_path / 'state.db'}", "tmp": str(tmp_path)}


def test_an_empty_run_records_and_commits_without_starting_spark(folder: dict[str, str]) -> None:
    for expected_run in (1, 2):
        out = lakemark("ingest", "files", folder["source"], folder["target"], "--job", "empty",
                       "--state", folder["state"], "--json", importtime=True)
        assert out.returncode == 0, out.stderr
        assert not any(m == "pyspark" or m.startswith("pyspark.")
                       for m in imported_modules(out.stderr)), "an empty run imported pyspark"
        assert lines_without_importtime(out.stderr) == []
        result = json.loads(out.stdout)
        assert (result["status"], result["files"], result["run"]) == ("SUCCEEDED", 0,
                                                                        expected_run)


def test_bookmark_and_runs_commands_never_import_spark(folder: dict[str, str]) -> None:
    first = lakemark("ingest", "files", folder["source"], folder["target"], "--job", "j",
                     "--state", folder["state"], "--json")
    assert first.returncode == 0, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    for args in (["bookmark", "show", "j"], ["bookmark", "history", "j"], ["runs", "list", "j"],
                 ["runs", "show", run_id], ["bookmark", "rewind", "j", "--to", run_id],
                 ["bookmark", "reset", "j"], ["state", "prune", "j", "--dry-run"]):
        out = lakemark(*args, "--state", folder["state"], importtime=True)
        assert out.returncode == 0, (args, out.stderr)
        modules = imported_modules(out.stderr)
        assert "lakemark" in modules  # the check itself works
        assert not any(m == "pyspark" or m.startswith("pyspark.") for m in modules), args


def test_exit_statuses_are_0_1_and_2(folder: dict[str, str]) -> None:
    assert lakemark("--help").returncode == 0
    assert lakemark("--version").returncode == 0
    missing_store = lakemark("runs", "list", "nobody", "--state", folder["state"])
    assert missing_store.returncode == 1 and missing_store.stderr.startswith("error:")
    usage = lakemark("ingest", "files", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr
    assert lakemark("no-such-command").returncode == 2
    reported = lakemark("ingest", "files", str(Path(folder["tmp"]) / "missing"), folder["target"],
                        "--job", "j", "--state", folder["state"])
    assert reported.returncode == 1
    assert reported.stderr.startswith("error:") and "missing" in reported.stderr
    assert "Traceback" not in reported.stderr


def test_a_failed_command_with_json_prints_a_json_error(folder: dict[str, str]) -> None:
    missing = str(Path(folder["tmp"]) / "missing")
    out = lakemark("ingest", "files", missing, folder["target"], "--job", "j",
                   "--state", folder["state"], "--json")
    assert out.returncode == 1
    error = json.loads(out.stdout)
    assert missing in error["error"] and error["kind"] == "SourceError"
    usage = lakemark("ingest", "files", folder["source"], folder["target"], "--job", "j",
                     "--state", folder["state"], "--json", "--txn-app-id", "a")
    assert usage.returncode == 2
    assert json.loads(usage.stdout)["kind"] == "UsageError"


def test_piped_tables_never_cut_run_ids_paths_or_times(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "landing"
    deep.mkdir(parents=True)
    state = f"sqlite:///{tmp_path / 'state.db'}"
    run_ids = []
    for _ in range(2):
        out = lakemark("ingest", "files", str(deep), str(tmp_path / "lake"), "--job",
                       "a-job-with-a-long-name-" * 3, "--state", state, "--json")
        assert out.returncode == 0, out.stderr
        run_ids.append(json.loads(out.stdout)["run_id"])
    listing = lakemark("runs", "list", "a-job-with-a-long-name-" * 3, "--state", state)
    assert listing.returncode == 0
    records = json.loads(lakemark("runs", "list", "a-job-with-a-long-name-" * 3, "--state", state,
                                  "--json").stdout)
    for record in records:
        assert record["run_id"] in listing.stdout
        assert record["started_at"][:19].replace("T", " ") in listing.stdout
    shown = lakemark("runs", "show", run_ids[0], "--state", state)
    assert str(deep) in shown.stdout and run_ids[0] in shown.stdout
    bookmark = lakemark("bookmark", "show", "a-job-with-a-long-name-" * 3, "--state", state)
    assert run_ids[1] in bookmark.stdout and str(deep) in bookmark.stdout


def test_a_command_that_reads_delta_through_arrow_exits_cleanly_every_time(tmp_path: Path) -> None:
    """deltalake's native threads alive at interpreter teardown used to abort the process
    ("terminate called without an active exception", status 134) after it had succeeded."""
    import pyarrow as pa
    from deltalake import write_deltalake

    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": list(range(1000))}))
    script = tmp_path / "read_delta.py"
    script.write_text(
        "import sys\n"
        "from deltalake import DeltaTable\n"
        "rows = DeltaTable(sys.argv[1]).to_pyarrow_table().num_rows\n"
        "print(rows)\n")
    for _ in range(REPEATS):
        out = lakemark("run", str(script), str(table))
        assert (out.returncode, out.stdout.strip()) == (0, "1000"), out.stderr
        assert "terminate called" not in out.stderr and out.stderr == ""


def test_bad_input_changes_no_state_and_fails_before_spark(folder: dict[str, str]) -> None:
    """Each bad input fails with one `error:` line (or a usage error), in a process that never
    imports Spark, and leaves the bookmark version and the run list as they were."""
    tmp = Path(folder["tmp"])
    good = lakemark("ingest", "files", folder["source"], folder["target"], "--job", "j",
                    "--state", folder["state"], "--json")
    assert good.returncode == 0, good.stderr
    a_file = tmp / "a-file"
    a_file.write_text("x")
    foreign = tmp / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a table")
    table = tmp / "delta"
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(str(table), pa.table({"id": [1]}))
    base = ["ingest", "files", folder["source"], folder["target"], "--job", "j"]
    bad_inputs = [
        ["ingest", "files", str(tmp / "missing"), folder["target"], "--job", "j"],
        ["ingest", "files", folder["source"], str(a_file), "--job", "j"],
        ["ingest", "files", folder["source"], str(a_file), "--job", "j", "--target-format",
         "parquet"],
        ["ingest", "files", folder["source"], str(foreign), "--job", "j"],
        ["ingest", "files", folder["source"], str(table), "--job", "j", "--target-format", "csv"],
        ["ingest", "files", folder["source"], "s3://", "--job", "j"],
        [*base, "--format", "xml"],
        [*base, "--option", "noequals"],
        [*base, "--option", "path=/elsewhere"],
        [*base, "--option", f"basePath={tmp}"],
        [*base, "--option", "mode=FAILFAST", "--mode", "DROPMALFORMED"],
        [*base, "--txn-app-id", "app"],
        [*base, "--txn-app-id", " ", "--txn-version", "1"],
        [*base, "--merge-schema", "--target-format", "json"],
        [*base, "--target-format", "csv", "--txn-app-id", "a", "--txn-version", "1"],
        [*base, "--incremental-listing"],
        [*base, "--bookmark", "pause", "--from", "jr_nope"],
        [*base, "--bookmark", "enable", "--from", "jr_a", "--to", "jr_b"],
        [*base, "--max-band", "-5"],
        [*base, "--bounded-files", "0"],
        [*base, "--format", "nope"],
        ["ingest", "files", folder["source"], "--job", "j", "--target-format", "iceberg",
         "--table", "a.b.c.d"],
    ]
    before_bookmark = lakemark("bookmark", "show", "j", "--state", folder["state"], "--json")
    before_runs = lakemark("runs", "list", "j", "--state", folder["state"], "--json").stdout
    for args in bad_inputs:
        out = lakemark(*args, "--state", folder["state"], importtime=True)
        assert out.returncode in (1, 2), (args, out.stdout, out.stderr)
        text = "\n".join(lines_without_importtime(out.stderr))
        assert "Traceback" not in text, (args, text)
        if out.returncode == 1:
            assert text.startswith("error:") and len(text.splitlines()) == 1, (args, text)
        assert not any(m == "pyspark" or m.startswith("pyspark.")
                       for m in imported_modules(out.stderr)), args
        assert lakemark("bookmark", "show", "j", "--state", folder["state"],
                        "--json").stdout == before_bookmark.stdout, args
        assert lakemark("runs", "list", "j", "--state", folder["state"],
                        "--json").stdout == before_runs, args
    assert not Path(folder["target"]).exists()
