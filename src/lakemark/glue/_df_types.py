"""Glue/Hive type names (``string``, ``bigint``, ``decimal(10,2)``, ``array<int>`` …) to Spark
types and back, and the cast DynamicFrame transforms apply.

Casts never fail a job: a value that does not convert becomes null (Spark's ``try_cast``), as
Glue's ApplyMapping/ResolveChoice leave unconvertible values empty. The bare names ``array``,
``struct`` and ``map`` mean "keep the source's own type" (Glue's mappings name only the kind).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import UnsupportedError
from ._type_names import glue_type_name

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType

__all__ = ["parse_glue_type", "glue_type_name", "cast_to", "GENERIC_KINDS"]

#: Type names that only say which kind of value a field holds; a mapping to one never casts.
GENERIC_KINDS = frozenset({"array", "struct", "map", "object", "choice"})

_DECIMAL = re.compile(r"^decimal\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")
_CHAR = re.compile(r"^(?:var)?char\s*\(\s*\d+\s*\)$")


def _simple() -> dict[str, DataType]:
    from pyspark.sql import types as T

    return {
        "string": T.StringType(), "varchar": T.StringType(), "char": T.StringType(),
        "int": T.IntegerType(), "integer": T.IntegerType(),
        "long": T.LongType(), "bigint": T.LongType(),
        "short": T.ShortType(), "smallint": T.ShortType(),
        "byte": T.ByteType(), "tinyint": T.ByteType(),
        "float": T.FloatType(), "real": T.FloatType(), "double": T.DoubleType(),
        "boolean": T.BooleanType(), "bool": T.BooleanType(),
        "date": T.DateType(), "timestamp": T.TimestampType(),
        "timestamp_ntz": T.TimestampNTZType(),
        "binary": T.BinaryType(),
        "decimal": T.DecimalType(10, 0),
        "null": T.NullType(), "void": T.NullType(),
    }


def parse_glue_type(name: str) -> DataType | None:
    """The Spark type a Glue type name stands for; None for a generic kind (keep the source
    type). UnsupportedError, naming it, for a name lakemark does not know."""
    from pyspark.sql import types as T

    if not isinstance(name, str) or not name.strip():
        raise UnsupportedError(f"type {name!r} is not a Glue type name")
    key = name.strip().lower()
    if key in GENERIC_KINDS:
        return None
    simple = _simple()
    if key in simple:
        return simple[key]
    m = _DECIMAL.match(key)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2) or 0)
        if not 0 < precision <= 38 or scale > precision:
            raise UnsupportedError(f"type {name!r}: decimal precision must be 1..38 and "
                                   "scale at most the precision")
        return T.DecimalType(precision, scale)
    if _CHAR.match(key):
        return T.StringType()
    if "<" in key:
        try:
            return T.DataType.fromDDL(name.strip())
        except Exception as exc:  # Spark's parse error
            raise UnsupportedError(f"type {name!r} is not a type lakemark can parse: "
                                   f"{str(exc).splitlines()[0]}") from None
    known = ", ".join(sorted(set(simple) | GENERIC_KINDS))
    raise UnsupportedError(f"Glue type {name!r} is not supported (known: {known}, "
                           "decimal(p,s), and array<…>/struct<…>/map<…,…>)")


def cast_to(col: Column, source: DataType, target: DataType | None) -> Column:
    """``col`` converted to ``target`` (unchanged when it already is, or ``target`` is None);
    values that do not convert become null. A choice (``_choicetype``) casts the member each
    record holds."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import NullType

    from ._choicetype import is_choice, members

    if target is None or source == target:
        return col
    if is_choice(source):  # each record holds one member: cast that one
        return F.coalesce(*[cast_to(col.getField(_member(name)), t, target)
                            for name, t in members(source)])
    if isinstance(target, NullType):
        return F.lit(None)
    return col.try_cast(target)


def _member(name: str) -> str:
    from ._choicetype import PREFIX

    return PREFIX + name
