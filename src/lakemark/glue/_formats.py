"""Glue's ``format`` / ``format_options`` and S3 ``connection_options``, in lakemark's terms.

Every Glue option name is either translated, accepted with a documented no-op (it tunes
something Spark does its own way), or refused with :class:`UnsupportedError` naming it — an
option is never silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, UnsupportedError

__all__ = [
    "FileSourceOptions",
    "read_format",
    "s3_source_options",
    "write_format",
]

# Glue format name -> lakemark source format.
_READ_FORMATS = {
    "csv": "csv", "json": "json", "parquet": "parquet", "glueparquet": "parquet", "orc": "orc",
    "avro": "avro", "xml": "xml", "text": "text",
}
_WRITE_FORMATS = {
    "csv": "csv", "json": "json", "parquet": "parquet", "glueparquet": "parquet", "orc": "orc",
    "delta": "delta",
}

# Per format: Glue option -> Spark option (None: accepted, nothing to do in Spark).
_READ_OPTIONS: dict[str, dict[str, str | None]] = {
    "csv": {
        "withHeader": "header", "separator": "sep", "quoteChar": "quote", "escaper": "escape",
        "multiLine": "multiLine", "multiline": "multiLine", "encoding": "encoding",
        "skipFirst": None, "optimizePerformance": None, "strictCheckForQuoting": None,
    },
    "json": {
        "multiline": "multiLine", "multiLine": "multiLine", "jsonPath": None,
        "optimizePerformance": None, "encoding": "encoding",
    },
    "xml": {
        "rowTag": "rowTag", "encoding": "encoding", "attributePrefix": "attributePrefix",
        "valueTag": "valueTag", "ignoreSurroundingSpaces": "ignoreSurroundingSpaces",
    },
    "parquet": {"useGlueParquetWriter": None, "compression": None},
    "orc": {},
    "avro": {"version": None},
    "text": {"encoding": "encoding"},
}
_WRITE_OPTIONS: dict[str, dict[str, str | None]] = {
    "csv": {
        "writeHeader": "header", "separator": "sep", "quoteChar": "quote", "escaper": "escape",
        "encoding": "encoding", "optimizePerformance": None, "withHeader": "header",
    },
    "json": {"encoding": "encoding"},
    "parquet": {
        "useGlueParquetWriter": None, "compression": "compression", "blockSize": None,
        "pageSize": None, "enableUpdateCatalog": None,
    },
    "orc": {"compression": "compression"},
    # Delta (Glue's Delta writes pass their options in format_options; path repeats the sink's)
    "delta": {"path": None, "mergeSchema": "mergeSchema", "compression": "compression"},
}

# S3 connection options that lakemark's planner or reader uses (name -> kind).
_S3_SOURCE_OPTIONS = {
    "paths": "paths", "path": "paths", "recurse": "bool", "exclusions": "exclusions",
    "maxBand": "int", "maxFilesInBand": "int", "boundedFiles": "int", "boundedSize": "int",
    "isFailFast": "bool",
    # lakemark's own: S3 StartAfter listing (docs/bookmarks.md)
    "incrementalListing": "bool", "fullListingEvery": "int",
    # lakemark's own: a file taken before that changed (docs/bookmarks.md)
    "onModified": "str",
    # lakemark's own: a tracked schema (docs/glue.md, "Sources whose schema drifts")
    "schemaEvolutionMode": "str", "rescuedDataColumn": "str", "schemaHints": "str",
}
# Accepted and documented as having nothing to do here (Spark sizes its own input splits).
_S3_SOURCE_NOOPS = {
    "groupFiles", "groupSize", "useS3ListImplementation", "compressionType",
    "excludeStorageClasses", "catalogPartitionPredicate", "partitionPredicate",
    "useCatalogSchema", "jobBookmarkKeys", "jobBookmarkKeysSortOrder",
    "jobBookmarksKeysSortOrder", "mergeSchema", "attachFilename", "attachTimestamp",
}


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes")


def _spark_value(glue_name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if glue_name == "quoteChar" and str(value) == "-1":
        return ""  # Glue's "no quote character"; Spark reads "" as none
    return str(value)


def read_format(format: str | None, format_options: Mapping[str, Any] | None
                ) -> tuple[str, dict[str, str]]:
    """(lakemark format, Spark reader options) for a Glue source format and its options."""
    name = (format or "").strip().lower()
    if name not in _READ_FORMATS:
        raise UnsupportedError(
            f"format {format!r} is not supported for reading; lakemark reads: "
            + ", ".join(sorted(_READ_FORMATS))
        )
    target = _READ_FORMATS[name]
    table = _READ_OPTIONS[target]
    options: dict[str, str] = {}
    if target in ("csv", "json"):
        options["inferSchema"] = "true"  # Glue infers column types for both
    for key, value in (format_options or {}).items():
        if key not in table:
            raise UnsupportedError(
                f"format_options key {key!r} is not supported for format {name!r}; supported: "
                + ", ".join(sorted(table))
            )
        if key == "jsonPath" and str(value).strip() not in ("$[*]", "$.[*]", "$"):
            raise UnsupportedError(f"format_options jsonPath {value!r}: only '$[*]' is supported")
        if key == "jsonPath":
            options["multiLine"] = "true"
            continue
        spark_name = table[key]
        if spark_name is not None:
            options[spark_name] = _spark_value(key, value)
    if target == "xml" and "rowTag" not in options:
        raise ConfigError("format 'xml' needs format_options {'rowTag': '<element name>'}")
    return target, options


def write_format(format: str | None, format_options: Mapping[str, Any] | None
                 ) -> tuple[str, dict[str, str]]:
    """(lakemark target format, Spark writer options) for a Glue sink format and its options."""
    name = (format or "").strip().lower()
    if name not in _WRITE_FORMATS:
        raise UnsupportedError(
            f"format {format!r} is not supported for writing; lakemark writes: "
            + ", ".join(sorted(_WRITE_FORMATS))
        )
    target = _WRITE_FORMATS[name]
    table = _WRITE_OPTIONS[target]
    options: dict[str, str] = {"header": "true"} if target == "csv" else {}
    for key, value in (format_options or {}).items():
        if key not in table:
            raise UnsupportedError(
                f"format_options key {key!r} is not supported for writing {name!r}; supported: "
                + ", ".join(sorted(table))
            )
        spark_name = table[key]
        if spark_name is not None:
            options[spark_name] = _spark_value(key, value)
    return target, options


@dataclass
class FileSourceOptions:
    """What an S3/file ``connection_options`` (plus ``additional_options``) asks for."""

    paths: list[str] = field(default_factory=list)
    recurse: bool = False
    exclusions: list[str] = field(default_factory=list)
    max_band_ms: int | None = None
    max_files_in_band: int | None = None
    bounded_files: int | None = None
    bounded_size: int | None = None
    fail_fast: bool = False
    incremental_listing: bool = False
    full_listing_every: int | None = None
    schema_evolution: str | None = None
    rescued_data_column: str | None = None
    schema_hints: str | None = None
    on_modified: str | None = None

    def tracking_kwargs(self) -> dict[str, Any]:
        """``schema_evolution``/``rescued_data_column``/``schema_hints`` for a tracked read
        (empty: the source does not track its schema)."""
        if self.schema_evolution is None:
            if self.rescued_data_column is not None or self.schema_hints is not None:
                raise ConfigError("connection options rescuedDataColumn and schemaHints go "
                                  "with schemaEvolutionMode")
            return {}
        out: dict[str, Any] = {"schema_evolution": self.schema_evolution,
                               "schema_hints": self.schema_hints}
        if self.rescued_data_column is not None:
            out["rescued_data_column"] = self.rescued_data_column
        return out

    def planner_kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "recurse": self.recurse,
            "exclusions": self.exclusions,
            "max_files_in_band": self.max_files_in_band,
            "bounded_files": self.bounded_files,
            "bounded_size": self.bounded_size,
        }
        if self.max_band_ms is not None:
            out["max_band_ms"] = self.max_band_ms
        if self.incremental_listing:
            out["incremental_listing"] = True
        if self.full_listing_every is not None:
            out["full_listing_every"] = self.full_listing_every
        if self.on_modified is not None:
            out["on_modified"] = self.on_modified
        return out


def _int_option(key: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(f"connection option {key!r} must be an integer, not {value!r}") from None


def _exclusions(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"connection option 'exclusions' is not a JSON list: {exc}") from None
        return [str(v) for v in parsed]
    return [text] if text else []


def s3_source_options(*option_maps: Mapping[str, Any] | None) -> FileSourceOptions:
    """Parse Glue's S3 ``connection_options`` / ``additional_options`` (later maps win)."""
    out = FileSourceOptions()
    for options in option_maps:
        for key, value in (options or {}).items():
            kind = _S3_SOURCE_OPTIONS.get(key)
            if kind is None:
                if key in _S3_SOURCE_NOOPS:
                    continue
                raise UnsupportedError(
                    f"connection option {key!r} is not supported for S3/file sources; supported: "
                    + ", ".join(sorted(set(_S3_SOURCE_OPTIONS) | _S3_SOURCE_NOOPS))
                )
            if kind == "paths":
                paths = [value] if isinstance(value, str) else list(value)
                out.paths = [str(p) for p in paths]
            elif key == "recurse":
                out.recurse = _flag(value)
            elif key == "isFailFast":
                out.fail_fast = _flag(value)
            elif kind == "exclusions":
                out.exclusions = _exclusions(value)
            elif key == "maxBand":
                out.max_band_ms = _int_option(key, value)
            elif key == "maxFilesInBand":
                out.max_files_in_band = _int_option(key, value)
            elif key == "boundedFiles":
                out.bounded_files = _int_option(key, value)
            elif key == "boundedSize":
                out.bounded_size = _int_option(key, value)
            elif key == "incrementalListing":
                out.incremental_listing = _flag(value)
            elif key == "fullListingEvery":
                out.full_listing_every = _int_option(key, value)
            elif key == "schemaEvolutionMode":
                out.schema_evolution = str(value)
            elif key == "rescuedDataColumn":
                out.rescued_data_column = str(value)
            elif key == "schemaHints":
                out.schema_hints = str(value)
            elif key == "onModified":
                out.on_modified = str(value)
    return out
