"""The per-run manifest as typed records: what one source planned, or what one sink wrote.

A run records one manifest entry per ctx (``record_plan``): a :class:`SourceManifest` for a
source (its plan: files, a JDBC key range, an events-table version range) and a
:class:`SinkManifest` for a sink (its idempotency token and what the write did). Retries,
replays, ``runs show`` and lineage read them back. Both records have one serialisation,
:meth:`to_json` / :func:`manifest_from_json`, so no module reads a manifest by string keys.

Versions: entries written from now on carry ``"manifest_version": 2``. Entries written by an
older lakemark (no ``manifest_version``: version 1, the same keys untyped) read back the same
way, so an old state database opens and replays unchanged. Keys a record does not know (a
source's own entries, e.g. JDBC's ``dbtable``) are kept in ``extra`` and written back as they
were; a key that was stored (even as null) is written back, so a record read and written
again is the same JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import StateError

__all__ = ["MANIFEST_VERSION", "Manifest", "SinkManifest", "SinkToken", "SourceManifest",
           "manifest_from_json"]

#: The version written by this lakemark (1: the untyped entries before it).
MANIFEST_VERSION = 2

_META = ("kind", "extra", "present")

#: The entries a file source's manifest always holds (null when there is none).
_FILES_ALWAYS = frozenset(("source", "format", "bookmark_option", "options", "listed_at_ms",
                           "listed_files", "listing", "planned_files", "planned_bytes",
                           "pending_files", "previous_state", "next_state"))


def _emit(record: Any, always: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": record.kind}
    for f in fields(record):
        if f.name in _META:
            continue
        value = getattr(record, f.name)
        if value is not None or f.name in always or f.name in record.present:
            out[f.name] = value.to_json() if isinstance(value, SinkToken) else value
    out.update(record.extra)
    out["manifest_version"] = MANIFEST_VERSION
    return out


def _nulls(data: Mapping[str, Any]) -> frozenset[str]:
    """The keys stored as null (written back so)."""
    return frozenset(k for k, v in data.items() if v is None)


def _split(cls: type, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    names = {f.name for f in fields(cls)} - set(_META)
    known = {k: v for k, v in data.items() if k in names}
    extra = {k: v for k, v in data.items() if k not in names and k not in ("kind",
                                                                          "manifest_version")}
    return known, extra


@dataclass(frozen=True)
class SourceManifest:
    """What one source of a run planned (``kind``: ``files``, ``jdbc``, ``s3-events`` …)."""

    kind: str
    source: str | None = None
    format: str | None = None
    bookmark_option: str | None = None
    options: Mapping[str, Any] | None = None  # the planner's options (files)
    listed_at_ms: int | None = None
    listed_files: int | None = None
    listing: Mapping[str, Any] | None = None  # how the source was listed (files)
    planned_files: int | None = None
    planned_bytes: int | None = None
    pending_files: int | None = None
    previous_state: Mapping[str, Any] | None = None
    next_state: Mapping[str, Any] | None = None
    range: Mapping[str, Any] | None = None  # the key range read (JDBC)
    replay: Mapping[str, Any] | None = None  # how this attempt chose its input
    extra: Mapping[str, Any] = field(default_factory=dict)
    present: frozenset[str] = field(default=frozenset(), compare=False)  # stored even if null

    def with_replay(self, replay: Mapping[str, Any]) -> SourceManifest:
        return replace(self, replay=dict(replay))

    def to_json(self) -> dict[str, Any]:
        return _emit(self, _FILES_ALWAYS if self.kind == "files" else frozenset())


@dataclass(frozen=True)
class SinkToken:
    """A sink's idempotency token as the manifest records it."""

    app_id: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"app_id": self.app_id, "version": self.version}


@dataclass(frozen=True)
class SinkManifest:
    """What one sink of a run wrote (recorded as an intent before writing, then its result)."""

    ctx: str | None = None
    target: str = ""
    format: str = ""
    mode: str = "append"
    partition_by: list[str] = field(default_factory=list)
    token: SinkToken | None = None
    token_source: str | None = None  # explicit | automatic
    status: str = "writing"  # writing | committed | skipped | nothing-to-write
    rows: int | None = None
    files: int | None = None
    bytes: int | None = None
    skipped: bool | None = None
    table_version: int | None = None
    corrupt_records: int | None = None
    rejected_file: str | None = None
    reason: str | None = None
    merge: Mapping[str, Any] | None = None  # {keys, delete_when, order_by} of a merge write
    extra: Mapping[str, Any] = field(default_factory=dict)
    present: frozenset[str] = field(default=frozenset(), compare=False)  # stored even if null
    kind: str = "sink"

    def to_json(self) -> dict[str, Any]:
        return _emit(self, frozenset(("ctx", "target", "format", "mode", "partition_by",
                                      "token", "status")))


Manifest = SourceManifest | SinkManifest


def manifest_from_json(data: Mapping[str, Any]) -> Manifest:
    """The record of one stored manifest entry (any version up to :data:`MANIFEST_VERSION`).

    StateError for an entry written by a newer lakemark or with a malformed sink token.
    """
    version = data.get("manifest_version", 1)
    if not isinstance(version, int) or version > MANIFEST_VERSION:
        raise StateError(f"manifest entry of version {version!r} is newer than this lakemark "
                         f"reads ({MANIFEST_VERSION}); upgrade lakemark")
    kind = str(data.get("kind") or "")
    if kind == "sink":
        known, extra = _split(SinkManifest, data)
        token = known.get("token")
        if isinstance(token, Mapping):
            try:
                known["token"] = SinkToken(str(token["app_id"]), int(token["version"]))
            except (KeyError, TypeError, ValueError):
                raise StateError(f"sink manifest entry has a malformed token: {dict(token)}") \
                    from None
        return SinkManifest(**known, extra=extra, present=_nulls(data))
    known, extra = _split(SourceManifest, data)
    return SourceManifest(kind=kind, **known, extra=extra, present=_nulls(data))
