"""The events table: a Delta table that is a changelog of S3 object events.

Rows are only ever inserted, one per event (``record_id`` unique), partitioned by the event's
UTC day. Inserts are a Delta MERGE on ``record_id``, so a message delivered twice — after a
crash between the commit and the SQS delete, or by SQS's at-least-once delivery — adds nothing
the second time. The table has Delta's change data feed on, so a reader asks for exactly the
rows that versions after its checkpoint inserted, each with its ``_commit_version``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError
from .records import S3EventRecord

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EVENT_COLUMNS", "EventsTable"]

#: Columns of the events table, in order.
EVENT_COLUMNS = ("record_id", "bucket", "key", "event_name", "event_time_ms", "event_date",
                 "size", "etag", "version_id", "sequencer")

_MERGE_ATTEMPTS = 5


def _schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([
        ("record_id", pa.string()), ("bucket", pa.string()), ("key", pa.string()),
        ("event_name", pa.string()), ("event_time_ms", pa.int64()), ("event_date", pa.string()),
        ("size", pa.int64()), ("etag", pa.string()), ("version_id", pa.string()),
        ("sequencer", pa.string()),
    ])


class EventsTable:
    """The events table at ``uri`` (a local path or ``s3://``), created on first append."""

    def __init__(self, uri: str) -> None:
        from ..sinks._location import resolve_target

        if not uri or not str(uri).strip():
            raise ConfigError("--events-table must name a path or s3:// URI")
        self.target = resolve_target(uri)
        self.uri = self.target.root

    def _open(self) -> Any:
        from ..sinks._location import open_delta

        return open_delta(self.target)

    def version(self) -> int | None:
        """The table's current version; None when it does not exist yet."""
        table = self._open()
        return None if table is None else int(table.version())

    def append(self, records: Sequence[S3EventRecord]) -> tuple[int, int | None]:
        """Insert the events not yet in the table, atomically.

        Returns (rows inserted, the table version holding them — None when nothing was new).
        """
        import pyarrow as pa
        from deltalake import write_deltalake
        from deltalake.exceptions import CommitFailedError, DeltaError

        unique = {r.record_id: r for r in records}
        if not unique:
            return 0, None
        batch = pa.Table.from_pylist([r.to_row() for r in unique.values()], schema=_schema())
        options = self.target.storage_options()
        for attempt in range(_MERGE_ATTEMPTS):
            table = self._open()
            try:
                if table is None:
                    write_deltalake(
                        self.uri, batch, partition_by=["event_date"], mode="error",
                        storage_options=options,
                        configuration={"delta.enableChangeDataFeed": "true"},
                    )
                    return batch.num_rows, 0
                self._check_schema(table)
                result = (
                    table.merge(batch, predicate="t.event_date = s.event_date AND "
                                "t.record_id = s.record_id", source_alias="s", target_alias="t")
                    .when_not_matched_insert_all()
                    .execute()
                )
            except CommitFailedError:
                if attempt == _MERGE_ATTEMPTS - 1:
                    raise
                continue  # another writer committed first: merge again against its version
            except FileExistsError:
                continue  # another writer created the table first
            except DeltaError as exc:
                # deltalake 1.x has no typed error for a table created by another writer
                # first; the table being there now says so.
                if table is None and self._open() is not None:
                    continue
                raise SinkError(f"events table {self.uri}: {exc}", target=self.uri) from exc
            except Exception as exc:
                raise SinkError(f"events table {self.uri}: {exc}", target=self.uri) from exc
            inserted = int(result.get("num_target_rows_inserted", 0))
            return inserted, (int(self._open().version()) if inserted else None)
        raise SinkError(f"events table {self.uri}: could not commit after {_MERGE_ATTEMPTS} tries")

    def _check_schema(self, table: Any) -> None:
        names = [f.name for f in table.schema().fields]
        if names[: len(EVENT_COLUMNS)] != list(EVENT_COLUMNS):
            raise ConfigError(
                f"{self.uri} is a Delta table but not a lakemark events table (its columns are "
                f"{', '.join(names)})"
            )

    def changes_after(self, version: int | None) -> tuple[pa.Table, int | None]:
        """Rows inserted by versions after ``version`` (all rows when None), each with its
        ``_commit_version``; and the table's current version."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = self._open()
        empty = _schema().append(pa.field("_commit_version", pa.int64()))
        if table is None:
            return empty.empty_table(), None
        self._check_schema(table)
        current = int(table.version())
        start = 0 if version is None else version + 1
        if start > current:
            return empty.empty_table(), current
        cdf = pa.table(table.load_cdf(starting_version=start, ending_version=current).read_all())
        # delta-rs hands out string_view columns, which few pyarrow kernels take yet.
        cdf = cdf.cast(pa.schema([
            pa.field(f.name, pa.string() if f.type == pa.string_view() else f.type)
            for f in cdf.schema
        ]))
        inserts = cdf.filter(pc.equal(cdf.column("_change_type"), "insert"))
        columns = [*EVENT_COLUMNS, "_commit_version"]
        out = inserts.select(columns)
        return out.cast(empty), current

    def events_before(self, version: int, rows: pa.Table) -> list[dict[str, Any]]:
        """Rows of versions up to ``version`` for the objects that ``rows`` name, as far back
        as a day before the oldest event in ``rows``: where a newer event of those objects can
        be (an object's sequencer order follows its event time), read by partition."""
        import pyarrow.compute as pc

        if rows.num_rows == 0 or version < 0:
            return []
        table = self._open()
        if table is None:
            return []
        table.load_as_version(version)
        oldest = int(pc.min(rows.column("event_time_ms")).as_py()) - 86_400_000
        since = datetime.fromtimestamp(max(oldest, 0) / 1000, UTC).strftime("%Y-%m-%d")
        wanted = set(zip(rows.column("bucket").to_pylist(), rows.column("key").to_pylist(),
                         strict=True))
        data = table.to_pyarrow_table(filters=[("event_date", ">=", since)],
                                      columns=list(EVENT_COLUMNS))
        keys = pc.is_in(data.column("key"), value_set=rows.column("key").unique())
        return [r for r in data.filter(keys).to_pylist() if (r["bucket"], r["key"]) in wanted]

    def buckets(self) -> set[str]:
        """The buckets the table's events name."""
        import pyarrow.compute as pc

        table = self._open()
        if table is None:
            return set()
        self._check_schema(table)
        column = table.to_pyarrow_table(columns=["bucket"]).column("bucket")
        return {str(b) for b in pc.unique(column).to_pylist()}

    def created_objects(self, bucket: str, prefix: str) -> set[tuple[str, str, str | None]]:
        """Every ``(bucket, key, eTag)`` that a created event in the table names, for the keys
        of ``bucket`` under ``prefix`` (what a backfill of that prefix compares its listing to)."""
        import pyarrow.compute as pc

        table = self._open()
        if table is None:
            return set()
        self._check_schema(table)
        data = table.to_pyarrow_table(columns=["bucket", "key", "event_name", "etag"])
        wanted = pc.and_(pc.equal(data.column("bucket"), bucket),
                         pc.starts_with(data.column("key"), prefix))
        data = data.filter(pc.and_(wanted, pc.starts_with(data.column("event_name"),
                                                          "ObjectCreated:")))
        return set(zip(data.column("bucket").to_pylist(), data.column("key").to_pylist(),
                       data.column("etag").to_pylist(), strict=True))
