"""Parquet files with damage only a full read meets: a page of one column overwritten, the
footer and the other columns intact (the quarantine's cheap checks and a read of ``id`` alone
pass; decoding ``payload`` fails)."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq


def orders_parquet(ids: range, *, bad_page: bool = False) -> bytes:
    """Snappy Parquet of orders ``ids`` (``id``, ``payload``); ``bad_page``: the middle of its
    ``payload`` page overwritten."""
    table = pa.Table.from_pylist([{"id": i, "payload": f"order {i} " + "x" * 200} for i in ids])
    out = io.BytesIO()
    pq.write_table(table, out, compression="snappy", use_dictionary=False)
    data = bytearray(out.getvalue())
    if bad_page:
        chunk = pq.ParquetFile(io.BytesIO(bytes(data))).metadata.row_group(0).column(1)
        middle = chunk.data_page_offset + chunk.total_compressed_size // 2
        data[middle:middle + 64] = b"\xff" * 64
    return bytes(data)
