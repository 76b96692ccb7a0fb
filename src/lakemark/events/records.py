"""S3 event notifications as records: parsing SQS message bodies, and choosing objects from them.

Pure Python (no I/O), so the rules can be tested on their own:

* a body is an S3 notification (``{"Records": [...]}``), the same wrapped in an SNS notification
  (``{"Type": "Notification", "Message": "<json>"}``), or S3's ``s3:TestEvent`` (no records);
* keys arrive URL-encoded (``a+b%2Bc`` is ``a b+c``) and are decoded here;
* each record has a ``record_id``: a digest of everything that identifies the event, so a
  message delivered twice yields the same ids and can be deduplicated;
* events for one object are ordered by S3's ``sequencer`` (hex strings compared after padding
  to equal length, as AWS documents); without one, by event time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any
from urllib.parse import unquote_plus

from ..errors import ConfigError, LakemarkError

__all__ = [
    "EventParseError",
    "ObjectFilter",
    "S3EventRecord",
    "latest_per_object",
    "parse_message",
]


class EventParseError(LakemarkError):
    """An SQS message that is not an S3 event notification (it goes to quarantine)."""


@dataclass(frozen=True)
class S3EventRecord:
    """One S3 event: what happened to which object, and when."""

    bucket: str
    key: str
    event_name: str
    event_time_ms: int
    size: int | None
    etag: str | None
    version_id: str | None
    sequencer: str | None

    @property
    def created(self) -> bool:
        return self.event_name.startswith("ObjectCreated:")

    @property
    def removed(self) -> bool:
        return self.event_name.startswith("ObjectRemoved:")

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @property
    def record_id(self) -> str:
        """Stable identity of the event: equal for a redelivered copy, different otherwise."""
        parts = [self.bucket, self.key, self.event_name, self.sequencer or "",
                 str(self.event_time_ms), self.etag or "", self.version_id or ""]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]

    def order_key(self) -> tuple[str, int]:
        """Sort key of events of one object: sequencer first (padded), then event time."""
        return ((self.sequencer or "").rjust(32, "0"), self.event_time_ms)

    def to_row(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id, "bucket": self.bucket, "key": self.key,
            "event_name": self.event_name, "event_time_ms": self.event_time_ms,
            "event_date": datetime.fromtimestamp(self.event_time_ms / 1000, UTC)
            .strftime("%Y-%m-%d"),
            "size": self.size, "etag": self.etag, "version_id": self.version_id,
            "sequencer": self.sequencer,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> S3EventRecord:
        return cls(row["bucket"], row["key"], row["event_name"], int(row["event_time_ms"]),
                   row.get("size"), row.get("etag"), row.get("version_id"), row.get("sequencer"))


def _event_time_ms(value: Any) -> int:
    if not isinstance(value, str):
        raise EventParseError(f"eventTime is {value!r}, not an ISO-8601 string")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise EventParseError(f"eventTime {value!r} is not an ISO-8601 time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def _record(raw: Any) -> S3EventRecord | None:
    if not isinstance(raw, Mapping):
        raise EventParseError("a record is not a JSON object")
    name = raw.get("eventName")
    s3 = raw.get("s3")
    if not isinstance(name, str) or not isinstance(s3, Mapping):
        raise EventParseError("a record has no eventName or s3 section")
    if not (name.startswith("ObjectCreated:") or name.startswith("ObjectRemoved:")):
        return None  # other event types (restore, replication …) are not ingestion events
    bucket = (s3.get("bucket") or {}).get("name") if isinstance(s3.get("bucket"), Mapping) else None
    obj = s3.get("object")
    if not isinstance(bucket, str) or not bucket or not isinstance(obj, Mapping):
        raise EventParseError(f"{name} record has no bucket name or object")
    key = obj.get("key")
    if not isinstance(key, str) or not key:
        raise EventParseError(f"{name} record in bucket {bucket} has no object key")
    size = obj.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise EventParseError(f"{name} record for {key!r} has size {size!r}")
    etag, version, sequencer = obj.get("eTag"), obj.get("versionId"), obj.get("sequencer")
    return S3EventRecord(
        bucket=bucket, key=unquote_plus(key), event_name=name,
        event_time_ms=_event_time_ms(raw.get("eventTime")), size=size,
        etag=str(etag) if etag else None, version_id=str(version) if version else None,
        sequencer=str(sequencer) if sequencer else None,
    )


def parse_message(body: str) -> list[S3EventRecord]:
    """The S3 object events in one SQS message body ([] for a test event).

    Raises :class:`EventParseError` saying what is wrong when the body is not an S3 (or
    SNS-wrapped S3) notification.
    """
    try:
        doc = json.loads(body)
    except (TypeError, ValueError):
        raise EventParseError("message body is not JSON") from None
    if isinstance(doc, Mapping) and doc.get("Type") == "Notification" and "Message" in doc:
        inner = doc["Message"]
        if not isinstance(inner, str):
            raise EventParseError("SNS notification's Message is not a string")
        return parse_message(inner)
    if not isinstance(doc, Mapping):
        raise EventParseError("message body is not a JSON object")
    if doc.get("Event") == "s3:TestEvent":
        return []
    records = doc.get("Records")
    if not isinstance(records, list):
        raise EventParseError("message has no 'Records' list (not an S3 event notification)")
    return [r for r in (_record(raw) for raw in records) if r is not None]


def latest_per_object(records: Iterable[S3EventRecord]) -> dict[tuple[str, str], S3EventRecord]:
    """The last event of each (bucket, key), by sequencer then event time."""
    latest: dict[tuple[str, str], S3EventRecord] = {}
    for record in records:
        ident = (record.bucket, record.key)
        current = latest.get(ident)
        if current is None or record.order_key() >= current.order_key():
            latest[ident] = record
    return latest


@dataclass(frozen=True)
class ObjectFilter:
    """Which objects to ingest: key prefix, suffix, a regular expression, ignored prefixes."""

    key_prefix: str = ""
    key_suffix: str = ""
    key_regex: str | None = None
    ignore_prefixes: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.key_regex is not None:
            try:
                re.compile(self.key_regex)
            except re.error as exc:
                raise ConfigError(f"--key-regex {self.key_regex!r} is not a valid regular "
                                  f"expression: {exc}") from None

    def keeps(self, key: str) -> bool:
        if self.key_prefix and not key.startswith(self.key_prefix):
            return False
        if self.key_suffix and not key.endswith(self.key_suffix):
            return False
        if any(key.startswith(p) for p in self.ignore_prefixes if p):
            return False
        if self.key_regex is not None and re.search(self.key_regex, key) is None:
            return False
        return True
