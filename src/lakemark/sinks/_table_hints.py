"""Schema hints taken from a Delta target, for its source's first tracked run.

A job whose source was read untracked before (an earlier lakemark, ``--schema-evolution off``)
or whose tracked schema was reset writes into a table that already has types. Its first
tracked run infers the schema from its own files alone and may infer another type than the
table's (``code`` string where the table has ``long``), which the sink refuses. Starting the
tracked schema from the table's types instead makes such values misfits, rescued in
``_rescued_data``, and the run goes through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..planning.schema_field import name_key
from ..planning.schema_hints import parse_hints
from ._location import open_delta, resolve_target

__all__ = ["target_hints"]

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _plain_names(data_type: Any) -> bool:
    """Whether every field name inside ``data_type`` can be written bare in a type's text."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, StructType):
        return all(_PLAIN.fullmatch(f.name) and _plain_names(f.dataType)
                   for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _plain_names(data_type.elementType)
    if isinstance(data_type, MapType):
        return _plain_names(data_type.keyType) and _plain_names(data_type.valueType)
    return True


def _atomic(data_type: Any) -> bool:
    from pyspark.sql.types import ArrayType, MapType, StructType

    return not isinstance(data_type, (StructType, ArrayType, MapType))


def target_hints(target: str, *, source_format: str, skip: Sequence[str],
                 hints: str | None) -> str | None:
    """``hints`` with, for each column of the Delta table at ``target`` that they do not name,
    a hint of the table's type (None or ``hints`` unchanged when there is no table).

    Left out: partition columns, the names in ``skip`` (the rescued-data column), types whose
    text cannot be written as a hint (a nested field name that needs quoting), and for a CSV
    source every type that is not atomic (CSV has no nesting).
    """
    from pyspark.sql.types import StructType

    table = open_delta(resolve_target(target))
    if table is None:
        return hints
    schema = StructType.fromJson(json.loads(table.schema().to_json()))
    partitions = set(table.metadata().partition_columns)
    named = {name_key(h.path[0]) for h in parse_hints(hints)} if hints else set()
    skipped = {name_key(s) for s in skip}
    entries = []
    for f in schema.fields:
        key = name_key(f.name)
        if f.name in partitions or key in skipped or key in named:
            continue
        if not _plain_names(f.dataType) or (source_format == "csv" and not _atomic(f.dataType)):
            continue
        entries.append("`" + f.name.replace("`", "``") + "` " + f.dataType.simpleString())
    if hints:
        entries.insert(0, hints)
    return ", ".join(entries) or None
