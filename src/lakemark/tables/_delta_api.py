"""``delta.tables.DeltaTable`` for scripts written against Delta Lake's Python API, with no jars.

Scripts run by ``lakemark run`` (or in a session after ``lakemark.register(spark)``) import
``from delta.tables import DeltaTable`` and get this class when Delta Lake's own ``delta``
package (delta-spark) is not installed (see :mod:`._delta_shim`). Reads go through Spark
(``format("delta")``, :mod:`._delta_fast`); merges, updates, deletes, vacuum, optimize,
restore and table creation are executed by deltalake on the driver (docs/upserts.md lists what
is supported and how each runs). Methods of Delta's API that lakemark does not implement exist
and raise :class:`~lakemark.errors.UnsupportedError` naming the method, so a script fails
saying what is missing instead of with an ``AttributeError``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError
from ._delta_names import NamesMissing, resolve_path, table_location, unsupported
from ._delta_sql import quote, to_sql

if TYPE_CHECKING:
    from deltalake import DeltaTable as RsTable
    from pyspark.sql import Column, DataFrame, SparkSession

    from ._delta_builders import DeltaOptimizeBuilder, DeltaTableBuilder
    from ._delta_merge_api import DeltaMergeBuilder

__all__ = ["DeltaTable", "NamesMissing", "unsupported", "resolve_path", "table_location"]

log = logging.getLogger("lakemark.tables")

class DeltaTable(metaclass=NamesMissing):
    """A Delta table (``delta.tables.DeltaTable``); see the module docstring."""

    def __init__(self, spark: SparkSession, path: str, alias_name: str | None = None) -> None:
        self._spark = spark
        self._path = path
        self._target = resolve_path(path)
        self._alias = alias_name

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def forPath(cls, sparkSession: SparkSession, path: str,  # noqa: N802, N803 - Delta's names
                hadoopConf: Mapping[str, str] | None = None) -> DeltaTable:  # noqa: N803
        """The Delta table at ``path``; fails if there is none."""
        from ..sinks._location import open_delta

        if hadoopConf:
            raise unsupported("DeltaTable.forPath(hadoopConf=...)",
                              "storage settings come from the environment")
        table = cls(sparkSession, path)
        if open_delta(table._target) is None:
            raise ConfigError(f"DeltaTable.forPath: {path} is not a Delta table "
                              "(no _delta_log)")
        return table

    @classmethod
    def forName(cls, sparkSession: SparkSession,  # noqa: N802, N803
                tableOrViewName: str) -> DeltaTable:  # noqa: N803
        """The Delta table called ``tableOrViewName`` (see :func:`table_location`)."""
        from ..sinks._location import open_delta

        location = table_location(sparkSession, tableOrViewName)
        assert location is not None
        table = cls(sparkSession, location)
        if open_delta(table._target) is None:
            raise ConfigError(f"DeltaTable.forName: table {tableOrViewName!r} (at {location}) "
                              "is not a Delta table (no _delta_log)")
        return table

    @classmethod
    def isDeltaTable(cls, sparkSession: SparkSession,  # noqa: N802, N803
                     identifier: str) -> bool:
        """Whether a Delta table lives at the path ``identifier``."""
        from ..sinks._location import open_delta

        try:
            return open_delta(resolve_path(identifier)) is not None
        except (ConfigError, SinkError):
            return False

    # -- reading ----------------------------------------------------------------------------
    def _table(self) -> RsTable:
        from ..sinks._location import open_delta

        table = open_delta(self._target)
        if table is None:
            raise ConfigError(f"{self._target.root} is no longer a Delta table")
        return table

    def toDF(self) -> DataFrame:  # noqa: N802
        """The table's current version as a DataFrame (aliased when :meth:`alias` was used)."""
        df = self._spark.read.format("delta").load(self._target.root)
        return df.alias(self._alias) if self._alias else df

    def alias(self, aliasName: str) -> DeltaTable:  # noqa: N803
        """This table under an alias, for merge conditions (``t.id = s.id``)."""
        if not isinstance(aliasName, str) or not aliasName.strip():
            raise ConfigError(f"DeltaTable.alias needs a name, got {aliasName!r}")
        return DeltaTable(self._spark, self._path, aliasName)

    def _empty_frame(self, alias_name: str | None) -> DataFrame:
        """An empty DataFrame with the table's schema (resolving expressions reads nothing)."""
        from pyspark.sql.types import StructType

        schema = StructType.fromJson(json.loads(self._table().schema().to_json()))
        df = self._spark.createDataFrame([], schema)
        return df.alias(alias_name) if alias_name else df

    # -- changing rows ----------------------------------------------------------------------
    def merge(self, source: DataFrame, condition: str | Column) -> DeltaMergeBuilder:
        """Start a MERGE of ``source`` into this table on ``condition``; add clauses, then
        ``execute()``."""
        from ._delta_merge_api import DeltaMergeBuilder

        return DeltaMergeBuilder(self, source, condition)

    def _set_clause(self, values: Mapping[str, Any] | None, frame: DataFrame,
                    method: str) -> dict[str, str]:
        if not values:
            raise ConfigError(f"DeltaTable.{method} needs a non-empty dict of column -> value")
        if not isinstance(values, Mapping):
            raise ConfigError(f"DeltaTable.{method}: set must be a dict of column -> SQL "
                              f"string or Column, got {type(values).__name__}")
        return {quote(str(k)): to_sql(v, frame, f"DeltaTable.{method} value of {k!r}")
                for k, v in values.items()}

    def update(self, condition: str | Column | None = None,
               set: Mapping[str, Any] | None = None) -> None:  # noqa: A002 - Delta's name
        """Set columns (``set``: column -> SQL string or Column) of the rows that match
        ``condition`` (all rows when None)."""
        frame = self._empty_frame(None)
        updates = self._set_clause(set, frame, "update")
        predicate = None if condition is None else to_sql(condition, frame,
                                                          "DeltaTable.update condition")
        self._run("update", lambda t: t.update(updates=updates, predicate=predicate))

    def delete(self, condition: str | Column | None = None) -> None:
        """Delete the rows that match ``condition`` (every row when None)."""
        predicate = None if condition is None else to_sql(
            condition, self._empty_frame(None), "DeltaTable.delete condition")
        self._run("delete", lambda t: t.delete(predicate))

    def _run(self, method: str, action: Callable[[RsTable], Any]) -> Any:
        """Run a deltalake operation, its failure a SinkError naming the method and table."""
        table = self._table()
        try:
            return action(table)
        except Exception as exc:  # deltalake's DeltaError and object-store errors
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if "Invalid function" in first:
                first += (" (conditions and values are evaluated by deltalake, which lacks "
                          "this Spark function: compute it as a column of the source first)")
            raise SinkError(f"DeltaTable.{method} on {self._target.root} failed: {first}",
                            target=self._target.root) from exc

    # -- the table's log --------------------------------------------------------------------
    def history(self, limit: int | None = None) -> DataFrame:
        """The table's commits, newest first, with Delta's ``DESCRIBE HISTORY`` columns."""
        from ._delta_describe import history_frame

        return history_frame(self._spark, self._table(), limit)

    def detail(self) -> DataFrame:
        """One row describing the table, with Delta's ``DESCRIBE DETAIL`` columns."""
        from ._delta_describe import detail_frame

        return detail_frame(self._spark, self._table(), self._target.root)

    def vacuum(self, retentionHours: float | None = None) -> DataFrame:  # noqa: N803
        """Delete files no longer referenced by versions within the retention period (Delta's
        default: 7 days; shorter needs ``spark.databricks.delta.retentionDurationCheck.enabled
        = false``, as in Delta). Returns an empty DataFrame, as Delta does."""
        check = str(self._spark.conf.get(
            "spark.databricks.delta.retentionDurationCheck.enabled", "true")).lower() != "false"
        hours = None if retentionHours is None else int(retentionHours)
        if retentionHours is not None and hours != retentionHours:
            raise ConfigError(f"DeltaTable.vacuum: retentionHours must be whole hours, got "
                              f"{retentionHours!r}")
        removed = self._run("vacuum", lambda t: t.vacuum(
            retention_hours=hours, dry_run=False, enforce_retention_duration=check))
        log.info("vacuum of %s deleted %d file(s)", self._target.root, len(removed))
        return self._spark.createDataFrame([], "path string")

    def optimize(self) -> DeltaOptimizeBuilder:
        """A builder: ``.where(partition predicate)``, then ``executeCompaction()`` or
        ``executeZOrderBy(cols)``."""
        from ._delta_builders import DeltaOptimizeBuilder

        return DeltaOptimizeBuilder(self)

    def restoreToVersion(self, version: int) -> DataFrame:  # noqa: N802
        """Make ``version`` the table's current state again (a new commit)."""
        return self._restore(int(version))

    def restoreToTimestamp(self, timestamp: str) -> DataFrame:  # noqa: N802
        """Make the version current at ``timestamp`` (a Spark timestamp string, read in the
        session's time zone) the table's current state again."""
        from pyspark.sql import functions as F

        row = self._spark.range(1).select(
            F.unix_micros(F.to_timestamp(F.lit(str(timestamp)))).alias("us")).collect()[0]
        if row["us"] is None:
            raise ConfigError(f"DeltaTable.restoreToTimestamp: {timestamp!r} is not a "
                              "timestamp")
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
            microseconds=int(row["us"]))
        return self._restore(when)

    def _restore(self, to: int | dt.datetime) -> DataFrame:
        metrics = self._run("restore", lambda t: t.restore(to))
        after = self._table().get_add_actions(flatten=True)
        sizes: list[Any] = list(after.column("size_bytes").to_pylist()) if after.num_rows else []
        row = {
            "table_size_after_restore": int(sum(sizes)),
            "num_of_files_after_restore": int(after.num_rows),
            "num_removed_files": int(metrics.get("numRemovedFile", 0)),
            "num_restored_files": int(metrics.get("numRestoredFile", 0)),
            "removed_files_size": None, "restored_files_size": None,
        }
        return self._spark.createDataFrame(
            [row], "table_size_after_restore long, num_of_files_after_restore long, "
                   "num_removed_files long, num_restored_files long, removed_files_size long, "
                   "restored_files_size long")

    # -- creating tables --------------------------------------------------------------------
    @classmethod
    def create(cls, sparkSession: SparkSession | None = None  # noqa: N803
               ) -> DeltaTableBuilder:
        """A builder that creates a table (fails if one exists)."""
        from ._delta_builders import DeltaTableBuilder

        return DeltaTableBuilder(_session(sparkSession), "create", cls.forPath)

    @classmethod
    def createIfNotExists(cls, sparkSession: SparkSession | None = None  # noqa: N802, N803
                          ) -> DeltaTableBuilder:
        """A builder that creates a table unless one exists (then nothing changes)."""
        from ._delta_builders import DeltaTableBuilder

        return DeltaTableBuilder(_session(sparkSession), "createIfNotExists", cls.forPath)

    @classmethod
    def createOrReplace(cls, sparkSession: SparkSession | None = None  # noqa: N802, N803
                        ) -> DeltaTableBuilder:
        """A builder that creates a table or replaces an existing one's schema and data."""
        from ._delta_builders import DeltaTableBuilder

        return DeltaTableBuilder(_session(sparkSession), "createOrReplace", cls.forPath)

    @classmethod
    def replace(cls, sparkSession: SparkSession | None = None) -> DeltaTableBuilder:  # noqa: N803
        """A builder that replaces an existing table (fails if there is none)."""
        from ._delta_builders import DeltaTableBuilder

        return DeltaTableBuilder(_session(sparkSession), "replace", cls.forPath)

    # -- what lakemark does not implement ---------------------------------------------------
    @classmethod
    def convertToDelta(cls, *args: Any, **kwargs: Any) -> DeltaTable:  # noqa: N802
        raise unsupported("DeltaTable.convertToDelta")

    @classmethod
    def columnBuilder(cls, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        raise unsupported("DeltaTable.columnBuilder", "use addColumn(name, type, ...)")

    def generate(self, mode: str) -> None:
        raise unsupported("DeltaTable.generate")

    def upgradeTableProtocol(self, readerVersion: int, writerVersion: int) -> None:  # noqa: N802,N803
        raise unsupported("DeltaTable.upgradeTableProtocol")

    def addFeatureSupport(self, featureName: str) -> None:  # noqa: N802, N803
        raise unsupported("DeltaTable.addFeatureSupport")

    def dropFeatureSupport(self, featureName: str, *args: Any) -> None:  # noqa: N802, N803
        raise unsupported("DeltaTable.dropFeatureSupport")

    def clone(self, *args: Any, **kwargs: Any) -> DeltaTable:
        raise unsupported("DeltaTable.clone")

    def cloneAtVersion(self, *args: Any, **kwargs: Any) -> DeltaTable:  # noqa: N802
        raise unsupported("DeltaTable.cloneAtVersion")

    def cloneAtTimestamp(self, *args: Any, **kwargs: Any) -> DeltaTable:  # noqa: N802
        raise unsupported("DeltaTable.cloneAtTimestamp")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"DeltaTable.{name}")

    def __repr__(self) -> str:
        alias = f", alias={self._alias!r}" if self._alias else ""
        return f"DeltaTable({self._target.root!r}{alias})"


def _session(spark: SparkSession | None) -> SparkSession:
    from pyspark.sql import SparkSession

    if spark is not None:
        return spark
    active = SparkSession.getActiveSession()
    if active is None:
        raise ConfigError("DeltaTable.create*: no active Spark session; pass one")
    return active
