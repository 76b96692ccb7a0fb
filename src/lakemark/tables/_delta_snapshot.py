"""One version of a Delta table as a reader needs it: schema, partition columns and data files.

deltalake (delta-rs) replays the log (checkpoints included) on the driver; what comes out is
plain, picklable data (:class:`Snapshot`) that the executors read the Parquet files from.

The reader honours reader protocol versions 1 to 3 and, of the table features, those that only
change how the log is kept (``timestampNtz``, ``v2Checkpoint``, ``vacuumProtocolCheck``,
``checkpointProtection``, ``typeWidening``, whose files are cast to the table's type), plus
``deletionVectors`` as long as no live file carries one. Anything else - column mapping, a file
with a deletion vector, an unknown feature, a newer protocol - is refused with one
:class:`~lakemark.errors.UnsupportedError` naming the table and the feature: never wrong rows.

Time travel (``versionAsOf``, ``timestampAsOf``, a path's ``@v<n>`` suffix) is resolved here by
Delta on Spark's rules (:mod:`lakemark.planning.delta_time_travel`), not deltalake's: a time
before the earliest recreatable version or after the latest commit is refused, naming the
bound. Commit times are the commits' ``inCommitTimestamp`` on tables with in-commit timestamps
on (as Delta does; a copied or restored log has new file times), else the commit files'
modification times made strictly increasing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..errors import ConfigError, SinkError, SourceError, UnsupportedError
from ..planning.delta_log import MetaData, Protocol
from ..planning.delta_time_travel import (
    LogListing,
    TimeTravel,
    check_version,
    commit_times,
    earliest_recreatable,
    parse_log_names,
    requested,
    split_path,
    version_at,
)
from ..planning.delta_table_state import (
    MAX_READER_VERSION,
    READER_FEATURES,
    TableState,
    check_readable,
)
from ..sinks._location import Target, open_delta, resolve_target

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = ["DataFileRef", "Snapshot", "load_snapshot", "READER_FEATURES", "resolve_version",
           "table_state", "TZ_OPTION"]

#: Hidden reader option: the session's ``spark.sql.session.timeZone``, set by lakemark's read
#: hook, in which a ``timestampAsOf`` without a zone is read (as Delta reads it).
TZ_OPTION = "lakemark.sessionTimeZone"


@dataclass(frozen=True)
class DataFileRef:
    """One live data file: where it is (relative to the table or absolute), its size, rows and
    typed partition values (Python values, None for null), and min/max stats when known."""

    path: str
    size: int
    rows: int | None
    partition: tuple[tuple[str, Any], ...]
    minimum: tuple[tuple[str, Any], ...] = ()
    maximum: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Snapshot:
    """A Delta table at one version (picklable: shipped to the executors)."""

    root: str
    version: int
    schema_json: str  # Delta's schema string, which is Spark's StructType JSON
    partition_columns: tuple[str, ...]
    files: tuple[DataFileRef, ...]
    fs_config: dict[str, Any] = field(default_factory=dict)

    def spark_schema(self) -> Any:
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.schema_json))

    def file_uri(self, ref: DataFileRef) -> str:
        """The file as a local path or ``s3://`` URI."""
        if "://" in ref.path:
            scheme, _, rest = ref.path.partition("://")
            if scheme == "file":
                return unquote(rest) if rest.startswith("/") else unquote("/" + rest)
            return "s3://" + rest if scheme in ("s3a", "s3n") else ref.path
        return f"{self.root.rstrip('/')}/{unquote(ref.path)}"


def table_state(table: DeltaTable) -> TableState:
    """The :class:`~lakemark.planning.delta_table_state.TableState` of ``table`` at the
    version it is loaded at: what a table source carries to its next run."""
    metadata, protocol = table.metadata(), table.protocol()
    return TableState.of(
        MetaData(str(metadata.id), table.schema().to_json(),
                 tuple(metadata.partition_columns),
                 tuple(sorted((str(k), str(v)) for k, v in
                              (metadata.configuration or {}).items() if v is not None))),
        Protocol(int(protocol.min_reader_version), int(protocol.min_writer_version),
                 tuple(sorted(protocol.reader_features or ())),
                 tuple(sorted(protocol.writer_features or ()))))


