"""What a Delta table source carries from run to run, so that an incremental run loads no
snapshot (issue 20): pure, no I/O.

Opening a Delta table at its latest version means reading its last checkpoint (one action per
live file) and the commits after it, a cost that grows with the table's history. An incremental
run needs none of that. It needs:

* **the latest version**, to pin its range: :func:`find_latest` finds it by probing whether
  commit files ``<version>.json`` exist, forward from the bookmark's version or from the version
  ``_delta_log/_last_checkpoint`` names (:func:`last_checkpoint_version`), whichever is later.
  Writers create commit files with put-if-absent, one version after the other, so the versions
  that exist above one that exists are contiguous; the probe gallops (1, 2, 4 … ahead) and then
  bisects: about 2·log2(new commits) checks, however long the history;
* **the table as of the pinned version** — schema, partition columns, the settings that change
  how it reads (change data feed, column mapping) and the protocol (reader version, features):
  the :class:`TableState` of the bookmark's version, carried in the state element, advanced over
  the ``metaData`` and ``protocol`` actions of the range's commits (:func:`advance`), and checked
  wherever it changes (:func:`check_readable`, naming the version);
* **that it is the same table**: the bookmark keeps the SHA-256 of its version's commit file
  (:func:`commit_digest`); a table deleted and written anew at the same place has another
  commit file there (or none), and a ``metaData`` action with another table id in the range is
  a replacement too.

:func:`plan_table_range` puts it together with :func:`~lakemark.planning.delta_log.plan_commits`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ConfigError, SourceError, UnsupportedError
from .delta_log import (
    CDF_PROPERTY,
    ChangeFile,
    Commit,
    CommitPlan,
    MetaData,
    Protocol,
    TableOptions,
    plan_commits,
)

__all__ = ["COLUMN_MAPPING_PROPERTY", "MAX_READER_VERSION", "READER_FEATURES",
           "UNBACKFILLED_FEATURES", "TableState", "advance", "check_partitions",
           "check_probeable", "check_readable", "commit_digest", "find_latest",
           "last_checkpoint_version", "plan_table_range", "require_feed"]

#: Reader table features whose tables lakemark's Delta reader returns exactly (deletion vectors
#: as long as no file it reads carries one).
READER_FEATURES = frozenset({"timestampNtz", "v2Checkpoint", "vacuumProtocolCheck",
                             "checkpointProtection", "typeWidening", "typeWidening-preview",
                             "deletionVectors"})
#: The newest reader protocol version lakemark's Delta reader honours.
MAX_READER_VERSION = 3
#: Table features under which the newest commits may be held by a catalog or a commit
#: coordinator before they appear as ``_delta_log/<version>.json``: probing cannot see them.
UNBACKFILLED_FEATURES = frozenset({"catalogManaged", "catalogOwned-preview",
                                   "coordinatedCommits-preview"})
#: The table property that turns column mapping on.
COLUMN_MAPPING_PROPERTY = "delta.columnMapping.mode"


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() == "true"


@dataclass(frozen=True)
class TableState:
    """A Delta table at one version, as far as a reader of its commits needs it."""

    table_id: str | None
    schema_json: str  # the log's schemaString (Spark's StructType JSON)
    partition_columns: tuple[str, ...] = ()
    cdf: bool = False  # delta.enableChangeDataFeed
    column_mapping: str = "none"  # delta.columnMapping.mode
    protocol: Protocol = field(default_factory=Protocol)

    @classmethod
    def of(cls, metadata: MetaData, protocol: Protocol) -> TableState:
        """The state a ``metaData`` and a ``protocol`` action describe."""
        return cls(metadata.table_id, metadata.schema_json, metadata.partition_columns,
                   _truthy(metadata.setting(CDF_PROPERTY)),
                   str(metadata.setting(COLUMN_MAPPING_PROPERTY, "none")).strip().lower(),
                   protocol)

    def with_metadata(self, metadata: MetaData) -> TableState:
        """This state after a ``metaData`` action (which replaces the metadata whole)."""
        return replace(TableState.of(metadata, self.protocol),
                       table_id=metadata.table_id or self.table_id)

    def column_types(self) -> dict[str, str]:
        """Each top-level column's Delta type name (``long``, ``decimal(10,2)`` …; ``struct``,
        ``array``, ``map`` for nested types): what partition values are parsed as."""
        try:
            fields = json.loads(self.schema_json).get("fields") or ()
        except (ValueError, AttributeError):
            raise SourceError(f"the table's schema is not valid JSON: {self.schema_json[:80]!r}"
                              ) from None
        return {str(f.get("name")): (f["type"] if isinstance(f.get("type"), str)
                                     else str((f.get("type") or {}).get("type", "struct")))
                for f in fields if isinstance(f, Mapping)}

    def to_element(self) -> dict[str, Any]:
        """The keys this state adds to a state element (JSON values)."""
        p = self.protocol
        return {"table_id": self.table_id, "cdf": self.cdf, "schema": self.schema_json,
                "partition_columns": list(self.partition_columns),
                "column_mapping": self.column_mapping,
                "protocol": {"min_reader_version": p.min_reader_version,
                             "min_writer_version": p.min_writer_version,
                             "reader_features": list(p.reader_features),
                             "writer_features": list(p.writer_features)}}

    @classmethod
    def from_element(cls, element: Mapping[str, Any]) -> TableState | None:
        """The state a state element carries, or None when it carries none (an element
        written before lakemark carried it) or a malformed one."""
        schema, protocol = element.get("schema"), element.get("protocol")
        if not isinstance(schema, str) or not schema or not isinstance(protocol, Mapping):
            return None
        try:
            return cls(
                None if element.get("table_id") is None else str(element["table_id"]),
                schema, tuple(str(c) for c in element.get("partition_columns") or ()),
                bool(element.get("cdf", False)),
                str(element.get("column_mapping") or "none"),
                Protocol(int(protocol.get("min_reader_version", 1)),
                         int(protocol.get("min_writer_version", 2)),
                         tuple(str(f) for f in protocol.get("reader_features") or ()),
                         tuple(str(f) for f in protocol.get("writer_features") or ())))
        except (TypeError, ValueError):
            return None


# ------------------------------------------------------------------------------ checks

def check_readable(state: TableState, table: str, since: int | None = None) -> None:
    """UnsupportedError naming the table (and ``since``, the version that made it so) when
    lakemark's Delta reader cannot return the table's rows exactly: a newer reader protocol,
    column mapping, or a reader feature it does not know."""
    protocol = state.protocol
    when = f" (since version {since})" if since is not None else ""
    if protocol.min_reader_version > MAX_READER_VERSION:
        raise UnsupportedError(f"Delta table {table} needs reader protocol version "
                               f"{protocol.min_reader_version}{when}; lakemark reads versions 1 "
                               f"to {MAX_READER_VERSION}")
    features = set(protocol.reader_features)
    if (protocol.min_reader_version >= 2 and state.column_mapping != "none") or \
            "columnMapping" in features:
        raise UnsupportedError(f"Delta table {table} uses column mapping (mode "
                               f"{state.column_mapping}){when}, which lakemark's Delta reader "
                               "does not support")
    unknown = sorted(features - READER_FEATURES)
    if unknown:
        raise UnsupportedError(f"Delta table {table} uses reader feature(s) "
                               f"{', '.join(unknown)}{when}, which lakemark's Delta reader "
                               "does not support")


def check_probeable(state: TableState, table: str, since: int | None = None) -> None:
    """UnsupportedError when the table's newest commits may not be commit files yet (a
    catalog or commit coordinator holds them), so a table source cannot see them."""
    held = sorted(UNBACKFILLED_FEATURES & (set(state.protocol.reader_features)
                                           | set(state.protocol.writer_features)))
    if held:
        when = f" (since version {since})" if since is not None else ""
        raise UnsupportedError(
            f"Delta table {table} uses table feature(s) {', '.join(held)}{when}: its newest "
            "commits are kept by a catalog or commit coordinator, not as _delta_log commit "
            "files, which lakemark's table source reads")


def advance(state: TableState, commits: Sequence[Commit], table: str = "the table"
            ) -> TableState:
    """``state`` (the table as of the version before ``commits``) after ``commits``
    (consecutive, oldest first): each ``metaData``/``protocol`` action applied and checked.

    SourceError for a ``metaData`` action with another table id (the table was replaced);
    UnsupportedError, naming the version, for a change to something the reader cannot follow.
    """
    for commit in commits:
        if commit.metadata is None and commit.protocol is None:
            continue
        if commit.metadata is not None:
            new_id = commit.metadata.table_id
            if state.table_id is not None and new_id is not None and new_id != state.table_id:
                raise SourceError(
                    f"Delta table {table} was replaced at version {commit.version} (table id "
                    f"{state.table_id} is now {new_id}): reset the ctx to read it again")
            state = state.with_metadata(commit.metadata)
        if commit.protocol is not None:
            state = replace(state, protocol=commit.protocol)
        check_readable(state, table, commit.version)
        check_probeable(state, table, commit.version)
    return state


def check_partitions(files: Sequence[ChangeFile], partition_columns: Sequence[str],
                     table: str = "the table") -> None:
    """SourceError when a planned file was written under other partition columns than the
    table has at the pinned version (the partitioning changed inside the range): its
    partition values would be read as the wrong columns."""
    wanted = set(partition_columns)
    for change in files:
        have = {name for name, _ in change.file.partition}
        if have != wanted:
            raise SourceError(
                f"Delta table {table}: file {change.file.path} of version {change.version} "
                f"is partitioned by [{', '.join(sorted(have))}] but the table now is by "
                f"[{', '.join(partition_columns)}] (its partitioning changed inside this "
                "run's range); reset the ctx to read the table anew")


def require_feed(state: TableState, options: TableOptions, table: str = "the table") -> None:
    """ConfigError when ``options`` read the change data feed of a table that has it off."""
    if options.read_change_feed and not state.cdf:
        raise ConfigError(f"Delta table {table} does not have the change data feed on "
                          f"({CDF_PROPERTY}); readChangeFeed=true needs it")


def plan_table_range(start: TableState, commits: Sequence[Commit], options: TableOptions,
                     *, table: str = "the table") -> tuple[CommitPlan, TableState]:
    """The files ``commits`` (consecutive, oldest first, right after the version ``start``
    describes) contribute under ``options``, and the table as of the last of them.

    Refuses, naming the version: a replaced table, a protocol or setting the reader cannot
    follow (:func:`advance`); ``readChangeFeed`` with the feed off at the last version; a
    commit that removes data it cannot follow (:func:`plan_commits`); files written under
    other partition columns (:func:`check_partitions`)."""
    final = advance(start, commits, table)
    require_feed(final, options, table)
    plan = plan_commits(commits, options, cdf_at_start=start.cdf, cdf_now=final.cdf,
                        table=table)
    check_partitions(plan.files, final.partition_columns, table)
    return plan, final


# ------------------------------------------------------------------------- the pin

def last_checkpoint_version(text: str | None) -> int | None:
    """The version ``_delta_log/_last_checkpoint`` names (None: no such file, or not one
    that can be read — it is a hint only)."""
    if not text:
        return None
    try:
        value = json.loads(text).get("version")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def find_latest(exists: Callable[[int], bool], known: int, hint: int | None = None) -> int:
    """The latest version of a table whose version ``known`` exists, with ``exists(v)``
    telling whether version ``v``'s commit file exists.

    Starts from ``hint`` (the version of ``_last_checkpoint``) when it is later than ``known``
    and its commit file exists. Above a version that exists, versions exist without gaps
    (put-if-absent commits), so the probe gallops ahead (1, 2, 4 …) to the first missing one,
    then bisects: O(log(latest − start)) calls of ``exists``. A commit made while probing may
    or may not be included; the answer is a version that existed, and all before it did.
    """
    low = known
    if hint is not None and hint > known and exists(hint):
        low = hint
    step, high = 1, None
    while high is None:
        if exists(low + step):
            low += step
            step *= 2
        else:
            high = low + step
    while high - low > 1:
        middle = (low + high) // 2
        if exists(middle):
            low = middle
        else:
            high = middle
    return low


def commit_digest(text: str) -> str:
    """The SHA-256 of a commit file's text: what identifies the bookmark's version of this
    very table on the next run."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
