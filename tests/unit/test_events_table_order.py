"""Out-of-order S3 notifications against a real events table (deltalake, local folder): a
late notification older than what was already decided neither re-reads an object nor hides a
newer creation, also when a bound cut the run between an object's events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark.events import EventsTable, S3EventRecord
from lakemark.events.incremental import IncrementalOptions, plan_event_objects

DAY_MS = 86_400_000
T0 = 1_760_000_000_000


def event(key: str, created: bool, happened: int) -> S3EventRecord:
    return S3EventRecord("bk", key, "ObjectCreated:Put" if created else "ObjectRemoved:Delete",
                         T0 + happened, 5 if created else None, None, None, f"{happened:016X}")


def run(table: EventsTable, state: dict[str, Any] | None, **bounds: Any) -> Any:
    return plan_event_objects(table, state, IncrementalOptions(**bounds))


def test_late_older_notifications_change_nothing(tmp_path: Path) -> None:
    table = EventsTable(str(tmp_path / "events"))
    table.append([event("a", True, 9_000), event("x", True, 10_000)])
    first = run(table, None, max_files=1)
    table.append([event("a", False, 4_000)])  # happened before a's last put; arrives late
    second = run(table, first.next_state)
    assert sorted(f.path for f in first.files + second.files) == ["s3://bk/a", "s3://bk/x"]
    table.append([event("x", True, 2_000)])  # a stale put of x, a day's partition earlier
    third = run(table, second.next_state)
    assert third.files == () and third.skipped_stale == 1


def test_a_newer_event_still_wins_after_a_stale_one(tmp_path: Path) -> None:
    table = EventsTable(str(tmp_path / "events"))
    table.append([event("a", True, DAY_MS)])
    first = run(table, None)
    table.append([event("a", True, 10)])  # stale, from the day before
    table.append([event("a", True, 2 * DAY_MS)])  # a real new version of a
    second = run(table, first.next_state)
    assert [f.path for f in second.files] == ["s3://bk/a"] and second.skipped_stale == 0


def test_a_backfill_of_another_bucket_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    from lakemark.errors import ConfigError

    table = EventsTable(str(tmp_path / "events"))
    table.append([S3EventRecord("landing", "in/a.json", "ObjectCreated:Put", 1_000, 5, "e",
                                None, "01")])
    before = table.version()
    with pytest.raises(ConfigError, match="--backfill-prefix s3://other/in/ is in bucket"):
        plan_event_objects(table, None, IncrementalOptions(backfill_prefix="s3://other/in/"))
    assert table.version() == before and table.buckets() == {"landing"}
