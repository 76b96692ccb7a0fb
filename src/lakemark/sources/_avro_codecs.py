"""The Avro ``snappy`` codec without ``cramjam``: blocks decompressed by pyarrow's snappy.

Spark writes Avro files snappy-compressed by default (``spark.sql.avro.compression.codec``), as
do many producers, and ``fastavro`` reads that codec only with the ``cramjam`` (or
``python-snappy``) package installed: without it every such file fails. pyarrow, which lakemark
has anyway, ships snappy, so :func:`ensure_codecs` gives fastavro a block reader built on it
when neither package is there. An Avro snappy block is the raw snappy data followed by the
big-endian CRC-32 of the uncompressed data, which is checked: a block that fails it raises
ValueError (the read then fails naming the file).
"""

from __future__ import annotations

import zlib
from io import BytesIO
from typing import Any

__all__ = ["ensure_codecs", "snappy_block"]


def _zigzag_long(stream: Any) -> int:
    """An Avro ``long`` (zig-zag varint) read from a file object."""
    shift = value = 0
    while True:
        byte = stream.read(1)
        if not byte:
            raise EOFError("an avro block ends before its size")
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return (value >> 1) ^ -(value & 1)
        shift += 7


def _snappy_length(data: bytes) -> int:
    """The uncompressed length a raw snappy buffer starts with (an unsigned varint)."""
    shift = value = 0
    for byte in data[:10]:
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
    raise ValueError("a snappy block without its length")


def snappy_block(source: Any) -> BytesIO:
    """One Avro block in the snappy codec, decompressed (``source``: the file object
    fastavro's compiled reader passes, or its pure-Python decoder)."""
    import pyarrow as pa

    if hasattr(source, "read_long"):
        data = source.read_fixed(source.read_long())
    else:
        size = _zigzag_long(source)
        data = source.read(size)
        if len(data) != size:
            raise EOFError("an avro block ends before its data")
    body, crc = data[:-4], data[-4:]
    out = pa.Codec("snappy").decompress(body, decompressed_size=_snappy_length(body),
                                        asbytes=True)
    if zlib.crc32(out) != int.from_bytes(crc, "big"):
        raise ValueError("an avro snappy block fails its CRC-32 check")
    return BytesIO(out)


def ensure_codecs() -> None:
    """Let fastavro read snappy blocks with pyarrow when it has no snappy library of its own."""
    import fastavro.read

    try:
        import cramjam  # noqa: F401
        return
    except ImportError:
        pass
    try:
        import snappy  # noqa: F401
        return
    except ImportError:
        pass
    fastavro.read.BLOCK_READERS["snappy"] = snappy_block
