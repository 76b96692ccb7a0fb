"""Pure planning of a Delta table read as an incremental source (``Job.read_table``).

A run takes the table's commits after the version its bookmark holds, up to a version pinned
when the run starts. This module decides, from the commits' actions alone (parsed from the
commit JSONs by :func:`parse_commit`; no I/O here), which data files that range contributes:

* **append-only** (the default): the files added with ``dataChange`` by each commit; commits
  that only rearrange data (``dataChange=false``: OPTIMIZE, compaction) add nothing; a commit
  that removes data (a ``remove`` with ``dataChange``: DELETE, UPDATE, MERGE, overwrite) is
  refused with :class:`ChangeCommitError`, or skipped whole with ``skipChangeCommits``;
* **change data feed** (``readChangeFeed``): a commit's ``cdc`` files when it has any (their
  rows carry ``_change_type``), otherwise its added files as inserts and its removed files as
  deletes — which is exact only while the table's change data feed was on at that version, so
  a data-removing commit made with it off is refused.

The first run (no bookmark yet) reads the snapshot at the pinned version instead, unless
``startingVersion`` says where to begin.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..errors import ConfigError, SourceError, UnsupportedError

__all__ = ["CDF_PROPERTY", "ChangeCommitError", "ChangeFile", "Commit", "CommitPlan",
           "LogFile", "MetaData", "Protocol", "TableOptions", "VersionRange",
           "commit_file_name", "parse_commit", "parse_table_options", "partition_value",
           "plan_commits", "plan_range"]

#: The table property that turns Delta's change data feed on.
CDF_PROPERTY = "delta.enableChangeDataFeed"

_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def commit_file_name(version: int) -> str:
    """The name of version ``version``'s commit file in ``_delta_log/``."""
    return f"{version:020d}.json"


# ------------------------------------------------------------------------------- options

@dataclass(frozen=True)
class TableOptions:
    """The reader options of a table source (Delta's streaming-source names)."""

    read_change_feed: bool = False
    skip_change_commits: bool = False
    starting_version: int | str | None = None  # an int, "latest", or None (snapshot)

    def to_json(self) -> dict[str, Any]:
        return {"readChangeFeed": self.read_change_feed,
                "skipChangeCommits": self.skip_change_commits,
                "startingVersion": self.starting_version}


def _flag(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"option {name} must be true or false, not {value!r}")


def parse_table_options(options: Mapping[str, Any] | None) -> TableOptions:
    """The options of ``read_table`` (names matched ignoring case); ConfigError naming an
    unknown option or a bad value."""
    out: dict[str, Any] = {}
    for key, value in (options or {}).items():
        name = str(key).lower()
        if name == "readchangefeed" or name == "readchangedata":
            out["read_change_feed"] = _flag(str(key), value)
        elif name == "skipchangecommits":
            out["skip_change_commits"] = _flag(str(key), value)
        elif name == "startingversion":
            text = str(value).strip().lower()
            if text == "latest":
                out["starting_version"] = "latest"
            else:
                try:
                    out["starting_version"] = int(text)
                except ValueError:
                    raise ConfigError(f"option startingVersion must be a version number or "
                                      f"'latest', not {value!r}") from None
                if out["starting_version"] < 0:
                    raise ConfigError(f"option startingVersion must be >= 0, not {value!r}")
        else:
            raise ConfigError(
                f"read_table: unknown option {key!r} (known: readChangeFeed, "
                "skipChangeCommits, startingVersion)")
    return TableOptions(**out)


# ------------------------------------------------------------------------ version range

@dataclass(frozen=True)
class VersionRange:
    """The versions a run takes: commits ``from_version`` .. ``to_version`` (both included),
    or with ``snapshot`` the whole table as of ``to_version``. Empty when from > to."""

    from_version: int
    to_version: int
    snapshot: bool = False

    @property
    def empty(self) -> bool:
        return self.from_version > self.to_version

    def to_json(self) -> dict[str, Any]:
        return {"from_version": self.from_version, "to_version": self.to_version,
                "mode": "snapshot" if self.snapshot else "commits"}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VersionRange:
        return cls(int(data["from_version"]), int(data["to_version"]),
                   data.get("mode") == "snapshot")


def plan_range(previous: int | None, latest: int, starting: int | str | None = None,
               *, table: str = "the table") -> VersionRange:
    """The range of a run whose bookmark holds version ``previous`` (None: first run) of a
    table now at ``latest``: the commits after ``previous``; on a first run the snapshot at
    ``latest``, or the commits from ``starting`` (``"latest"``: none, start from here)."""
    if previous is not None:
        if previous > latest:
            raise SourceError(
                f"Delta table {table} is at version {latest}, behind the bookmark's version "
                f"{previous}: the table was replaced; reset the ctx to read it again")
        return VersionRange(previous + 1, latest)
    if starting is None:
        return VersionRange(0, latest, snapshot=True)
    if starting == "latest":
        return VersionRange(latest + 1, latest)
    assert isinstance(starting, int)
    if starting > latest + 1:
        raise ConfigError(f"option startingVersion {starting} is past Delta table {table}'s "
                          f"latest version {latest}")
    return VersionRange(starting, latest)


