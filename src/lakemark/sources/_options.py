"""What a read asks for, validated once: format, parse mode, reader options and schema.

Everything here is pure (no Spark) except :func:`parse_schema`, which needs a running session to
parse a DDL string. Errors are :class:`~lakemark.errors.ConfigError` (or its subclass
:class:`~lakemark.errors.FormatError`) naming the offending format, mode or option, raised
before any data is touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError
from ..storage import parse_uri

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = [
    "FORMATS",
    "MODES",
    "MODE_FORMATS",
    "ReadRequest",
    "check_read_options",
    "make_request",
    "normalize_format",
    "normalize_mode",
    "parse_schema",
]

#: Formats :func:`~lakemark.sources.read_files` reads.
FORMATS: tuple[str, ...] = ("json", "csv", "parquet", "orc", "xml", "text", "avro")

#: Spark's parse modes for malformed records (input is matched case-insensitively).
MODES: tuple[str, ...] = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")

#: Formats whose records can be malformed, hence where ``mode`` means something.
MODE_FORMATS = frozenset({"json", "csv", "xml"})

#: Options that name input paths: the files to read are given by the caller, never by options.
_PATH_OPTIONS = frozenset({"path", "paths"})


def normalize_format(format: str) -> str:
    """The canonical (lower-case) format name; FormatError listing the supported ones."""
    name = format.strip().lower() if isinstance(format, str) else ""
    if name not in FORMATS:
        raise FormatError(
            f"unsupported source format {format!r}; supported formats: {', '.join(FORMATS)}"
        )
    return name


def normalize_mode(mode: str) -> str:
    """The canonical (upper-case) parse mode; ConfigError naming the bad value."""
    name = mode.strip().upper() if isinstance(mode, str) else ""
    if name not in MODES:
        raise ConfigError(f"unsupported read mode {mode!r}; expected one of: {', '.join(MODES)}")
    return name


def check_read_options(format: str, mode: str = "PERMISSIVE",
                       options: Mapping[str, Any] | None = None, root: str | None = None) -> None:
    """Fail early, before any planning or I/O, if ``format``, ``mode`` or ``options`` (reader
    options of a source at ``root``) cannot be read.

    Raises :class:`FormatError` for an unknown format (the message lists the supported ones)
    and :class:`ConfigError` for an unknown parse mode or a bad option. Needs no Spark session.
    """
    normalize_format(format)
    normalize_mode(mode)
    if options is not None:
        make_request(format, mode, options, None, root or "")


def _option_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        raise ConfigError(f"option {key!r} has no value (None)")
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class ReadRequest:
    """A validated read: canonical format and mode, reader options (``mode`` and ``basePath``
    removed; they are set by the readers) and the schema as given (StructType, DDL or None)."""

    format: str
    mode: str
    options: dict[str, str] = field(default_factory=dict)
    schema: Any = None

    def option(self, name: str, default: str | None = None) -> str | None:
        """An option by name, case-insensitively as Spark looks them up."""
        lowered = name.lower()
        for key, value in self.options.items():
            if key.lower() == lowered:
                return value
        return default

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.option(name)
        return default if value is None else value.strip().lower() == "true"

    @property
    def uses_mode(self) -> bool:
        """Whether ``mode`` applies to this format (records that can be malformed)."""
        return self.format in MODE_FORMATS


def make_request(
    format: str,
    mode: str,
    options: Mapping[str, Any] | None,
    schema: Any,
    root: str,
) -> ReadRequest:
    """Validate a read's arguments into a :class:`ReadRequest` (ConfigError on any problem).

    A ``mode`` option is accepted when it agrees with ``mode``, or when ``mode`` is left at its
    default (PERMISSIVE): then the option decides. A ``basePath`` option must name ``root``
    (partition columns are always read relative to ``root``). ``path``/``paths`` options are
    refused: the files to read are the ``files`` argument.
    """
    fmt = normalize_format(format)
    chosen = normalize_mode(mode)
    if options is not None and not isinstance(options, Mapping):
        raise ConfigError(f"options must be a mapping of strings, not {type(options).__name__}")
    clean: dict[str, str] = {}
    for key, value in (options or {}).items():
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"option names must be non-empty strings, not {key!r}")
        lowered = key.lower()
        text = _option_value(key, value)
        if lowered in _PATH_OPTIONS:
            raise ConfigError(
                f"option {key!r} is not accepted by read_files: the files to read are given "
                "as the files argument"
            )
        if lowered == "mode":
            from_option = normalize_mode(text)
            if chosen != "PERMISSIVE" and from_option != chosen:
                raise ConfigError(
                    f"option mode={text!r} contradicts mode={mode!r}; give the mode once"
                )
            chosen = from_option
            continue
        if lowered == "basepath":
            if parse_uri(text).root != parse_uri(root).root:
                raise ConfigError(
                    f"option basePath={text!r} differs from the source root {root!r}; "
                    "partition folders are read relative to the root"
                )
            continue
        clean[key] = text
    if schema is not None and not isinstance(schema, str) and not _is_struct(schema):
        raise ConfigError(
            f"schema must be a StructType or a DDL string, not {type(schema).__name__}"
        )
    if isinstance(schema, str) and not schema.strip():
        raise ConfigError("schema is an empty DDL string")
    request = ReadRequest(fmt, chosen, clean, schema)
    if fmt == "xml" and not (request.option("rowTag") or "").strip():
        raise ConfigError("format xml needs option rowTag (the element that holds one row)")
    return request


def _is_struct(value: Any) -> bool:
    from pyspark.sql.types import StructType

    return isinstance(value, StructType)


def parse_schema(schema: Any) -> StructType | None:
    """The schema as a StructType (a DDL string is parsed; needs an active Spark session)."""
    from pyspark.sql.types import DataType, StructType

    if schema is None or isinstance(schema, StructType):
        return schema
    try:
        parsed = DataType.fromDDL(schema)
    except Exception as exc:  # Spark's ParseException (a PySparkException) or a Py4J error
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"schema {schema!r} is not a valid DDL schema: {first}") from None
    if not isinstance(parsed, StructType):
        raise ConfigError(f"schema {schema!r} must describe columns (name type, …)")
    return parsed