def _check_features(table: DeltaTable, root: str) -> None:
    check_readable(table_state(table), root)


_REFUSALS = (
    (re.compile(r"[Uu]nsupported minimum reader version (\d+)"),
     "needs reader protocol version {0}; lakemark reads versions 1 to " + str(MAX_READER_VERSION)),
    (re.compile(r"[Ff]eature '([^']+)' is not supported"),
     "uses reader feature(s) {0}, which lakemark's Delta reader does not support"),
    (re.compile(r"[Cc]olumn mapping"),
     "uses column mapping (delta.columnMapping.mode), which lakemark's Delta reader does not "
     "support"),
)


def _refusal(root: str, message: str) -> UnsupportedError | None:
    """The feature deltalake refused to load the table for, as lakemark's own error (the same
    wording as :func:`_check_features`), or None for any other failure."""
    for pattern, text in _REFUSALS:
        found = pattern.search(message)
        if found:
            return UnsupportedError(f"Delta table {root} " + text.format(*found.groups()))
    return None


def _as_py(value: Any) -> Any:
    return value.as_py() if hasattr(value, "as_py") else value


def _files(table: DeltaTable, root: str, partitions: list[str]) -> tuple[DataFileRef, ...]:
    import pyarrow as pa

    actions = pa.table(table.get_add_actions(flatten=True))
    names = set(actions.column_names)
    if "deletionVectors" in set(table.protocol().reader_features or ()):
        try:
            marked = sum(batch.num_rows for batch in pa.RecordBatchReader.from_stream(
                table.deletion_vectors()))
        except Exception as exc:  # deltalake could not read a vector a file points to
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise UnsupportedError(
                f"Delta table {root} has file(s) with deletion vectors (reader feature "
                "deletionVectors), which lakemark's Delta reader does not support; reading "
                f"them failed too: {first}") from exc
        if marked:
            raise UnsupportedError(f"Delta table {root} has {marked} file(s) with deletion "
                                   "vectors, which lakemark's Delta reader does not support "
                                   "(purge them with REORG TABLE ... APPLY (PURGE) in a Delta "
                                   "engine)")
    stats_cols = sorted(n[4:] for n in names if n.startswith("min.") and f"max.{n[4:]}" in names
                        and "." not in n[4:])
    rows = actions.to_pylist()
    out = []
    for row in rows:
        out.append(DataFileRef(
            path=str(row["path"]), size=int(row["size_bytes"]),
            rows=None if row.get("num_records") is None else int(row["num_records"]),
            partition=tuple((c, _as_py(row.get(f"partition.{c}"))) for c in partitions),
            minimum=tuple((c, row[f"min.{c}"]) for c in stats_cols
                          if row.get(f"min.{c}") is not None),
            maximum=tuple((c, row[f"max.{c}"]) for c in stats_cols
                          if row.get(f"max.{c}") is not None),
        ))
    return tuple(out)


ICT_PROPERTY = "delta.enableInCommitTimestamps"
ICT_VERSION = "delta.inCommitTimestampEnablementVersion"


def _commit_ict(target: Target, version: int) -> int | None:
    """The ``inCommitTimestamp`` (ms) of ``version``'s commit, read from its commit file's
    ``commitInfo`` (the first action when in-commit timestamps are on); None if absent."""
    try:
        with target.filesystem().open_input_stream(
                target.absolute(f"_delta_log/{version:020d}.json")) as handle:
            text = handle.read().decode("utf-8")
    except (FileNotFoundError, OSError):
        return None
    for line in text.splitlines():
        if '"commitInfo"' in line:
            stamp = (json.loads(line).get("commitInfo") or {}).get("inCommitTimestamp")
            return int(stamp) if stamp is not None else None
    return None


