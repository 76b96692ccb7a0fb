"""The record size check of compressed line files (json, csv, text, xml): streamed, bounded.

A compressed file's size says little about its records: a 70 KiB ``.gz`` file can hold one
64 MiB line. So a compressed file is decompressed here in chunks of 1 MiB (memory stays at about
one chunk however large the file or its records) and its longest record measured as for a
plain file — but only when it *could* hold a record over the limit:

* ``.gz``, ``.deflate``: deflate cannot expand more than 1032 times, so a file of at most
  ``limit / 1032`` compressed bytes is not scanned (with the default 64 MiB limit: 65 KiB);
* ``.bz2``, ``.xz``, ``.zst``/``.zstd``: their ratio has no useful bound (a few bytes can stand
  for megabytes), so every such file is scanned (``.zst`` when the ``zstandard`` package is
  installed);
* ``.snappy``, ``.lz4``, ``.zip`` and other codecs: not scanned (Hadoop's block framing of
  snappy and lz4 is not what Python libraries read); the read-time pin still sets such a file
  aside when Spark fails on it.

A file whose compressed data is damaged is left to the read (Spark fails on it and the run
pins it, as for any damage only a full read sees): the scan only judges record sizes.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

__all__ = ["DECOMPRESS_ERRORS", "DEFLATE_MAX_RATIO", "codec_of", "decompressed",
           "may_hold_over", "utf8_problem"]

#: Deflate's largest expansion (zlib's technical details: 1032:1).
DEFLATE_MAX_RATIO = 1032

_UNBOUNDED = None  # a codec whose expansion has no useful bound

_RATIOS: dict[str, int | None] = {".gz": DEFLATE_MAX_RATIO, ".deflate": DEFLATE_MAX_RATIO,
                                  ".bz2": _UNBOUNDED, ".xz": _UNBOUNDED, ".zst": _UNBOUNDED,
                                  ".zstd": _UNBOUNDED}


def codec_of(name: str) -> str | None:
    """The compression suffix of ``name`` that this module can decompress, or None."""
    lower = name.lower()
    return next((s for s in _RATIOS if lower.endswith(s)), None)


def may_hold_over(name: str, size: int, limit: int) -> bool:
    """Could compressed file ``name`` of ``size`` bytes hold a record over ``limit`` bytes?"""
    codec = codec_of(name)
    if codec is None:
        return False
    ratio = _RATIOS[codec]
    return ratio is None or size * ratio > limit


class _Inflate:
    """A read(n) stream of a zlib (``.deflate``, Hadoop's DefaultCodec) stream's bytes."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw, self._z, self._out = raw, zlib.decompressobj(), b""

    def read(self, n: int) -> bytes:
        while len(self._out) < n:
            data = self._raw.read(n)
            if not data:
                self._out += self._z.flush()
                break
            self._out += self._z.decompress(data, n)
            while self._z.unconsumed_tail and len(self._out) < n:
                self._out += self._z.decompress(self._z.unconsumed_tail, n)
        out, self._out = self._out[:n], self._out[n:]
        return out


def _zstd(raw: BinaryIO) -> Any:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


_OPENERS: dict[str, Callable[[BinaryIO], Any]] = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    ".deflate": _Inflate,
    ".bz2": lambda raw: bz2.BZ2File(raw, mode="rb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, mode="rb"),
    ".zst": _zstd, ".zstd": _zstd,
}

#: What a damaged compressed stream raises while it is read.
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (
    EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


def decompressed(name: str, raw: BinaryIO) -> Any:
    """A stream with ``read(n)`` of the decompressed bytes of ``raw`` (``name`` says the
    codec; see :func:`codec_of`)."""
    codec = codec_of(name)
    if codec is None:
        raise ValueError(f"no decompressor for {name!r}")
    return _OPENERS[codec](raw)


_CHUNK = 1024 * 1024


def utf8_problem(stream: Any) -> str | None:
    """Where ``stream`` (plain or :func:`decompressed`) first holds bytes that are not UTF-8,
    as a reason; None when it is all UTF-8. Read in 1 MiB chunks with an incremental decoder
    (a character split between two chunks is fine). A file starting with a UTF-16/32
    byte-order mark is not UTF-8 by intent (Spark's JSON reader detects it): not judged."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = lines = 0
    first = True
    while True:
        chunk = stream.read(_CHUNK)
        if first and chunk[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return None
        first = False
        pending = len(decoder.getstate()[0])  # bytes of a character cut by the last chunk
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:  # exc.start counts from the pending bytes
            at = offset - pending + exc.start
            line = lines + chunk[:max(exc.start - pending, 0)].count(b"\n") + 1
            return (f"bytes that are not UTF-8 at byte {at} (line {line}): Spark would "
                    "replace them with U+FFFD and change the data; fix the file, or give its "
                    "encoding (--option encoding=...)")
        if not chunk:
            return None
        offset += len(chunk)
        lines += chunk.count(b"\n")
