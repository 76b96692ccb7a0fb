"""The quarantine table of the state stores: the same behaviour on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_state_store import begin, location, store  # noqa: F401 - fixtures (every backend)

from lakemark.errors import ConfigError, LeaseLost
from lakemark.state import open_store


def _aside(s: Any, run_id: str, *paths: str, ctx: str = "src") -> None:
    s.quarantine_files(run_id, "j", ctx, [(p, 10, 1000, f"bad {p}") for p in paths])


def test_set_aside_files_are_listed_with_reason_size_mtime_and_run(store: Any) -> None:  # noqa: F811
    run = begin(store)
    _aside(store, run.run_id, "/in/b.json", "/in/a.json")
    listed = store.quarantined("j")
    assert [(q.path, q.size, q.mtime, q.reason, q.run_id, q.status) for q in listed] == [
        ("/in/a.json", 10, 1000, "bad /in/a.json", run.run_id, "open"),
        ("/in/b.json", 10, 1000, "bad /in/b.json", run.run_id, "open")]
    assert store.quarantined("j", ctx="other") == []
    assert store.quarantined("other") == []


def test_a_retry_is_taken_once_in_the_commit_transaction(store: Any) -> None:  # noqa: F811
    run = begin(store)
    _aside(store, run.run_id, "/in/a.json", "/in/b.json")
    store.commit_run(run.run_id, {}, update_bookmark=True)
    marked = store.request_retry("j", ["/in/a.json"])
    assert [(q.path, q.status) for q in marked] == [("/in/a.json", "retry")]
    second = begin(store)
    store.commit_run(second.run_id, {}, update_bookmark=True, retried={"src": ["/in/a.json"]})
    rows = {q.path: q for q in store.quarantined("j", statuses=("open", "retry", "retried"))}
    assert (rows["/in/a.json"].status, rows["/in/a.json"].retried_by) == ("retried",
                                                                          second.run_id)
    assert rows["/in/b.json"].status == "open"
    assert [q.path for q in store.quarantined("j")] == ["/in/b.json"]


def test_a_file_that_fails_again_goes_back_to_open_with_the_new_reason(store: Any) -> None:  # noqa: F811
    run = begin(store)
    _aside(store, run.run_id, "/in/a.json")
    store.commit_run(run.run_id, {}, update_bookmark=True)
    store.request_retry("j")
    again = begin(store)
    store.quarantine_files(again.run_id, "j", "src", [("/in/a.json", 11, 2000, "still bad")])
    store.commit_run(again.run_id, {}, update_bookmark=True, retried={"src": ["/in/a.json"]})
    [row] = store.quarantined("j")
    assert (row.status, row.reason, row.run_id, row.size) == ("open", "still bad",
                                                              again.run_id, 11)


def test_retry_of_an_unknown_path_or_of_nothing_is_refused(store: Any) -> None:  # noqa: F811
    with pytest.raises(ConfigError, match="no set-aside files"):
        store.request_retry("j")
    run = begin(store)
    _aside(store, run.run_id, "/in/a.json")
    with pytest.raises(ConfigError, match="/in/nope.json"):
        store.request_retry("j", ["/in/a.json", "/in/nope.json"])
    assert store.quarantined("j")[0].status == "open"  # nothing was marked


def test_a_fenced_run_cannot_set_files_aside(store: Any) -> None:  # noqa: F811
    old = begin(store, lease_timeout_s=1)
    store.clock.now += 5
    begin(store, lease_timeout_s=1)  # takes the expired lease over
    with pytest.raises(LeaseLost):
        _aside(store, old.run_id, "/in/a.json")
    assert store.quarantined("j") == []


def test_reasons_lose_credentials(store: Any) -> None:  # noqa: F811
    run = begin(store)
    store.quarantine_files(run.run_id, "j", "src", [(
        "s3://b/k.json", 1, 1, "cannot read https://AKIAABCDEFGHIJKLMNOP:secret@host/x")])
    assert "secret" not in store.quarantined("j")[0].reason


def test_a_store_of_schema_version_3_gets_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    open_store(f"sqlite:///{path}").close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE quarantine")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    reader = open_store(f"sqlite:///{path}", read_only=True)  # upgrades, then reads
    assert reader.quarantined("j") == []
    reader.close()


def test_a_file_a_run_set_aside_is_no_earlier_take(store: Any) -> None:  # noqa: F811
    """The file list of a run holds the files it set aside too, but it never read them: once
    fixed, such a file is not "taken before (run N): retaken whole" (nor skipped as modified
    under ``--on-modified skip``, nor read from its old size under ``append``)."""
    from lakemark.planning import FileEntry

    first = begin(store)
    store.record_plan(first.run_id, "src", {}, [FileEntry(1000, "/in/a.json", 10),
                                                FileEntry(1000, "/in/good.json", 5)])
    _aside(store, first.run_id, "/in/a.json")
    store.commit_run(first.run_id, {"src": {}}, update_bookmark=True)
    found = store.earlier_takes("j", "src", ["/in/a.json", "/in/good.json"], 10)
    assert sorted(found) == ["/in/good.json"]
    # Taken once fixed: that take counts for later modifications.
    second = begin(store)
    store.record_plan(second.run_id, "src", {}, [FileEntry(2000, "/in/a.json", 12)])
    store.commit_run(second.run_id, {"src": {}}, update_bookmark=True)
    again = store.earlier_takes("j", "src", ["/in/a.json"], 10)["/in/a.json"]
    assert (again.run_id, again.size) == (second.run_id, 12)
