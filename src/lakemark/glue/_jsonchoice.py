"""Per-record types for JSON read into a DynamicFrame: ``choice(long, string)`` as Glue gives it.

Spark types a JSON field that holds ``10001`` in some records and ``"ABC0"`` in others as
``string`` (the numbers become text); Glue's JSON reader keeps each record's own type and makes
the field a choice, for ``resolveChoice`` to settle. lakemark gets the same by reading the
source a second time with every top-level field Spark typed ``string`` as a Spark ``VARIANT``
(which keeps each JSON value's own type), then looking at the types each field holds (one Spark
job; the first read only inferred the schema, so the input is read once for data):

* JSON integers are ``long``, other numbers ``double`` (a field with both is ``double``),
  ``true``/``false`` are ``boolean``, strings ``string``; JSON ``null`` and a missing field
  are null and have no type;
* a field whose values are all strings (or objects/arrays mixed with strings, which Spark
  gives as JSON text) stays a ``string``, exactly as Spark typed it;
* a field with strings and numbers (or booleans) becomes the choice of those types, each
  record's value kept under its own type (``_choicetype``).

Top-level fields only: a nested field of mixed types stays as Spark types it. Partition
columns (folder names) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

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


def json_choices(df: DataFrame, partition_columns: Sequence[str],
                 read_as: Callable[[StructType], DataFrame]) -> DataFrame:
    """``df`` (a JSON read with Spark's inferred schema) with its mixed string fields made
    choices; ``read_as(schema)`` reads the same files again with ``schema``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import (BooleanType, DoubleType, LongType, StringType, StructField,
                                   StructType, VariantType)

    from ._choicetype import choice_type, member_name
    from ._fieldpaths import quote

    skip = {c.lower() for c in partition_columns}
    candidates = [f.name for f in df.schema.fields
                  if isinstance(f.dataType, StringType) and f.name.lower() not in skip
                  and not f.name.startswith("_corrupt")]
    if not candidates:
        return df
    raw = read_as(StructType([
        StructField(f.name, VariantType() if f.name in candidates else f.dataType, True)
        for f in df.schema.fields if f.name.lower() not in skip]))
    seen = raw.agg(*[F.collect_set(F.expr(f"schema_of_variant({quote(c)})")).alias(f"t{i}")
                     for i, c in enumerate(candidates)]).collect()[0]
    types = {"long": LongType(), "double": DoubleType(), "boolean": BooleanType(),
             "string": StringType()}
    out: list[Column] = []
    for field in raw.schema.fields:
        name = field.name
        col = F.col(quote(name))
        if name not in candidates:
            out.append(col)
            continue
        kinds = {k for k in (_kind_of(t) for t in seen[f"t{candidates.index(name)}"]) if k}
        if "double" in kinds:
            kinds.discard("long")
        as_text = F.expr(f"variant_get({quote(name)}, '$', 'string')")
        if "other" in kinds or kinds <= {"string"} or "string" not in kinds:
            out.append(as_text.alias(name))  # as Spark typed it
            continue
        kind = F.expr(f"schema_of_variant({quote(name)})")
        members = []
        for k in sorted(kinds, key=lambda k: list(types).index(k)):
            dtype = types[k]
            if k == "double":
                is_kind = (kind.isin("DOUBLE", "FLOAT", "BIGINT", "INT", "SMALLINT", "TINYINT")
                           | kind.startswith("DECIMAL"))
            else:
                is_kind = kind.isin(*[t for t, v in _KIND.items() if v == k])
            value = F.expr(f"try_variant_get({quote(name)}, '$', '{dtype.simpleString()}')")
            members.append(F.when(is_kind, value).alias(member_name(dtype)))
        target = choice_type([types[k] for k in kinds])
        is_null = col.isNull() | (kind == "VOID")
        out.append(F.when(is_null, F.lit(None).cast(target))
                   .otherwise(F.struct(*members).cast(target)).alias(name))
    return raw.select(*out)
