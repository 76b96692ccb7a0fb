"""What an incremental Iceberg run needs of a table's metadata, read without pyiceberg's model.

Opening a table with pyiceberg parses and validates its whole metadata JSON into models —
every snapshot and its summary (about 0.7 MB and most of a run's planning at 1,000
snapshots). A run that continues from a bookmark needs only the current snapshot id, the
snapshots' ids, parents, operations, times and manifest lists, and one schema: this module
asks the catalog for the current metadata file (the catalog's own query, no parsing;
:func:`lakemark.catalog._iceberg_reuse.metadata_location`) and reads those fields from the
JSON with ``json.loads``. Anything it does not expect — another catalog type, a compressed or
format-version-1 file, a missing field, a ``main`` ref that disagrees with
``current-snapshot-id`` — returns None, and the caller opens the table with pyiceberg as
before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import SourceError
from ._iceberg_reuse import metadata_location

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.catalog import Catalog
    from pyiceberg.io import FileIO

__all__ = ["LightSnapshot", "LightTable", "load_light", "parse_light"]


@dataclass(frozen=True)
class LightSnapshot:
    """One snapshot as a run plans with it."""

    snapshot_id: int
    parent_snapshot_id: int | None
    operation: str
    timestamp_ms: int
    manifest_list: str
    schema_id: int | None


@dataclass(frozen=True)
class LightTable:
    """A table's current metadata file, as far as an incremental run needs it."""

    metadata_location: str
    io: FileIO
    current_snapshot_id: int | None
    snapshots: Mapping[int, LightSnapshot]
    schemas: Mapping[int, Mapping[str, Any]]  # schema id -> its JSON
    current_schema_id: int

    def arrow_schema(self, snapshot_id: int | None) -> pa.Schema:
        """The table's schema as of ``snapshot_id`` (the current one without it)."""
        from pyiceberg.schema import Schema

        snapshot = self.snapshots.get(snapshot_id) if snapshot_id is not None else None
        schema_id = snapshot.schema_id if snapshot is not None and snapshot.schema_id \
            is not None and snapshot.schema_id in self.schemas else self.current_schema_id
        return Schema.model_validate(self.schemas[schema_id]).as_arrow()


def _snapshot(raw: Mapping[str, Any]) -> LightSnapshot:
    summary = raw.get("summary")
    operation = summary.get("operation", "append") if isinstance(summary, Mapping) else "append"
    parent = raw.get("parent-snapshot-id")
    schema_id = raw.get("schema-id")
    return LightSnapshot(int(raw["snapshot-id"]), None if parent is None else int(parent),
                         str(operation), int(raw["timestamp-ms"]), str(raw["manifest-list"]),
                         None if schema_id is None else int(schema_id))


class _Snapshots(Mapping[int, LightSnapshot]):
    """The metadata's snapshots by id, each made a :class:`LightSnapshot` when first looked up
    (a run looks up its range's ancestry, not the whole history). A snapshot missing a field
    is a SourceError naming the metadata file."""

    def __init__(self, location: str, raw: Mapping[int, Mapping[str, Any]]) -> None:
        self._location, self._raw = location, raw
        self._made: dict[int, LightSnapshot] = {}

    def __getitem__(self, snapshot_id: int) -> LightSnapshot:
        found = self._made.get(snapshot_id)
        if found is None:
            try:
                found = self._made[snapshot_id] = _snapshot(self._raw[snapshot_id])
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                if snapshot_id not in self._raw:
                    raise
                raise SourceError(f"Iceberg metadata {self._location}: snapshot {snapshot_id} "
                                  f"lacks or has a bad {exc}") from None
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, snapshot_id: object) -> bool:
        return snapshot_id in self._raw


def parse_light(location: str, text: bytes | str,
                file_io: Callable[[Mapping[str, str]], FileIO]) -> LightTable | None:
    """The fields of the metadata JSON ``text`` a run needs (None: not a shape this reads);
    ``file_io`` makes the table's FileIO from the table's properties."""
    try:
        doc = json.loads(text)
        if doc.get("format-version") not in (2, 3):
            return None
        current = doc.get("current-snapshot-id")
        current = None if current is None or int(current) == -1 else int(current)
        main = (doc.get("refs") or {}).get("main")
        if main is not None and int(main["snapshot-id"]) != current:
            return None
        snapshots = _Snapshots(location, {int(s["snapshot-id"]): s
                                          for s in doc.get("snapshots") or []})
        schemas = {int(s["schema-id"]): s for s in doc["schemas"]}
        current_schema = int(doc["current-schema-id"])
        properties = {str(k): str(v) for k, v in (doc.get("properties") or {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if current is not None and current not in snapshots or current_schema not in schemas:
        return None
    return LightTable(location, file_io(properties), current, snapshots, schemas,
                      current_schema)


def load_light(catalog: Catalog, identifier: tuple[str, ...]) -> LightTable | None:
    """The table's current metadata, read as :func:`parse_light` reads it (None: open it with
    pyiceberg instead — see the module docstring). A missing table raises the catalog's own
    error, as ``load_table`` does."""
    location = metadata_location(catalog, identifier)
    if location is None or not location.endswith(".metadata.json") \
            or location.endswith(".gz.metadata.json"):
        return None
    try:
        with catalog._load_file_io(location=location).new_input(location).open(
                seekable=False) as stream:
            text = stream.read()
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    # The table's FileIO as pyiceberg builds it: the catalog's and the table's properties.
    return parse_light(location, text,
                       lambda properties: catalog._load_file_io(dict(properties), location))
