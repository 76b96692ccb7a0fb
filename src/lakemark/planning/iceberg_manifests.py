"""Which manifests, and how much of each, an incremental Iceberg run must read: pure planning.

A run taking snapshot ``S`` (an append) reads the data files ``S`` added. They are listed in
``S``'s manifest list, in the manifests ``S`` wrote (``added_snapshot_id == S``), as entries of
status ``ADDED``. The manifest list also says how many such entries each manifest holds
(``added_files_count``), so:

* a manifest written by another snapshot, or one whose count is 0, is not opened at all;
* reading a manifest stops as soon as its ``added_files_count`` ``ADDED`` entries have been
  seen. This matters when ``S`` merged manifests (Iceberg's ``commit.manifest-merge.enabled``):
  its one manifest then holds every live file of the table, almost all of them ``EXISTING``,
  and the writers lakemark meets (pyiceberg's merge, Iceberg's own) put the new entries
  first — so a run reads a few entries, not the table's. Where they come later, or the count is
  missing (optional in format version 1), the whole manifest is read: same result, slower.

An entry's missing ``snapshot_id`` is inherited from the manifest's ``added_snapshot_id`` (the
Iceberg spec's inheritance rule for ``ADDED`` entries). No I/O here: the caller decodes the
Avro files (:mod:`lakemark.sources._iceberg_manifests`) and hands over plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["ADDED", "DELETED", "DELETES_CONTENT", "EntryInfo", "ManifestInfo",
           "entries_added_by", "manifests_added_by"]

#: Manifest entry statuses and the manifest content of delete files (the Iceberg spec's codes).
ADDED = 1
DELETED = 2
DELETES_CONTENT = 1


@dataclass(frozen=True)
class ManifestInfo:
    """One entry of a manifest list: what decides whether, and how far, to read the manifest."""

    path: str
    content: int  # 0: data files, 1: delete files
    added_snapshot_id: int | None
    added_files_count: int | None  # None: not recorded (format version 1 may omit it)


@dataclass(frozen=True)
class EntryInfo:
    """One manifest entry, as far as a run needs it."""

    status: int  # 0 existing, 1 added, 2 deleted
    snapshot_id: int | None  # None: inherited from the manifest
    file_path: str
    file_size: int


def manifests_added_by(manifests: Sequence[ManifestInfo], snapshot_id: int
                       ) -> list[ManifestInfo]:
    """The manifests of ``snapshot_id``'s list that can hold files it added (module
    docstring): the ones it wrote, unless their list entry says they add nothing."""
    return [m for m in manifests
            if m.added_snapshot_id == snapshot_id and m.added_files_count != 0]


def entries_added_by(entries: Iterable[EntryInfo], manifest: ManifestInfo, snapshot_id: int
                     ) -> list[EntryInfo]:
    """The ``ADDED`` entries of ``snapshot_id`` among ``entries`` (a manifest's, in file
    order), consumed only until the manifest's ``added_files_count`` ``ADDED`` entries were
    seen (all of them when the count is unknown)."""
    wanted = manifest.added_files_count
    seen = 0
    out: list[EntryInfo] = []
    if wanted is not None and wanted <= 0:
        return out
    for entry in entries:
        if entry.status != ADDED:
            continue
        seen += 1
        owner = entry.snapshot_id if entry.snapshot_id is not None \
            else manifest.added_snapshot_id
        if owner == snapshot_id:
            out.append(entry)
        if wanted is not None and seen >= wanted:
            break
    return out
