"""Seeded, reproducible input data for the benchmarks.

Rows look like an order feed (id, customer, amount, currency, status, a free-text note, a
timestamp), so files compress and parse like real ones. The same ``seed`` and arguments always
give byte-identical files. Layouts:

* ``flat``: ``<root>/part-<batch>-<i>.<ext>``
* ``date``: ``<root>/date=YYYY-MM-DD/part-<batch>-<i>.<ext>`` (one day per batch, Hive style,
  so lexical key order follows arrival order, as with date-prefixed S3 keys)

Only the standard library and pyarrow (a lakemark dependency) are used.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SCHEMA_DDL", "batch_paths", "json_rows", "write_batch", "write_json_bytes", "key_for"]

#: The rows' schema as Spark DDL (given to every reader so no tool pays for inference).
SCHEMA_DDL = ("id BIGINT, customer STRING, amount DOUBLE, currency STRING, status STRING, "
              "note STRING, ts STRING")

_STATUSES = ("new", "paid", "shipped", "returned", "cancelled")
_CURRENCIES = ("EUR", "USD", "GBP", "JPY")
_WORDS = ("fast", "gift", "bulk", "fragile", "priority", "standard", "oversize", "repeat",
          "promo", "online", "store", "partner")
_DAY0 = dt.date(2026, 1, 1)


def _rng(seed: int, batch: int, index: int) -> random.Random:
    return random.Random(seed * 1_000_003 + batch * 10_007 + index)


def json_rows(seed: int, batch: int, index: int, rows: int) -> Iterator[str]:
    """``rows`` JSON lines for file ``index`` of ``batch`` (deterministic)."""
    r = _rng(seed, batch, index)
    base_id = (batch * 1_000_000 + index) * 10_000
    for i in range(rows):
        note = " ".join(r.choice(_WORDS) for _ in range(r.randint(2, 8)))
        yield ('{"id": %d, "customer": "c%06d", "amount": %.2f, "currency": "%s", '  # noqa: UP031
               '"status": "%s", "note": "%s", "ts": "2026-01-01T%02d:%02d:%02dZ"}\n' % (
                   base_id + i, r.randrange(1_000_000), r.random() * 1000,
                   r.choice(_CURRENCIES), r.choice(_STATUSES), note,
                   r.randrange(24), r.randrange(60), r.randrange(60)))


def write_json_bytes(seed: int, batch: int, index: int, rows: int) -> bytes:
    return "".join(json_rows(seed, batch, index, rows)).encode()


def key_for(batch: int, index: int, layout: str, ext: str) -> str:
    """The relative path (or S3 key suffix) of file ``index`` of ``batch``."""
    name = f"part-{batch:05d}-{index:06d}.{ext}"
    if layout == "flat":
        return name
    if layout == "date":
        return f"date={_DAY0 + dt.timedelta(days=batch)}/{name}"
    raise ValueError(f"unknown layout {layout!r}")


def batch_paths(root: Path, batch: int, files: int, layout: str, ext: str) -> list[Path]:
    return [root / key_for(batch, i, layout, ext) for i in range(files)]


def write_batch(root: Path, batch: int, files: int, *, rows: int = 20, layout: str = "date",
                fmt: str = "json", seed: int = 42, mtime: float | None = None) -> int:
    """Write one batch of files under ``root``; returns the bytes written.

    ``fmt`` is ``json`` (JSON lines) or ``parquet`` (same rows through pyarrow). ``mtime``
    (epoch seconds) sets every file's modification time; by default the files keep the time
    they were written.
    """
    total = 0
    for i, path in enumerate(batch_paths(root, batch, files, layout, fmt)):
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "json":
            data = write_json_bytes(seed, batch, i, rows)
            path.write_bytes(data)
            total += len(data)
        elif fmt == "parquet":
            _write_parquet(path, seed, batch, i, rows)
            total += path.stat().st_size
        else:
            raise ValueError(f"unknown format {fmt!r}")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
    return total


def _write_parquet(path: Path, seed: int, batch: int, index: int, rows: int) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [json.loads(line) for line in json_rows(seed, batch, index, rows)]
    pq.write_table(pa.Table.from_pylist(records), path)
