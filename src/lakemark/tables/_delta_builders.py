"""Delta's builders: ``DeltaTable.create*(spark)...execute()`` and ``optimize()...``.

* :class:`DeltaTableBuilder` creates (``create``, ``createIfNotExists``), replaces
  (``createOrReplace``, ``replace``) a table with deltalake from ``addColumn(s)``,
  ``partitionedBy``, ``property`` and ``comment``, at ``location`` or -- for a
  ``tableName`` alone -- where :func:`~._delta_api.table_location` finds or would put it
  (the lakemark catalog, Spark's catalog, else Spark's warehouse folder). A name created here
  is remembered for ``DeltaTable.forName`` in the same process; it is not added to any catalog.
* :class:`DeltaOptimizeBuilder` compacts small files (``executeCompaction``) or Z-orders
  (``executeZOrderBy``) with deltalake's optimizer, optionally only in the partitions a
  ``where`` predicate selects (conjunctions of ``column op literal`` on partition columns).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError
from ._delta_names import NamesMissing, remember_name, resolve_path, table_location, unsupported

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructField

    from ._delta_api import DeltaTable

__all__ = ["DeltaOptimizeBuilder", "DeltaTableBuilder", "partition_filters"]

_TERM = re.compile(
    r"""^\s*`?(?P<col>[A-Za-z_][A-Za-z0-9_]*)`?\s*
        (?:(?P<op>==|=|!=|<>|<=|>=|<|>)\s*(?P<value>'(?:[^']|'')*'|"[^"]*"|[-+0-9.eE]+)
          |(?P<neg>NOT\s+)?IN\s*\((?P<values>[^)]*)\))\s*$""",
    re.IGNORECASE | re.VERBOSE)
_LITERAL = re.compile(r"""\s*('(?:[^']|'')*'|"[^"]*"|[-+0-9.eE]+)\s*(?:,|$)""")


def _literal(text: str) -> str:
    text = text.strip()
    if text[:1] == "'":
        return text[1:-1].replace("''", "'")
    if text[:1] == '"':
        return text[1:-1]
    return text


def partition_filters(predicate: str, partitions: Sequence[str]) -> list[tuple[str, str, Any]]:
    """``optimize().where(...)``'s predicate as deltalake partition filters. ConfigError when
    it is not a conjunction of ``column op literal`` / ``column [NOT] IN (...)`` over the
    partition columns ``partitions``."""
    out: list[tuple[str, str, Any]] = []
    for term in re.split(r"\s+AND\s+", predicate.strip(), flags=re.IGNORECASE):
        match = _TERM.match(term)
        if match is None:
            raise ConfigError(f"DeltaTable.optimize().where({predicate!r}): lakemark takes "
                              "conditions of the form column = 'value' (also !=, <, <=, >, "
                              ">=, IN (...)) joined by AND")
        column = match["col"]
        if column not in partitions:
            raise ConfigError(f"DeltaTable.optimize().where: {column!r} is not a partition "
                              f"column (partition columns: {', '.join(partitions) or 'none'})")
        if match["op"]:
            op = {"==": "=", "<>": "!="}.get(match["op"], match["op"])
            out.append((column, op, _literal(match["value"])))
        else:
            values = [_literal(m.group(1)) for m in _LITERAL.finditer(match["values"])]
            out.append((column, "not in" if match["neg"] else "in", values))
    return out


class DeltaOptimizeBuilder(metaclass=NamesMissing):
    """Returned by ``DeltaTable.optimize()``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"DeltaOptimizeBuilder.{name}")

    def __init__(self, table: DeltaTable) -> None:
        self._table = table
        self._where: str | None = None

    def where(self, partitionFilter: str) -> DeltaOptimizeBuilder:  # noqa: N803 - Delta's name
        """Only optimize the partitions ``partitionFilter`` selects."""
        if not isinstance(partitionFilter, str) or not partitionFilter.strip():
            raise ConfigError("DeltaTable.optimize().where needs a partition predicate string")
        self._where = partitionFilter
        return self

    def _filters(self) -> list[tuple[str, str, Any]] | None:
        if self._where is None:
            return None
        parts = list(self._table._table().metadata().partition_columns)
        return partition_filters(self._where, parts)

    def executeCompaction(self) -> DataFrame:  # noqa: N802
        """Rewrite small files into larger ones (one commit); Delta's result columns."""
        filters = self._filters()
        metrics = self._table._run("optimize", lambda t: t.optimize.compact(
            partition_filters=filters))
        return self._result(metrics)

    def executeZOrderBy(self, *cols: str | Sequence[str]) -> DataFrame:  # noqa: N802
        """Rewrite files ordered along a Z-order curve of ``cols``."""
        names: list[str] = []
        for col in cols:
            names.extend([col] if isinstance(col, str) else list(col))
        if not names:
            raise ConfigError("DeltaTable.optimize().executeZOrderBy needs column names")
        filters = self._filters()
        metrics = self._table._run("optimize", lambda t: t.optimize.z_order(
            names, partition_filters=filters))
        return self._result(metrics)

    def _result(self, metrics: dict[str, Any]) -> DataFrame:
        def num(key: str) -> int:
            value = metrics.get(key)
            return int(value) if isinstance(value, int | float) else 0

        row = (self._table._target.root, (
            num("numFilesAdded"), num("numFilesRemoved"), num("partitionsOptimized"),
            num("numBatches"), num("totalConsideredFiles"), num("totalFilesSkipped"),
            bool(metrics.get("preserveInsertionOrder", True))))
        return self._table._spark.createDataFrame([row], (
            "path string, metrics struct<numFilesAdded:long,numFilesRemoved:long,"
            "partitionsOptimized:long,numBatches:long,totalConsideredFiles:long,"
            "totalFilesSkipped:long,preserveInsertionOrder:boolean>"))


