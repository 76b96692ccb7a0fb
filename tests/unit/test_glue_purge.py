"""``purge_s3_path`` on local paths (``lakemark.glue._purge``); no Spark needed."""

from __future__ import annotations

from pathlib import Path

from lakemark.glue._purge import purge_path


def test_purge_deletes_old_files_and_a_missing_path_purges_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out"
    (target / "d=1").mkdir(parents=True)
    (target / "d=1" / "a.parquet").write_text("x")
    (target / "b.parquet").write_text("y")
    assert purge_path(str(tmp_path / "never-written"), {"retentionPeriod": 0}) == 0
    assert purge_path(str(target), {}) == 0  # default retention: 7 days
    assert purge_path(str(target), {"retentionPeriod": 0}) == 2
    assert not any(p.is_file() for p in target.rglob("*"))
