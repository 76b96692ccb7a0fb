"""Turning column values into the strings Delta and Hive-style folders expect, and Parquet
footers into Delta file statistics.

Three spellings of one value meet here:

* the **folder name** (``col=value``), spelled the way Spark spells it (the value cast to a
  string in the session time zone, then path-escaped), so Spark's partition discovery reads
  folders written by either of lakemark's writers the same way;
* the Delta **partition value** (protocol "Partition Value Serialization"): timestamps in UTC
  as ``YYYY-MM-DD HH:MM:SS.ffffff``, like delta-rs writes them;
* the Delta **statistics** JSON: ``numRecords`` and, for the types where the Parquet footer
  gives exact bounds cheaply, ``minValues``/``maxValues``/``nullCount``.

Statistics drive data skipping in every Delta reader, so a wrong bound silently drops rows from
query results. The rule here is therefore: emit a bound only when it is certainly a bound.
Timestamps are kept to milliseconds (the Delta convention), the minimum rounded down and the
maximum rounded *up*; long strings keep a 32-character prefix as their minimum and no maximum;
floating-point columns (NaN ordering differs between engines) get null counts only.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ConfigError

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = [
    "HIVE_NULL",
    "PARTITION_KINDS",
    "kind_of",
    "zone",
    "delta_partition_value",
    "folder_value",
    "parse_folder_value",
    "escape_path_name",
    "unescape_path_name",
    "file_stats",
]

#: The folder name Hive and Spark use for a NULL (or empty string) partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

#: Delta primitive types a table may be partitioned by (via lakemark's writers).
PARTITION_KINDS = frozenset({
    "string", "long", "integer", "short", "byte", "boolean", "double", "float", "decimal",
    "date", "timestamp", "timestamp_ntz",
})

_INTEGRAL = frozenset({"long", "integer", "short", "byte"})
_STATS_KINDS = frozenset({*_INTEGRAL, "boolean", "decimal", "date", "timestamp", "string"})
_NULL_COUNT_KINDS = _STATS_KINDS | {"double", "float", "timestamp_ntz", "binary"}
STRING_STATS_PREFIX = 32

# Spark's ExternalCatalogUtils.escapePathName escapes these (plus control characters).
_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^')
_UNESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_UTC = dt.UTC


def kind_of(delta_type: object) -> str:
    """The primitive kind of a Delta schema type (``"decimal"`` for any decimal, ``"complex"``
    for structs, arrays and maps)."""
    if isinstance(delta_type, str):
        return "decimal" if delta_type.startswith("decimal") else delta_type
    return "complex"


def zone(name: str) -> dt.tzinfo:
    """A tzinfo for a Spark session time zone: a region id or a fixed offset (``+02:00``)."""
    if name.upper() in ("UTC", "Z", "GMT", "UT", "ETC/UTC"):
        return _UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    match = _OFFSET.match(name.strip())
    if match is None:
        raise ConfigError(f"cannot interpret Spark session time zone {name!r}")
    sign = -1 if match.group(1) == "-" else 1
    delta = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3) or 0))
    return dt.timezone(sign * delta)


# -- partition values ----------------------------------------------------------------------
def _fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _spark_double(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


def delta_partition_value(value: Any, kind: str) -> str | None:
    """``value`` (as pyarrow gives it) serialized as a Delta partition value.

    Empty strings become NULL, as Spark and Delta's Spark writer do for partition columns.
    Timestamps with a time zone are written in UTC.
    """
    if value is None or (kind == "string" and value == ""):
        return None
    if kind == "string":
        return str(value)
    if kind == "boolean":
        return "true" if value else "false"
    if kind in _INTEGRAL:
        return str(int(value))
    if kind in ("double", "float"):
        return _spark_double(value)
    if kind == "decimal":
        return format(Decimal(value), "f")
    if kind == "date":
        return str(value.isoformat())
    if kind == "timestamp":
        utc = value.astimezone(_UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%d %H:%M:%S.%f")
    if kind == "timestamp_ntz":
        return str(value.strftime("%Y-%m-%d %H:%M:%S.%f"))
    raise ConfigError(f"cannot partition by a column of type {kind}")


def folder_value(value: Any, kind: str, tz: dt.tzinfo) -> str:
    """The unescaped folder value Spark would write for ``value`` (``HIVE_NULL`` for NULL)."""
    if value is None or (kind == "string" and value == ""):
        return HIVE_NULL
    if kind == "timestamp":
        local = value.astimezone(tz) if value.tzinfo else value.replace(tzinfo=_UTC).astimezone(tz)
        return local.strftime("%Y-%m-%d %H:%M:%S") + _fraction(local.microsecond)
    if kind == "timestamp_ntz":
        return str(value.strftime("%Y-%m-%d %H:%M:%S")) + _fraction(value.microsecond)
    text = delta_partition_value(value, kind)
    return HIVE_NULL if text is None else text


def parse_folder_value(text: str, kind: str, tz: dt.tzinfo) -> Any:
    """Read back a value Spark wrote into a folder name (already unescaped)."""
    if text == HIVE_NULL:
        return None
    try:
        if kind == "string":
            return text
        if kind == "boolean":
            return text.lower() == "true"
        if kind in _INTEGRAL:
            return int(text)
        if kind in ("double", "float"):
            return float(text)
        if kind == "decimal":
            return Decimal(text)
        if kind == "date":
            return dt.date.fromisoformat(text)
        if kind == "timestamp":
            return dt.datetime.fromisoformat(text).replace(tzinfo=tz)
        if kind == "timestamp_ntz":
            return dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ConfigError(f"unexpected {kind} partition folder value {text!r}") from exc
    raise ConfigError(f"cannot partition by a column of type {kind}")


def escape_path_name(text: str) -> str:
    """Escape a partition column name or value for a folder name, as Spark does."""
    return "".join(
        f"%{ord(ch):02X}" if ch in _ESCAPED or ord(ch) < 0x20 else ch for ch in text
    )


def unescape_path_name(text: str) -> str:
    """Undo :func:`escape_path_name` (and Spark's escaping)."""
    return _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


# -- statistics ----------------------------------------------------------------------------
def _timestamp_ms(value: dt.datetime, *, up: bool) -> str:
    utc = value.astimezone(_UTC) if value.tzinfo else value.replace(tzinfo=_UTC)
    sub_ms = utc.microsecond % 1000
    utc = utc - dt.timedelta(microseconds=sub_ms)
    if up and sub_ms:
        utc += dt.timedelta(milliseconds=1)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _stat_value(value: Any, kind: str, *, is_max: bool) -> Any:
    """``value`` as a JSON statistics bound, or None when no certain bound can be given."""
    if kind in _INTEGRAL:
        return int(value)
    if kind == "boolean":
        return bool(value)
    if kind == "date":
        return value.isoformat() if isinstance(value, dt.date) else None
    if kind == "timestamp":
        return _timestamp_ms(value, up=is_max) if isinstance(value, dt.datetime) else None
    if kind == "decimal":
        number = float(value)
        # Only when the JSON number is exactly the decimal; anything else may not be a bound.
        return number if Decimal(repr(number)) == Decimal(value) else None
    if kind == "string" and isinstance(value, str):
        if len(value) <= STRING_STATS_PREFIX:
            return value
        return None if is_max else value[:STRING_STATS_PREFIX]
    return None


def file_stats(metadata: pq.FileMetaData, kinds: Mapping[str, str]) -> str:
    """Delta statistics JSON for one Parquet file from its footer.

    ``kinds`` maps top-level column names to their kind (:func:`kind_of`). Nested columns and
    columns absent from the file (partition columns) are left out. A column gets min/max only
    if every row group has them, and a null count only if every row group has one.
    """
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    for index in range(metadata.num_columns if groups else 0):
        column = metadata.schema.column(index)
        name = column.name
        kind = kinds.get(name)
        if column.path != name or kind not in _NULL_COUNT_KINDS:
            continue
        chunks = [group.column(index).statistics for group in groups]
        if all(st is not None and st.has_null_count for st in chunks):
            nulls[name] = sum(int(st.null_count) for st in chunks if st is not None)
        if kind not in _STATS_KINDS or column.physical_type == "INT96":
            continue
        bounded = [st for st in chunks if st is not None and st.has_min_max]
        if not bounded or len(bounded) != len(chunks):
            continue  # some row group has no bounds (or only nulls): no certain bounds
        try:
            low = min(st.min for st in bounded)
            high = max(st.max for st in bounded)
        except (TypeError, ValueError):
            continue
        low_json = _stat_value(low, kind, is_max=False)
        high_json = _stat_value(high, kind, is_max=True)
        if low_json is not None:
            mins[name] = low_json
        if high_json is not None:
            maxs[name] = high_json
    stats: dict[str, Any] = {"numRecords": int(metadata.num_rows)}
    if mins:
        stats["minValues"] = mins
    if maxs:
        stats["maxValues"] = maxs
    if nulls:
        stats["nullCount"] = nulls
    return json.dumps(stats, separators=(",", ":"), ensure_ascii=False)
