"""The data files an Iceberg append snapshot added, read from its manifest list and manifests.

An incremental run reads, for each snapshot it takes, the snapshot's manifest list and the
manifests that snapshot wrote (:mod:`lakemark.planning.iceberg_manifests` decides which, and
how far into each). The Avro files are decoded here with ``fastavro`` rather than pyiceberg's
reader: pyiceberg converts every file's header schema into an Iceberg schema and builds a
resolving reader for it (about a third of a run's planning on a long history), then decodes
every entry in full; fastavro decodes the header in C and yields entries one at a time, so a
merged manifest of a thousand entries is read only up to the few the snapshot added.

Files are opened through the table's own ``FileIO`` (local, S3, …), each read in one request.
Field names are the Iceberg spec's; a manifest list written by format version 1 may call the
added count ``added_data_files_count`` and may lack ``content`` (data) or the count (unknown).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import SourceError
from ..planning.iceberg_manifests import EntryInfo, ManifestInfo

if TYPE_CHECKING:
    from pyiceberg.io import FileIO

__all__ = ["manifest_entries", "manifest_list"]


def _records(file_io: FileIO, path: str, what: str) -> Iterator[dict[str, Any]]:
    """The records of the Avro file at ``path`` (SourceError naming it if it cannot be
    read or decoded)."""
    import fastavro

    try:
        with file_io.new_input(path).open(seekable=False) as stream:
            data = stream.read()
        reader = fastavro.reader(io.BytesIO(data))
    except (OSError, ValueError, EOFError) as exc:
        raise SourceError(f"cannot read Iceberg {what} {path}: {exc}") from exc
    try:
        for record in reader:
            if not isinstance(record, dict):
                raise SourceError(f"Iceberg {what} {path} holds a {type(record).__name__}, "
                                  "not records")
            yield record
    except (ValueError, EOFError, KeyError) as exc:
        raise SourceError(f"cannot decode Iceberg {what} {path}: {exc}") from exc


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def manifest_list(file_io: FileIO, path: str) -> list[ManifestInfo]:
    """The manifests listed by the manifest list at ``path``."""
    out = []
    for record in _records(file_io, path, "manifest list"):
        if "manifest_path" not in record:
            raise SourceError(f"Iceberg manifest list {path} has an entry without "
                              "manifest_path")
        count = record.get("added_files_count", record.get("added_data_files_count"))
        out.append(ManifestInfo(str(record["manifest_path"]), int(record.get("content") or 0),
                                _int(record.get("added_snapshot_id")), _int(count)))
    return out


def manifest_entries(file_io: FileIO, manifest: ManifestInfo) -> Iterator[EntryInfo]:
    """The entries of ``manifest``, in file order, decoded one at a time (a caller that stops
    early leaves the rest undecoded)."""
    for record in _records(file_io, manifest.path, "manifest"):
        try:
            data_file = record["data_file"]
            yield EntryInfo(int(record["status"]), _int(record.get("snapshot_id")),
                            str(data_file["file_path"]), int(data_file["file_size_in_bytes"]))
        except (KeyError, TypeError) as exc:
            raise SourceError(f"Iceberg manifest {manifest.path} has an entry without "
                              f"{exc}") from None
