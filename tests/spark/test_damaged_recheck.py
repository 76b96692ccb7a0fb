"""Damaged-input re-check (bench/damaged_recheck.py): compressed files that do not decompress
— truncated gzip, a damaged deflate block, trailing garbage, plain text named .gz — made a
Python job's run fail at schema inference (the next run went on without the file); now the
job sets the file aside in the same run and commits the others, as `ingest files` does. The
other kinds of the re-check held already; the bench runs them all."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import damaged_recheck  # noqa: E402

pytestmark = pytest.mark.spark

GZIP_KINDS = ("gzip-truncated", "gzip-bad-block", "gzip-trailing-garbage", "not-gzip")


@pytest.mark.parametrize("kind", GZIP_KINDS)
def test_a_gzip_file_that_does_not_decompress_is_set_aside_in_the_same_run(
        kind: str, tmp_path: Path, spark: Any) -> None:
    [case] = [c for c in damaged_recheck.CASES if c.kind == kind]
    outcomes = damaged_recheck.run_case(case, tmp_path, spark)
    assert [(o.entry, o.status) for o in outcomes] == [
        ("ingest files", "set aside"), ("Python Job", "set aside")], outcomes
    assert all("run 1 failed" not in o.detail for o in outcomes), outcomes
    assert "no schema can be inferred from it" in outcomes[1].detail
