"""Per-record types for JSON read into a DynamicFrame: ``choice(long, string)`` as Glue gives it.

Spark types a JSON field that holds ``10001`` in some records and ``"ABC0"`` in others as
``string`` (the numbers become text); Glue's JSON reader keeps each record's own type and makes
the field a choice, for ``resolveChoice`` to settle. lakemark gets the same by reading the
source a second time with every field Spark typed ``string`` as a Spark ``VARIANT``
(which keeps each JSON value's own type), then looking at the types each field holds (one Spark
job; the first read only inferred the schema, so the input is read once for data):

* JSON integers are ``long``, other numbers ``double`` (a field with both is ``double``),
  ``true``/``false`` are ``boolean``, strings ``string``; JSON ``null`` and a missing field
  are null and have no type;
* a field whose values are all strings (or objects/arrays mixed with strings, which Spark
  gives as JSON text) stays a ``string``, exactly as Spark typed it;
* a field with strings and numbers (or booleans) becomes the choice of those types, each
  record's value kept under its own type (``_choicetype``).

Fields inside structs too (``payload.amount``): the struct is read with its mixed fields as
variants and rebuilt (a null struct stays null). Array elements too, as Glue types them: an
array whose elements differ (``[1, "2"]``, which Spark types ``array<string>``) becomes
``array<choice(long, string)>`` (Glue path ``codes[]``), and so do fields of structs inside
arrays (``items[].qty``), at any depth. JSON objects are structs (Glue's JSON reader makes no
maps), so no choice arises inside a map here. Partition columns (folder names) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

__all__ = ["json_choices"]

# schema_of_variant's names -> the Glue kind a value counts as.
_KIND = {"BIGINT": "long", "INT": "long", "SMALLINT": "long", "TINYINT": "long",
         "DOUBLE": "double", "FLOAT": "double", "BOOLEAN": "boolean", "STRING": "string"}


def _kind_of(type_name: str) -> str | None:
    """The kind of one ``schema_of_variant`` result; None for null, "other" for the rest."""
    if type_name in ("VOID", ""):
        return None
    if type_name.startswith("DECIMAL"):
        return "double"
    return _KIND.get(type_name, "other")


Path = tuple[str, ...]


def _string_paths(dtype: DataType, prefix: Path = ()) -> list[Path]:
    """Paths of the ``string`` values of ``dtype``: fields of structs and elements of arrays
    (``ELEM`` segments), not map values."""
    from pyspark.sql.types import ArrayType, StringType, StructType

    from ._fieldpaths import ELEM

    if isinstance(dtype, StringType):
        return [prefix] if prefix else []
    if isinstance(dtype, ArrayType):
        return _string_paths(dtype.elementType, (*prefix, ELEM))
    if isinstance(dtype, StructType):
        return [p for f in dtype.fields for p in _string_paths(f.dataType, (*prefix, f.name))]
    return []


def _as_variants(dtype: DataType, paths: set[Path], prefix: Path = ()) -> DataType:
    """``dtype`` with the values at ``paths`` (relative to ``prefix``) typed ``VARIANT``."""
    from pyspark.sql.types import ArrayType, StructField, StructType, VariantType

    from ._fieldpaths import ELEM

    if prefix in paths:
        return VariantType()
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, _as_variants(f.dataType, paths, (*prefix, f.name)),
                                       True) for f in dtype.fields])
    if isinstance(dtype, ArrayType):
        return ArrayType(_as_variants(dtype.elementType, paths, (*prefix, ELEM)), True)
    return dtype


def json_choices(df: DataFrame, partition_columns: Sequence[str],
                 read_as: Callable[[StructType], DataFrame]) -> DataFrame:
    """``df`` (a JSON read with Spark's inferred schema) with its mixed string fields made
    choices, at the top level and inside structs; ``read_as(schema)`` reads the same files
    again with ``schema``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StructField, StructType

    skip = {c.lower() for c in partition_columns}
    kept = [f for f in df.schema.fields if f.name.lower() not in skip]
    candidates = [p for p in _string_paths(StructType(kept)) if not p[0].startswith("_corrupt")]
    if not candidates:
        return df
    wanted = set(candidates)
    # Partition columns are in the schema as ``df`` has them, so their types are kept.
    raw = read_as(StructType([StructField(f.name, _as_variants(f.dataType, wanted, (f.name,)),
                                          True) for f in df.schema.fields]))
    seen = raw.agg(*[F.flatten(F.collect_set(F.array_distinct(_kinds(c)))).alias(f"t{i}")
                     for i, c in enumerate(candidates)]).collect()[0]
    kinds = {c: sorted({k for k in seen[f"t{i}"] or () if k}) for i, c in enumerate(candidates)}
    leaves = set(candidates)

    def rebuild(col: Column, path: Path, dtype: DataType) -> Column:
        from ._fieldpaths import ELEM

        if path in leaves:
            return _leaf(col, kinds[path])
        if not any(c[:len(path)] == path for c in leaves):
            return col
        if isinstance(dtype, ArrayType):
            elem = dtype.elementType
            return F.transform(col, lambda e: rebuild(e, (*path, ELEM), elem))
        assert isinstance(dtype, StructType)
        inner = F.struct(*[rebuild(col.getField(f.name), (*path, f.name), f.dataType)
                           .alias(f.name) for f in dtype.fields])
        return F.when(col.isNotNull(), inner)

    from ._fieldpaths import quote

    return raw.select(*[rebuild(F.col(quote(f.name)), (f.name,), f.dataType).alias(f.name)
                        for f in df.schema.fields])


def _kinds(path: Path) -> Column:
    """An ``array<string>`` of the ``schema_of_variant`` names of the values at ``path``
    (every element's, through arrays)."""
    from pyspark.sql import functions as F

    from ._fieldpaths import ELEM, quote

    def walk(col: Column, rest: Path) -> Column:
        if not rest:
            return F.array(F.schema_of_variant(col))
        if rest[0] == ELEM:
            # null elements (and null inner arrays) drop out: flatten is null if any part is
            return F.flatten(F.filter(F.transform(col, lambda e: walk(e, rest[1:])),
                                      lambda part: part.isNotNull()))
        return walk(col.getField(rest[0]), rest[1:])

    return walk(F.col(quote(path[0])), path[1:])


def _leaf(col: Column, type_names: Sequence[str]) -> Column:
    """A variant field as Spark typed it (text), or as the choice of the kinds it holds."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType

    from ._choicetype import choice_type, member_name

    types = {"long": LongType(), "double": DoubleType(), "boolean": BooleanType(),
             "string": StringType()}
    kinds = {k for k in (_kind_of(t) for t in type_names) if k}
    if "double" in kinds:
        kinds.discard("long")
    as_text = F.variant_get(col, "$", "string")
    if "other" in kinds or kinds <= {"string"} or "string" not in kinds:
        return as_text  # as Spark typed it
    kind = F.schema_of_variant(col)
    members = []
    for k in sorted(kinds, key=lambda k: list(types).index(k)):
        dtype = types[k]
        if k == "double":
            is_kind = (kind.isin("DOUBLE", "FLOAT", "BIGINT", "INT", "SMALLINT", "TINYINT")
                       | kind.startswith("DECIMAL"))
        else:
            is_kind = kind.isin(*[t for t, v in _KIND.items() if v == k])
        value = F.try_variant_get(col, "$", dtype.simpleString())
        members.append(F.when(is_kind, value).alias(member_name(dtype)))
    target = choice_type([types[k] for k in kinds])
    is_null = col.isNull() | (kind == "VOID")
    return F.when(is_null, F.lit(None).cast(target)).otherwise(F.struct(*members).cast(target))
