"""What a data catalog holds: databases, tables, partitions and connections.

Every class parses the exact JSON the Glue API returns (boto3 dicts, or ``aws glue get-…``
output: the same shapes, with times as strings) and renders itself back to that shape, so a
folder catalog can be rewritten without losing fields lakemark does not model (kept in ``raw``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any

from ..errors import ConfigError
from ..redaction import is_secret_name, redact
from ._serde import FILE_FORMATS, JDBC_FORMATS, detect_classification, storage_for
from ._serde import read_options as _read_options
from ._types import HiveType, TypeSyntaxError, parse_type, quote_name

__all__ = [
    "HIVE_DEFAULT_PARTITION",
    "CatalogTable",
    "Column",
    "Connection",
    "Database",
    "Partition",
    "partition_path",
]

#: Hive's folder value for a null partition value.
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

# TableInput / StorageDescriptor members the Glue API accepts when creating or updating.
_TABLE_INPUT_KEYS = (
    "Name", "Description", "Owner", "Retention", "StorageDescriptor", "PartitionKeys",
    "ViewOriginalText", "ViewExpandedText", "TableType", "Parameters", "TargetTable",
)
_STORAGE_KEYS = (
    "Columns", "Location", "AdditionalLocations", "InputFormat", "OutputFormat", "Compressed",
    "NumberOfBuckets", "SerdeInfo", "BucketColumns", "SortColumns", "Parameters", "SkewedInfo",
    "StoredAsSubDirectories", "SchemaReference",
)
_COLUMN_KEYS = ("Name", "Type", "Comment", "Parameters")


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _entry(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def now_iso() -> str:
    """The current time as the AWS CLI prints it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class Column:
    """A column or partition key: name, Hive type string, optional comment."""

    name: str
    type: str
    comment: str | None = None

    @classmethod
    def from_glue(cls, entry: Mapping[str, Any], table: str = "") -> Column:
        entry = _entry(entry, f"catalog table {table}: column")
        name = entry.get("Name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"catalog table {table}: a column has no Name: {dict(entry)!r}")
        comment = entry.get("Comment")
        return cls(name, str(entry.get("Type") or "string"),
                   str(comment) if comment is not None else None)

    def to_glue(self) -> dict[str, Any]:
        out: dict[str, Any] = {"Name": self.name, "Type": self.type}
        if self.comment is not None:
            out["Comment"] = self.comment
        return out

    def parsed_type(self, table: str = "") -> HiveType:
        """The parsed Hive type; :class:`ConfigError` naming the column when it is not one."""
        try:
            return parse_type(self.type)
        except TypeSyntaxError as exc:
            where = f"{table}.{self.name}" if table else self.name
            raise ConfigError(f"catalog column {where}: {exc}") from None

    def spark_ddl(self, table: str = "") -> str:
        """``\\`name\\` type`` for a Spark DDL schema."""
        return f"{quote_name(self.name)} {self.parsed_type(table).spark()}"


# -------------------------------------------------------------------------------- databases


@dataclass(frozen=True)
class Database:
    """A catalog database (``DatabaseList`` entry of ``aws glue get-databases``)."""

    name: str
    description: str | None = None
    location_uri: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_glue(cls, entry: Mapping[str, Any]) -> Database:
        entry = _entry(entry, "catalog database")
        name = entry.get("Name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"catalog database entry has no Name: {dict(entry)!r}")
        return cls(name, entry.get("Description"), entry.get("LocationUri"),
                   _str_map(entry.get("Parameters")), dict(entry))


# ----------------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class CatalogTable:
    """A catalog table: where its data is, in which format, with which columns.

    ``classification`` is the format in lakemark terms (``csv``, ``json``, ``parquet``, ``orc``,
    ``avro``, ``xml``, ``text``; a JDBC engine name for crawled database tables) or, when the
    table is something lakemark cannot read, what was found (``delta``, ``iceberg``, ``view``,
    ``""`` for nothing); :attr:`format` validates it. ``parameters`` are the table's
    parameters, ``storage_parameters`` the storage descriptor's (crawlers fill both).
    ``raw`` keeps the entry as read, so fields lakemark does not model survive a rewrite.
    """

    database: str
    name: str
    location: str
    classification: str
    input_format: str | None = None
    output_format: str | None = None
    serde: str | None = None
    serde_parameters: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, str] = field(default_factory=dict)
    columns: tuple[Column, ...] = ()
    partition_keys: tuple[Column, ...] = ()
    table_type: str | None = "EXTERNAL_TABLE"
    storage_parameters: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- parsing ------------------------------------------------------------------------------
    @classmethod
    def from_glue(cls, entry: Mapping[str, Any], database: str | None = None) -> CatalogTable:
        """A ``Table`` as ``get-table``/``get-tables`` return it (``database`` fills in a
        missing ``DatabaseName``)."""
        entry = _entry(entry, "catalog table")
        name = entry.get("Name")
        db = entry.get("DatabaseName") or database
        if not isinstance(name, str) or not name:
            raise ConfigError(f"catalog table entry in database {db!r} has no Name")
        if not isinstance(db, str) or not db:
            raise ConfigError(f"catalog table {name!r} has no DatabaseName")
        qualified = f"{db}.{name}"
        sd = entry.get("StorageDescriptor") or {}
        sd = _entry(sd, f"catalog table {qualified}: StorageDescriptor")
        serde_info = _entry(sd.get("SerdeInfo") or {}, f"catalog table {qualified}: SerdeInfo")
        parameters = _str_map(entry.get("Parameters"))
        storage_parameters = _str_map(sd.get("Parameters"))
        serde = serde_info.get("SerializationLibrary") or None
        input_format = sd.get("InputFormat") or None
        table_type = entry.get("TableType") or None
        location = sd.get("Location") or ""
        return cls(
            database=db,
            name=name,
            location=str(location),
            classification=detect_classification(parameters, storage_parameters, serde,
                                                 input_format, table_type),
            input_format=input_format,
            output_format=sd.get("OutputFormat") or None,
            serde=serde,
            serde_parameters=_str_map(serde_info.get("Parameters")),
            parameters=parameters,
            columns=tuple(Column.from_glue(c, qualified) for c in sd.get("Columns") or ()),
            partition_keys=tuple(Column.from_glue(c, qualified)
                                 for c in entry.get("PartitionKeys") or ()),
            table_type=table_type,
            storage_parameters=storage_parameters,
            raw=dict(entry),
        )

    @classmethod
    def create(
        cls,
        database: str,
        name: str,
        location: str,
        format: str,
        columns: Sequence[Column | tuple[str, str]],
        partition_keys: Sequence[Column | tuple[str, str]] = (),
        *,
        separator: str | None = None,
        header: bool = False,
        parameters: Mapping[str, str] | None = None,
    ) -> CatalogTable:
        """A new external table stored as Glue stores tables it creates itself
        (``enableUpdateCatalog``): InputFormat, OutputFormat and SerDe for ``format`` and a
        ``classification`` parameter. ``separator``/``header`` describe CSV files.

        Column types may be Hive or Spark type strings (``DataType.simpleString()``); they are
        stored in the catalog's canonical Hive form (``timestamp_ntz`` → ``timestamp``,
        ``integer`` → ``int``). An unknown type is a :class:`ConfigError` naming the column.
        """
        fmt = format.strip().lower()
        input_format, output_format, serde = storage_for(fmt)
        serde_parameters: dict[str, str] = {}
        params = {"classification": fmt, **dict(parameters or {})}
        if fmt in ("csv", "text"):
            serde_parameters["field.delim"] = separator if separator else ","
            if header:
                params["skip.header.line.count"] = "1"
        qualified = f"{database}.{name}"

        def hive(column: Column | tuple[str, str]) -> Column:
            col = column if isinstance(column, Column) else Column(column[0], column[1])
            return Column(col.name, col.parsed_type(qualified).hive(), col.comment)

        return cls(database, name, location, fmt, input_format, output_format, serde,
                   serde_parameters, params, tuple(hive(c) for c in columns),
                   tuple(hive(c) for c in partition_keys), "EXTERNAL_TABLE", {})

    # -- what the runtime asks ---------------------------------------------------------------
    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def all_columns(self) -> tuple[Column, ...]:
        """Data columns, then partition keys (the order Glue and Spark show them in)."""
        return self.columns + self.partition_keys

    @property
    def is_jdbc(self) -> bool:
        return self.classification in JDBC_FORMATS

    @property
    def format(self) -> str:
        """The source format (one of ``csv json parquet orc avro xml text``, or a JDBC engine
        name); :class:`ConfigError` naming the table and what was found when lakemark cannot
        read it."""
        if self.classification in FILE_FORMATS or self.classification in JDBC_FORMATS:
            return self.classification
        found = [
            f"classification {self.classification!r}" if self.classification
            else "no classification parameter",
            f"SerDe {self.serde!r}" if self.serde else "no SerDe",
            f"InputFormat {self.input_format!r}" if self.input_format else "no InputFormat",
        ]
        raise ConfigError(
            f"catalog table {self.qualified_name}: cannot read its data format ("
            + ", ".join(found) + "); lakemark reads: " + ", ".join(FILE_FORMATS)
        )

    def read_options(self) -> dict[str, str]:
        """Spark reader options from the SerDe and parameters (``sep``, ``quote``, ``escape``,
        ``header``, ``nullValue``, ``rowTag`` …). See :mod:`lakemark.catalog._serde`."""
        return _read_options(self.qualified_name, self.format, self.serde, self.serde_parameters,
                            self.parameters, self.storage_parameters)

    def spark_ddl(self, include_partition_keys: bool = True) -> str:
        """The schema as a Spark DDL string (``\\`a\\` int, \\`b\\` struct<\\`x\\`:string>``)."""
        columns = self.all_columns if include_partition_keys else self.columns
        return ", ".join(c.spark_ddl(self.qualified_name) for c in columns)

    def partition_key_types(self) -> tuple[HiveType, ...]:
        return tuple(k.parsed_type(self.qualified_name) for k in self.partition_keys)

    def partition_location(self, values: Sequence[str]) -> str:
        """Where a partition with these values lives by Hive convention."""
        return self.location.rstrip("/") + "/" + partition_path(
            [k.name for k in self.partition_keys], values)

    # -- rendering -----------------------------------------------------------------------------
    def _storage_descriptor(self) -> dict[str, Any]:
        raw_sd = self.raw.get("StorageDescriptor")
        sd: dict[str, Any] = dict(raw_sd) if isinstance(raw_sd, Mapping) else {}
        sd["Columns"] = [c.to_glue() for c in self.columns]
        sd["Location"] = self.location
        for key, value in (("InputFormat", self.input_format),
                           ("OutputFormat", self.output_format)):
            if value:
                sd[key] = value
            else:
                sd.pop(key, None)
        raw_serde = sd.get("SerdeInfo")
        serde_info: dict[str, Any] = dict(raw_serde) if isinstance(raw_serde, Mapping) else {}
        if self.serde:
            serde_info["SerializationLibrary"] = self.serde
        else:
            serde_info.pop("SerializationLibrary", None)
        serde_info["Parameters"] = dict(self.serde_parameters)
        sd["SerdeInfo"] = serde_info
        sd.setdefault("Compressed", False)
        sd.setdefault("NumberOfBuckets", -1)
        sd.setdefault("BucketColumns", [])
        sd.setdefault("SortColumns", [])
        sd["Parameters"] = dict(self.storage_parameters)
        sd.setdefault("StoredAsSubDirectories", False)
        return sd

    def to_glue(self) -> dict[str, Any]:
        """The table as a ``get-tables`` ``TableList`` entry (fields from ``raw`` kept)."""
        out: dict[str, Any] = dict(self.raw)
        out["Name"] = self.name
        out["DatabaseName"] = self.database
        out["StorageDescriptor"] = self._storage_descriptor()
        out["PartitionKeys"] = [c.to_glue() for c in self.partition_keys]
        if self.table_type:
            out["TableType"] = self.table_type
        out["Parameters"] = dict(self.parameters)
        return out

    def table_input(self) -> dict[str, Any]:
        """The ``TableInput`` of CreateTable/UpdateTable (read-only fields left out)."""
        table = self.to_glue()
        out = {k: table[k] for k in _TABLE_INPUT_KEYS if k in table}
        sd = out["StorageDescriptor"]
        out["StorageDescriptor"] = {k: sd[k] for k in _STORAGE_KEYS if k in sd}
        out["StorageDescriptor"]["Columns"] = [
            {k: c[k] for k in _COLUMN_KEYS if k in c} for c in sd.get("Columns", [])
        ]
        out["PartitionKeys"] = [{k: c[k] for k in _COLUMN_KEYS if k in c}
                                for c in out.get("PartitionKeys", [])]
        return out


# ------------------------------------------------------------------------------- partitions

# Characters Hive escapes in partition folder names (FileUtils.escapePathName).
_HIVE_ESCAPE = frozenset('"#%\'*/:=?\\\x7f{[]^')


def _escape_path_name(value: str) -> str:
    return "".join(
        f"%{ord(c):02X}" if c in _HIVE_ESCAPE or ord(c) < 0x20 else c for c in value
    )


def partition_path(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """``k1=v1/k2=v2`` with Hive's escaping (a ``None`` value is Hive's default partition)."""
    if len(keys) != len(values):
        raise ConfigError(f"partition values {list(values)!r} do not match keys {list(keys)!r}")
    return "/".join(
        f"{_escape_path_name(k)}="
        f"{_escape_path_name(HIVE_DEFAULT_PARTITION if v is None else v)}"
        for k, v in zip(keys, values)
    )


@dataclass(frozen=True)
class Partition:
    """One partition: its values (in partition-key order, as strings) and its location."""

    values: tuple[str, ...]
    location: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_glue(cls, entry: Mapping[str, Any], table: CatalogTable) -> Partition:
        """A ``Partitions`` entry of ``get-partitions`` for ``table``."""
        entry = _entry(entry, f"partition of {table.qualified_name}")
        values = entry.get("Values")
        if not isinstance(values, list) or len(values) != len(table.partition_keys):
            keys = [k.name for k in table.partition_keys]
            raise ConfigError(
                f"partition of {table.qualified_name} has Values {values!r}; expected one "
                f"value per partition key {keys}"
            )
        sd = entry.get("StorageDescriptor")
        location = sd.get("Location") if isinstance(sd, Mapping) else None
        strings = tuple(str(v) for v in values)
        return cls(strings, str(location) if location else table.partition_location(strings),
                   _str_map(entry.get("Parameters")), dict(entry))

    def spec(self, table: CatalogTable) -> dict[str, str]:
        """``{key: value}`` for ``table``'s partition keys."""
        return {k.name: v for k, v in zip(table.partition_keys, self.values)}

    def to_glue(self, table: CatalogTable) -> dict[str, Any]:
        """The partition as a ``get-partitions`` entry (the table's storage, this location)."""
        out: dict[str, Any] = dict(self.raw)
        sd = dict(out.get("StorageDescriptor") or table._storage_descriptor())
        sd["Location"] = self.location
        out.update({
            "Values": list(self.values),
            "DatabaseName": table.database,
            "TableName": table.name,
            "StorageDescriptor": sd,
            "Parameters": dict(self.parameters),
        })
        return out

    def partition_input(self, table: CatalogTable) -> dict[str, Any]:
        """The ``PartitionInput`` of BatchCreatePartition."""
        entry = self.to_glue(table)
        sd = entry["StorageDescriptor"]
        sd = {k: sd[k] for k in _STORAGE_KEYS if k in sd}
        sd["Columns"] = [{k: c[k] for k in _COLUMN_KEYS if k in c} for c in sd.get("Columns", [])]
        return {"Values": entry["Values"], "StorageDescriptor": sd,
                "Parameters": entry["Parameters"]}


# ------------------------------------------------------------------------------ connections

#: Connection properties that name a secret without being one (a Secrets Manager id).
_SECRET_REFERENCES = frozenset({"SECRET_ID", "SECRETID", "SECRET_NAME"})


def is_secret_property(key: str) -> bool:
    """Connection properties that hold a secret (``PASSWORD``, ``ENCRYPTED_PASSWORD``,
    ``KAFKA_…_PASSWORD``, ``…SECRET_KEY``, any name :func:`lakemark.redaction.is_secret_name`
    calls secret), but not ``SECRET_ID`` (the name of a Secrets Manager secret)."""
    return key.upper() not in _SECRET_REFERENCES and is_secret_name(key)


def mask_secrets(key: str, value: str) -> str:
    """``value`` of connection property ``key`` as it may be shown or written: ``***`` for a
    secret property, else the value with credentials removed (a JDBC URL's password)."""
    if is_secret_property(key):
        return "***"
    return redact(value)


@dataclass(frozen=True)
class Connection:
    """A catalog connection (``ConnectionList`` entry of ``aws glue get-connections``).

    ``properties`` are the ``ConnectionProperties`` (``JDBC_CONNECTION_URL``, ``USERNAME``,
    ``PASSWORD`` …). The repr never shows a password, also not one inside a JDBC URL.
    """

    name: str
    connection_type: str
    properties: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_glue(cls, entry: Mapping[str, Any]) -> Connection:
        entry = _entry(entry, "catalog connection")
        name = entry.get("Name")
        if not isinstance(name, str) or not name:
            raise ConfigError("catalog connection entry has no Name")
        return cls(name, str(entry.get("ConnectionType") or ""),
                   _str_map(entry.get("ConnectionProperties")), entry.get("Description"),
                   dict(entry))

    def without_secrets(self) -> Connection:
        """This connection with its secret properties removed (what ``HidePassword`` gives)."""
        props = {k: v for k, v in self.properties.items() if not is_secret_property(k)}
        raw = dict(self.raw)
        if isinstance(raw.get("ConnectionProperties"), Mapping):
            raw["ConnectionProperties"] = dict(props)
        return Connection(self.name, self.connection_type, props, self.description, raw)

    @property
    def jdbc_url(self) -> str | None:
        return self.properties.get("JDBC_CONNECTION_URL")

    def __repr__(self) -> str:
        shown = {k: mask_secrets(k, v) for k, v in self.properties.items()}
        return (f"Connection(name={self.name!r}, connection_type={self.connection_type!r}, "
                f"properties={shown!r})")

    __str__ = __repr__
