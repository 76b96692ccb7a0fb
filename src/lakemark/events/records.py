"""S3 event notifications as records: parsing SQS message bodies. The record type, the
per-object rule and the key filter are the pure planner's (:mod:`lakemark.planning.events`)
and are re-exported here.

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

import json
from collections.abc import Mapping
from datetime import datetime, UTC
from typing import Any
from urllib.parse import unquote_plus

from ..errors import LakemarkError
from ..planning.events import ObjectFilter, S3EventRecord, latest_per_object

__all__ = [
    "EventParseError",
    "ObjectFilter",
    "S3EventRecord",
    "latest_per_object",
    "parse_message",
]


class EventParseError(LakemarkError):
    """An SQS message that is not an S3 event notification (it goes to quarantine)."""


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