# ---------------------------------------------------------------------------- commits

@dataclass(frozen=True)
class LogFile:
    """A file named by an ``add``, ``remove`` or ``cdc`` action (partition values as the log
    holds them: strings, None for null)."""

    path: str
    size: int
    partition: tuple[tuple[str, str | None], ...] = ()
    data_change: bool = True
    rows: int | None = None
    deletion_vector: bool = False


@dataclass(frozen=True)
class MetaData:
    """A ``metaData`` action: it replaces the table's metadata whole from its version on."""

    table_id: str | None
    schema_json: str  # the log's schemaString: Spark's StructType JSON
    partition_columns: tuple[str, ...] = ()
    configuration: tuple[tuple[str, str], ...] = ()

    def setting(self, key: str, default: str | None = None) -> str | None:
        """The table property ``key`` (None/``default`` when not set)."""
        return next((v for k, v in self.configuration if k == key), default)


@dataclass(frozen=True)
class Protocol:
    """A ``protocol`` action: the reader/writer versions and table features from its
    version on."""

    min_reader_version: int = 1
    min_writer_version: int = 2
    reader_features: tuple[str, ...] = ()
    writer_features: tuple[str, ...] = ()


@dataclass(frozen=True)
class Commit:
    """The actions of one commit that matter to a reader."""

    version: int
    timestamp_ms: int | None = None
    operation: str | None = None
    adds: tuple[LogFile, ...] = ()
    removes: tuple[LogFile, ...] = ()
    cdcs: tuple[LogFile, ...] = ()
    cdf: bool | None = None  # the change data feed setting of a metaData action, if any
    metadata: MetaData | None = None
    protocol: Protocol | None = None

    @property
    def removes_data(self) -> bool:
        """Whether the commit removes or rewrites rows (a ``remove`` with ``dataChange``)."""
        return any(r.data_change for r in self.removes)


def _log_file(action: Mapping[str, Any]) -> LogFile:
    stats = action.get("stats")
    rows = None
    if isinstance(stats, str) and stats:
        try:
            value = json.loads(stats).get("numRecords")
            rows = int(value) if value is not None else None
        except (ValueError, AttributeError, TypeError):
            rows = None
    values = action.get("partitionValues") or {}
    return LogFile(
        path=str(action["path"]), size=int(action.get("size") or 0),
        partition=tuple(sorted((str(k), None if v is None else str(v))
                               for k, v in values.items())),
        data_change=bool(action.get("dataChange", True)), rows=rows,
        deletion_vector=bool(action.get("deletionVector")),
    )


def _metadata(action: Mapping[str, Any]) -> MetaData:
    config = action.get("configuration") or {}
    return MetaData(
        table_id=None if action.get("id") is None else str(action["id"]),
        schema_json=str(action.get("schemaString") or ""),
        partition_columns=tuple(str(c) for c in action.get("partitionColumns") or ()),
        configuration=tuple(sorted((str(k), str(v)) for k, v in config.items()
                                   if v is not None)))


def _protocol(action: Mapping[str, Any]) -> Protocol:
    return Protocol(int(action.get("minReaderVersion") or 1),
                    int(action.get("minWriterVersion") or 2),
                    tuple(sorted(str(f) for f in action.get("readerFeatures") or ())),
                    tuple(sorted(str(f) for f in action.get("writerFeatures") or ())))


def parse_commit(version: int, lines: Iterable[str]) -> Commit:
    """The :class:`Commit` of version ``version`` from its commit file's JSON lines;
    SourceError naming the commit file for a line that is not a well-formed action."""
    adds: list[LogFile] = []
    removes: list[LogFile] = []
    cdcs: list[LogFile] = []
    timestamp = operation = cdf = None
    metadata: MetaData | None = None
    protocol: Protocol | None = None
    for line in lines:
        if not line.strip():
            continue
        try:
            action = json.loads(line)
            if not isinstance(action, dict):
                raise ValueError("not a JSON object")
            if "add" in action:
                adds.append(_log_file(action["add"]))
            elif "remove" in action:
                removes.append(_log_file(action["remove"]))
            elif "cdc" in action:
                cdcs.append(_log_file(action["cdc"]))
            elif "commitInfo" in action:
                info = action["commitInfo"] or {}
                stamp = info.get("inCommitTimestamp", info.get("timestamp"))
                timestamp = int(stamp) if stamp is not None else None
                operation = info.get("operation")
            elif "metaData" in action:
                metadata = _metadata(action["metaData"] or {})
                cdf = str(metadata.setting(CDF_PROPERTY, "false")).strip().lower() == "true"
            elif "protocol" in action:
                protocol = _protocol(action["protocol"] or {})
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise SourceError(f"commit file {commit_file_name(version)} holds a line that is "
                              f"not a well-formed Delta action ({what}): {line[:80]!r}"
                              ) from None
    return Commit(version, timestamp, operation, tuple(adds), tuple(removes), tuple(cdcs), cdf,
                  metadata, protocol)


