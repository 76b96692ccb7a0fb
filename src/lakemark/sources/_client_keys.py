"""The key scan of a small local increment, done in the client process: no Spark job.

Over Spark Connect every Spark action is a round trip and a job on a shared server; for a run
of a few thousand small files the key scan of :func:`._json_tracked.scan_keys` costs more in
scheduling than in reading. When the run's files are local (or in a bucket mapped to a local
folder), their total size is at most ``spark.lakemark.clientKeyScanBytes`` (default 16 MiB;
``0`` turns this off) and the tracked schema has no struct-holding column, the scan is done
here, in Python, and gives the same :class:`KeyScan` as the Spark scan, record for record:

* records are cut as Spark's text reader cuts them (``\\n``, ``\\r\\n`` or ``\\r``; the whole
  file with ``multiLine``);
* a record is looked at only where the Spark scan's regular expression (``rlike``) finds a
  candidate key: :func:`candidate_pattern` is the same expression in Python's syntax (Java's
  ``\\s`` and ``.``, possessive quantifiers);
* its keys are those of ``json_object_keys``: the keys of the outermost object, in order, what
  follows the object ignored, none for a record that is not an object or whose object is not
  JSON (a corrupt line); Python's JSON decoder accepts exactly what Spark's parser does there
  (control characters in strings, no ``NaN``), except single quotes, which Spark accepts:
  such a record is handed back (below);
* each key's record count and files (``input_file_name()``'s form, ``file:///…``).

Anything this scan would not reproduce exactly — a file that is not UTF-8, a compressed
file, a ``lineSep`` or ``pathGlobFilter`` option, a file named ``_…`` or ``.…``, a
layout of ``key=value`` folders other than the same keys above every file (Spark's partition
discovery decides which files the text reader reads, :func:`plain_partitions`), a record
whose decoding fails where a single quote could be Spark's, very deep nesting or very long
numbers, a key holding a lone surrogate, a file that cannot be read here — makes
:func:`client_scan` return None and the run uses the Spark scan.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import ConfigError
from ..storage import mapped_path, parse_uri

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..planning.files import FileEntry
    from ._options import ReadRequest

__all__ = ["CLIENT_KEY_SCAN_BYTES", "DEFAULT_CLIENT_KEY_SCAN_BYTES", "Unsupported",
           "candidate_pattern", "client_scan", "object_keys", "plain_partitions", "records_of",
           "scan_records"]

#: Spark setting: the largest increment (total bytes of its files) scanned in the client.
CLIENT_KEY_SCAN_BYTES = "spark.lakemark.clientKeyScanBytes"
DEFAULT_CLIENT_KEY_SCAN_BYTES = 16 * 1024 * 1024

_S = "[ \\t\\n\\x0b\\x0c\\r]"  # Java's \s
_DOT = "[^\\n\\r\\x85\\u2028\\u2029]"  # Java's . (no line terminator)
_CODECS = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".br", ".xz",
           ".lzo", ".z", ".lzma")
_MAX_NUMBER = 900  # Spark's parser refuses numbers of more than 1000 digits
_MAX_RECORD = 1_000_000  # characters; Spark's parser limits strings and names
_SIZE = re.compile(r"\s*(\d+)\s*([A-Za-z]*)\s*")
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
          "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


class Unsupported(Exception):
    """The increment holds something this scan does not reproduce exactly."""


def candidate_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """The Spark scan's ``rlike`` expression (:func:`._json_tracked._candidate_regex`, no
    struct-holding column) in Python's syntax."""
    key = f'(?:[^"\\\\]|\\\\{_DOT})*+"{_S}*+:'
    if not names:
        return re.compile('"' + key)
    known = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return re.compile(f'[{{,]{_S}*+"(?!(?:{known})"{_S}*+:)' + key)


class _Constant(Exception):
    pass


def _constant(text: str) -> Any:
    raise _Constant(text)


def _number(text: str) -> int:
    if len(text) > _MAX_NUMBER:
        raise Unsupported("a very long number")
    return 0


_DECODER = json.JSONDecoder(object_pairs_hook=lambda pairs: pairs, parse_float=_number,
                            parse_int=_number, parse_constant=_constant, strict=False)


def object_keys(record: str) -> list[str] | None:
    """``json_object_keys(record)`` as Spark computes it (None: null)."""
    i, n = 0, len(record)
    while i < n and record[i] in " \t\n\r":
        i += 1
    if i == n or record[i] != "{":
        if i < n and record[i] == "\ufeff":
            raise Unsupported("a byte-order mark")
        return None
    if n > _MAX_RECORD:
        raise Unsupported("a very long record")
    try:
        pairs, _ = _DECODER.raw_decode(record, i)
    except _Constant:
        return None
    except RecursionError:
        raise Unsupported("very deep nesting") from None
    except ValueError:
        if "'" in record:
            raise Unsupported("single quotes") from None
        return None
    keys = [k for k, _ in pairs]
    for k in keys:
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            raise Unsupported("a lone surrogate in a key") from None
    return keys


_LINES = re.compile("\r\n|\r|\n")


