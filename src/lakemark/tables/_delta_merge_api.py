"""``DeltaMergeBuilder``: Delta's ``merge(...).whenMatched...().execute()`` run by deltalake.

The clauses keep Delta's semantics: they are tried in the order they were added, the first
whose condition holds acts on a row; in each group (matched, not matched, not matched by
source) only the last clause may omit its condition; a target row matched by more than one
source row fails the merge and writes nothing.

How it executes: Spark resolves every condition and value against the table's schema and the
source's (nothing is read); the source DataFrame -- the changes -- is collected to the driver
as Arrow; deltalake's ``TableMerger`` then scans the target's files in the driver process
(skipping files whose partition values or column statistics cannot match the source's keys),
rewrites only the files holding matched rows and commits once. The target table is never
collected into Spark's driver, but the merge uses the driver's CPU only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError
from ._delta_names import NamesMissing, unsupported
from ._delta_sql import frame_alias, quote, to_sql

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from ._delta_api import DeltaTable

__all__ = ["DeltaMergeBuilder"]

_GROUPS = {"matched": "whenMatched", "not_matched": "whenNotMatched",
           "by_source": "whenNotMatchedBySource"}


@dataclass(frozen=True)
class _Clause:
    group: str          # a key of _GROUPS
    action: str         # update, update_all, delete, insert, insert_all
    method: str         # the Delta method that added it, for messages
    condition: Any      # str | Column | None
    values: Mapping[str, Any] | None = None


class DeltaMergeBuilder(metaclass=NamesMissing):
    """Built by ``DeltaTable.merge(source, condition)``; see the module docstring."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"DeltaMergeBuilder.{name}")

    def __init__(self, table: DeltaTable, source: DataFrame, condition: str | Column) -> None:
        from pyspark.sql import DataFrame

        if not isinstance(source, DataFrame):
            raise ConfigError(f"DeltaTable.merge: the source must be a Spark DataFrame, got "
                              f"{type(source).__name__}")
        if condition is None:
            raise ConfigError("DeltaTable.merge needs a condition (e.g. 't.id = s.id')")
        self._table = table
        self._source = source
        self._condition = condition
        self._clauses: list[_Clause] = []
        self._evolve = False

    def _add(self, clause: _Clause) -> DeltaMergeBuilder:
        if clause.values is not None and not isinstance(clause.values, Mapping):
            raise ConfigError(f"{clause.method}: expected a dict of column -> SQL string or "
                              f"Column, got {type(clause.values).__name__}")
        if clause.action in ("update", "insert") and not clause.values:
            raise ConfigError(f"{clause.method} needs a non-empty dict of column -> value")
        self._clauses.append(clause)
        return self

    def whenMatchedUpdate(self, condition: str | Column | None = None,  # noqa: N802
                          set: Mapping[str, Any] | None = None) -> DeltaMergeBuilder:  # noqa: A002
        """Update matched rows: ``set`` maps target columns to SQL strings or Columns."""
        return self._add(_Clause("matched", "update", "whenMatchedUpdate", condition, set))

    def whenMatchedUpdateAll(self, condition: str | Column | None = None  # noqa: N802
                             ) -> DeltaMergeBuilder:
        """Update every column of matched rows from the source's column of the same name."""
        return self._add(_Clause("matched", "update_all", "whenMatchedUpdateAll", condition))

    def whenMatchedDelete(self, condition: str | Column | None = None  # noqa: N802
                          ) -> DeltaMergeBuilder:
        """Delete matched rows."""
        return self._add(_Clause("matched", "delete", "whenMatchedDelete", condition))

    def whenNotMatchedInsert(self, condition: str | Column | None = None,  # noqa: N802
                             values: Mapping[str, Any] | None = None) -> DeltaMergeBuilder:
        """Insert source rows that match no target row: ``values`` maps target columns."""
        return self._add(_Clause("not_matched", "insert", "whenNotMatchedInsert", condition,
                                 values))

    def whenNotMatchedInsertAll(self, condition: str | Column | None = None  # noqa: N802
                                ) -> DeltaMergeBuilder:
        """Insert unmatched source rows, every column from the source's of the same name."""
        return self._add(_Clause("not_matched", "insert_all", "whenNotMatchedInsertAll",
                                 condition))

    def whenNotMatchedBySourceUpdate(self, condition: str | Column | None = None,  # noqa: N802
                                     set: Mapping[str, Any] | None = None  # noqa: A002
                                     ) -> DeltaMergeBuilder:
        """Update target rows that no source row matches."""
        return self._add(_Clause("by_source", "update", "whenNotMatchedBySourceUpdate",
                                 condition, set))

    def whenNotMatchedBySourceDelete(self, condition: str | Column | None = None  # noqa: N802
                                     ) -> DeltaMergeBuilder:
        """Delete target rows that no source row matches."""
        return self._add(_Clause("by_source", "delete", "whenNotMatchedBySourceDelete",
                                 condition))

    def withSchemaEvolution(self) -> DeltaMergeBuilder:  # noqa: N802
        """Add source columns the table lacks (deltalake's ``merge_schema``)."""
        self._evolve = True
        return self

    def _check_order(self) -> None:
        if not self._clauses:
            raise ConfigError("DeltaTable.merge: there must be at least one WHEN clause "
                              "(whenMatchedUpdate..., whenNotMatchedInsert...) before execute()")
        for group, prefix in _GROUPS.items():
            mine = [c for c in self._clauses if c.group == group]
            for clause in mine[:-1]:
                if clause.condition is None:
                    raise ConfigError(
                        f"DeltaTable.merge: when there is more than one {prefix} clause, only "
                        f"the last may omit its condition ({clause.method} has none and is "
                        "not last)")

    def _check_all_columns(self, target_alias: str, source_alias: str) -> None:
        """Delta's rule for ``...UpdateAll``/``...InsertAll`` without schema evolution: every
        table column must have a source column of the same name (case-insensitive)."""
        if self._evolve:
            return
        alls = [c.method for c in self._clauses if c.action in ("update_all", "insert_all")]
        if not alls:
            return
        have = {c.lower() for c in self._source.columns}
        missing = [f.name for f in self._table._table().schema().fields
                   if f.name.lower() not in have]
        if missing:
            raise ConfigError(
                f"DeltaTable.merge: {alls[0]} cannot resolve {target_alias}."
                f"{', '.join(missing)}: the source has no such column(s) (source columns: "
                f"{', '.join(source_alias + '.' + c for c in self._source.columns)}); "
                "use withSchemaEvolution() or name the columns in whenMatchedUpdate/"
                "whenNotMatchedInsert")

    def execute(self) -> DataFrame:
        """Run the merge (one commit); a DataFrame of Delta's merge metrics
        (num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows)."""
        self._check_order()
        frame, target_alias, source_alias = _frame_for_merge(self._table, self._source)
        self._check_all_columns(target_alias, source_alias)
        on = to_sql(self._condition, frame, "DeltaTable.merge condition")
        steps = []
        for clause in self._clauses:
            when = None if clause.condition is None else to_sql(
                clause.condition, frame, f"{clause.method} condition")
            values = None
            if clause.values is not None:
                values = {quote(_target_column(str(k), target_alias)):
                          to_sql(v, frame, f"{clause.method} value of {k!r}")
                          for k, v in clause.values.items()}
            steps.append((clause, when, values))
        source = self._source.toArrow()
        spark_table = self._table

        def run(table: Any) -> dict[str, Any]:
            merger = table.merge(source, on, source_alias=source_alias,
                                 target_alias=target_alias, merge_schema=self._evolve,
                                 streamed_exec=False)
            for clause, when, values in steps:
                merger = _apply(merger, clause, when, values)
            result: dict[str, Any] = merger.execute()
            return result

        try:
            metrics = spark_table._run("merge", run)
        except SinkError as exc:
            if "multiple source rows" in str(exc):
                raise SinkError(
                    f"DeltaTable.merge into {spark_table._target.root}: a target row matched "
                    "more than one source row (Delta's rule: each target row may be changed "
                    "by one source row at most; deduplicate the source); nothing was written",
                    target=spark_table._target.root) from exc
            raise
        updated = int(metrics.get("num_target_rows_updated", 0))
        deleted = int(metrics.get("num_target_rows_deleted", 0))
        inserted = int(metrics.get("num_target_rows_inserted", 0))
        return self._table._spark.createDataFrame(
            [(updated + deleted + inserted, updated, deleted, inserted)],
            "num_affected_rows long, num_updated_rows long, num_deleted_rows long, "
            "num_inserted_rows long")


