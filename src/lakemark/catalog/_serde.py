"""A catalog table's data format and Spark reader options, from its SerDe and parameters.

How a format is recognized (first rule that gives an answer wins):

1. the ``classification`` parameter (table parameters, then the storage descriptor's), which
   Glue crawlers and Glue's ``enableUpdateCatalog`` always set; ``UNKNOWN`` is skipped;
2. other table markers: ``table_type=ICEBERG`` (``iceberg``), ``spark.sql.sources.provider``
   (``delta``, ``parquet``, …), ``TableType=VIRTUAL_VIEW`` (``view``);
3. the SerDe library (``LazySimpleSerDe``/``OpenCSVSerde`` → csv, the JSON SerDes → json,
   ``ParquetHiveSerDe`` → parquet, ``OrcSerde`` → orc, ``AvroSerDe`` → avro, ``XmlSerDe`` → xml);
4. the InputFormat (``MapredParquetInputFormat``, ``OrcInputFormat``,
   ``AvroContainerInputFormat``, ``XmlInputFormat``; a bare ``TextInputFormat`` is Hive's
   default text table, i.e. LazySimpleSerDe → csv).

A name lakemark cannot read (``delta``, ``iceberg``, ``grok``…) is kept as found; asking such a
table for its :attr:`~lakemark.catalog.CatalogTable.format` raises :class:`ConfigError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import ConfigError, UnsupportedError

__all__ = [
    "FILE_FORMATS",
    "JDBC_FORMATS",
    "LAZY_SIMPLE",
    "OPEN_CSV",
    "detect_classification",
    "read_options",
    "storage_for",
]

#: Formats lakemark reads from files.
FILE_FORMATS = ("csv", "json", "parquet", "orc", "avro", "xml", "text")
#: Crawler classifications of JDBC tables (the location is then ``db.schema.table``).
JDBC_FORMATS = ("postgresql", "mysql", "sqlserver", "oracle", "redshift", "jdbc")

LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
_OPENX_JSON = "org.openx.data.jsonserde.JsonSerDe"
_TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
_TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"

_CLASSIFICATIONS = {
    **{name: name for name in FILE_FORMATS + JDBC_FORMATS},
    "glueparquet": "parquet",
    "tsv": "csv",
    "jsonl": "json",
}

_SERDES = {
    LAZY_SIMPLE.lower(): "csv",
    OPEN_CSV.lower(): "csv",
    _OPENX_JSON.lower(): "json",
    "org.apache.hive.hcatalog.data.jsonserde": "json",
    "org.apache.hadoop.hive.serde2.jsonserde": "json",
    "org.apache.hadoop.hive.ql.io.parquet.serde.parquethiveserde": "parquet",
    "parquet.hive.serde.parquethiveserde": "parquet",
    "org.apache.hadoop.hive.ql.io.orc.orcserde": "orc",
    "org.apache.hadoop.hive.serde2.avro.avroserde": "avro",
    "com.ibm.spss.hive.serde2.xml.xmlserde": "xml",
}

_INPUT_FORMATS = {
    "org.apache.hadoop.hive.ql.io.parquet.mapredparquetinputformat": "parquet",
    "parquet.hive.deprecatedparquetinputformat": "parquet",
    "org.apache.hadoop.hive.ql.io.orc.orcinputformat": "orc",
    "org.apache.hadoop.hive.ql.io.avro.avrocontainerinputformat": "avro",
    "com.ibm.spss.hive.serde2.xml.xmlinputformat": "xml",
    _TEXT_INPUT.lower(): "csv",
}

# What a new table of each format is stored as (InputFormat, OutputFormat, SerDe), as Glue's
# enableUpdateCatalog and the crawlers write them.
_STORAGE = {
    "csv": (_TEXT_INPUT, _TEXT_OUTPUT, LAZY_SIMPLE),
    "text": (_TEXT_INPUT, _TEXT_OUTPUT, LAZY_SIMPLE),
    "json": (_TEXT_INPUT, _TEXT_OUTPUT, _OPENX_JSON),
    "parquet": (
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    ),
    "orc": (
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
    ),
    "avro": (
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
        "org.apache.hadoop.hive.serde2.avro.AvroSerDe",
    ),
}


def _lookup(params: Mapping[str, str], key: str) -> str | None:
    """A parameter by name, case-insensitively (crawlers and hand-made DDL differ)."""
    if key in params:
        return params[key]
    lowered = key.lower()
    for name, value in params.items():
        if name.lower() == lowered:
            return value
    return None


def detect_classification(
    parameters: Mapping[str, str],
    storage_parameters: Mapping[str, str],
    serde: str | None,
    input_format: str | None,
    table_type: str | None,
) -> str:
    """The table's format in lakemark terms (see the module docstring), or what was found
    instead (lowercased; ``""`` when nothing says anything)."""
    for params in (parameters, storage_parameters):
        found = (_lookup(params, "classification") or "").strip().lower()
        if found and found != "unknown":
            return _CLASSIFICATIONS.get(found, found)
    if (_lookup(parameters, "table_type") or "").strip().upper() == "ICEBERG":
        return "iceberg"
    provider = (_lookup(parameters, "spark.sql.sources.provider") or "").strip().lower()
    if provider:
        return _CLASSIFICATIONS.get(provider, provider)
    if (table_type or "").upper() == "VIRTUAL_VIEW":
        return "view"
    if serde and serde.strip().lower() in _SERDES:
        return _SERDES[serde.strip().lower()]
    if input_format and input_format.strip().lower() in _INPUT_FORMATS:
        return _INPUT_FORMATS[input_format.strip().lower()]
    return ""


def storage_for(fmt: str) -> tuple[str, str, str]:
    """(InputFormat, OutputFormat, SerDe) a new table of ``fmt`` is stored with."""
    if fmt not in _STORAGE:
        raise UnsupportedError(
            f"cannot create a catalog table of format {fmt!r}; lakemark creates: "
            + ", ".join(sorted(_STORAGE))
        )
    return _STORAGE[fmt]


# --------------------------------------------------------------------------- reader options

_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\", "\\0": "\0"}
_UNICODE = re.compile(r"^\\u([0-9a-fA-F]{4})$|^\\([0-7]{3})$")


def hive_char(value: str) -> str:
    """A delimiter as Hive's LazySimpleSerDe reads it.

    A value that parses as a (signed) byte is that byte's character — ``"1"`` is ``\\x01``,
    ``"9"`` a tab, ``"44"`` a comma (Hive's ``getByte``); ``\\t``-style escapes and ``\\uXXXX``
    / octal ``\\001`` are decoded; any other value is its first character.
    """
    if re.fullmatch(r"-?\d+", value.strip()):
        number = int(value.strip())
        if -128 <= number <= 127:
            return chr(number % 256)
    if value in _ESCAPES:
        return _ESCAPES[value]
    match = _UNICODE.match(value)
    if match:
        return chr(int(match.group(1), 16)) if match.group(1) else chr(int(match.group(2), 8))
    return value[:1]


def _opencsv_char(value: str | None, default: str) -> str:
    """OpenCSVSerde takes the first character of separatorChar/quoteChar/escapeChar."""
    if value is None or value == "":
        return default
    return _ESCAPES.get(value, value[:1])


def _count(table: str, key: str, *sources: Mapping[str, str]) -> int:
    for params in sources:
        value = _lookup(params, key)
        if value is None or not str(value).strip():
            continue
        try:
            return int(str(value).strip())
        except ValueError:
            raise ConfigError(
                f"catalog table {table}: parameter {key}={value!r} is not a number"
            ) from None
    return 0


def read_options(
    table: str,
    fmt: str,
    serde: str | None,
    serde_parameters: Mapping[str, str],
    parameters: Mapping[str, str],
    storage_parameters: Mapping[str, str],
) -> dict[str, str]:
    """Spark reader options for a table of format ``fmt`` (already validated).

    ``table`` (``database.name``) is only used in error messages. SerDe parameters win over
    storage-descriptor parameters, which win over table parameters.
    """
    sources = (serde_parameters, storage_parameters, parameters)
    if fmt == "csv":
        return _csv_options(table, serde, *sources)
    if fmt == "json":
        out: dict[str, str] = {}
        json_path = next((v for v in (_lookup(p, "jsonPath") for p in sources) if v), None)
        if json_path and json_path.strip() in ("$[*]", "$.[*]"):
            out["multiLine"] = "true"  # a top-level JSON array per file
        return out
    if fmt == "xml":
        return {"rowTag": _row_tag(table, *sources)}
    if fmt == "text":
        line = next((v for v in (_lookup(p, "line.delim") for p in sources) if v), None)
        return {"lineSep": hive_char(line)} if line and hive_char(line) != "\n" else {}
    return {}


def _csv_options(table: str, serde: str | None, *sources: Mapping[str, str]) -> dict[str, str]:
    skip = _count(table, "skip.header.line.count", *sources)
    if skip > 1:
        raise UnsupportedError(
            f"catalog table {table}: skip.header.line.count={skip} is not supported "
            "(Spark skips at most one header line)"
        )
    footer = _count(table, "skip.footer.line.count", *sources)
    if footer > 0:
        raise UnsupportedError(
            f"catalog table {table}: skip.footer.line.count={footer} is not supported"
        )
    out = {"header": "true" if skip == 1 else "false"}
    serde_params = sources[0]
    if (serde or "").strip().lower() == OPEN_CSV.lower():
        out["sep"] = _opencsv_char(_lookup(serde_params, "separatorChar"), ",")
        out["quote"] = _opencsv_char(_lookup(serde_params, "quoteChar"), '"')
        out["escape"] = _opencsv_char(_lookup(serde_params, "escapeChar"), "\\")
        return out
    # LazySimpleSerDe (and tables whose SerDe says nothing): Hive's delimiter rules.
    delim = (_lookup(serde_params, "field.delim")
             or _lookup(serde_params, "serialization.format"))
    if not delim:
        delim = next((v for v in (_lookup(p, "delimiter") for p in sources[1:]) if v), None)
    out["sep"] = hive_char(delim) if delim else "\x01"
    escape = _lookup(serde_params, "escape.delim")
    if escape:
        out["escape"] = hive_char(escape)
    null = _lookup(serde_params, "serialization.null.format")
    if null is not None:
        out["nullValue"] = null
    line = _lookup(serde_params, "line.delim")
    if line and hive_char(line) != "\n":
        out["lineSep"] = hive_char(line)
    encoding = _lookup(serde_params, "serialization.encoding")
    if encoding:
        out["encoding"] = encoding
    return out


def _row_tag(table: str, *sources: Mapping[str, str]) -> str:
    for params in sources:
        tag = _lookup(params, "rowTag")
        if tag and tag.strip():
            return tag.strip()
    for params in sources:
        start = _lookup(params, "xmlinput.start")  # Hive XmlSerDe: "<record" or "<record>"
        if start and start.strip().lstrip("<").strip():
            return re.split(r"[\s>/]", start.strip().lstrip("<"), maxsplit=1)[0]
    raise ConfigError(
        f"catalog table {table} is XML but names no row element: expected a 'rowTag' "
        "parameter (or the XmlSerDe's 'xmlinput.start')"
    )
