"""Merging reads of many small files: the partition count lakemark asks Spark for.

Pure Python: no JVM, no I/O.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from lakemark.planning.splits import (
    DEFAULT_MAX_PARTITION_BYTES,
    DEFAULT_OPEN_COST_BYTES,
    parse_byte_size,
    read_partitions,
    spark_partition_estimate,
)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def test_a_thousand_small_files_are_merged_to_one_partition_per_core() -> None:
    sizes = [2 * KIB] * 1000
    assert spark_partition_estimate(sizes, parallelism=2,
                                    max_partition_bytes=DEFAULT_MAX_PARTITION_BYTES,
                                    open_cost_bytes=DEFAULT_OPEN_COST_BYTES) == 32
    assert read_partitions(sizes, parallelism=2) == 2
    assert read_partitions(sizes, parallelism=8) == 8


def test_large_inputs_keep_spark_packing() -> None:
    assert read_partitions([10 * GIB], parallelism=2) is None  # one big file, split by Spark
    assert read_partitions([10 * MIB] * 100, parallelism=2) is None  # already near the target
    assert read_partitions([2 * KIB] * 10, parallelism=2) is None  # two partitions already


def test_many_small_files_adding_up_to_gigabytes_get_one_partition_per_split() -> None:
    sizes = [256 * KIB] * 8192  # 2 GiB in files far below the open cost
    assert read_partitions(sizes, parallelism=2) == 16


def test_nothing_to_read_keeps_spark_packing() -> None:
    assert read_partitions([], parallelism=2) is None


@given(st.lists(st.integers(min_value=0, max_value=4 * GIB), max_size=300),
       st.integers(min_value=1, max_value=64),
       st.integers(min_value=1 * MIB, max_value=1 * GIB),
       st.integers(min_value=0, max_value=64 * MIB))
def test_merging_only_ever_reduces_tasks_and_keeps_every_core_busy(
        sizes: list[int], parallelism: int, max_bytes: int, open_cost: int) -> None:
    n = read_partitions(sizes, parallelism=parallelism, max_partition_bytes=max_bytes,
                        open_cost_bytes=open_cost)
    if n is None:
        return
    natural = spark_partition_estimate(sizes, parallelism=parallelism,
                                       max_partition_bytes=max_bytes, open_cost_bytes=open_cost)
    assert n >= parallelism  # never fewer partitions than cores
    assert n >= math.ceil(sum(sizes) / max_bytes)  # never more than maxPartitionBytes each
    assert 2 * n <= natural  # only merged when Spark would make twice as many


def test_byte_sizes_read_as_spark_writes_them() -> None:
    assert parse_byte_size("134217728", 1) == 128 * MIB
    assert parse_byte_size("128m", 1) == 128 * MIB
    assert parse_byte_size("128MB", 1) == 128 * MIB
    assert parse_byte_size(" 4 kb ", 1) == 4 * KIB
    assert parse_byte_size("1g", 1) == GIB
    assert parse_byte_size("8b", 1) == 8


def test_unreadable_byte_sizes_fall_back_to_the_default() -> None:
    for text in (None, "", "lots", "12 parsecs", "-5m", "0"):
        assert parse_byte_size(text, 77) == 77
