"""Cheap checks of planned input files before Spark reads them: what would stick a run.

A run must not fail, again and again, on one file it cannot read. :func:`inspect_files` looks
at each planned file the way a reader would start on it and returns the ones that cannot be
read, each with a one-line reason:

* every file: it is still there, it is a regular file that can be opened (a broken or looping
  symbolic link, a file removed since the listing, no permission);
* Parquet, ORC, Avro: not empty, the format's magic bytes, and the metadata a reader needs
  first (Parquet's footer, ORC's postscript and footer — read with pyarrow; Avro's header and
  that the file ends with the header's sync marker, which a truncated file does not);
* json, xml, avro: no record nested deeper than Parquet allows (:mod:`._inspect_depth`; Avro:
  its schema); json, csv and text read as UTF-8: no bytes that are not UTF-8 (Spark would
  replace them);
* json, csv, text, xml: no record over ``max_record_bytes`` (a line, for xml the span
  between two ``<rowTag`` starts, for ``multiLine`` json the whole file). Only files bigger
  than the limit are scanned; a compressed file (``.gz``, ``.bz2``, ``.xz``, ``.zst``,
  ``.deflate``) is scanned streaming when its codec's largest expansion of its size could
  pass the limit (:mod:`._inspect_compressed`).

A local json, csv, text or xml file is read once on the driver for the UTF-8 and nesting
checks (streamed; S3 objects are not: lakemark's reader decodes them strictly and checks each
record's nesting instead). Otherwise
only what a file's first bytes and its footer show is seen here; damage inside the data (a
flipped byte in a Parquet page) surfaces when Spark reads, and the job pins it then. Local
files are read on the driver; S3 objects with ranged reads of their head and tail (about
three requests per Parquet, ORC or Avro object, in 8 threads; a line-format object is not
touched unless it is over the limit, and then read once more in full, which is the price of not
dying on it).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..planning.files import FileEntry
from ..storage import arrow_filesystem, mapped_path, parse_uri
from ._inspect_compressed import (DECOMPRESS_ERRORS, codec_of, decompressed, may_hold_over,
                                  utf8_problem)
from ._inspect_depth import avro_depth_problem, json_depth_problem, xml_depth_problem

__all__ = ["DEFAULT_MAX_RECORD_BYTES", "BadFile", "inspect_files", "inspect_file",
           "parse_size"]

#: The default largest record of a line format (json, csv, text, xml): 64 MiB.
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024

_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".snappy", ".lz4", ".deflate", ".zip")
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class BadFile:
    """A planned file that cannot be read, and why (one line)."""

    entry: FileEntry
    reason: str


def parse_size(text: str | int, *, option: str) -> int:
    """A byte count from ``64MiB``, ``200MB``, ``1g`` or a plain number; ValueError naming
    ``option`` for anything else."""
    if isinstance(text, int):
        value = text
    else:
        units = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1024 ** 2,
                 "mb": 1000 ** 2, "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1000 ** 3,
                 "gib": 1024 ** 3}
        raw = text.strip().lower()
        number = raw.rstrip("kmgib")
        unit = raw[len(number):]
        try:
            value = int(float(number) * units[unit])
        except (KeyError, ValueError):
            raise ValueError(f"{option} {text!r}: give a size such as 64MiB, 200MB or "
                             "1048576") from None
    if value <= 0:
        raise ValueError(f"{option} must be positive, got {text!r}")
    return value


def inspect_files(files: Sequence[FileEntry], *, format: str,
                  options: Mapping[str, str] | None = None,
                  max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
                  threads: int = 8) -> list[BadFile]:
    """The files of ``files`` that cannot be read as ``format`` (see the module doc), in the
    order given."""
    opts = {k.lower(): str(v) for k, v in (options or {}).items()}
    check: Callable[[FileEntry], str | None] = lambda e: inspect_file(  # noqa: E731
        e, format=format, options=opts, max_record_bytes=max_record_bytes)
    remote = [f for f in files if parse_uri(f.path).is_s3 and mapped_path(f.path) is None]
    if len(remote) > 1 and threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            reasons = list(pool.map(check, files))
    else:
        reasons = [check(f) for f in files]
    return [BadFile(f, r) for f, r in zip(files, reasons, strict=True) if r is not None]


def inspect_file(entry: FileEntry, *, format: str, options: Mapping[str, str],
                 max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> str | None:
    """Why ``entry`` cannot be read as ``format``, or None when the checks pass."""
    local = _local_path(entry.path)
    try:
        if local is not None:
            problem = _local_problem(local)
            if problem is not None:
                return problem
            with open(local, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                return _format_problem(handle, size, local, format, options, max_record_bytes)
        if format not in _COLUMNAR and entry.size <= max_record_bytes \
                and not may_hold_over(entry.path, entry.size, max_record_bytes):
            return None  # an S3 object that small needs no request (a missing one fails the read)
        fs, path = arrow_filesystem(entry.path)
        with fs.open_input_file(path) as stream:
            size = stream.size()
            return _format_problem(stream, size, entry.path, format, options, max_record_bytes)
    except PermissionError:
        return "cannot be read: permission denied"
    except FileNotFoundError:
        return "no longer exists (removed after it was listed)"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"


def _local_path(uri: str) -> str | None:
    mapped = mapped_path(uri)
    if mapped is not None:
        return mapped
    loc = parse_uri(uri)
    return None if loc.is_s3 else loc.key


def _local_problem(path: str) -> str | None:
    """A link, existence or file-type problem of a local path, or None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"dangling symbolic link (to {os.readlink(path)})"
        return "no longer exists (removed after it was listed)"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop (too many levels of symbolic links)"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "cannot be read: permission denied"
        return f"cannot be read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def _format_problem(stream: Any, size: int, name: str, format: str, options: Mapping[str, str],
                    limit: int) -> str | None:
    if format in ("parquet", "orc", "avro"):
        if size == 0:
            return f"empty file (a {_TITLE[format]} file has at least a header)"
        return _COLUMNAR[format](stream, size)
    problem = _size_problem(stream, size, name, format, options, limit)
    if problem is None and name.lower().endswith(_COMPRESSED) and codec_of(name) is None:
        return None  # a codec Python cannot decompress: not decodable here
    if problem is None and _checks_utf8(format, options):
        problem = _text_problem(stream, name, utf8_problem)
    if problem is None and format == "json":
        multiline = options.get("multiline", "false").lower() == "true"
        problem = _text_problem(stream, name,
                                lambda raw: json_depth_problem(raw, multiline=multiline))
    if problem is None and format == "xml":
        row_tag = options.get("rowtag", "ROW")
        problem = _text_problem(stream, name, lambda raw: xml_depth_problem(raw, row_tag=row_tag))
    return problem


