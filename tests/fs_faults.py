"""Real file-system faults for tests: a small tmpfs that a test fills (a full disk) and a
read-only bind mount (a read-only file system), made with ``mount`` as root.

``chmod`` stops nobody when the tests run as root (as CI does), so a fault must come from the
kernel. Each helper unmounts what it mounted, whatever the test did. Without root or a working
``mount`` a test skips outside CI and fails in CI (``need_service``).
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@functools.cache
def _mount_works() -> str | None:
    """None when this process can mount a tmpfs, else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs or a read-only bind mount needs root"
    probe = tempfile.mkdtemp(prefix="lakemark-mount-probe-")
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return f"mount does not work here: {done.stderr.strip()}"
        subprocess.run(["umount", probe], check=True)
        return None
    except OSError as exc:
        return f"mount cannot be run: {exc}"
    finally:
        os.rmdir(probe)


def need_mount() -> None:
    """Skip (outside CI) or fail (in CI) when this process cannot mount file systems."""
    from conftest import need_service

    why = _mount_works()
    if why is not None:
        need_service(why)


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=True, capture_output=True)


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (e.g. ``"1m"``) mounted on ``path`` (made if missing)."""
    need_mount()
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True, capture_output=True)
    try:
        yield path
    finally:
        _umount(path)


@contextmanager
def read_only_view(source: Path, at: Path) -> Iterator[Path]:
    """``source`` seen read-only at ``at``: a bind mount remounted ``ro`` (the kernel refuses
    every write through it, to root too)."""
    need_mount()
    at.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "--bind", str(source), str(at)], check=True, capture_output=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(at)], check=True,
                       capture_output=True)
        yield at
    finally:
        _umount(at)


def fill(folder: Path) -> Path:
    """Write a filler file into ``folder`` until its file system has no block left; the
    filler's path (remove it to free the space again)."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        if exc.errno != 28:  # ENOSPC
            raise
    finally:
        os.close(fd)
    fd = os.open(filler, os.O_WRONLY | os.O_APPEND)
    try:  # the last partial block, so not even a small write fits
        while True:
            os.write(fd, b"\0" * 512)
    except OSError as exc:
        if exc.errno != 28:
            raise
    finally:
        os.close(fd)
    return filler
