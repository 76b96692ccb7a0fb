"""Partition columns of a catalog read typed as the catalog declares them, as in Glue.

Spark guesses a partition column's type from its folder names (``month=02`` becomes the int
``2``, ``day=2024-05-01`` a date), which loses leading zeros and differs from the catalog. Glue
gives the declared type. A guessed int cannot be turned back into ``'02'``, so the read is
made again with the frame's schema and the declared types of the partition keys: with a user
schema Spark converts each folder's raw text to the type given (``'02'`` stays ``'02'``), and
no data is read twice (the schema is known, nothing is inferred again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from ..catalog import CatalogTable

__all__ = ["declared_partition_types", "retyped_schema", "with_partition_ddl"]


def declared_partition_types(table: CatalogTable) -> dict[str, str]:
    """The table's partition keys and their Spark DDL types (``{"month": "string"}``)."""
    return {k.name: k.parsed_type(table.qualified_name).spark() for k in table.partition_keys}


def with_partition_ddl(schema: str, declared: Mapping[str, str]) -> str:
    """A DDL schema of data columns extended with the partition keys' declared types."""
    from ..catalog._types import quote_name

    keys = ", ".join(f"{quote_name(n)} {t}" for n, t in declared.items())
    return f"{schema}, {keys}" if schema and keys else (schema or keys)


def retyped_schema(schema: StructType, declared: Mapping[str, str]) -> StructType | None:
    """``schema`` with each partition key (matched case-insensitively) of its declared type;
    None when every key already has it (or none is in ``schema``)."""
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    wanted = {n.lower(): t for n, t in declared.items()}
    fields = []
    changed = False
    for field in schema.fields:
        ddl = wanted.get(field.name.lower())
        if ddl is not None:
            dtype = _parse_datatype_string(ddl)
            if dtype != field.dataType:
                field = StructField(field.name, dtype, True, field.metadata)
                changed = True
        fields.append(field)
    return StructType(fields) if changed else None
