"""Glue's choice type (a field whose records hold values of more than one type) inside Spark.

A DynamicFrame field that is a ``long`` in some records and a ``string`` in others has Glue type
``choice(long, string)``. Spark has no such type, so lakemark stores a choice as a struct with
one field per member type, named ``__choice__:<glue type name>``; in each record exactly the
member of that record's type is set (all are null for a null value). The marked names make a
choice recognisable from its ``DataType`` alone, through every select and nested rewrite.

* ``resolveChoice`` turns a choice into ordinary columns (see ``_choice``).
* ``toDF()`` and every sink see it as Glue's ``toDF`` gives it: a plain struct whose fields are
  named by type (``struct<long:bigint,string:string>``), see :func:`plain_column`.
* ``printSchema`` shows it the way Glue does (``choice`` with its member types beneath).

Member order is fixed (numbers, then boolean, date/time, string, then the rest) so that a choice
built from the same types always has the same schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._type_names import glue_type_name

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType, StructType

__all__ = ["PREFIX", "is_choice", "has_choice", "members", "choice_type", "member_name",
           "plain_type", "plain_column", "choice_paths", "glue_tree"]

#: Prefix of a choice struct's member field names.
PREFIX = "__choice__:"

_ORDER = ("byte", "short", "int", "long", "float", "double", "decimal", "boolean", "date",
          "timestamp", "string", "binary", "struct", "array", "map")


def member_name(dtype: DataType) -> str:
    """The field name of the member of type ``dtype`` in a choice struct."""
    return PREFIX + glue_type_name(dtype)


def is_choice(dtype: DataType) -> bool:
    """Whether ``dtype`` is a lakemark choice struct."""
    from pyspark.sql.types import StructType

    return (isinstance(dtype, StructType) and len(dtype.fields) > 0
            and all(f.name.startswith(PREFIX) for f in dtype.fields))


def has_choice(dtype: DataType) -> bool:
    """Whether a choice occurs anywhere in ``dtype``."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if is_choice(dtype):
        return True
    if isinstance(dtype, StructType):
        return any(has_choice(f.dataType) for f in dtype.fields)
    if isinstance(dtype, ArrayType):
        return has_choice(dtype.elementType)
    if isinstance(dtype, MapType):
        return has_choice(dtype.valueType)
    return False


def members(dtype: DataType) -> list[tuple[str, DataType]]:
    """``(glue type name, Spark type)`` of each member of a choice, in order."""
    if not is_choice(dtype):
        return []
    fields = dtype.fields  # type: ignore[attr-defined]
    return [(f.name[len(PREFIX):], f.dataType) for f in fields]


def _rank(dtype: DataType) -> tuple[int, str]:
    name = glue_type_name(dtype)
    return (_ORDER.index(name) if name in _ORDER else len(_ORDER), name)


def choice_type(types: Sequence[DataType]) -> StructType:
    """The choice of ``types`` (two types with one Glue name count once: the first is kept)."""
    from pyspark.sql.types import StructField, StructType

    seen: dict[str, DataType] = {}
    for t in types:
        for _name, inner in (members(t) if is_choice(t) else [(glue_type_name(t), t)]):
            seen.setdefault(glue_type_name(inner), inner)
    ordered = sorted(seen.values(), key=_rank)
    return StructType([StructField(member_name(t), t, True) for t in ordered])


def plain_type(dtype: DataType) -> DataType:
    """``dtype`` with every choice as a struct of fields named by type (Glue's ``toDF``)."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if is_choice(dtype):
        return StructType([StructField(n, plain_type(t), True) for n, t in members(dtype)])
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, plain_type(f.dataType), f.nullable, f.metadata)
                           for f in dtype.fields])
    if isinstance(dtype, ArrayType):
        return ArrayType(plain_type(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, MapType):
        return MapType(dtype.keyType, plain_type(dtype.valueType), dtype.valueContainsNull)
    return dtype


def plain_column(col: Column, dtype: DataType) -> Column:
    """``col`` (of type ``dtype``) with every choice made a plain struct; ``col`` itself when
    ``dtype`` holds no choice."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    if not has_choice(dtype):
        return col
    if is_choice(dtype):
        parts = [plain_column(col.getField(PREFIX + n), t).alias(n) for n, t in members(dtype)]
        return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))
    if isinstance(dtype, StructType):
        parts = [plain_column(col.getField(f.name), f.dataType).alias(f.name)
                 for f in dtype.fields]
        return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))
    if isinstance(dtype, ArrayType):
        elem = dtype.elementType
        return F.transform(col, lambda e: plain_column(e, elem))
    assert isinstance(dtype, MapType)
    value = dtype.valueType
    return F.transform_values(col, lambda _k, v: plain_column(v, value))


def choice_paths(dtype: StructType, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Resolved paths (``_fieldpaths`` segments, ``ELEM`` for array elements) of every choice
    field, outermost first."""
    from pyspark.sql.types import ArrayType, StructType

    from ._fieldpaths import ELEM

    out: list[tuple[str, ...]] = []
    for f in dtype.fields:
        if is_choice(f.dataType):
            out.append(prefix + (f.name,))
            continue
        t: DataType = f.dataType
        steps: tuple[str, ...] = (f.name,)
        while isinstance(t, ArrayType):
            t, steps = t.elementType, steps + (ELEM,)
        if is_choice(t):  # the elements of an array are the choice (``a[]``)
            out.append(prefix + steps)
        elif isinstance(t, StructType):
            out.extend(choice_paths(t, prefix + steps))
    return out


def glue_tree(schema: StructType) -> str:
    """The schema as Glue's ``printSchema`` prints it (``|-- name: type``, nested beneath)."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    lines = ["root"]

    def walk(dtype: DataType, depth: int, name: str) -> None:
        pad = "|    " * depth + "|-- "
        if is_choice(dtype):
            lines.append(f"{pad}{name}: choice")
            for _n, t in members(dtype):
                lines.append("|    " * (depth + 1) + "|-- " + glue_type_name(t))
            return
        lines.append(f"{pad}{name}: {glue_type_name(dtype)}")
        if isinstance(dtype, StructType):
            for f in dtype.fields:
                walk(f.dataType, depth + 1, f.name)
        elif isinstance(dtype, ArrayType):
            walk(dtype.elementType, depth + 1, "element")
        elif isinstance(dtype, MapType):
            walk(dtype.valueType, depth + 1, "value")

    for f in schema.fields:
        walk(f.dataType, 0, f.name)
    return "\n".join(lines)
