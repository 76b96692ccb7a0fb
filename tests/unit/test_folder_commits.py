"""Folder sinks' commit records in the state store (issue 32): the output prefix holds only
data files, exactly-once holds (pending → committed by compare-and-set, fenced by the run's
lease), and records an older lakemark left under ``_lakemark_commits/`` are still honoured.

Staged publishes run on a real local folder with the real SQLite and PostgreSQL stores; the
writer callable stands in for Spark (the same callable shape Spark's and pyarrow's writers
take), so no JVM is needed.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgtest import store_of

from lakemark.errors import CommitConflict, ConfigError, LeaseLost
from lakemark.sinks import committed_files
from lakemark.sinks._commit_log import (FOLDER_COMMITS_ENV, FolderLog, StoreRecords,
                                        commit_layout, folder_records)
from lakemark.sinks._model import IdempotencyToken
from lakemark.sinks._publish import commit_record, staged_publish, staging_folder
from lakemark.sinks._staging import sibling_staged
from lakemark.state import open_store
from lakemark.state._sql import SCHEMA_VERSION
from lakemark.storage import filesystem_for

HOST = socket.gethostname()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with store_of(request.param, tmp_path, "lm_foldercommits") as s:
        yield s


def _files(root: Path) -> list[str]:
    """Every file under ``root``, hidden or not, relative (what `aws s3 sync` would copy)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _publish(fs: Any, token: IdempotencyToken | None, log: Any, rows: dict[str, str],
             extra: dict[str, Any] | None = None) -> Any:
    """One staged publish of text files ``rows`` (relative path -> content) into ``fs``."""
    def write(write_id: str) -> None:
        for rel, text in rows.items():
            fs.write_text(f"{staging_folder(write_id)}/{rel}", text)
    return staged_publish(fs, token, dict(extra or {}), write, log)


def _run(store: Any, job: str = "j", **kw: Any) -> Any:
    return store.begin_run(job, "enable", host=HOST, pid=os.getpid(), lease_timeout_s=60, **kw)


