"""A file set aside again by a later run keeps the earlier run's record (quarantine_history,
schema version 6): `runs show` of each run lists what it set aside, `quarantine list` names the
earlier runs, retry still takes the file once; a store of schema 5 gains the history."""

from __future__ import annotations

from typing import Any

from test_state_store import Location, begin, location, store  # noqa: F401 - fixtures

from lakemark.cli._quarantine import quarantine_of_run
from lakemark.console import StateQueries
from lakemark.state.sqlite import SCHEMA_VERSION


def _set_aside_twice(s: Any) -> tuple[str, str]:
    """Run A sets /in/a.json aside; a retry; run B fails on it again (new size, reason)."""
    first = begin(s)
    s.quarantine_files(first.run_id, "j", "src", [("/in/a.json", 10, 1000, "truncated")])
    s.commit_run(first.run_id, {}, update_bookmark=True)
    s.request_retry("j")
    second = begin(s)
    s.quarantine_files(second.run_id, "j", "src", [("/in/a.json", 12, 2000, "still bad")])
    s.commit_run(second.run_id, {}, update_bookmark=True, retried={"src": ["/in/a.json"]})
    return first.run_id, second.run_id


def test_each_run_keeps_what_it_set_aside(store: Any) -> None:  # noqa: F811
    a, b = _set_aside_twice(store)
    [now] = store.quarantined("j")
    assert (now.run_id, now.reason, now.status) == (b, "still bad", "open")
    history = store.quarantine_history("j")
    assert [(h.run_id, h.size, h.reason) for h in history] == [(a, 10, "truncated"),
                                                               (b, 12, "still bad")]
    of_a = quarantine_of_run(store, "j", a)["quarantined"]
    assert [(e["path"], e["size"], e["reason"], e["status"], e["superseded_by"])
            for e in of_a] == [("/in/a.json", 10, "truncated", "superseded", b)]
    of_b = quarantine_of_run(store, "j", b)["quarantined"]
    assert [(e["reason"], e["status"]) for e in of_b] == [("still bad", "open")]
    console = StateQueries(store)
    shown = console.run(a)
    assert shown is not None
    assert [(e["reason"], e["status"]) for e in shown["quarantined"]] == [
        ("truncated", "superseded")]
    # Retry still marks the one current row, and the next run takes it once.
    assert [m.run_id for m in store.request_retry("j")] == [b]
    third = begin(store)
    store.commit_run(third.run_id, {}, update_bookmark=True, retried={"src": ["/in/a.json"]})
    assert store.quarantined("j") == []
    assert quarantine_of_run(store, "j", third.run_id)["retried"][0]["run_id"] == b
    assert len(store.quarantine_history("j")) == 2


def test_a_store_of_schema_5_gains_the_history_of_its_set_aside_files(
        location: Location) -> None:  # noqa: F811
    s = location.open()
    run = begin(s)
    s.quarantine_files(run.run_id, "j", "src", [("/in/a.json", 10, 1000, "truncated")])
    s._db.execute("DROP TABLE quarantine_history")  # noqa: SLF001 - as a schema-5 store
    s.close()
    location.set_schema_version(5)
    again = location.open()
    try:
        assert [(h.run_id, h.reason) for h in again.quarantine_history("j")] == [
            (run.run_id, "truncated")]
        assert again._q.execute("SELECT value FROM meta WHERE key = 'schema_version'"  # noqa: SLF001
                                ).fetchone()[0] == str(SCHEMA_VERSION) == "7"
    finally:
        again.close()
