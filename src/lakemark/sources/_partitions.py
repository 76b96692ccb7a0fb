"""Where each file sits under the source root, and the Hive partition columns that gives.

The Arrow read path must produce the partition columns Spark would (names, inferred types,
values, ``__HIVE_DEFAULT_PARTITION__`` as null, a user schema's types for partition columns it
names). Rather than re-implementing Spark's partition inference, :func:`discover_partitions`
lets Spark infer them from a stand-in tree: one tiny local placeholder file per distinct
folder, laid out like the real files under a temporary base path. Spark reads the placeholders
as text and returns, per folder, the typed partition values, which the reader then joins to the
rows of that folder's files.
"""

from __future__ import annotations

import os
import re
import tempfile
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ReadError
from ..storage import Location, parse_uri
from ._errors import first_line, spark_errors

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from ..planning.files import FileEntry

__all__ = ["Layout", "escape_glob", "layout_of", "discover_partitions", "PLACEHOLDER_INDEX"]

#: The placeholder read's single data column: which folder a placeholder stands for.
PLACEHOLDER_INDEX = "__lakemark_folder_index"

_GLOB = re.compile(r"([\\{}\[\]*?])")


def escape_glob(path: str) -> str:
    """``path`` with Hadoop glob characters escaped, so Spark loads exactly that file."""
    return _GLOB.sub(r"\\\1", path)


@dataclass(frozen=True)
class Layout:
    """The files of one read under their root: each file's folder (relative to the root, ``""``
    for the root itself) as an index into ``folders``."""

    root: Location
    folders: list[str] = field(default_factory=list)
    folder_of: list[int] = field(default_factory=list)

    @property
    def may_have_partitions(self) -> bool:
        return any("=" in folder for folder in self.folders)


def _relative_folder(root: Location, prefix: str, path: str) -> str:
    loc = parse_uri(path)
    if (loc.scheme, loc.bucket) != (root.scheme, root.bucket):
        raise ConfigError(f"file {path!r} is not under the source root {root.original!r}")
    key = loc.key
    if key == prefix:
        return ""  # the root names this very file
    base = prefix + "/" if prefix or not root.is_s3 else ""
    if not key.startswith(base):
        raise ConfigError(f"file {path!r} is not under the source root {root.original!r}")
    relative = key[len(base):]
    return relative.rsplit("/", 1)[0] if "/" in relative else ""


def layout_of(root: str, files: Sequence[FileEntry]) -> Layout:
    """Each file's folder under ``root``; ConfigError for a file outside it (or of another
    scheme or bucket)."""
    loc = parse_uri(root)
    prefix = loc.key.rstrip("/")
    index: dict[str, int] = {}
    folder_of = []
    for entry in files:
        folder = _relative_folder(loc, prefix, entry.path)
        folder_of.append(index.setdefault(folder, len(index)))
    return Layout(loc, list(index), folder_of)


def _partition_keys(folders: Sequence[str]) -> set[str]:
    keys = set()
    for folder in folders:
        for segment in folder.split("/"):
            key, sep, _ = segment.partition("=")
            if sep and key:
                keys.add(urllib.parse.unquote(key).lower())
    return keys


def discover_partitions(
    spark: SparkSession, layout: Layout, user_schema: StructType | None
) -> tuple[StructType, list[tuple[Any, ...]]]:
    """Spark's partition columns for ``layout`` and, per folder index, their typed values.

    Returns ``(partition schema, rows)`` where each row is ``(folder index, *values)``; both
    empty when no folder has a ``key=value`` segment. Fields of ``user_schema`` that name a
    partition column give its type, as in Spark.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    if not layout.may_have_partitions:
        return StructType([]), []
    keys = _partition_keys(layout.folders)
    user_fields = [f for f in (user_schema.fields if user_schema else []) if f.name.lower() in keys]
    read_schema = StructType([StructField(PLACEHOLDER_INDEX, StringType(), True), *user_fields])
    with tempfile.TemporaryDirectory(prefix="lakemark-partitions-") as tmp:
        paths = []
        for index, folder in enumerate(layout.folders):
            segments = folder.split("/") if folder else []
            if any(s in ("", ".", "..") for s in segments):
                raise ConfigError(
                    f"folder {folder!r} under source root {layout.root.original!r} has an "
                    "empty, '.' or '..' segment; such keys cannot be read as partitions"
                )
            directory = os.path.join(tmp, *segments)
            os.makedirs(directory, exist_ok=True)
            placeholder = os.path.join(directory, f"folder{index}.txt")
            with open(placeholder, "w", encoding="utf-8") as out:
                out.write(f"{index}\n")
            paths.append(escape_glob(placeholder))
        try:
            frame = (spark.read.format("text").schema(read_schema).option("basePath", tmp)
                     .load(paths))
            schema = frame.schema
            collected = frame.collect()
        except spark_errors() as exc:
            raise ReadError(
                f"cannot read the partition folders under {layout.root.original}: "
                f"{first_line(exc)}"
            ) from None
    partition_schema = StructType([f for f in schema.fields if f.name != PLACEHOLDER_INDEX])
    names = [f.name for f in partition_schema.fields]
    rows = [(int(row[PLACEHOLDER_INDEX]), *(row[n] for n in names)) for row in collected]
    return partition_schema, rows
