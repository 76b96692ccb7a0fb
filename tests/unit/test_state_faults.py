"""State-store faults made for real end in one `error:` line naming the store and the cause,
never a traceback or a wrong diagnosis, and lose nothing (issue 31, finding 8).

Faults: a read-only file system (a bind mount remounted ``ro``), a full disk (a small tmpfs
filled by a filler file, before opening and in the middle of a run), a store locked by another
process, a PostgreSQL connection ended by the server (``pg_terminate_backend`` from another
session), and an empty ``--state`` / ``LAKEMARK_STATE``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from fs_faults import fill, read_only_view, tmpfs
from lakemark.cli import cli
from lakemark.errors import StateError
from lakemark.state import open_store, resolve_state_url
from lakemark.state.sqlite import SQLiteStore
from pgtest import need_postgres, state_url

READ_ONLY_COMMANDS = [
    ["bookmark", "show", "orders"],
    ["bookmark", "history", "orders"],
    ["runs", "list", "orders"],
    ["schema", "show", "orders"],
]


def error_line(output: str) -> str:
    """The one `error:` line of a command's output (rich may wrap it), without a traceback."""
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert sum(line.startswith("error:") for line in lines) == 1, output
    return " ".join(" ".join(lines).split())


def committed_store(folder: Path, *, checkpoint: bool = True) -> tuple[str, str]:
    """A store in ``folder`` with one committed run of job ``orders``: (URL, run id).
    Without ``checkpoint`` the commit stays in the WAL file (as after a crash)."""
    url = f"sqlite:///{folder}/state.db"
    store = open_store(url)
    assert isinstance(store, SQLiteStore)
    if not checkpoint:
        store._db.execute("PRAGMA wal_autocheckpoint = 0")
    run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
    store.commit_run(run.run_id, {"src": {"high": 3}}, update_bookmark=True)
    if checkpoint:
        store.close()
    else:  # leave -wal and -shm as a killed process would (no checkpoint on close)
        copy = folder.parent / "copy"
        copy.mkdir()
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (copy / name).write_bytes((folder / name).read_bytes())
        store.close()
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (folder / name).write_bytes((copy / name).read_bytes())
        assert (folder / "state.db-wal").stat().st_size > 0
    return url, run.run_id


@pytest.mark.parametrize("checkpoint", [True, False], ids=["clean", "wal-pending"])
def test_read_only_commands_work_on_a_read_only_file_system(tmp_path: Path,
                                                            checkpoint: bool) -> None:
    source = tmp_path / "rw"
    source.mkdir()
    _, run_id = committed_store(source, checkpoint=checkpoint)
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    with read_only_view(source, tmp_path / "ro") as ro:
        url = f"sqlite:///{ro}/state.db"
        runner = CliRunner()
        for command in READ_ONLY_COMMANDS + [["runs", "show", run_id]]:
            result = runner.invoke(cli, [*command, "--state", url, "--json"])
            assert result.exit_code == 0, (command, result.output)
            assert "error:" not in result.output and "\"kind\"" not in result.output, result.output
        shown = runner.invoke(cli, ["bookmark", "show", "orders", "--state", url, "--json"])
        assert '"run": 1' in shown.output and '"high": 3' in shown.output, shown.output
        # A command that writes is refused with the cause, not "not a state database".
        reset = runner.invoke(cli, ["bookmark", "reset", "orders", "--state", url])
        assert reset.exit_code == 1
        text = error_line(reset.output)
        assert f"state store {url}" in text and "file system is read-only" in text, text
        assert "not a lakemark state database" not in text
    assert {p.name: p.read_bytes() for p in source.iterdir()} == before


def test_a_full_disk_under_a_new_store_is_named_and_leaves_nothing(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "256k") as disk:
        filler = fill(disk)
        url = f"sqlite:///{disk}/state.db"
        result = CliRunner().invoke(cli, ["bookmark", "reset", "orders", "--state", url])
        assert result.exit_code == 1
        text = error_line(result.output)
        assert f"state store {url}" in text and "disk under it is full" in text, text
        assert "not a lakemark state database" not in text
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # no empty state file
        as_json = CliRunner().invoke(cli, ["bookmark", "reset", "orders", "--state", url,
                                           "--json"])
        document = json.loads(as_json.stdout)
        assert (document["kind"], document["store"]) == ("StateError", url), document
        filler.unlink()
        open_store(url).close()  # with space again the same URL works