def records_of(text: str, whole: bool) -> list[str]:
    """The records Spark's text reader makes of a file's ``text``."""
    if whole:
        return [text]
    if not text:
        return []
    lines = _LINES.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def scan_records(files: Iterable[tuple[str, Iterable[str]]], names: Sequence[str]
                 ) -> tuple[dict[str, int], dict[str, list[str]]]:
    """(records having each key that is not in ``names``, its files sorted) over ``files``:
    (file name as ``input_file_name()`` gives it, its records)."""
    pattern = candidate_pattern(names)
    known = set(names)
    counts: dict[str, int] = {}
    where: dict[str, set[str]] = {}
    for file, records in files:
        for record in records:
            if pattern.search(record) is None:
                continue
            keys = object_keys(record)
            if not keys:
                continue
            for k in dict.fromkeys(keys):
                if k in known:
                    continue
                counts[k] = counts.get(k, 0) + 1
                where.setdefault(k, set()).add(file)
    return counts, {k: sorted(v) for k, v in where.items()}


_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                  "_-!.~'()*,;:$&+=/@")


def _kept(char: str) -> bool:
    """Whether Java's URI keeps ``char`` as it is in a path (else: percent-encoded UTF-8)."""
    if char < "\x80":
        return char in _KEPT
    # Java keeps "other" characters: not ISO control, not a space character
    return not ("\x80" <= char <= "\x9f") and unicodedata.category(char) not in (
        "Zs", "Zl", "Zp", "Cs")


def file_name(path: str) -> str:
    """A local file's name as ``input_file_name()`` gives it (Hadoop's ``Path.toUri()``)."""
    return "file://" + "".join(c if _kept(c) else quote(c, safe="")
                               for c in os.path.abspath(path))


def local_files(files: Sequence[FileEntry], root: str, request: ReadRequest
                ) -> list[str] | None:
    """The local paths of ``files`` when the client can read them as Spark's text reader
    would; None otherwise."""
    if request.option("lineSep") or request.option("pathGlobFilter"):
        return None
    if parse_uri(root).is_s3 and mapped_path(root) is None:
        return None
    if plain_partitions(files, root, request) is None:  # Spark's partition discovery decides
        return None
    paths = []
    for entry in files:
        if entry.offset:
            return None
        local = mapped_path(entry.path) or entry.path
        uri = parse_uri(local)
        if uri.is_s3:
            return None
        name = Path(uri.key).name
        if name.startswith(("_", ".")) or name.lower().endswith(_CODECS):
            return None
        paths.append(uri.key)
    return paths


def plain_partitions(files: Sequence[FileEntry], root: str, request: ReadRequest
                     ) -> list[str] | None:
    """The partition columns Spark's reader gives ``files`` (local, read with ``basePath``
    the root) when their layout is plain: no ``key=value`` folder, or every file under the
    same ``key=value`` folders (keys without escapes, values not empty) — then Spark reads
    every file. None for any other layout (mixed depths, other folders, escaped keys: Spark's
    partition discovery may leave files out or refuse the layout)."""
    from ._partitions import layout_of

    layout = layout_of(root, files)
    if not layout.may_have_partitions:
        return []
    if request.flag("recursiveFileLookup") or not os.path.isdir(layout.root.key):
        return None
    shapes = set()
    for folder in layout.folders:
        keys = []
        for segment in folder.split("/"):
            key, sep, value = segment.partition("=")
            if not sep or not key or not value or "%" in key or key.startswith(("_", ".")):
                return None
            keys.append(key)
        shapes.add(tuple(keys))
    if len(shapes) != 1:
        return None
    names = list(shapes.pop())
    return names if len({n.lower() for n in names}) == len(names) else None


def limit(spark: SparkSession) -> int:
    """``spark.lakemark.clientKeyScanBytes`` (ConfigError naming it when it is not a size)."""
    text = spark.conf.get(CLIENT_KEY_SCAN_BYTES, None)
    if text is None or not str(text).strip():
        return DEFAULT_CLIENT_KEY_SCAN_BYTES
    match = _SIZE.fullmatch(str(text))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise ConfigError(f"{CLIENT_KEY_SCAN_BYTES} must be a byte size (e.g. 16m; 0 turns "
                          f"the client scan off), not {text!r}")
    return int(match.group(1)) * _UNITS[unit]


def client_scan(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                root: str, names: Sequence[str]
                ) -> tuple[dict[str, int], dict[str, list[str]]] | None:
    """The keys of ``files``' records that are not ``names`` (as :func:`scan_records`), read
    here; None when the Spark scan must do it (see the module doc)."""
    most = limit(spark)
    paths = local_files(files, root, request) if most else None
    if paths is None or sum(max(0, f.size) for f in files) > most:
        return None
    whole = request.flag("multiLine")

    def texts() -> Iterable[tuple[str, list[str]]]:
        for path in paths:
            try:
                data = Path(path).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                raise Unsupported(f"file {path}") from None
            yield file_name(path), records_of(data, whole)

    try:
        return scan_records(texts(), names)
    except Unsupported:
        return None