def _text_problem(stream: Any, name: str, check: Callable[[Any], str | None]) -> str | None:
    """``check`` of the file's bytes from the start (decompressed when compressed)."""
    stream.seek(0)
    try:
        return check(decompressed(name, stream) if codec_of(name) else stream)
    except DECOMPRESS_ERRORS:
        return None  # damaged compressed data: the read fails on it and pins the file
    except ImportError:
        return None  # .zst without the zstandard package: not checked


def _size_problem(stream: Any, size: int, name: str, format: str, options: Mapping[str, str],
                  limit: int) -> str | None:
    """A record over ``limit`` in line file ``name``, or None."""
    if name.lower().endswith(_COMPRESSED):
        if not may_hold_over(name, size, limit):
            return None
        try:
            return _record_problem(decompressed(name, stream), None, format, options, limit,
                                   " (decompressed)")
        except DECOMPRESS_ERRORS:
            return None  # damaged compressed data: the read fails on it and pins the file
        except ImportError:
            return None  # .zst without the zstandard package: not scanned
    if size <= limit:
        return None
    return _record_problem(stream, size, format, options, limit, "")


_UTF8 = frozenset({"utf-8", "utf8", "utf_8"})


def _checks_utf8(format: str, options: Mapping[str, str]) -> bool:
    """Does Spark read ``format`` files with these options as UTF-8, replacing bad bytes?"""
    encoding = (options.get("encoding") or options.get("charset") or "utf-8").strip().lower()
    return format in ("csv", "json", "text") and encoding in _UTF8


