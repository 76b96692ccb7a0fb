"""Inferring the data schema of S3 files from a local copy of a few of them.

Without the S3A connector Spark cannot open ``s3://`` files, but its schema inference is what
the local read path uses, so the Arrow path copies a small sample to a temporary folder (with
boto3) and lets Spark infer on the copies with the same options and mode. The sample is:

* parquet / orc: the first file (Spark reads one footer unless ``mergeSchema`` is set; then up
  to :data:`SAMPLE_FILES` files);
* json / csv / xml: files in order until :data:`SAMPLE_FILES` files or :data:`SAMPLE_BYTES`
  bytes. Of an uncompressed line-based file (JSON Lines, CSV without ``multiLine``) larger than
  :data:`LINE_PREFIX_BYTES` only that much is fetched, cut after its last complete line.

The copies are deleted as soon as the schema is known.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ReadError
from ..storage import parse_uri, s3_client
from ._errors import describe, first_line, spark_errors
from ._options import ReadRequest
from ._partitions import escape_glob

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from ..planning.files import FileEntry

__all__ = ["infer_schema", "sample_files", "SAMPLE_FILES", "SAMPLE_BYTES", "LINE_PREFIX_BYTES"]

SAMPLE_FILES = 16
SAMPLE_BYTES = 64 * 1024 * 1024
LINE_PREFIX_BYTES = 16 * 1024 * 1024
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz", ".br",
               ".zip")
_CHUNK = 1024 * 1024


def sample_files(request: ReadRequest, files: Sequence[FileEntry]) -> list[FileEntry]:
    """The files whose copies the schema is inferred from (at least one)."""
    if request.format in ("parquet", "orc") and not request.flag("mergeSchema"):
        return [files[0]]
    chosen: list[FileEntry] = []
    total = 0
    for entry in files:
        if chosen and (len(chosen) >= SAMPLE_FILES or total + entry.size > SAMPLE_BYTES):
            break
        chosen.append(entry)
        total += entry.size
    return chosen


def _prefix_only(request: ReadRequest, entry: FileEntry) -> bool:
    """Whether a prefix of the file, cut at a line end, is as good as the file for inference."""
    return (request.format in ("json", "csv") and not request.flag("multiLine")
            and entry.size > LINE_PREFIX_BYTES
            and not entry.path.lower().endswith(_COMPRESSED))


def _download(client: Any, entry: FileEntry, target: str, prefix_only: bool) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    loc = parse_uri(entry.path)
    request: dict[str, Any] = {"Bucket": loc.bucket, "Key": loc.key}
    if prefix_only:
        request["Range"] = f"bytes=0-{LINE_PREFIX_BYTES - 1}"
    try:
        body = client.get_object(**request)["Body"]
        with open(target, "wb") as out:
            for chunk in iter(lambda: body.read(_CHUNK), b""):
                out.write(chunk)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "Unknown")
        raise ReadError(f"cannot fetch {entry.path} to infer its schema: S3 error {code}") \
            from None
    except (BotoCoreError, OSError) as exc:
        raise ReadError(f"cannot fetch {entry.path} to infer its schema: {exc}") from None
    if prefix_only:
        _cut_after_last_line(target)


def _cut_after_last_line(path: str) -> None:
    with open(path, "rb+") as handle:
        data = handle.read()
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end >= 0:
            handle.truncate(end + 1)


def _local_name(index: int, entry: FileEntry) -> str:
    """A visible, unique, short file name keeping the original name's extensions (codecs).

    Only the extensions are kept: an S3 key may be 1,024 bytes and hold any character, a
    local file name at most 255 bytes."""
    base = entry.path.rstrip("/").rsplit("/", 1)[-1]
    parts = base.split(".")[1:]
    kept: list[str] = []
    for part in reversed(parts[-3:]):
        if not part.isascii() or not part.isalnum() or len(part) > 10:
            break
        kept.insert(0, part)
    return f"sample{index:03d}" + "".join(f".{part}" for part in kept)


def _check_depth(request: ReadRequest, entry: FileEntry, local: str) -> None:
    """ReadError naming ``entry`` when its copied XML nests rows deeper than Parquet allows:
    Spark would infer a schema no sink can write, whichever file the rows came from (JSON
    records are checked by lakemark's reader, which infers them)."""
    if request.format != "xml" or entry.path.lower().endswith(_CODECS):
        return
    from ._inspect_depth import xml_depth_problem

    with open(local, "rb") as copied:
        row_tag = next((str(v) for k, v in request.options.items() if k.lower() == "rowtag"),
                       "ROW")
        problem = xml_depth_problem(copied, row_tag=row_tag)
    if problem is not None:
        raise ReadError(f"cannot read xml file {entry.path}: {problem}")


_CODECS = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".snappy", ".lz4", ".deflate", ".zip", ".br")


def infer_schema(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry]
                 ) -> StructType:
    """The data schema (no partition columns) Spark infers for ``files``, from a sample."""
    chosen = sample_files(request, files)
    with tempfile.TemporaryDirectory(prefix="lakemark-sample-") as tmp:
        client = s3_client() if any(parse_uri(e.path).is_s3 for e in chosen) else None
        paths = []
        originals: dict[str, str] = {}  # local copy -> the file it copies
        for index, entry in enumerate(chosen):
            loc = parse_uri(entry.path)
            if not loc.is_s3:  # already local: infer on the file itself
                paths.append(escape_glob(loc.key))
                continue
            local = os.path.join(tmp, _local_name(index, entry))
            _download(client, entry, local, _prefix_only(request, entry))
            _check_depth(request, entry, local)
            paths.append(escape_glob(local))
            originals[local] = entry.path
        reader = spark.read.format(request.format).options(**request.options)
        if request.uses_mode:
            reader = reader.option("mode", request.mode)
        try:
            return reader.load(paths).schema
        except spark_errors() as exc:
            described = describe(exc)
            file, reason = described if described else (None, first_line(exc))
            if file:
                reason = f"file {originals.get(file, file)}: {reason}"
            raise ReadError(
                f"cannot infer the schema of {request.format} files from {len(chosen)} "
                f"sampled file(s) starting with {chosen[0].path}: {reason}"
            ) from None
