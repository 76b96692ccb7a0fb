"""One version of a Delta table as a reader needs it: schema, partition columns and data files.

deltalake (delta-rs) replays the log (checkpoints included) on the driver; what comes out is
plain, picklable data (:class:`Snapshot`) that the executors read the Parquet files from.

The reader honours reader protocol versions 1 to 3 and, of the table features, those that only
change how the log is kept (``timestampNtz``, ``v2Checkpoint``, ``vacuumProtocolCheck``,
``checkpointProtection``, ``typeWidening``, whose files are cast to the table's type), plus
``deletionVectors`` as long as no live file carries one. Anything else - column mapping, a file
with a deletion vector, an unknown feature, a newer protocol - is refused with one
:class:`~lakemark.errors.UnsupportedError` naming the table and the feature: never wrong rows.

``timestampAsOf`` resolves by the commits' ``inCommitTimestamp`` on tables with in-commit
timestamps on (as Delta does; a copied or restored log has new file times), else by the commit
files' modification times (deltalake's rule).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..errors import ConfigError, SinkError, SourceError, UnsupportedError
from ..planning.delta_log import MetaData, Protocol
from ..planning.delta_table_state import (
    MAX_READER_VERSION,
    READER_FEATURES,
    TableState,
    check_readable,
)
from ..sinks._location import Target, open_delta, resolve_target

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = ["DataFileRef", "Snapshot", "load_snapshot", "READER_FEATURES", "table_state",
           "time_travel"]


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


def time_travel(options: dict[str, str]) -> int | dt.datetime | None:
    """``versionAsOf`` / ``timestampAsOf`` (any case) from reader options; ConfigError if both
    or if one cannot be read."""
    lower = {k.lower(): v for k, v in options.items()}
    version, stamp = lower.get("versionasof"), lower.get("timestampasof")
    if version is not None and stamp is not None:
        raise ConfigError("give versionAsOf or timestampAsOf, not both")
    if version is not None:
        try:
            number = int(str(version).strip())
        except ValueError:
            raise ConfigError(f"option versionAsOf must be an integer, not {version!r}") from None
        if number < 0:
            raise ConfigError(f"option versionAsOf must be >= 0, not {version!r}")
        return number
    if stamp is not None:
        text = str(stamp).strip().replace(" ", "T", 1)
        try:
            when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"option timestampAsOf must be a timestamp such as "
                              f"'2024-05-01 12:00:00', not {stamp!r}") from None
        return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    return None


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


def _version_by_ict(table: DeltaTable, target: Target, when: dt.datetime) -> int | None:
    """The version ``timestampAsOf`` ``when`` means on a table with in-commit timestamps
    (Delta's rule: the commits' own ``inCommitTimestamp``, not the files' modification times,
    which a copy or a restore changes): the last version committed at or before ``when``.
    None when the table does not have them on, or ``when`` is before they were turned on
    (then the files' times apply, as deltalake resolves them)."""
    config = table.metadata().configuration or {}
    if str(config.get(ICT_PROPERTY, "false")).lower() != "true":
        return None
    first = int(config.get(ICT_VERSION, 0) or 0)
    wanted = int(when.timestamp() * 1000)
    low, high = first, int(table.version())
    stamp = _commit_ict(target, low)
    if stamp is None or stamp > wanted:
        return None
    while low < high:  # invariant: ICT(low) <= wanted
        middle = (low + high + 1) // 2
        stamp = _commit_ict(target, middle)
        if stamp is None:
            return None
        if stamp <= wanted:
            low = middle
        else:
            high = middle - 1
    return low


def load_snapshot(path: str, options: dict[str, str] | None = None) -> Snapshot:
    """The Delta table at ``path`` (local or ``s3://``), at the version ``options`` ask for
    (``versionAsOf`` / ``timestampAsOf``; default: the latest)."""
    if not path:
        raise ConfigError("reading format 'delta' needs a path: .load(path)")
    target: Target = resolve_target(path if not path.lower().startswith(("s3a://", "s3n://"))
                                    else "s3://" + path.partition("://")[2])
    try:
        table = open_delta(target)
    except SinkError as exc:
        raise _refusal(target.root, str(exc)) or SourceError(str(exc)) from exc
    if table is None:
        raise SourceError(f"{target.root} is not a Delta table (no _delta_log)")
    wanted = time_travel(dict(options or {}))
    try:
        if isinstance(wanted, dt.datetime):
            by_ict = _version_by_ict(table, target, wanted)
            table.load_as_version(wanted if by_ict is None else by_ict)
        elif wanted is not None:
            table.load_as_version(wanted)
    except Exception as exc:  # deltalake's DeltaError: no such version / too early
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _refusal(target.root, str(exc)) or SourceError(
            f"Delta table {target.root} has no version as of {wanted}: {first}") from exc
    _check_features(table, target.root)
    partitions = list(table.metadata().partition_columns)
    return Snapshot(
        root=target.root, version=int(table.version()), schema_json=table.schema().to_json(),
        partition_columns=tuple(partitions), files=_files(table, target.root, partitions),
        fs_config=dict(target.fs_config),
    )
