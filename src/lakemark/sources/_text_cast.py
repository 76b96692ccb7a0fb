"""A value's text as a column type, as Spark's text readers (CSV, XML, JSON) would read it.

The tracked CSV and XML reads get each value as text and cast it with checks: ``null`` means
the value does not fit, and it is rescued. ``try_cast`` reads text as Spark's ``CAST`` does,
which is what the readers do too, except for dates and timestamps when the reader options
``timestampFormat``, ``timestampNTZFormat``, ``dateFormat``, ``timeZone``, ``locale`` or
``enableDateTimeParsingFallback`` are given: then the text must parse with the pattern (Spark's
datetime patterns; with a custom pattern and no fallback, ``CAST``'s formats no longer fit),
and a zone-less timestamp is read in ``timeZone``. Those columns are parsed by Spark's own
parser (``from_json`` of the text as a one-field JSON object, with the same options), so the
semantics are the readers' own rather than a copy of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType

__all__ = ["DATETIME_OPTIONS", "NESTED_CORRUPT", "datetime_options", "cast_text", "is_nested",
           "nested_text", "typed_text"]

#: The reader options (lower case) that change how text is read as a date or timestamp.
DATETIME_OPTIONS = frozenset({"timestampformat", "timestampntzformat", "dateformat",
                              "timezone", "locale", "enabledatetimeparsingfallback"})

_FIELD = "v"
#: The field of :func:`nested_text`'s struct set when anything inside the value did not fit.
NESTED_CORRUPT = "__lm_nested_corrupt"


def datetime_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options of ``options`` that say how dates and timestamps are read."""
    return {k: v for k, v in options.items() if k.lower() in DATETIME_OPTIONS}


def cast_text(raw: Column, data_type: DataType, options: Mapping[str, str]) -> Column:
    """``raw`` (a value's text) as the atomic ``data_type``: null when it does not fit (or is
    null). Dates and timestamps follow the datetime reader options in ``options``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DateType, StructField, StructType, TimestampNTZType, TimestampType

    chosen = datetime_options(options)
    if chosen and isinstance(data_type, (DateType, TimestampType, TimestampNTZType)):
        one = StructType([StructField(_FIELD, data_type)])
        as_json = F.to_json(F.struct(raw.alias(_FIELD)))
        return F.from_json(as_json, one, {**chosen, "mode": "PERMISSIVE"}).getField(_FIELD)
    return raw.try_cast(data_type)


def typed_text(raw: Column, data_type: DataType, options: Mapping[str, str] | None = None
               ) -> Column:
    """``raw`` (a value's text) as ``data_type``: a string as it is, a struct, array or map
    from its JSON text, an atomic type by :func:`cast_text`; null when it does not fit."""
    from pyspark.sql.types import ArrayType, MapType, StringType, StructType

    chosen = datetime_options(options or {})
    if isinstance(data_type, StringType):
        return raw
    if isinstance(data_type, (StructType, ArrayType, MapType)):
        return nested_text(raw, data_type, chosen).getField(_FIELD)
    return cast_text(raw, data_type, chosen)


def is_nested(data_type: DataType) -> bool:
    """Whether ``data_type`` is a struct, array or map."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    return isinstance(data_type, (StructType, ArrayType, MapType))


def nested_text(raw: Column, data_type: DataType, options: Mapping[str, str] | None = None
                ) -> Column:
    """``raw`` (a struct's, array's or map's JSON text) parsed as ``{"v": <raw>}``: field
    ``v`` of ``data_type`` and :data:`NESTED_CORRUPT`, set when anything inside did not fit
    (``from_json`` alone nulls a misfit inside a struct or array, and makes a struct of nulls
    of text that is no JSON at all). A struct keeps the fields that fit, as Spark's reader."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    wrapper = StructType([StructField(_FIELD, data_type),
                          StructField(NESTED_CORRUPT, StringType())])
    return F.from_json(F.concat(F.lit('{"' + _FIELD + '":'), raw, F.lit("}")), wrapper,
                       {**datetime_options(options or {}), "mode": "PERMISSIVE",
                        "columnNameOfCorruptRecord": NESTED_CORRUPT})
