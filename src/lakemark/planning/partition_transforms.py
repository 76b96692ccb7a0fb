"""Iceberg partition fields as users write them: ``ts``, ``days(ts)``, ``truncate(4, name)``.

A write's ``partition_by`` (``job.write``, ``--partition-by``, ``partitionBy``,
``writeTo(…).partitionedBy(days("ts"))``) names each partition field of a new Iceberg table in
Spark SQL's spelling: a column name is an identity partition; ``years(c)``, ``months(c)``,
``days(c)``, ``hours(c)`` (or Iceberg's singular ``year``/``month``/``day``/``hour``, and
``date``/``date_hour``) are time transforms; ``truncate(W, c)`` keeps the first ``W``
characters of a string (bytes of a binary) or rounds an integer down to a multiple of ``W``
(a decimal's unscaled value: ``truncate(50, c)`` makes 10.65 10.50); ``bucket(N, c)`` is
recognised so that it can be refused by name.

Pure Python (no Spark, no pyiceberg), so the parsing and the type rules are unit-tested without
a JVM; :mod:`lakemark.sinks._iceberg_partition` binds them to Spark and pyiceberg.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["PartitionField", "parse_partition_field", "parse_partition_fields",
           "check_partition_types", "TIME_TRANSFORMS"]

#: Accepted spellings → the transform's name (Iceberg's singular form).
_NAMES = {
    "identity": "identity",
    "years": "year", "year": "year",
    "months": "month", "month": "month",
    "days": "day", "day": "day", "date": "day",
    "hours": "hour", "hour": "hour", "date_hour": "hour",
    "truncate": "truncate",
    "bucket": "bucket",
}
TIME_TRANSFORMS = ("year", "month", "day", "hour")
_WITH_WIDTH = ("truncate", "bucket")

#: Spark types (``DataType.simpleString()``) each transform accepts: Iceberg's rules for the
#: types Spark and Iceberg share (``decimal`` is every ``decimal(P,S)``); no bucket yet.
_TYPES: Mapping[str, tuple[str, ...]] = {
    "year": ("date", "timestamp", "timestamp_ntz"),
    "month": ("date", "timestamp", "timestamp_ntz"),
    "day": ("date", "timestamp", "timestamp_ntz"),
    "hour": ("timestamp", "timestamp_ntz"),
    "truncate": ("int", "bigint", "decimal", "string", "binary"),
}
_NESTED = ("struct<", "array<", "map<")

_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)


@dataclass(frozen=True)
class PartitionField:
    """One partition field: ``transform`` (``identity``, ``year``, ``month``, ``day``,
    ``hour``, ``truncate``, ``bucket``) of ``column``; ``width`` for truncate and bucket."""

    transform: str
    column: str
    width: int | None = None

    def text(self) -> str:
        """How a user writes it: ``ts``, ``days(ts)``, ``truncate(4, name)``."""
        if self.transform == "identity":
            return self.column
        if self.width is not None:
            return f"{self.transform}({self.width}, {self.column})"
        return f"{self.transform}s({self.column})"


def _column(text: str, item: str, where: str) -> str:
    name = text.strip()
    if len(name) >= 2 and name[0] == name[-1] == "`":
        name = name[1:-1].replace("``", "`")
    elif len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1]
    if not name or any(c in name for c in "(),"):
        raise ConfigError(f"{where}: {item!r} does not name a column")
    return name


def parse_partition_field(item: str, where: str = "partition_by") -> PartitionField:
    """``item`` as a :class:`PartitionField`; a ConfigError naming ``item`` and ``where``
    (the option or argument it came from) if it is not a column or a known transform."""
    if not isinstance(item, str) or not item.strip():
        raise ConfigError(f"{where} must name columns or transforms, got {item!r}")
    call = _CALL.match(item)
    if call is None:
        if "(" in item or ")" in item:
            raise ConfigError(f"{where}: {item!r} is not a column or a partition transform "
                              "(years(c), months(c), days(c), hours(c), truncate(W, c))")
        return PartitionField("identity", _column(item, item, where))
    word, inner = call.group(1), call.group(2)
    transform = _NAMES.get(word.lower())
    if transform is None:
        raise ConfigError(f"{where}: unknown partition transform {word!r} in {item!r} "
                          "(known: years, months, days, hours, truncate, identity)")
    args = [a for a in inner.split(",")]
    if transform in _WITH_WIDTH:
        if len(args) != 2:
            raise ConfigError(f"{where}: {item!r} needs a width and a column, as in "
                              f"{transform}(16, id)")
        width_text, column_text = args
        try:
            width = int(width_text.strip())
        except ValueError:
            # Spark's partitioning.bucket(n, col) prints "bucket(n, col)"; also allow (col, n).
            width_text, column_text = column_text, width_text
            try:
                width = int(width_text.strip())
            except ValueError:
                raise ConfigError(f"{where}: {item!r} needs an integer width") from None
        if width <= 0:
            raise ConfigError(f"{where}: the width of {item!r} must be positive")
        return PartitionField(transform, _column(column_text, item, where), width)
    if len(args) != 1:
        raise ConfigError(f"{where}: {item!r} takes one column, as in {word}(ts)")
    return PartitionField(transform, _column(args[0], item, where))


def parse_partition_fields(items: Iterable[str], where: str = "partition_by",
                           ) -> list[PartitionField]:
    """Every item parsed; a field given twice is a ConfigError."""
    fields = [parse_partition_field(i, where) for i in items]
    seen: set[PartitionField] = set()
    for f in fields:
        if f in seen:
            raise ConfigError(f"{where} names {f.text()} twice")
        seen.add(f)
    return fields


def check_partition_types(fields: Sequence[PartitionField], types: Mapping[str, str],
                          table: str) -> None:
    """Each field's column exists in ``types`` (column → Spark ``simpleString``) and has a type
    its transform accepts; else a ConfigError naming the field, the column and its type.
    ``bucket`` is refused (lakemark cannot compute Iceberg's bucket hash in Spark yet)."""
    for f in fields:
        if f.column not in types:
            raise ConfigError(f"partition field {f.text()} of Iceberg table {table}: column "
                              f"{f.column!r} is not in the DataFrame (columns: "
                              f"{', '.join(types)})")
        kind = types[f.column]
        if f.transform == "bucket":
            raise ConfigError(f"partition field {f.text()} of Iceberg table {table}: bucket "
                              "partitions are not supported yet (identity, years, months, days, "
                              "hours and truncate are)")
        if f.transform == "identity":
            if kind.startswith(_NESTED):
                raise ConfigError(f"partition field {f.text()} of Iceberg table {table}: "
                                  f"column {f.column!r} is {kind}; a partition column must "
                                  "be of a primitive type")
            continue
        allowed = _TYPES[f.transform]
        if (kind.split("(", 1)[0] if kind.startswith("decimal(") else kind) not in allowed:
            raise ConfigError(f"partition field {f.text()} of Iceberg table {table}: column "
                              f"{f.column!r} is {kind}, but {f.transform} needs "
                              f"{' or '.join(allowed)}")
