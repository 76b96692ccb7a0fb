"""Retention prunes the folder-sink commit records (``folder_commits``) and the set-aside
history (``quarantine_history``) of the runs it deletes, on SQLite and PostgreSQL — but never the
latest committed version of a target and app id (it refuses writing that version again), never
a pending record (a dead write's trace), and never a file of a committed run from
``committed_files``."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import store_of

from lakemark.planning.retention import RetentionPolicy
from lakemark.sinks import committed_files
from lakemark.sinks._commit_log import StoreRecords
from lakemark.sinks._model import IdempotencyToken
from lakemark.sinks._publish import commit_record, staged_publish, staging_folder
from lakemark.storage import filesystem_for

HOST = socket.gethostname()
LATER = 4_000_000_000.0  # long after every run (the window keeps only keep_runs)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with store_of(request.param, tmp_path, "lm_retrecords") as s:
        yield s


def _write(store: Any, fs: Any, run: Any, job: str, ctx: str, name: str) -> None:
    """One job write of file ``name`` into ``fs`` with the automatic token of ``run``."""
    def write(write_id: str) -> None:
        fs.write_text(f"{staging_folder(write_id)}/{name}", f"{name}\n")
    token = IdempotencyToken(f"{job}/{ctx}", run.run)
    staged_publish(fs, token, {"lakemark.runId": run.run_id, "lakemark.job": job}, write,
                   StoreRecords(store, run.run_id).log(fs))


def _runs(store: Any, job: str, count: int, fs: Any, *, rare: Any = None,
          first: int = 0) -> list[Any]:
    done = []
    for n in range(first, first + count):
        run = store.begin_run(job, "enable", host=HOST, pid=os.getpid(), lease_timeout_s=60)
        _write(store, fs, run, job, "sink", f"{job}-{n}.csv")
        if rare is not None and n < 2:  # a second target written only by the first two runs
            _write(store, rare, run, job, "rare", f"{job}-rare-{n}.csv")
        store.quarantine_files(run.run_id, job, "src", [(f"/in/bad-{n}.json", 3, n, "bad")])
        store.commit_run(run.run_id, {"src": {"high": n}}, update_bookmark=True)
        done.append(run)
    return done


def _rows(store: Any, table: str, where: str = "", params: tuple[Any, ...] = ()) -> int:
    return int(store._q.execute(  # noqa: SLF001 - counting the rows themselves
        f"SELECT COUNT(*) FROM {table} {where}", params).fetchone()[0])


def test_prune_takes_the_records_of_pruned_runs_and_keeps_what_refuses_a_rewrite(
        store: Any, tmp_path: Path) -> None:
    store.retention = None  # pruned by the test only
    out, rare = filesystem_for(str(tmp_path / "out")), filesystem_for(str(tmp_path / "rare"))
    runs = _runs(store, "j", 5, out, rare=rare)
    _runs(store, "j2", 3, out)  # another job writing the same folder: not touched
    # A write of run 1 that died mid-publish left its pending trace (version 99 of j/sink).
    store.set_folder_pending(out.root, "j/sink", 99, "dead", {"staging": "dead", "files": []})
    before = committed_files(out.root, state=store.url)
    assert len(before) == 8 and _rows(store, "folder_commits") == 11

    policy = RetentionPolicy(keep_days=0, keep_runs=1)
    [dry] = store.prune("j", policy, dry_run=True, now=LATER)
    assert (dry.runs, dry.folder_commits, dry.quarantine_history) == (3, 4, 3)
    assert _rows(store, "folder_commits") == 11 and _rows(store, "quarantine_history") == 8

    [report] = store.prune("j", policy, now=LATER)
    assert (report.runs, report.folder_commits, report.quarantine_history) == (3, 4, 3)
    assert report.to_json()["folder_commits"] == 4
    # Runs 4 and 5 stay (the bookmark's run and its previous run), so j/sink keeps their
    # versions; j/rare keeps version 2 although run 2 is gone:
    # it is that target's latest committed version. The pending trace and j2's records stay.
    kept = store._q.execute(  # noqa: SLF001
        "SELECT app_id, version, status FROM folder_commits").fetchall()
    assert sorted(tuple(r) for r in kept) == [
        ("j/rare", 2, "committed"), ("j/sink", 4, "committed"),
        ("j/sink", 5, "committed"), ("j/sink", 99, "pending"),
        ("j2/sink", 1, "committed"), ("j2/sink", 2, "committed"), ("j2/sink", 3, "committed")]
    # Every version up to the kept one is still refused: a rewrite would be skipped.
    for version in range(1, 6):
        assert commit_record(out, IdempotencyToken("j/sink", version),
                             StoreRecords(store).log(out)) is not None
    assert commit_record(rare, IdempotencyToken("j/rare", 1),
                         StoreRecords(store).log(rare)) is not None
    # Readers that go by the records still see every committed file.
    assert committed_files(out.root, state=store.url) == before
    assert len(committed_files(rare.root, state=store.url)) == 2
    # The set-aside history of the pruned runs went with them; the current state stayed.
    history = store.quarantine_history("j")
    assert [h.run_id for h in history] == [runs[3].run_id, runs[4].run_id]
    assert len(store.quarantined("j")) == 5
    assert len(store.quarantine_history("j2")) == 3

    # Pruning again hands the earlier files on once more (a record that carries earlier files
    # and is itself pruned later passes them on).
    more = _runs(store, "j", 2, out, first=5)
    [again] = store.prune("j", policy, now=LATER)
    assert again.folder_commits == 2
    assert committed_files(out.root, state=store.url) == sorted(
        before + [f"{out.root}/j-{n}.csv" for n in (5, 6)])
    assert more[-1].run == 7
    assert _rows(store, "folder_commits", "WHERE app_id = ?", ("j/sink",)) == 3  # 6, 7, 99
