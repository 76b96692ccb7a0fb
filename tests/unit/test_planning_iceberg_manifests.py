"""Which manifests an incremental Iceberg run opens, and how far it reads each: pure Python."""

from __future__ import annotations

from collections.abc import Iterator

from lakemark.planning.iceberg_manifests import (
    ADDED,
    DELETED,
    EntryInfo,
    ManifestInfo,
    entries_added_by,
    manifests_added_by,
)

EXISTING = 0


def test_only_manifests_the_snapshot_wrote_with_added_files_are_opened() -> None:
    own = ManifestInfo("m1", 0, 7, 2)
    unknown = ManifestInfo("m2", 0, 7, None)  # format version 1 may omit the count
    nothing_added = ManifestInfo("m3", 0, 7, 0)
    older = ManifestInfo("m4", 0, 6, 5)
    assert manifests_added_by([older, own, nothing_added, unknown], 7) == [own, unknown]


class Counted:
    """Entries handed out one at a time, counting how many were taken."""

    def __init__(self, entries: list[EntryInfo]) -> None:
        self.entries, self.taken = entries, 0

    def __iter__(self) -> Iterator[EntryInfo]:
        for entry in self.entries:
            self.taken += 1
            yield entry


def merged(new: int, existing: int, new_first: bool) -> list[EntryInfo]:
    added = [EntryInfo(ADDED, None if i % 2 else 7, f"new-{i}", 10 + i) for i in range(new)]
    kept = [EntryInfo(EXISTING, 3, f"old-{i}", 1) for i in range(existing)]
    return added + kept if new_first else kept + added


def test_reading_stops_once_the_counted_added_entries_were_seen() -> None:
    manifest = ManifestInfo("m", 0, 7, 2)
    entries = Counted(merged(2, 990, new_first=True))
    got = entries_added_by(entries, manifest, 7)
    # Both added files, the one without a snapshot id inheriting the manifest's.
    assert [(e.file_path, e.file_size) for e in got] == [("new-0", 10), ("new-1", 11)]
    assert entries.taken == 2


def test_added_entries_after_existing_ones_are_still_found() -> None:
    manifest = ManifestInfo("m", 0, 7, 2)
    entries = Counted(merged(2, 50, new_first=False))
    assert [e.file_path for e in entries_added_by(entries, manifest, 7)] == ["new-0", "new-1"]
    assert entries.taken == 52


def test_without_a_count_the_whole_manifest_is_read() -> None:
    manifest = ManifestInfo("m", 0, 7, None)
    entries = Counted(merged(1, 5, new_first=True)
                      + [EntryInfo(ADDED, 7, "late", 3), EntryInfo(DELETED, 7, "gone", 4)])
    assert [e.file_path for e in entries_added_by(entries, manifest, 7)] == ["new-0", "late"]
    assert entries.taken == 8


def test_entries_of_other_snapshots_and_deleted_or_existing_ones_are_not_taken() -> None:
    manifest = ManifestInfo("m", 0, 7, 3)
    entries = [EntryInfo(DELETED, 7, "deleted", 1), EntryInfo(EXISTING, 7, "existing", 1),
               EntryInfo(ADDED, 8, "other", 1), EntryInfo(ADDED, 7, "mine", 1),
               EntryInfo(ADDED, None, "inherited", 1), EntryInfo(ADDED, 7, "past-count", 1)]
    # Three ADDED entries were counted (one of another snapshot): the sixth is not read.
    assert [e.file_path for e in entries_added_by(entries, manifest, 7)] == ["mine", "inherited"]
    assert entries_added_by(entries, ManifestInfo("m", 0, 7, 0), 7) == []
