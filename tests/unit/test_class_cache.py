"""The class-data sharing archive: its options, its key, and who builds it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lakemark.session import class_cache as cc


@pytest.fixture
def java() -> str:
    found = shutil.which("java")
    if not found:
        pytest.skip("no java on PATH")
    return found


def test_off_means_no_options_and_no_builder(java: str, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv(cc.ENV, "off")
    assert cc.archive_path(java) is None
    assert cc.java_options(java) == ""


def test_an_archive_in_place_is_used_quietly(java: str, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv(cc.ENV, str(tmp_path))
    path = cc.archive_path(java)
    assert path is not None and path.parent == tmp_path
    path.write_bytes(b"x")
    options = cc.java_options(java)
    assert f"-XX:SharedArchiveFile={path}" in options
    assert "-Xlog:cds=off" in options  # the JVM's CDS messages would go to stdout


def test_a_missing_archive_starts_one_builder_behind_a_lock(
        java: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cc.ENV, str(tmp_path))
    started: list[list[str]] = []
    monkeypatch.setattr(cc.subprocess, "Popen", lambda cmd, **kw: started.append(cmd))
    assert cc.java_options(java) == ""
    assert cc.java_options(java) == ""  # the first builder's lock holds the second back
    assert len(started) == 1 and started[0][-1].endswith(".jsa")
    lock = cc.archive_path(java).with_suffix(".lock")  # type: ignore[union-attr]
    assert lock.exists()
    import os
    import time

    old = time.time() - cc.STALE_LOCK_S - 5
    os.utime(lock, (old, old))  # a builder that died long ago does not block forever
    assert cc.java_options(java) == ""
    assert len(started) == 2


def test_the_key_changes_with_the_java_binary(java: str, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv(cc.ENV, str(tmp_path))
    other = tmp_path / "java"
    other.write_text("#!/bin/sh\n")
    assert cc.archive_path(java) != cc.archive_path(str(other))