def _listing(target: Target) -> LogListing:
    """``_delta_log``'s commit files and checkpoints with their modification times."""
    import pyarrow.fs as pafs

    infos = target.filesystem().get_file_info(
        pafs.FileSelector(target.absolute("_delta_log"), allow_not_found=True))
    return parse_log_names([
        (info.base_name, int(info.mtime.timestamp() * 1000) if info.mtime else 0)
        for info in infos if info.type == pafs.FileType.File])


def resolve_version(table: DeltaTable, target: Target, wanted: TimeTravel) -> int | None:
    """The version ``wanted`` means on ``table`` (loaded at its latest version) by Delta's
    rules (:mod:`lakemark.planning.delta_time_travel`), or None for the latest. SourceError
    naming the table and the available range or times when there is no such version."""
    if wanted.version is None and wanted.timestamp is None:
        return None
    latest = int(table.version())
    if wanted.version is not None and wanted.version == latest:
        return latest  # the loaded version: no need to list the log
    listing = _listing(target)
    earliest = earliest_recreatable(listing, latest)
    if wanted.version is not None:
        return check_version(target.root, wanted.version, earliest, latest)
    assert wanted.timestamp is not None
    config = table.metadata().configuration or {}
    ict = str(config.get(ICT_PROPERTY, "false")).lower() == "true"
    times = commit_times(listing, earliest, latest,
                         in_commit=(lambda v: _commit_ict(target, v)) if ict else None,
                         in_commit_from=int(config.get(ICT_VERSION, 0) or 0) if ict else None)
    return version_at(target.root, wanted.timestamp, times, earliest, wanted.text)


def _open(path: str) -> tuple[Target, DeltaTable | None]:
    target: Target = resolve_target(path if not path.lower().startswith(("s3a://", "s3n://"))
                                    else "s3://" + path.partition("://")[2])
    try:
        return target, open_delta(target)
    except SinkError as exc:
        raise _refusal(target.root, str(exc)) or SourceError(str(exc)) from exc


def load_snapshot(path: str, options: dict[str, str] | None = None) -> Snapshot:
    """The Delta table at ``path`` (local or ``s3://``), at the version ``options`` ask for
    (``versionAsOf`` / ``timestampAsOf``, or a path ending in ``@v<version>`` /
    ``@<yyyyMMddHHmmssSSS>``; default: the latest), resolved by Delta's rules. A timestamp
    without a zone is in the session time zone (hidden option :data:`TZ_OPTION`, else UTC)."""
    if not path:
        raise ConfigError("reading format 'delta' needs a path: .load(path)")
    given = dict(options or {})
    zone = str({k.lower(): v for k, v in given.items()}.get(TZ_OPTION.lower()) or "UTC")
    target, table = _open(path)
    at_path = None
    if table is None and (split := split_path(path, zone)) is not None:
        target, table = _open(split[0])  # Delta: the suffix counts only if path is no table
        at_path = split[1]
    if table is None:
        raise SourceError(f"{target.root} is not a Delta table (no _delta_log)")
    wanted = requested(given, zone, at_path)
    version = resolve_version(table, target, wanted)
    try:
        if version is not None and version != int(table.version()):
            table.load_as_version(version)
    except Exception as exc:  # deltalake's DeltaError: the log cannot rebuild it
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _refusal(target.root, str(exc)) or SourceError(
            f"Delta table {target.root} has no version {version}: {first}") from exc
    _check_features(table, target.root)
    partitions = list(table.metadata().partition_columns)
    return Snapshot(
        root=target.root, version=int(table.version()), schema_json=table.schema().to_json(),
        partition_columns=tuple(partitions), files=_files(table, target.root, partitions),
        fs_config=dict(target.fs_config),
    )