class DeltaTableBuilder(metaclass=NamesMissing):
    """Returned by ``DeltaTable.create/createIfNotExists/createOrReplace/replace(spark)``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"DeltaTableBuilder.{name}")

    def __init__(self, spark: SparkSession, mode: str,
                 open_table: Callable[[SparkSession, str], DeltaTable]) -> None:
        """``open_table``: ``DeltaTable.forPath``, passed in by ``DeltaTable.create*`` (this
        module sits below ``_delta_api`` and does not import it back)."""
        self._spark = spark
        self._mode = mode
        self._open_table = open_table
        self._name: str | None = None
        self._location: str | None = None
        self._comment: str | None = None
        self._fields: list[StructField] = []
        self._partitions: list[str] = []
        self._properties: dict[str, str] = {}

    def tableName(self, identifier: str) -> DeltaTableBuilder:  # noqa: N802
        self._name = identifier
        return self

    def location(self, location: str) -> DeltaTableBuilder:
        self._location = location
        return self

    def comment(self, comment: str) -> DeltaTableBuilder:
        self._comment = comment
        return self

    def property(self, key: str, value: str) -> DeltaTableBuilder:
        self._properties[str(key)] = str(value)
        return self

    def addColumn(self, colName: str, dataType: str | DataType,  # noqa: N802, N803
                  nullable: bool = True, generatedAlwaysAs: str | None = None,  # noqa: N803
                  comment: str | None = None, **kwargs: Any) -> DeltaTableBuilder:
        """Add a column; ``dataType`` a Spark type or its SQL name (``"INT"``)."""
        from pyspark.sql.types import DataType, StructField, _parse_datatype_string

        if generatedAlwaysAs is not None or kwargs:
            what = "generatedAlwaysAs" if generatedAlwaysAs is not None else ", ".join(kwargs)
            raise unsupported(f"DeltaTableBuilder.addColumn({what}=...)",
                              "generated and identity columns are not")
        kind = dataType if isinstance(dataType, DataType) else _parse_datatype_string(
            str(dataType))
        meta = {"comment": comment} if comment else None
        self._fields.append(StructField(colName, kind, nullable, meta))
        return self

    def addColumns(self, cols: Any) -> DeltaTableBuilder:  # noqa: N802
        """Add the fields of a StructType (or a list of StructFields)."""
        from pyspark.sql.types import StructField, StructType

        fields = cols.fields if isinstance(cols, StructType) else list(cols)
        for field in fields:
            if not isinstance(field, StructField):
                raise ConfigError("DeltaTableBuilder.addColumns takes a StructType or a list of "
                                  f"StructField, got {type(field).__name__}")
            self._fields.append(field)
        return self

    def partitionedBy(self, *cols: str | Sequence[str]) -> DeltaTableBuilder:  # noqa: N802
        for col in cols:
            self._partitions.extend([col] if isinstance(col, str) else list(col))
        return self

    def clusterBy(self, *cols: str) -> DeltaTableBuilder:  # noqa: N802
        raise unsupported("DeltaTableBuilder.clusterBy", "liquid clustering is not")

    def execute(self) -> DeltaTable:
        """Create (or replace) the table; the :class:`DeltaTable` for it."""
        from deltalake import CommitProperties
        from deltalake import DeltaTable as RsTable
        from pyspark.sql.types import StructType

        from ..planning.delta_history import record

        from ..sinks._location import open_delta
        from ..sinks._schema import arrow_schema
        method = f"DeltaTable.{self._mode}"
        if self._location is None and self._name is None:
            raise ConfigError(f"{method}: give tableName(...) or location(...)")
        path = self._location or table_location(self._spark, str(self._name), must_exist=False)
        assert path is not None
        target = resolve_path(path)
        exists = open_delta(target) is not None
        if exists and self._mode == "create":
            raise SinkError(f"{method}: a Delta table already exists at {target.root}",
                            target=target.root)
        if not exists and self._mode == "replace":
            raise SinkError(f"{method}: there is no Delta table at {target.root} to replace",
                            target=target.root)
        if not (exists and self._mode == "createIfNotExists"):
            if not self._fields:
                raise ConfigError(f"{method}: the table needs columns (addColumn/addColumns)")
            names = [f.name for f in self._fields]
            missing = [p for p in self._partitions if p not in names]
            if missing:
                raise ConfigError(f"{method}: partition column(s) {', '.join(missing)} are not "
                                  f"columns of the table ({', '.join(names)})")
            schema = arrow_schema(StructType(self._fields), target=target.root)
            # Delta on Spark's operation name: deltalake would record CREATE OR REPLACE
            # TABLE for replace() too
            operation = {"replace": "REPLACE TABLE",
                         "createOrReplace": "CREATE OR REPLACE TABLE"}.get(self._mode,
                                                                           "CREATE TABLE")
            info = record(operation, {
                "isManaged": "false", "description": self._comment,
                "partitionBy": json.dumps(list(self._partitions)),
                "properties": json.dumps(dict(self._properties or {}))})
            try:
                RsTable.create(
                    target.delta_uri, schema, mode="overwrite" if exists else "error",
                    partition_by=self._partitions or None, name=self._name,
                    description=self._comment, configuration=self._properties or None,
                    storage_options=target.storage_options(),
                    commit_properties=CommitProperties(custom_metadata=info))
            except Exception as exc:  # deltalake's DeltaError and object-store errors
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise SinkError(f"{method} at {target.root} failed: {first}",
                                target=target.root) from exc
        if self._name is not None:
            remember_name(self._name, path)
        return self._open_table(self._spark, path)
