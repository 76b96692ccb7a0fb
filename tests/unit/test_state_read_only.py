"""Read-only commands (`bookmark show|history`, `runs list|show`) open the store read-only: a
mistyped SQLite path or folder is one clear `error:` line and exit 1, and nothing is created;
a query string in an SQLite URL is refused, never part of a file name."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.errors import ConfigError, StateError
from lakemark.state import open_store
from pgtest import need_postgres, state_url

READ_ONLY = [
    ["bookmark", "show", "orders"],
    ["bookmark", "history", "orders"],
    ["runs", "list", "orders"],
    ["runs", "show", "jr_00000000000000000000000000000000"],
]


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, output
    return " ".join(" ".join(lines).split())  # rich may wrap the one message over lines


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("target", ["nodir/sub/s.db", "missing.db", "s.db?mode=ro", "s.db#x"])
def test_read_only_commands_create_nothing(tmp_path: Path, command: list[str],
                                           target: str) -> None:
    before = tree(tmp_path)
    for args, env in ((["--state", f"sqlite:///{tmp_path}/{target}"], {}),
                      ([], {"LAKEMARK_STATE": f"sqlite:///{tmp_path}/{target}"})):
        result = CliRunner().invoke(cli, [*command, *args], env=env)
        assert result.exit_code == 1, result.output
        text = one_error_line(result.output)
        assert "version 0" not in text
        if "?" in target or "#" in target:
            assert "query string" in text
        else:
            assert "does not exist" in text and "nothing was created" in text
            assert target.split("/")[0] in text
        assert tree(tmp_path) == before


def test_subprocess_prints_one_error_line_and_exits_1(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lakemark", "bookmark", "show", "orders", "--state",
         f"sqlite:///{tmp_path}/nodir/sub/s.db"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "1000"})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("error:") == 1 and len(result.stderr.splitlines()) == 1
    assert "nodir" in result.stderr
    assert not (tmp_path / "nodir").exists()


def test_existing_store_is_read_without_being_changed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/state.db"
    store = open_store(url)
    run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
    store.commit_run(run.run_id, {"src": {"high": 3}}, update_bookmark=True)
    store.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    runner = CliRunner()
    for command in READ_ONLY[:3] + [["runs", "show", run.run_id]]:
        result = runner.invoke(cli, [*command, "--state", url, "--json"])
        assert result.exit_code == 0, result.output
    assert '"version": 1' in runner.invoke(cli, ["bookmark", "show", "orders", "--state", url,
                                                 "--json"]).output
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    ro = open_store(url, read_only=True)
    with pytest.raises(StateError):
        ro.reset("orders")
    ro.close()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_file_that_is_not_a_store_is_refused_unchanged(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"")
    for content in (b"", b"not sqlite at all" * 50):
        notes.write_bytes(content)
        with pytest.raises(StateError, match="not a lakemark state database"):
            open_store(f"sqlite:///{notes}", read_only=True)
        assert notes.read_bytes() == content and tree(tmp_path) == ["notes.db"]


def test_query_string_is_refused_for_writers_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="query string"):
        open_store(f"sqlite:///{tmp_path}/s.db?mode=ro")
    assert tree(tmp_path) == []


def test_default_location_may_be_created(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bookmark", "show", "orders", "--json"],
                                env={"HOME": str(tmp_path), "LAKEMARK_STATE": None})
    # created, and empty: a job it has no record of is an error, not an empty bookmark
    assert result.exit_code == 1 and "the store has no jobs yet" in result.output, result.output
    assert (tmp_path / ".lakemark" / "state.db").is_file()


def test_postgres_schema_is_not_created_by_a_read_only_open() -> None:
    user = need_postgres()
    schema = f"lm_ro_{uuid.uuid4().hex[:12]}"
    url = state_url(user) + f"?schema={schema}"
    with pytest.raises(StateError, match="holds no lakemark state"):
        open_store(url, read_only=True)
    import psycopg

    with psycopg.connect(state_url(user)) as db:
        found = db.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s",
                           (schema,)).fetchone()
    assert found is None
    store = open_store(url)  # a writer creates it; then a reader reads it
    store.close()
    try:
        reader = open_store(url, read_only=True)
        assert reader.get_bookmark("orders").version == 0
        reader.close()
    finally:
        with psycopg.connect(state_url(user), autocommit=True) as db:
            db.execute(f'DROP SCHEMA "{schema}" CASCADE')
