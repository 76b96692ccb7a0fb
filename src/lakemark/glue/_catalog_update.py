"""``enableUpdateCatalog``: record what a sink wrote in the catalog, as Glue does.

The table is created (or its schema replaced) from the written DataFrame's schema, and every
partition the write touched is added; partitions already recorded are left as they are. The
partition keys of a table that exists keep their declared types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..catalog import CatalogTable, Partition
from ..errors import ConfigError
from ._formats import write_format

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..catalog import Catalog

__all__ = ["check_catalog_update", "update_catalog_table"]


def check_catalog_update(catalog: Catalog, table_ref: tuple[str, str], path: object,
                         format: str) -> None:
    """Refuse, before anything is written, an update that could not be recorded."""
    database, name = table_ref
    if not path:
        raise ConfigError(f"enableUpdateCatalog for {database}.{name} needs the sink's 'path'")
    catalog.get_database(database)
    CatalogTable.create(database, name, str(path), _table_format(format), [])


def _table_format(glue_format: str) -> str:
    return write_format(glue_format, {})[0]


def _declared_key_types(catalog: Catalog, database: str, name: str) -> dict[str, str]:
    """The partition key types an existing table declares (lower-case names), kept by an
    update: the catalog's types win over the written frame's (``'02'`` stays a string)."""
    for table in catalog.list_tables(database):
        if table.name.lower() == name.lower():
            return {k.name.lower(): k.type for k in table.partition_keys}
    return {}


def update_catalog_table(catalog: Catalog, table_ref: tuple[str, str], df: DataFrame,
                         path: str, format: str, partition_keys: Sequence[str]) -> CatalogTable:
    """Create or update ``database.table`` to describe ``df`` written to ``path``."""
    database, name = table_ref
    format = _table_format(format)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    missing = [k for k in partition_keys if k not in types]
    if missing:
        raise ConfigError(f"partitionKeys not in the written data: {', '.join(missing)}")
    columns = [(n, t) for n, t in types.items() if n not in partition_keys]
    declared = _declared_key_types(catalog, database, name)
    keys = [(k, declared.get(k.lower(), types[k])) for k in partition_keys]
    table = CatalogTable.create(database, name, path, format, columns, keys)
    catalog.create_or_update_table(table)
    if partition_keys:
        rows = df.select(*partition_keys).distinct().collect()
        values = sorted({tuple("" if v is None else str(v) for v in row) for row in rows})
        catalog.add_partitions(table, [Partition(v, table.partition_location(v)) for v in values])
    return table
