"""storage's file-system protocol: local and S3 by scheme, a third scheme in one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakemark.errors import ConfigError
from lakemark.sinks._model import IdempotencyToken
from lakemark.sinks._publish import commit_record, staged_publish, staging_folder
from lakemark.storage import FileSystem, filesystem_for, registered_schemes
from lakemark.storage._fs_local import LocalFileSystem
from lakemark.storage._fs_s3 import S3FileSystem

import mock_filesystem  # registers mock:// (tests/unit/mock_filesystem.py)
from mock_filesystem import OBJECTS


def test_filesystems_by_scheme(tmp_path: Path) -> None:
    local = filesystem_for(str(tmp_path))
    assert isinstance(local, LocalFileSystem) and local.root == str(tmp_path)
    assert isinstance(filesystem_for(f"file://{tmp_path}"), LocalFileSystem)
    s3 = filesystem_for("s3a://bucket/some/prefix/")
    assert isinstance(s3, S3FileSystem) and s3.root == "s3://bucket/some/prefix"
    assert "mock" in registered_schemes()
    with pytest.raises(ConfigError, match="gs"):
        filesystem_for("gs://bucket/x")


def _publish_twice(fs: FileSystem) -> None:
    """One staged publish with a commit record, then the same token again (skipped)."""
    def write(write_id: str) -> None:
        fs.write_text(f"{staging_folder(write_id)}/d=1/a.csv", "1\n")
        fs.write_text(f"{staging_folder(write_id)}/b.csv", "22\n")

    token = IdempotencyToken("app", 1)
    published = staged_publish(fs, token, {"k": "v"}, write)
    assert (sorted(published.files), published.bytes) == (["b.csv", "d=1/a.csv"], 5)
    record = commit_record(fs, token)
    assert record is not None and record["files"] == ["b.csv", "d=1/a.csv"]
    visible = sorted(rel for rel in fs.files("") if not rel.startswith("_"))
    assert visible == ["b.csv", "d=1/a.csv"]
    assert not [rel for rel in fs.files("") if "staging" in rel or rel.endswith(".pending")]


def test_a_third_scheme_is_one_file() -> None:
    """``mock://`` (tests/unit/mock_filesystem.py) serves a publish and a listing unchanged."""
    OBJECTS.clear()
    fs = filesystem_for("mock://lake/out")
    assert isinstance(fs, mock_filesystem.MockFileSystem)
    _publish_twice(fs)
    assert json.loads(OBJECTS["lake/out/_lakemark_commits/app-1.json"])["k"] == "v"
    assert OBJECTS["lake/out/b.csv"] == b"22\n"
    fs.delete(["b.csv"])
    assert not fs.exists("b.csv") and fs.exists("d=1/a.csv")


def test_local_filesystem_publishes_the_same(tmp_path: Path) -> None:
    fs = filesystem_for(str(tmp_path / "out"))
    _publish_twice(fs)
    assert (tmp_path / "out" / "b.csv").read_text() == "22\n"


def test_the_purge_deletes_through_the_filesystem(tmp_path: Path) -> None:
    """Glue's purge lists, then deletes through the path's file system (here: local)."""
    from lakemark.glue._purge import purge_path

    (tmp_path / "p=1").mkdir()
    for name in ("a.csv", "p=1/b.csv"):
        (tmp_path / name).write_text("x")
    assert purge_path(str(tmp_path), {"retentionPeriod": 0}) == 2
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    (tmp_path / "one.csv").write_text("x")
    assert purge_path(str(tmp_path / "one.csv"), {"retentionPeriod": 0}) == 1
