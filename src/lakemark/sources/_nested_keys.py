"""Keys inside a JSON value that its column's type does not name, found natively by Spark.

Spark's JSON reader, given a struct type, drops a key the struct does not name without a
word, at any depth (``address {city}`` reading ``{"city": "x", "zip": "1"}`` keeps
``city`` only). A tracked JSON read must see those keys (:mod:`lakemark.planning.
schema_nested`): :func:`unknown_paths` is a Spark expression over a value's JSON text that
lists them as paths (arrays of names: ``["address", "zip"]``, ``["items", "element", "sku"]``,
``["m", "value", "n"]``), walking the structs of the type, the elements of its arrays and the
values of its maps. Names are compared exactly, as the reader matches them (a key that
differs from a field only in case is not read into it, so it is unknown too).

Only the fields whose types hold structs are walked further, so a value costs a parse per
struct level (``json_object_keys`` for the keys, ``from_json`` to strings for the fields'
texts); a value that is not an object where a struct belongs gives no paths (the reader
makes it a misfit, rescued as such).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType

__all__ = ["PATHS_TYPE", "has_structs", "unknown_paths"]

#: The Spark type of :func:`unknown_paths`' value.
PATHS_TYPE = "array<array<string>>"


def has_structs(data_type: DataType) -> bool:
    """Whether ``data_type`` holds a struct anywhere (as itself, array elements, map values)."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, StructType):
        return True
    if isinstance(data_type, ArrayType):
        return has_structs(data_type.elementType)
    if isinstance(data_type, MapType):
        return has_structs(data_type.valueType)
    return False


def _none() -> Column:
    from pyspark.sql import functions as F

    return F.array().cast(PATHS_TYPE)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def unknown_paths(text: Column, data_type: DataType, prefix: Sequence[str],
                  variants_only: bool = False) -> Column:
    """The paths (``prefix`` + names) of the keys inside the JSON ``text`` that ``data_type``
    does not name, as an ``array<array<string>>`` (empty, never null). ``variants_only``:
    only the keys that differ from a field's name in case or surrounding whitespace."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, ArrayType) and has_structs(data_type.elementType):
        items = F.coalesce(F.from_json(text, "array<string>"), F.array().cast("array<string>"))
        inner = data_type.elementType
        return F.flatten(F.transform(
            items, lambda x: unknown_paths(x, inner, [*prefix, "element"], variants_only)))
    if isinstance(data_type, MapType) and has_structs(data_type.valueType):
        entries = F.coalesce(F.from_json(text, "map<string,string>"),
                             F.create_map().cast("map<string,string>"))
        inner = data_type.valueType
        return F.flatten(F.transform(
            F.map_values(entries),
            lambda x: unknown_paths(x, inner, [*prefix, "value"], variants_only)))
    if not isinstance(data_type, StructType):
        return _none()
    names = [f.name for f in data_type.fields]
    keys = F.coalesce(F.json_object_keys(text), F.array().cast("array<string>"))
    unknown = F.array_except(keys, F.array(*[F.lit(n) for n in names])) if names else keys
    if variants_only:
        lowered = sorted({n.strip().lower() for n in names})
        unknown = (F.filter(unknown, lambda k: F.lower(F.trim(k)).isin(lowered)) if lowered
                   else F.array().cast("array<string>"))
    parts = [F.transform(unknown, lambda k: F.concat(
        F.array(*[F.lit(p) for p in prefix]).cast("array<string>"), F.array(k)))]
    deeper = [f for f in data_type.fields if has_structs(f.dataType)]
    if deeper:
        strings = ", ".join(f"{_quoted(f.name)} string" for f in deeper)
        texts = F.from_json(text, strings)
        parts += [unknown_paths(texts.getField(f.name), f.dataType, [*prefix, f.name],
                                variants_only) for f in deeper]
    return F.concat(*parts) if len(parts) > 1 else parts[0]
