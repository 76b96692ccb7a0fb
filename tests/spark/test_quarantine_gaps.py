"""Quarantine gaps of issue 31 end to end on local Spark: a record over the size limit inside a
compressed file, bytes that are not UTF-8, a record nested deeper than Parquet allows."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from test_quarantine import OLD, Lake, lake, write  # noqa: F401 - the fixture

pytestmark = pytest.mark.spark


def test_a_record_over_the_limit_inside_a_gzip_file_is_set_aside(lake: Lake) -> None:  # noqa: F811
    write("json", lake.src / "a.json", 0, 3)
    big = lake.src / "big.json.gz"
    lines = [json.dumps({"id": 50, "name": "ok"}), json.dumps({"id": 99, "name": "x" * 300_000})]
    big.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    os.utime(big, (OLD, OLD))
    assert big.stat().st_size < 100 * 1024  # smaller than the limit: only the scan sees it
    out = lake.ingest("--max-record-bytes", "100KiB", code=3)
    assert (out["files_taken"], out["files_set_aside"]) == (1, 1)
    assert lake.ids() == [0, 1, 2]
    assert "one record (decompressed) of 300" in lake.aside()["big.json.gz"]
