"""``lakemark quarantine list|retry`` and the set-aside files in ``runs show`` (no JVM)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.state import open_store


def _store_with_a_set_aside_file(tmp_path: Path) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    store = open_store(url)
    run = store.begin_run("j", "enable", host=socket.gethostname(), pid=os.getpid(),
                          lease_timeout_s=60)
    store.quarantine_files(run.run_id, "j", "source", [
        ("/in/bad file #1.parquet", 12, 1_700_000_000_000, "not a Parquet file or truncated")])
    store.commit_run(run.run_id, {}, update_bookmark=True)
    clean = store.begin_run("j2", "enable", host=socket.gethostname(), pid=os.getpid(),
                            lease_timeout_s=60)  # a job that set nothing aside
    store.commit_run(clean.run_id, {}, update_bookmark=True)
    store.close()
    return url, run.run_id


def test_list_shows_each_file_with_its_reason(tmp_path: Path) -> None:
    url, run_id = _store_with_a_set_aside_file(tmp_path)
    runner = CliRunner()
    human = runner.invoke(cli, ["quarantine", "list", "j", "--state", url])
    assert human.exit_code == 0, human.output
    assert "/in/bad file #1.parquet" in human.output and "truncated" in human.output
    listed = json.loads(runner.invoke(cli, ["quarantine", "list", "j", "--state", url,
                                            "--json"]).stdout)
    assert [(f["path"], f["size"], f["run_id"], f["status"]) for f in listed["files"]] == [
        ("/in/bad file #1.parquet", 12, run_id, "open")]
    shown = json.loads(runner.invoke(cli, ["runs", "show", run_id, "--state", url,
                                           "--json"]).stdout)
    assert shown["quarantined"][0]["reason"] == "not a Parquet file or truncated"
    text = runner.invoke(cli, ["runs", "show", run_id, "--state", url]).output
    assert "set aside (ctx source): /in/bad file #1.parquet" in text
    assert "No set-aside files for job j2" in runner.invoke(
        cli, ["quarantine", "list", "j2", "--state", url]).output
    for args in (["list", "jj"], ["retry", "jj"]):  # a mistyped job: an error naming j
        typo = runner.invoke(cli, ["quarantine", *args, "--state", url])
        assert typo.exit_code == 1 and "'j'" in typo.output, typo.output


def test_retry_marks_the_files_and_refuses_an_unknown_path(tmp_path: Path) -> None:
    url, _ = _store_with_a_set_aside_file(tmp_path)
    runner = CliRunner()
    bad = runner.invoke(cli, ["quarantine", "retry", "j", "/in/other.parquet", "--state", url])
    assert bad.exit_code == 1 and "/in/other.parquet" in bad.output
    done = runner.invoke(cli, ["quarantine", "retry", "j", "--state", url])
    assert done.exit_code == 0 and "1 file(s) of job j marked" in done.output
    listed = json.loads(runner.invoke(cli, ["quarantine", "list", "j", "--state", url,
                                            "--json"]).stdout)
    assert [f["status"] for f in listed["files"]] == ["retry"]


def test_list_on_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nope.db'}"
    result = CliRunner().invoke(cli, ["quarantine", "list", "j", "--state", url])
    assert result.exit_code == 1 and "does not exist" in result.output
    assert not (tmp_path / "nope.db").exists()


def test_brackets_in_paths_and_reasons_print_as_they_are(tmp_path: Path) -> None:
    """File names and reasons are data, not rich markup: a link target ``[/oops]`` once made
    ``quarantine list``, ``runs show`` and the ingest summary end in a MarkupError traceback,
    and ``[red]`` in a file name vanished from the output."""
    url = f"sqlite:///{tmp_path / 'state.db'}"
    store = open_store(url)
    run = store.begin_run("j", "enable", host=socket.gethostname(), pid=os.getpid(),
                          lease_timeout_s=60)
    store.quarantine_files(run.run_id, "j", "source", [
        ("/in/ok [red]x.json", 0, 1_700_000_000_000, "dangling symbolic link (to [/oops])")])
    store.commit_run(run.run_id, {}, update_bookmark=True)
    store.close()
    runner = CliRunner()
    for args in (["quarantine", "list", "j"], ["runs", "show", run.run_id], ["runs", "list", "j"]):
        done = runner.invoke(cli, [*args, "--state", url])
        assert done.exit_code == 0, done.output
        if args[0] != "runs" or args[1] == "show":
            assert "/in/ok [red]x.json" in done.output and "(to [/oops])" in done.output