def test_a_disk_that_fills_mid_run_fails_the_step_and_loses_nothing(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "2m") as disk:
        url = f"sqlite:///{disk}/state.db"
        store = open_store(url)
        first = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
        store.commit_run(first.run_id, {"src": {"high": 1}}, update_bookmark=True)
        run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
        filler = fill(disk)
        steps = {
            "commit": lambda: store.commit_run(run.run_id, {"src": {"high": 2}},
                                               update_bookmark=True),
            "heartbeat": lambda: store.heartbeat(run.run_id),
            "failure": lambda: store.fail_run(run.run_id, "x" * 4000, update_bookmark=True),
        }
        for name, step in steps.items():
            with pytest.raises(StateError) as info:
                step()
            text = str(info.value)
            assert text.startswith(f"state store {url}: a write failed: "), (name, text)
            assert "disk under it is full" in text, (name, text)
        assert store.get_bookmark("orders").state == {"src": {"high": 1}}  # reads still work
        store.close()
        filler.unlink()
        store = open_store(url)
        try:  # nothing half-written: the run is still open, the bookmark as committed
            assert store.get_run(run.run_id).status == "RUNNING"
            assert store.get_bookmark("orders").state == {"src": {"high": 1}}
            b = store.commit_run(run.run_id, {"src": {"high": 2}}, update_bookmark=True)
            assert (b.run, b.state) == (2, {"src": {"high": 2}})
        finally:
            store.close()


def test_a_run_whose_store_fills_ends_in_one_error_line(tmp_path: Path) -> None:
    """`lakemark run`: a script's commit on a store whose disk filled meanwhile prints one
    `error:` line naming the store and the cause, and exits 1 (no Python traceback)."""
    with tmpfs(tmp_path / "small", "2m") as disk:
        url = f"sqlite:///{disk}/state.db"
        script = tmp_path / "job.py"
        script.write_text(
            "import sys\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from fs_faults import fill\n"
            "from pathlib import Path\n"
            "from lakemark import Job\n"
            f"with Job('orders', state={url!r}) as job:\n"
            f"    fill(Path({str(disk)!r}))\n"
        )
        tests = Path(__file__).resolve().parents[1]
        done = subprocess.run(
            [sys.executable, "-m", "lakemark", "run", str(script), str(tests)],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "COLUMNS": "1000",
                 "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])})
        assert done.returncode == 1, done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert "Traceback" not in done.stderr, done.stderr
        assert len(errors) == 1, done.stderr
        assert f"state store {url}" in errors[0] and "disk under it is full" in errors[0]


def test_a_locked_store_is_named_as_locked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/state.db"
    open_store(url).close()
    store = SQLiteStore(tmp_path / "state.db", busy_timeout_s=0.05)
    holder = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StateError) as info:
                store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
            text = str(info.value)
            assert text.startswith(f"state store {url}: a write failed: "), text
            assert "locked by another process" in text, text
        finally:
            holder.execute("ROLLBACK")
            store.close()
    finally:
        holder.close()


def test_a_postgres_connection_ended_by_the_server_is_named(tmp_path: Path) -> None:
    import psycopg

    from pgtest import DATABASE, HOST, PORT

    user = need_postgres()
    schema = f"lm_faults_{uuid.uuid4().hex[:10]}"
    url = state_url(user) + f"?schema={schema}"
    store = open_store(url)
    admin = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user, autocommit=True)
    try:
        run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
        pid = store._db.info.backend_pid  # type: ignore[attr-defined]
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
        with pytest.raises(StateError) as info:
            store.commit_run(run.run_id, {"src": {"high": 1}}, update_bookmark=True)
        text = str(info.value)
        assert text.startswith(f"state store {store.url}: a write failed: "), text
        assert "connection to the server was lost" in text, text
        with pytest.raises(StateError, match="connection to the server was lost"):
            store.get_bookmark("orders")  # a read outside a transaction says the same
        # Nothing was committed: a new connection sees the run open and the bookmark empty.
        again = open_store(url)
        try:
            assert again.get_run(run.run_id).status == "RUNNING"
            assert again.get_bookmark("orders").version == 0
        finally:
            again.close()
    finally:
        store.close()
        admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.close()


@pytest.mark.parametrize("command", [["bookmark", "show", "orders"], ["runs", "list", "orders"],
                                     ["bookmark", "reset", "orders"],
                                     ["state", "prune", "--all"]], ids=lambda c: " ".join(c))
def test_an_empty_state_url_is_refused(tmp_path: Path, command: list[str]) -> None:
    home = {"HOME": str(tmp_path)}
    runner = CliRunner()
    for args, env in (([*command, "--state", ""], home),
                      ([*command, "--state", "  "], home),
                      (command, {**home, "LAKEMARK_STATE": ""})):
        result = runner.invoke(cli, args, env=env)
        # A malformed --state is a usage error, exit status 2 like any option value that
        # cannot be understood (was 1: issue 31).
        assert result.exit_code == 2, result.output
        text = usage_error_line(result.output)
        assert ("--state" in text if "--state" in args else "LAKEMARK_STATE" in text), text
        assert "empty" in text
    assert not (tmp_path / ".lakemark").exists()  # the default store was not used


