"""Reliable S3 event ingestion: SQS notifications → an events table → incremental objects.

* :mod:`.records` — S3 event notifications parsed (SNS-wrapped too) and ordered (pure);
* :mod:`.table` — the events Delta table, a deduplicated changelog with a change data feed;
* :mod:`.consumer` — stage 1: SQS → events table, deleting messages only after the commit;
* :mod:`.incremental` — stage 2: the created objects since a checkpoint, read exactly once.
"""

from .consumer import QueueOptions, SyncResult, consume, sync_once
from .incremental import IncrementalOptions, plan_event_objects, read_event_objects
from .records import EventParseError, ObjectFilter, S3EventRecord, parse_message
from .table import EventsTable

__all__ = [
    "EventParseError",
    "EventsTable",
    "IncrementalOptions",
    "ObjectFilter",
    "QueueOptions",
    "S3EventRecord",
    "SyncResult",
    "consume",
    "parse_message",
    "plan_event_objects",
    "read_event_objects",
    "sync_once",
]
