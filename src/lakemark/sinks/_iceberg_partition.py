"""Partition fields of Iceberg targets, bound to Spark (the folders) and pyiceberg (the spec).

A new table's ``partition_by`` (parsed by :mod:`lakemark.planning.partition_transforms`)
becomes its partition spec; an existing table's spec is read back into the same fields. To
write, each field gets a folder column that Spark partitions by (``ts_day=2024-05-01``), so
every data file holds exactly one value of every partition field; pyiceberg's ``add_files``
then derives each file's partition tuple from the source column's min and max, which
therefore agree (the transforms are monotonic). The source columns stay in the files, as
Iceberg data files carry them.

The folder values are computed as Iceberg defines the transforms: on ``timestamp`` (Iceberg
``timestamptz``) from the UTC instant (``unix_micros``), never the session time zone; on
``timestamp_ntz`` and ``date`` from the wall-clock value.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SinkError
from ..planning.partition_transforms import (
    PartitionField,
    check_partition_types,
    parse_partition_fields,
)

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.update.spec import UpdateSpec
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

__all__ = ["fields_of_table", "check_partition_schema", "with_partition_folders",
           "add_to_spec", "parse_partition_fields"]

_DAY = 86_400_000_000
_HOUR = 3_600_000_000


def check_partition_schema(partition_by: Sequence[str], schema: StructType,
                           table: str) -> list[PartitionField]:
    """``partition_by`` parsed and checked against the DataFrame's schema (ConfigError naming
    the field, column and type), before anything is recorded or written."""
    fields = parse_partition_fields(partition_by)
    check_partition_types(fields, {f.name: f.dataType.simpleString() for f in schema.fields},
                          table)
    return fields


def fields_of_table(table: Table, name: str) -> list[PartitionField]:
    """The current partition spec of ``table`` as fields; a transform lakemark cannot write
    (bucket, void, …) is a SinkError naming it."""
    from pyiceberg.transforms import (
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    schema = table.schema()
    simple = {IdentityTransform: "identity", YearTransform: "year", MonthTransform: "month",
              DayTransform: "day", HourTransform: "hour"}
    out: list[PartitionField] = []
    for f in table.spec().fields:
        column = str(schema.find_column_name(f.source_id))
        kind = simple.get(type(f.transform))
        if kind is not None:
            out.append(PartitionField(kind, column))
        elif isinstance(f.transform, TruncateTransform):
            out.append(PartitionField("truncate", column, f.transform.width))
        else:
            raise SinkError(f"Iceberg table {name} is partitioned by {f.transform}({column}): "
                            "lakemark writes identity, year, month, day, hour and truncate "
                            "partitions only", target=name)
    return out


def add_to_spec(spec: UpdateSpec, fields: Sequence[PartitionField]) -> None:
    """Add ``fields`` to a new table's spec (pyiceberg's default field names: ``ts_day`` …)."""
    from pyiceberg.transforms import (
        DayTransform,
        HourTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    time = {"year": YearTransform, "month": MonthTransform, "day": DayTransform,
            "hour": HourTransform}
    for f in fields:
        if f.transform == "identity":
            spec.add_identity(f.column)
        elif f.transform in time:
            spec.add_field(f.column, time[f.transform]())
        elif f.transform == "truncate" and f.width is not None:
            spec.add_field(f.column, TruncateTransform(f.width))
        else:  # parse and type checks refuse it first
            raise ConfigError(f"partition field {f.text()} cannot be written by lakemark")


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _days(c: str, kind: str) -> str:
    """SQL for the days since 1970-01-01 of column ``c`` (Iceberg's day transform)."""
    if kind == "timestamp":
        micros = f"unix_micros({c})"
        return f"(({micros} - pmod({micros}, {_DAY})) div {_DAY})"
    if kind == "timestamp_ntz":
        return f"unix_date(to_date({c}))"
    return f"unix_date({c})"


def _folder_sql(f: PartitionField, kind: str) -> str:
    """SQL for the folder value of ``f``: one value per Iceberg partition value, readable
    (``2024-05-01``, ``2024-05``, ``2024-05-01-13``, ``2024``; a binary's bytes in hex)."""
    c = _quoted(f.column)
    if kind == "binary":  # lower-case hex: a folder name holds no raw bytes
        return f"lower(hex({c if f.transform == 'identity' else f'substring({c}, 1, {f.width})'}))"
    if f.transform == "identity":
        return c
    if f.transform == "truncate":
        if kind == "string":
            return f"substring({c}, 1, {f.width})"
        if kind.startswith("decimal("):  # the width counts units of the last digit
            scale = int(kind.rstrip(")").split(",")[1])
            unit = format(Decimal(int(f.width or 1)).scaleb(-scale), "f")
            return f"cast({c} - pmod({c}, {unit}BD) as {kind})"
        return f"({c} - pmod({c}, {f.width}))"
    date = f"date_from_unix_date({_days(c, kind)})"
    if f.transform == "day":
        return date
    if f.transform == "year":
        return f"year({date})"
    if f.transform == "month":
        return f"concat(year({date}), '-', lpad(cast(month({date}) as string), 2, '0'))"
    if kind == "timestamp":
        micros = f"unix_micros({c})"
        hour = f"pmod(({micros} - pmod({micros}, {_HOUR})) div {_HOUR}, 24)"
    else:
        hour = f"hour({c})"
    return f"concat(cast({date} as string), '-', lpad(cast({hour} as string), 2, '0'))"


def with_partition_folders(df: DataFrame, fields: Sequence[PartitionField],
                           ) -> tuple[DataFrame, list[str]]:
    """``df`` with one folder column per field (named ``<column>_part`` for identity,
    ``<column>_<transform>`` otherwise; ``_lakemark_``-prefixed if the frame has that name),
    and their names, in the spec's order."""
    if not fields:
        return df, []
    from pyspark.sql import functions as F

    kinds = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    columns: list[Column] = []
    names: list[str] = []
    for f in fields:
        suffix = "part" if f.transform == "identity" else f.transform
        name = f"{f.column}_{suffix}"
        if name in df.columns or name in names:
            name = f"_lakemark_{name}"
        names.append(name)
        columns.append(F.expr(_folder_sql(f, kinds.get(f.column, ""))).alias(name))
    out: Any = df.select("*", *columns)
    return out, names