def test_records_go_to_the_store_and_the_prefix_holds_only_data(store: Any,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    fs = filesystem_for(str(out))
    run = _run(store)
    log = StoreRecords(store, run.run_id).log(fs)
    token = IdempotencyToken("j/sink", 1)
    published = _publish(fs, token, log, {"d=1/a.csv": "1\n", "b.csv": "22\n"},
                         {"lakemark.runId": run.run_id})
    assert sorted(published.files) == ["b.csv", "d=1/a.csv"]
    assert _files(out) == ["b.csv", "d=1/a.csv"]  # no _lakemark_commits, no staging
    record = commit_record(fs, token, log)
    assert record is not None and record["files"] == ["b.csv", "d=1/a.csv"]
    assert record["lakemark.runId"] == run.run_id
    assert commit_record(fs, IdempotencyToken("j/sink", 0), log) is not None  # lower: covered
    assert commit_record(fs, IdempotencyToken("j/sink", 2), log) is None
    assert commit_record(fs, IdempotencyToken("j/other", 1), log) is None
    assert commit_record(fs, token) is None  # the folder itself holds no record
    assert store.folder_pending(str(out), "j/sink", 1) is None


def test_a_dead_writes_pending_row_is_rolled_back_by_the_retry(store: Any,
                                                               tmp_path: Path) -> None:
    """Died mid-publish: the store's pending row names its staging id and a file it had
    already put in place; the retry removes both, then commits its own files."""
    out = tmp_path / "out"
    fs = filesystem_for(str(out))
    token = IdempotencyToken("j/sink", 1)
    first = _run(store)
    store.set_folder_pending(str(out), "j/sink", 1, "dead", {"staging": "dead",
                                                             "files": ["part-dead.csv"]},
                             run_id=first.run_id)
    fs.write_text("part-dead.csv", "half\n")
    beside = sibling_staged(fs)
    assert beside is not None  # the store's writes stage beside the target
    beside.write_text(f"{staging_folder('dead')}/part-dead.csv", "half\n")
    assert (tmp_path / "out__lakemark_staging" / "dead" / "part-dead.csv").exists()
    assert committed_files(str(out), state=store.url) == []  # visible, not committed
    retry = _run(store, force=True)  # takes the lease over, as a retry after a kill does
    log = StoreRecords(store, retry.run_id).log(fs)
    _publish(beside, token, log, {"part-new.csv": "1\n"})
    assert _files(out) == ["part-new.csv"]
    assert not (tmp_path / "out__lakemark_staging").exists()
    assert committed_files(str(out), state=store.url) == [str(out / "part-new.csv")]


def test_a_stale_holder_cannot_commit_and_undoes_its_files(store: Any, tmp_path: Path) -> None:
    """Fencing: a run whose lease was taken over while it published is refused at the commit
    (LeaseLost), and the files it had put in place are removed."""
    out = tmp_path / "out"
    fs = filesystem_for(str(out))
    stale = _run(store)
    log = StoreRecords(store, stale.run_id).log(fs)
    token = IdempotencyToken("j/sink", 1)

    def write(write_id: str) -> None:
        fs.write_text(f"{staging_folder(write_id)}/a.csv", "1\n")
        _run(store, force=True)  # another attempt takes the lease over meanwhile

    with pytest.raises(LeaseLost):
        staged_publish(fs, token, {}, write, log)
    assert _files(out) == []
    assert commit_record(fs, token, log) is None


def test_commit_is_a_compare_and_set_on_the_pending_row(store: Any) -> None:
    store.set_folder_pending("/t", "a", 1, "w1", {"staging": "w1", "files": []})
    with pytest.raises(CommitConflict, match="being written"):
        store.set_folder_pending("/t", "a", 1, "w2", {"staging": "w2", "files": []})
    with pytest.raises(CommitConflict, match="changed during the write"):
        store.commit_folder("/t", "a", 1, "w2", {"files": []})
    store.commit_folder("/t", "a", 1, "w1", {"version": 1, "files": ["x"]})
    with pytest.raises(CommitConflict, match="already committed"):
        store.set_folder_pending("/t", "a", 1, "w1", {"staging": "w1", "files": []})
    store.drop_folder_pending("/t", "a", 1)  # never removes a committed record
    assert store.folder_commit("/t", "a", 1) == {"version": 1, "files": ["x"]}
    assert store.folder_commits("/t") == [{"version": 1, "files": ["x"]}]
    assert store.folder_commits("/other") == []


def test_old_records_in_the_folder_are_still_honoured(store: Any, tmp_path: Path) -> None:
    """A folder written by an older lakemark: its committed version is never written again,
    its half-done write is rolled back, and committed_files still names its files."""
    out = tmp_path / "out"
    fs = filesystem_for(str(out))
    old = FolderLog(fs)
    _publish(fs, IdempotencyToken("j/sink", 1), old, {"part-old.csv": "1\n"})
    assert _files(out) == ["_lakemark_commits/j%2Fsink-1.json", "part-old.csv"]
    log = StoreRecords(store, None).log(fs)
    assert commit_record(fs, IdempotencyToken("j/sink", 1), log) is not None  # not redone
    # an older lakemark died publishing version 2: its trace is in the folder
    fs.write_text("part-half.csv", "half\n")
    fs.write_text("_lakemark_commits/j%2Fsink-2.pending",
                  json.dumps({"staging": "dead", "files": ["part-half.csv"]}))
    _publish(fs, IdempotencyToken("j/sink", 2), log, {"part-new.csv": "2\n"})
    assert _files(out) == ["_lakemark_commits/j%2Fsink-1.json", "part-new.csv",
                           "part-old.csv"]
    assert committed_files(str(out), state=store.url) == [
        str(out / "part-new.csv"), str(out / "part-old.csv")]


def test_the_layout_is_chosen_by_one_variable(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    assert commit_layout({}) == "store"
    assert commit_layout({FOLDER_COMMITS_ENV: " Folder "}) == "folder"
    with pytest.raises(ConfigError, match=FOLDER_COMMITS_ENV):
        commit_layout({FOLDER_COMMITS_ENV: "bucket"})
    monkeypatch.setenv(FOLDER_COMMITS_ENV, "folder")
    assert folder_records(object(), "jr_x").in_folder
    monkeypatch.setenv(FOLDER_COMMITS_ENV, "store")
    records = folder_records(object(), "jr_x")
    assert (records.run_id, records.in_folder) == ("jr_x", False)


def test_a_store_of_the_previous_version_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    open_store(f"sqlite:///{path}").close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE folder_commits")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
               (str(SCHEMA_VERSION - 1),))
    db.commit()
    db.close()
    reader = open_store(f"sqlite:///{path}", read_only=True)  # upgrades, then reads
    assert reader.folder_commits("/t") == []  # type: ignore[attr-defined]
    reader.close()
    assert sqlite3.connect(path).execute(
        "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION)


def test_staging_beside_the_target_keeps_the_prefix_clean(store: Any, tmp_path: Path) -> None:
    """Staged beside the target (``out__lakemark_staging/``): while the write runs nothing
    appears under ``out/``; after it, only the data files, and the sibling is gone."""
    lake = tmp_path / "lake"
    out = lake / "out"
    raw = filesystem_for(str(out))
    fs = sibling_staged(raw)
    assert fs is not None and fs.root == str(out)
    seen: list[list[str]] = []

    def write(write_id: str) -> None:
        fs.write_text(f"{staging_folder(write_id)}/d=1/a.csv", "1\n")
        seen.append(_files(lake))

    run = _run(store)
    staged_publish(fs, IdempotencyToken("j/sink", 1), {}, write,
                   StoreRecords(store, run.run_id).log(raw))
    assert seen == [["out__lakemark_staging/" + seen[0][0].split("/")[1] + "/d=1/a.csv"]]
    assert _files(lake) == ["out/d=1/a.csv"]
    assert sorted(p.name for p in lake.iterdir()) == ["out"]  # the sibling folder is gone


def test_a_target_without_a_parent_stages_inside_it() -> None:
    assert sibling_staged(filesystem_for("s3://bucket")) is None
    assert sibling_staged(filesystem_for("/")) is None
    staged = sibling_staged(filesystem_for("s3://bucket/out"))
    assert staged is not None and staged.staging_root == "s3://bucket/out__lakemark_staging"
    deep = sibling_staged(filesystem_for("s3://bucket/a/b/out/"))
    assert deep is not None and deep.parent.root == "s3://bucket/a/b" and deep.base == "out"


def test_the_old_layout_still_honours_the_stores_records(store: Any, tmp_path: Path) -> None:
    """A job switched to ``LAKEMARK_FOLDER_COMMITS=folder`` between a write and its retry: a
    version committed in the store is not written again, and a write that died with its
    pending row in the store (staged beside the target) is rolled back first."""
    lake = tmp_path / "lake"
    out = lake / "out"
    raw = filesystem_for(str(out))
    run = _run(store)
    in_store = StoreRecords(store, run.run_id).log(raw)
    _publish(sibling_staged(raw), IdempotencyToken("j/sink", 1), in_store, {"a.csv": "1\n"})
    store.set_folder_pending(str(out), "j/sink", 2, "dead",
                             {"staging": "dead", "files": ["half.csv"]}, run_id=run.run_id)
    raw.write_text("half.csv", "half\n")
    (lake / "out__lakemark_staging" / "dead").mkdir(parents=True)
    (lake / "out__lakemark_staging" / "dead" / "half.csv").write_text("half\n")

    in_folder = StoreRecords(store, run.run_id, in_folder=True).log(raw)
    assert commit_record(raw, IdempotencyToken("j/sink", 1), in_folder) is not None
    _publish(raw, IdempotencyToken("j/sink", 2), in_folder, {"b.csv": "2\n"})
    assert _files(lake) == ["out/_lakemark_commits/j%2Fsink-2.json", "out/a.csv", "out/b.csv"]
    assert store.folder_pending(str(out), "j/sink", 2) is None
    assert committed_files(str(out), state=store.url) == [str(out / "a.csv"),
                                                          str(out / "b.csv")]
