"""``connection_type="com.amazonaws.services.glue.connections.DataCatalogConnection"``: a
database of the catalog in use (folder or Glue API) as a frame of its entries.

AWS's Hive metastore migration utility reads the Data Catalog this way
(``connection_options={"catalog.name": "datacatalog", "catalog.database": db,
"catalog.region": r}``), splits the frame by its ``type`` column (``database``, ``table``,
``partition``), re-reads each part through ``toJSON()`` with its own schema and explodes
``items``. So the frame has the columns ``type``, ``database``, ``table`` and ``items``: one row
for the database, one row per table (``items`` holds that table) and one row per partitioned
table (``items`` holds its partitions). Items are the Glue API entries with camel-case field
names (``name``, ``storageDescriptor.serdeInfo.serializationLibrary``, ``partitionKeys``,
``values`` …); ``items`` is one struct type holding the fields of all three kinds, and the
fields a kind does not have are null (``toJSON`` leaves them out).

Writing entries this way (``connection_type="catalog"``, the utility's import) is refused in
:mod:`._write`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..catalog import Catalog, CatalogTable, Partition
    from .context import GlueContext

__all__ = ["CATALOG_CONNECTION", "ITEMS_DDL", "catalog_connection_frame", "catalog_entries"]

#: The connection type, lower case (compared case-insensitively).
CATALOG_CONNECTION = "com.amazonaws.services.glue.connections.datacatalogconnection"

_OPTIONS = ("catalog.name", "catalog.database", "catalog.region", "catalog.id")

_COLUMN = "struct<name:string,type:string,comment:string>"
_SD = ("struct<inputFormat:string,compressed:boolean,storedAsSubDirectories:boolean,"
       "location:string,numberOfBuckets:int,outputFormat:string,bucketColumns:array<string>,"
       f"columns:array<{_COLUMN}>,parameters:map<string,string>,"
       "serdeInfo:struct<name:string,serializationLibrary:string,parameters:map<string,string>>,"
       "skewedInfo:struct<skewedColumnNames:array<string>,"
       "skewedColumnValueLocationMaps:map<string,string>,skewedColumnValues:array<string>>,"
       "sortColumns:array<struct<column:string,order:int>>>")

#: One item: the fields of a database, a table and a partition entry together.
ITEMS_DDL = ("array<struct<name:string,description:string,locationUri:string,"
             "parameters:map<string,string>,createTime:string,lastAccessTime:string,"
             "owner:string,retention:int,tableType:string,viewExpandedText:string,"
             f"viewOriginalText:string,partitionKeys:array<{_COLUMN}>,storageDescriptor:{_SD},"
             "creationTime:string,namespaceName:string,tableName:string,values:array<string>>>")

_FRAME_DDL = f"type string, database string, table string, items {ITEMS_DDL}"


def _text(value: Any) -> str | None:
    """A timestamp or text field as text (boto3 gives datetimes, the folder catalog strings)."""
    if value is None or value == "":
        return None
    iso = getattr(value, "isoformat", None)
    return str(iso()) if callable(iso) else str(value)


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _columns(entries: Any) -> list[dict[str, Any]]:
    return [{"name": c.get("Name"), "type": c.get("Type"), "comment": c.get("Comment")}
            for c in entries or () if isinstance(c, Mapping)]


def _storage(sd: Mapping[str, Any]) -> dict[str, Any]:
    serde = sd.get("SerdeInfo") if isinstance(sd.get("SerdeInfo"), Mapping) else {}
    skewed = sd.get("SkewedInfo") if isinstance(sd.get("SkewedInfo"), Mapping) else {}
    assert isinstance(serde, Mapping) and isinstance(skewed, Mapping)
    return {
        "inputFormat": sd.get("InputFormat"),
        "compressed": bool(sd.get("Compressed", False)),
        "storedAsSubDirectories": bool(sd.get("StoredAsSubDirectories", False)),
        "location": sd.get("Location"),
        "numberOfBuckets": int(sd.get("NumberOfBuckets", -1)),
        "outputFormat": sd.get("OutputFormat"),
        "bucketColumns": [str(c) for c in sd.get("BucketColumns") or ()],
        "columns": _columns(sd.get("Columns")),
        "parameters": _strings(sd.get("Parameters")),
        "serdeInfo": {"name": serde.get("Name"),
                      "serializationLibrary": serde.get("SerializationLibrary"),
                      "parameters": _strings(serde.get("Parameters"))},
        "skewedInfo": {
            "skewedColumnNames": [str(c) for c in skewed.get("SkewedColumnNames") or ()],
            "skewedColumnValueLocationMaps": _strings(
                skewed.get("SkewedColumnValueLocationMaps")),
            "skewedColumnValues": [str(c) for c in skewed.get("SkewedColumnValues") or ()]},
        "sortColumns": [{"column": s.get("Column"), "order": s.get("SortOrder")}
                        for s in sd.get("SortColumns") or () if isinstance(s, Mapping)],
    }


def _table_item(table: CatalogTable) -> dict[str, Any]:
    entry = table.to_glue()
    retention = entry.get("Retention")
    return {
        "name": table.name, "createTime": _text(entry.get("CreateTime")),
        "lastAccessTime": _text(entry.get("LastAccessTime")), "owner": entry.get("Owner"),
        "retention": int(retention) if retention is not None else None,
        "tableType": entry.get("TableType"), "viewExpandedText": entry.get("ViewExpandedText"),
        "viewOriginalText": entry.get("ViewOriginalText"),
        "parameters": _strings(entry.get("Parameters")),
        "partitionKeys": _columns(entry.get("PartitionKeys")),
        "storageDescriptor": _storage(entry["StorageDescriptor"]),
    }


def _partition_item(table: CatalogTable, partition: Partition) -> dict[str, Any]:
    entry = partition.to_glue(table)
    return {
        "creationTime": _text(entry.get("CreationTime")),
        "lastAccessTime": _text(entry.get("LastAccessTime")),
        "namespaceName": table.database, "tableName": table.name,
        "parameters": _strings(entry.get("Parameters")),
        "storageDescriptor": _storage(entry["StorageDescriptor"]),
        "values": list(partition.values),
    }


def catalog_entries(catalog: Catalog, database: str) -> list[dict[str, Any]]:
    """The rows of the frame for ``database`` (pure catalog reads, no Spark): the database,
    each table, and the partitions of each partitioned table."""
    db = catalog.get_database(database)
    rows: list[dict[str, Any]] = [{"type": "database", "database": None, "table": None,
                                   "items": [{"name": db.name, "description": db.description,
                                              "locationUri": db.location_uri,
                                              "parameters": dict(db.parameters)}]}]
    tables = sorted(catalog.list_tables(db.name), key=lambda t: t.name)
    for table in tables:
        rows.append({"type": "table", "database": db.name, "table": None,
                     "items": [_table_item(table)]})
    for table in tables:
        if table.partition_keys:
            parts = catalog.get_partitions(table)
            if parts:
                rows.append({"type": "partition", "database": db.name, "table": table.name,
                             "items": [_partition_item(table, p) for p in parts]})
    return rows


def catalog_connection_frame(glue_ctx: GlueContext,
                             options: Mapping[str, Any] | None) -> DataFrame:
    """The frame of ``catalog.database`` from the catalog in use (see the module docs)."""
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise UnsupportedError("DataCatalogConnection option(s) not supported: "
                               + ", ".join(unknown) + " (it takes " + ", ".join(_OPTIONS) + ")")
    name = str(opts.get("catalog.name") or "datacatalog")
    if name.lower() != "datacatalog":
        raise ConfigError(f"DataCatalogConnection option catalog.name={name!r}: lakemark reads "
                          "the catalog in use (--catalog / LAKEMARK_CATALOG), named 'datacatalog'")
    database = opts.get("catalog.database")
    if not database:
        raise ConfigError("DataCatalogConnection needs connection option 'catalog.database'")
    rows = catalog_entries(glue_ctx.catalog(), str(database))
    return glue_ctx.spark_session.createDataFrame(rows, _FRAME_DDL)