def usage_error_line(output: str) -> str:
    """The one ``Error:`` line of click's usage error, without a traceback."""
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("command", [["bookmark", "show", "orders"], ["runs", "list", "orders"],
                                     ["quarantine", "retry", "orders"], ["jobs", "list"],
                                     ["state", "prune", "--all"]], ids=lambda c: " ".join(c))
def test_a_malformed_state_url_exits_2_and_an_unreachable_store_exits_1(
        tmp_path: Path, command: list[str]) -> None:
    runner = CliRunner()
    env = {"HOME": str(tmp_path)}
    bad = runner.invoke(cli, [*command, "--state", "mysql://root@127.0.0.1/test", "--json"],
                        env=env)
    assert bad.exit_code == 2, bad.output
    assert "unknown scheme 'mysql'" in usage_error_line(bad.stderr)
    assert json.loads(bad.stdout)["kind"] == "UsageError"
    # Well-formed, but nothing listens there: a reported error naming the store, exit 1.
    gone = runner.invoke(cli, [*command, "--state", "postgresql://127.0.0.1:9/test"], env=env)
    assert gone.exit_code == 1, gone.output
    assert "127.0.0.1:9" in error_line(gone.output)
    assert not (tmp_path / ".lakemark").exists()


def test_an_empty_state_url_is_refused_by_the_library() -> None:
    from lakemark.errors import ConfigError

    with pytest.raises(ConfigError, match="empty"):
        resolve_state_url("", {})
    with pytest.raises(ConfigError, match="LAKEMARK_STATE is set but empty"):
        resolve_state_url(None, {"LAKEMARK_STATE": ""})
    assert resolve_state_url(None, {"LAKEMARK_STATE": "sqlite:///x.db"}) == "sqlite:///x.db"


def test_a_stale_lease_holder_is_told_who_took_over_and_that_nothing_was_committed(
        tmp_path: Path) -> None:
    from lakemark.errors import LeaseLost

    store = open_store(f"sqlite:///{tmp_path}/state.db")
    try:
        stale = store.begin_run("orders", "enable", host="old-host", pid=1, lease_timeout_s=60)
        taker = store.begin_run("orders", "enable", host="new-host", pid=2, lease_timeout_s=60,
                                force=True)
        with pytest.raises(LeaseLost) as info:
            store.heartbeat(stale.run_id, what="write to /lake/t")
        text = str(info.value)
        assert f"was taken over by run {taker.run_id} at generation 2" in text, text
        assert "its write to /lake/t was refused and nothing it did was committed" in text
        assert "host new-host, pid 2" in text and "because forced" in text, text
        assert f"at {store.get_run(taker.run_id).started_at}" in text, text
        assert "replaced" not in text
    finally:
        store.close()


@pytest.mark.parametrize("text,cause", [
    ("An error occurred while calling o287.parquet.\n: org.apache.spark.SparkException: "
     "[TASK_WRITE_FAILED] Task failed while writing rows to file:/t/_lakemark_staging/x.\n"
     "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError"
     "(QueryExecutionErrors.scala:823)\n"
     "Caused by: org.apache.hadoop.fs.FSError: java.io.IOException: No space left on device\n"
     "\tat org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.write(x.java:549)\n"
     "Caused by: java.io.IOException: No space left on device\n\t... 41 more\n",
     "the disk under the target is full (No space left on device)"),
    ("An error occurred while calling o12.save.\n: java.io.IOException: Mkdirs failed\n"
     "Caused by: java.nio.file.FileSystemException: /t/x: Read-only file system\n",
     "the target's file system is read-only (Read-only file system)"),
    ("An error occurred while calling o9.json.\n: org.apache.spark.SparkException: Job aborted"
     "\nCaused by: java.lang.IllegalStateException: something odd\n\tat a.b(c.java:1)\n",
     "something odd"),
    ("An error occurred while calling o9.json.\n: org.apache.spark.SparkException: Job aborted"
     "\n\tat a.b(c.java:1)\n", "org.apache.spark.SparkException: Job aborted"),
])
def test_the_root_cause_of_a_spark_write_failure_is_one_line(text: str, cause: str) -> None:
    from lakemark.sinks._spark_cause import spark_root_cause

    assert spark_root_cause(Exception(text)) == cause
    try:  # the cause may sit further down Python's chain (a converted JVM error)
        try:
            raise Exception(text)
        except Exception as inner:
            raise RuntimeError("An error occurred while calling o1.save") from inner
    except RuntimeError as outer:
        assert spark_root_cause(outer) == cause