def _target_column(name: str, alias: str) -> str:
    """A target column named in ``set``/``values``, with a ``t.`` prefix dropped."""
    text = name.strip()
    if text.startswith(alias + "."):
        text = text[len(alias) + 1:]
    return text.strip("`")


def _apply(merger: Any, clause: _Clause, when: str | None,
           values: dict[str, str] | None) -> Any:
    if clause.group == "matched":
        if clause.action == "update":
            return merger.when_matched_update(values, predicate=when)
        if clause.action == "update_all":
            return merger.when_matched_update_all(predicate=when)
        return merger.when_matched_delete(predicate=when)
    if clause.group == "not_matched":
        if clause.action == "insert":
            return merger.when_not_matched_insert(values, predicate=when)
        return merger.when_not_matched_insert_all(predicate=when)
    if clause.action == "update":
        return merger.when_not_matched_by_source_update(values, predicate=when)
    return merger.when_not_matched_by_source_delete(predicate=when)


def _frame_for_merge(table: DeltaTable, source: DataFrame) -> tuple[DataFrame, str, str]:
    """The frame merge expressions resolve against (the table's schema aliased as the target,
    crossed with the source), with the target's and the source's alias."""
    target_alias = table._alias or "target"
    source_alias = frame_alias(source) or "source"
    if target_alias == source_alias:
        raise ConfigError(f"DeltaTable.merge: the table and the source have the same alias "
                          f"{target_alias!r}; alias them differently")
    frame = table._empty_frame(target_alias).crossJoin(
        source.limit(0).alias(source_alias))
    return frame, target_alias, source_alias