@dataclass(frozen=True)
class ChangeFile:
    """A file a run reads, from commit ``version``. ``change_type`` is the constant
    ``_change_type`` of its rows (``insert`` for added, ``delete`` for removed files), or None
    for a ``cdc`` file, whose rows carry their own."""

    file: LogFile
    version: int
    timestamp_ms: int | None
    change_type: str | None = None


@dataclass(frozen=True)
class CommitPlan:
    """What a range of commits contributes: the files to read and the commits skipped."""

    files: tuple[ChangeFile, ...]
    skipped: tuple[int, ...] = ()
    commits: int = 0


class ChangeCommitError(SourceError):
    """A commit in a table source's range removes or rewrites data the source cannot follow."""


def _refuse(table: str, commit: Commit, options: TableOptions, cdf_now: bool) -> None:
    what = f"Delta table {table}: version {commit.version}" + \
        (f" ({commit.operation})" if commit.operation else "")
    if options.read_change_feed:
        raise ChangeCommitError(
            f"{what} removes or rewrites data while the table's change data feed was off, so "
            "its changes cannot be read; set skipChangeCommits=true to skip such commits")
    hint = "set readChangeFeed=true to read its inserts, updates and deletes, or " if cdf_now \
        else "turn the change data feed on (delta.enableChangeDataFeed) and read with " \
             "readChangeFeed=true, or set "
    raise ChangeCommitError(
        f"{what} removes or rewrites data, and a table source takes appends only: {hint}"
        "skipChangeCommits=true to skip such commits")


def plan_commits(commits: Sequence[Commit], options: TableOptions, *, cdf_at_start: bool,
                 cdf_now: bool = False, table: str = "the table") -> CommitPlan:
    """The files ``commits`` (consecutive, oldest first) contribute under ``options``.

    ``cdf_at_start``: whether the change data feed was on before the first of them (metaData
    actions in range change it); ``cdf_now``: whether it is on at the pinned version (for the
    error's advice). :class:`ChangeCommitError` for a commit that removes data and cannot be
    followed; :class:`UnsupportedError` for an added file with a deletion vector.
    """
    files: list[ChangeFile] = []
    skipped: list[int] = []
    cdf = cdf_at_start
    for commit in commits:
        if commit.cdf is not None:
            cdf = commit.cdf
        if options.read_change_feed and commit.cdcs:
            files += [ChangeFile(f, commit.version, commit.timestamp_ms) for f in commit.cdcs]
            continue
        if commit.removes_data:
            if options.skip_change_commits:
                skipped.append(commit.version)
                continue
            if not options.read_change_feed or not cdf:
                _refuse(table, commit, options, cdf_now)
            files += [ChangeFile(f, commit.version, commit.timestamp_ms, "delete")
                      for f in commit.removes if f.data_change]
        for f in commit.adds:
            if not f.data_change:
                continue
            if f.deletion_vector:
                raise UnsupportedError(
                    f"Delta table {table}: version {commit.version} adds file {f.path} with a "
                    "deletion vector, which lakemark's Delta reader does not support")
            files.append(ChangeFile(f, commit.version, commit.timestamp_ms,
                                    "insert" if options.read_change_feed else None))
    return CommitPlan(tuple(files), tuple(skipped), len(commits))


# --------------------------------------------------------------------- partition values

def partition_value(raw: str | None, type_name: str) -> Any:
    """A partition value as the log serialises it (``raw``), as the Python value of the
    column's Delta type (``type_name``: ``long``, ``date``, ``decimal(10,2)`` …)."""
    kind = type_name.strip().lower()
    if raw is None or (raw == "" and kind != "string"):
        return None
    try:
        if kind in ("byte", "short", "integer", "long"):
            return int(raw)
        if kind in ("float", "double"):
            return float(raw)
        if kind == "boolean":
            return raw.strip().lower() == "true"
        if kind.startswith("decimal"):
            return Decimal(raw)
        if kind == "date":
            return dt.date.fromisoformat(raw)
        if kind in ("timestamp", "timestamp_ntz"):
            when = dt.datetime.fromisoformat(raw.strip().replace(" ", "T", 1)
                                             .replace("Z", "+00:00"))
            if kind == "timestamp" and when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)  # Delta's partition timestamps are UTC
            return when
        if kind == "binary":
            return raw.encode("utf-8")
    except ValueError:
        raise SourceError(f"partition value {raw!r} is not a valid {type_name}") from None
    return raw