def test_a_run_that_fails_while_its_store_is_full_raises_its_own_error(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The run's own error is what the caller sees; that its failure could not be recorded
    is a warning naming the store; the run stays open and its input unprocessed."""
    from lakemark import Job

    with tmpfs(tmp_path / "small", "2m") as disk:
        url = f"sqlite:///{disk}/state.db"
        with pytest.raises(ValueError, match="the sink broke"):
            with Job("orders", state=url) as job:
                run_id = job.run_id
                filler = fill(disk)
                raise ValueError("the sink broke")
        assert f"state store {url}" in caplog.text and "disk under it is full" in caplog.text
        filler.unlink()
        store = open_store(url)
        try:
            assert store.get_run(run_id).status == "RUNNING"
            assert store.get_bookmark("orders").version == 0
        finally:
            store.close()


_FSIZE_RUN = """
import resource, signal, sys
from lakemark.errors import StateError
from lakemark.state import open_store
store = open_store(sys.argv[1])
run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))
try:
    store.commit_run(run.run_id, {"src": {"high": 1}}, update_bookmark=True)
except StateError as exc:
    print(exc)
"""


def test_a_write_the_file_system_refuses_is_an_io_error_not_a_traceback(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the kernel refuse every write that grows a file (EFBIG), which SQLite
    reports as "disk I/O error", as it does for a failing or vanished disk. The file system is
    neither read-only nor full, so neither is claimed."""
    url = f"sqlite:///{tmp_path}/state.db"
    done = subprocess.run([sys.executable, "-c", _FSIZE_RUN, url], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    text = done.stdout.strip()
    assert text.startswith(f"state store {url}: a write failed: "), text
    assert "the disk or file system failed to read or write it" in text, text
    assert "read-only" not in text and "full" not in text and "not a lakemark" not in text
    store = open_store(url)
    try:  # nothing was committed
        assert store.get_bookmark("orders").version == 0
    finally:
        store.close()


def test_an_existing_default_store_is_read_on_a_read_only_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".lakemark").mkdir(parents=True)
    committed_store(home / ".lakemark")
    with read_only_view(home, tmp_path / "ro-home") as ro:
        # The default store: no LAKEMARK_STATE (an in-process `lakemark run` test sets it).
        result = CliRunner().invoke(cli, ["bookmark", "show", "orders", "--json"],
                                    env={"HOME": str(ro), "LAKEMARK_STATE": None})
        assert result.exit_code == 0, result.output
        assert '"run": 1' in result.output


def test_a_read_only_postgres_store_is_read_and_named_read_only_on_a_write() -> None:
    """A session the server makes read-only (default_transaction_read_only, as on a standby):
    the commands that only look work; a write is one error line saying "read-only"."""
    import psycopg

    from pgtest import DATABASE, HOST, PORT

    user = need_postgres()
    schema = f"lm_faults_{uuid.uuid4().hex[:10]}"
    url = state_url(user) + f"?schema={schema}"
    store = open_store(url)
    run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
    store.commit_run(run.run_id, {"src": {"high": 3}}, update_bookmark=True)
    store.close()
    read_only = url + "&options=-c%20default_transaction_read_only%3Don"
    try:
        runner = CliRunner()
        shown = runner.invoke(cli, ["bookmark", "show", "orders", "--state", read_only, "--json"])
        assert shown.exit_code == 0 and '"high": 3' in shown.output, shown.output
        reset = runner.invoke(cli, ["bookmark", "reset", "orders", "--state", read_only])
        assert reset.exit_code == 1
        text = error_line(reset.output)
        assert "state store postgresql://" in text and "it is read-only" in text, text
    finally:
        with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user,
                             autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_postgres_store_locked_by_a_stuck_session_is_named_as_locked() -> None:
    """A session that holds the store's write lock and never ends its transaction: a write
    waits at most the busy timeout, then fails naming the store as locked (no hang)."""
    import psycopg

    from pgtest import DATABASE, HOST, PORT

    user = need_postgres()
    schema = f"lm_faults_{uuid.uuid4().hex[:10]}"
    url = state_url(user) + f"?schema={schema}"
    from lakemark.state.postgres import PostgresStore

    store = PostgresStore(url, busy_timeout_s=0.2)
    stuck = psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user)
    try:
        stuck.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"lakemark-state:{schema}",))
        with pytest.raises(StateError) as info:
            store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
        text = str(info.value)
        assert text.startswith(f"state store {store.url}: a write failed: "), text
        assert "locked by another session" in text, text
        stuck.rollback()
        run = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60)
        assert run.run == 1  # the failed attempt changed nothing
    finally:
        stuck.close()
        store.close()
        with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user,
                             autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
