"""How many partitions a read of many small local files should have.

Spark packs input files into read partitions counting each file as its size plus an *open cost*
(``spark.sql.files.openCostInBytes``, 4 MiB by default): a guess at what opening a file on a
remote store costs. On a local or shared disk opening a file costs far less, so a run of 1,000
two-kilobyte files becomes ~32 tiny tasks, each writing its own tiny output file. The planner
knows every file's size, so lakemark merges such reads down to what the bytes need: at least
one partition per core, at most ``maxPartitionBytes`` each. Reads where Spark's packing is
already close to that are left alone.

Pure functions: the caller reads the Spark settings and passes them in.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = ["DEFAULT_MAX_PARTITION_BYTES", "DEFAULT_OPEN_COST_BYTES", "parse_byte_size",
           "read_partitions", "spark_partition_estimate"]

DEFAULT_MAX_PARTITION_BYTES = 128 * 1024 * 1024  # spark.sql.files.maxPartitionBytes
DEFAULT_OPEN_COST_BYTES = 4 * 1024 * 1024  # spark.sql.files.openCostInBytes

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "p": 1 << 50, "pb": 1 << 50}
_SIZE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def parse_byte_size(text: str | None, default: int) -> int:
    """A Spark byte-size setting (``134217728``, ``128m``, ``128MB``, ``1g``) in bytes.

    ``None``, an unknown unit or a value below 1 gives ``default``: the setting only tunes
    partitioning, so a value Spark itself would reject is not ours to report.
    """
    if text is None:
        return default
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        return default
    value = int(match.group(1)) * _UNITS[match.group(2).lower()]
    return value if value > 0 else default


def spark_partition_estimate(sizes: Iterable[int], *, parallelism: int,
                             max_partition_bytes: int, open_cost_bytes: int) -> int:
    """About how many partitions Spark's own packing makes of files with these sizes.

    Spark's rule: split size = min(maxPartitionBytes, max(openCost, total / parallelism)),
    where total counts each file as size + openCost; files are packed into bins of that size.
    """
    sizes = list(sizes)
    if not sizes:
        return 0
    weighted = sum(max(size, 0) + open_cost_bytes for size in sizes)
    split = min(max_partition_bytes, max(open_cost_bytes, weighted // max(parallelism, 1)))
    return max(1, math.ceil(weighted / max(split, 1)))


def read_partitions(sizes: Iterable[int], *, parallelism: int,
                    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES,
                    open_cost_bytes: int = DEFAULT_OPEN_COST_BYTES) -> int | None:
    """The partition count to merge a read of local files down to, or None to keep Spark's.

    The target is one partition per ``max_partition_bytes`` of actual data, and never fewer
    than ``parallelism`` (so every core still has work); a read is only merged when Spark's
    packing would make at least twice the target, so near-balanced reads keep their tasks.
    """
    sizes = list(sizes)
    if not sizes:
        return None
    total = sum(max(size, 0) for size in sizes)
    target = max(parallelism, 1, math.ceil(total / max(max_partition_bytes, 1)))
    natural = spark_partition_estimate(sizes, parallelism=parallelism,
                                       max_partition_bytes=max_partition_bytes,
                                       open_cost_bytes=open_cost_bytes)
    return target if natural >= 2 * target else None
