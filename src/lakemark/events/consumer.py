"""Stage 1: S3 notifications from an SQS queue into the events table.

One *sync* receives up to ``max_messages`` messages (long polling, ten per call), parses them,
commits their events to the events table in one Delta commit, and only then deletes them from
the queue. A crash before the delete leaves the messages in the queue; they reappear after the
visibility timeout and the events table's MERGE on ``record_id`` ignores their events the
second time. A message that cannot be parsed is left for SQS to redeliver until it has been
received ``max_receives`` times; then it goes to the dead-letter queue (when one is given) or to
the quarantine table, and is deleted — it never blocks the messages around it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SourceError
from .records import EventParseError, S3EventRecord, parse_message
from .table import EventsTable

if TYPE_CHECKING:
    from ..sources._host import SourceHost

__all__ = ["QueueOptions", "SyncResult", "consume", "sync_once"]

_DELETE_ATTEMPTS = 3


@dataclass(frozen=True)
class QueueOptions:
    """How a sync reads the queue (see docs/s3-events.md for each option)."""

    wait_seconds: int = 20
    visibility_timeout: int = 30
    max_messages: int = 1000
    max_fetch_seconds: float = 60.0
    max_receives: int = 3
    dead_letter_queue_url: str | None = None
    quarantine_table: str | None = None

    def __post_init__(self) -> None:
        checks = [
            ("--wait-seconds", self.wait_seconds, 0, 20),
            ("--visibility-timeout", self.visibility_timeout, 0, 43200),
            ("--max-messages", self.max_messages, 1, None),
            ("--max-receives", self.max_receives, 1, None),
        ]
        for name, value, low, high in checks:
            if isinstance(value, bool) or not isinstance(value, int) or value < low or (
                    high is not None and value > high):
                bound = f"{low}–{high}" if high is not None else f">= {low}"
                raise ConfigError(f"{name} must be an integer {bound}, got {value!r}")
        if not self.max_fetch_seconds > 0:
            raise ConfigError(f"--max-fetch-seconds must be positive, got {self.max_fetch_seconds}")


@dataclass
class SyncResult:
    """What one sync did (its JSON is what `lakemark ingest s3-events --json` prints)."""

    messages: int = 0
    events: int = 0
    inserted: int = 0
    table_version: int | None = None
    deleted: int = 0
    quarantined: int = 0
    retry_later: int = 0
    delete_failures: int = 0
    sqs_calls: int = 0
    drained: bool = False
    errors: list[str] = field(default_factory=list)

    def add(self, other: SyncResult) -> None:
        for name in ("messages", "events", "inserted", "deleted", "quarantined", "retry_later",
                     "delete_failures", "sqs_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.table_version is not None:
            self.table_version = other.table_version
        self.drained = other.drained
        self.errors.extend(other.errors)

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages, "events": self.events, "inserted": self.inserted,
            "table_version": self.table_version, "deleted": self.deleted,
            "quarantined": self.quarantined, "retry_later": self.retry_later,
            "delete_failures": self.delete_failures, "sqs_calls": self.sqs_calls,
            "drained": self.drained, "errors": self.errors[:20],
        }


def _receive(client: Any, queue_url: str, options: QueueOptions,
             count: int) -> list[dict[str, Any]]:
    try:
        response = client.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=count, WaitTimeSeconds=options.wait_seconds,
            VisibilityTimeout=options.visibility_timeout,
            AttributeNames=["ApproximateReceiveCount"],
        )
    except Exception as exc:
        raise SourceError(f"cannot receive from queue {queue_url}: {exc}") from exc
    return list(response.get("Messages") or [])


def _receive_count(message: dict[str, Any]) -> int:
    try:
        return int((message.get("Attributes") or {}).get("ApproximateReceiveCount", "1"))
    except ValueError:
        return 1


def _delete(client: Any, queue_url: str, messages: Sequence[dict[str, Any]],
            result: SyncResult) -> None:
    """Batch-delete (ten per call), retrying the entries that fail."""
    for start in range(0, len(messages), 10):
        pending = {str(i): m["ReceiptHandle"] for i, m in enumerate(messages[start:start + 10])}
        for _ in range(_DELETE_ATTEMPTS):
            if not pending:
                break
            result.sqs_calls += 1
            try:
                response = client.delete_message_batch(
                    QueueUrl=queue_url,
                    Entries=[{"Id": i, "ReceiptHandle": h} for i, h in pending.items()],
                )
            except Exception as exc:  # the whole call failed: try all of them again
                result.errors.append(f"delete_message_batch: {exc}")
                continue
            for ok in response.get("Successful") or []:
                if pending.pop(ok["Id"], None) is not None:
                    result.deleted += 1
        # Entries still pending reappear after the visibility timeout; their events are
        # already committed, so the next sync only deletes them.
        result.delete_failures += len(pending)


def _quarantine(client: Any, options: QueueOptions, bad: Sequence[tuple[dict[str, Any], str]],
                events_table: EventsTable, result: SyncResult) -> None:
    if options.dead_letter_queue_url:
        for message, error in bad:
            result.sqs_calls += 1
            client.send_message(
                QueueUrl=options.dead_letter_queue_url, MessageBody=message.get("Body", ""),
                MessageAttributes={"lakemark-error": {"DataType": "String",
                                                      "StringValue": error[:1000]}},
            )
    else:
        import pyarrow as pa
        from deltalake import write_deltalake

        from ..sinks._location import resolve_target

        target = resolve_target(options.quarantine_table or events_table.uri + "_quarantine")
        rows = [{"message_id": m.get("MessageId"), "body": m.get("Body"), "error": e,
                 "receive_count": _receive_count(m), "quarantined_at_ms": int(time.time() * 1000)}
                for m, e in bad]
        write_deltalake(target.root, pa.Table.from_pylist(rows), mode="append",
                        storage_options=target.storage_options())
    result.quarantined += len(bad)


def sync_once(client: Any, queue_url: str, events_table: EventsTable, options: QueueOptions,
              stop: Callable[[], bool] = lambda: False) -> SyncResult:
    """Receive, commit, then delete one batch of messages."""
    result = SyncResult()
    messages: list[dict[str, Any]] = []
    seen: set[str] = set()
    # Commit well before the first messages' visibility timeout runs out, or SQS hands them
    # to another receive while we still hold them.
    budget = options.max_fetch_seconds
    if options.visibility_timeout > 0:
        budget = min(budget, options.visibility_timeout / 2)
    deadline = time.monotonic() + budget
    while len(messages) < options.max_messages and not stop() and time.monotonic() < deadline:
        got = _receive(client, queue_url, options, min(10, options.max_messages - len(messages)))
        result.sqs_calls += 1
        if not got:
            result.drained = True  # the queue holds nothing more right now
            break
        fresh = [m for m in got if m.get("MessageId") not in seen]
        if not fresh:
            break  # only messages we already hold: commit them first
        seen.update(str(m.get("MessageId")) for m in fresh)
        messages.extend(fresh)
    result.messages = len(messages)
    records: list[S3EventRecord] = []
    done: list[dict[str, Any]] = []
    bad: list[tuple[dict[str, Any], str]] = []
    for message in messages:
        try:
            records.extend(parse_message(message.get("Body", "")))
            done.append(message)
        except EventParseError as exc:
            if _receive_count(message) >= options.max_receives:
                bad.append((message, str(exc)))
            else:
                result.retry_later += 1
                result.errors.append(f"message {message.get('MessageId')}: {exc}")
    result.events = len(records)
    result.inserted, result.table_version = events_table.append(records)
    if bad:
        _quarantine(client, options, bad, events_table, result)
        done.extend(m for m, _ in bad)
    _delete(client, queue_url, done, result)
    return result


def consume(client: Any, queue_url: str, events_table: EventsTable, options: QueueOptions, *,
            continuous: bool = False, min_sync_interval_s: float = 10.0,
            stop_event: threading.Event | None = None,
            job_factory: Callable[[], AbstractContextManager[SourceHost]] | None = None,
            on_sync: Callable[[SyncResult, str | None], None] | None = None) -> SyncResult:
    """Sync until the queue is drained (or, with ``continuous``, until ``stop_event`` is set).

    Once drained, a non-continuous consume returns; a continuous one waits at least
    ``min_sync_interval_s`` between the starts of two syncs. Setting ``stop_event`` (done on
    SIGTERM by the CLI) ends the loop after the sync in progress has committed and deleted.
    With ``job_factory`` each sync is one run of that job (its lease keeps two consumers of
    one job apart; `runs show` reports the sync); ``on_sync`` gets each result and run id.
    """
    if isinstance(min_sync_interval_s, bool) or not min_sync_interval_s >= 0:
        raise ConfigError(f"--min-sync-interval must not be negative, got {min_sync_interval_s}")
    stop = stop_event or threading.Event()
    total = SyncResult()
    while not stop.is_set():
        started = time.monotonic()
        run_id: str | None = None
        if job_factory is None:
            result = sync_once(client, queue_url, events_table, options, stop.is_set)
        else:
            with job_factory() as job:
                run_id = job.run_id
                result = sync_once(client, queue_url, events_table, options, stop.is_set)
                job.track_source(None, {"kind": "sqs", "source": queue_url,
                                        "events_table": events_table.uri, **result.to_json()},
                                 [], None)
        total.add(result)
        if on_sync is not None:
            on_sync(result, run_id)
        if not continuous:
            if result.drained or result.messages == 0:
                break  # drained what the queue held when we started
            continue
        stop.wait(max(0.0, min_sync_interval_s - (time.monotonic() - started)))
    return total