def _record_problem(stream: Any, size: int | None, format: str, options: Mapping[str, str],
                    limit: int, note: str) -> str | None:
    """A record of ``stream`` (``size`` bytes; None: unknown, as for a decompressed stream)
    over ``limit``, or None."""
    if format == "json" and options.get("multiline", "false").lower() == "true":
        whole = size if size is not None else _total(stream)
        if whole <= limit:
            return None
        return _over(whole, limit, "the whole file" + note + " (multiLine JSON is one record)")
    separator = b"\n"
    if format == "xml":
        separator = b"<" + options.get("rowtag", "ROW").encode()
    longest = _longest_span(stream, separator)
    if longest > limit:
        return _over(longest, limit, "one record" + note)
    return None


def _total(stream: BinaryIO) -> int:
    """How many bytes ``stream`` holds, read in chunks."""
    total = 0
    while chunk := stream.read(_CHUNK):
        total += len(chunk)
    return total


def _over(size: int, limit: int, what: str) -> str:
    return (f"{what} of {size} bytes is over the record size limit of {limit} bytes "
            "(max_record_bytes / --max-record-bytes)")


def _longest_span(stream: BinaryIO, separator: bytes) -> int:
    """The longest run of bytes between two ``separator``s (or the file's ends)."""
    longest = current = 0
    tail = b""
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        data = tail + chunk
        start = 0
        while True:
            found = data.find(separator, start)
            if found < 0:
                break
            current += found - start
            longest = max(longest, current)
            current = 0
            start = found + len(separator)
        keep = len(separator) - 1
        rest = data[start:]
        if keep and len(rest) > keep:
            current += len(rest) - keep
            tail = rest[-keep:]
        elif keep:
            tail = rest
        else:
            current += len(rest)
            tail = b""
    return max(longest, current + len(tail))


def _read_at(stream: Any, offset: int, length: int) -> bytes:
    stream.seek(offset)
    data: bytes = stream.read(length)
    return data


def _parquet(stream: Any, size: int) -> str | None:
    if size < 12 or _read_at(stream, 0, 4) != b"PAR1" or _read_at(stream, size - 4, 4) != b"PAR1":
        return "not a Parquet file or truncated (no PAR1 magic at its start and end)"
    import pyarrow.parquet as pq

    stream.seek(0)
    try:
        meta = pq.ParquetFile(stream).metadata
    except Exception as exc:  # noqa: BLE001 - any footer failure makes the file unreadable
        return f"unreadable Parquet footer: {_first_line(exc)}"
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            col = group.column(c)
            start = col.dictionary_page_offset or col.data_page_offset
            if start is None or start < 4 or start + col.total_compressed_size > size:
                return "damaged Parquet file: a column chunk lies outside the file"
    return None


def _orc(stream: Any, size: int) -> str | None:
    if size < 4 or _read_at(stream, 0, 3) != b"ORC":
        return "not an ORC file (no ORC magic at its start)"
    import pyarrow.orc as po

    stream.seek(0)
    try:
        if po.ORCFile(stream).nrows < 0:
            return "damaged ORC footer"
    except Exception as exc:  # noqa: BLE001 - any footer failure makes the file unreadable
        return f"unreadable ORC footer or truncated file: {_first_line(exc)}"
    return None


def _avro(stream: Any, size: int) -> str | None:
    if size < 4 or _read_at(stream, 0, 4) != b"Obj\x01":
        return "not an Avro file (no Obj\\x01 magic at its start)"
    import fastavro

    stream.seek(0)
    try:
        reader = fastavro.reader(stream)
        sync = reader._header["sync"]  # noqa: SLF001 - the header's sync marker
        header_end = stream.tell()
    except Exception as exc:  # noqa: BLE001 - a header failure makes the file unreadable
        return f"unreadable Avro header: {_first_line(exc)}"
    if size > header_end and _read_at(stream, size - 16, 16) != sync:
        return "truncated Avro file (it does not end with its sync marker)"
    try:
        schema = json.loads(reader._header["meta"]["avro.schema"])  # noqa: SLF001
    except (KeyError, TypeError, ValueError):
        return None  # fastavro read the header; Spark's reader judges the schema itself
    return avro_depth_problem(schema)


def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(exc).__name__


_COLUMNAR: dict[str, Callable[[Any, int], str | None]] = {
    "parquet": _parquet, "orc": _orc, "avro": _avro}
_TITLE = {"parquet": "Parquet", "orc": "ORC", "avro": "Avro"}
