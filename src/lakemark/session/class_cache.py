"""A JDK class-data sharing (CDS) archive of the classes a Spark run loads, built once per
Spark and Java installation and reused by every later run.

A scheduled job starts a fresh JVM each time, and a fresh Spark driver spends seconds loading
and verifying the same few thousand classes before its first task. The JDK can map them from an
archive instead (``-XX:SharedArchiveFile``); measured here it cuts a cold session's start and
its first read and write by about a third (bench/startup.py).

How it works: the first Spark start that finds no archive starts a background builder (its own
process, low priority, one at a time per archive; :mod:`.class_cache_build`) that runs a small
read/write workload under ``-XX:ArchiveClassesAtExit`` and moves the archive into place when
the JVM has written it; runs from then on start with it. The archive's name is a digest of the
``java`` binary and of PySpark's jars, so a different Java or Spark builds its own; the JVM
itself also checks that the class path matches and silently runs without the archive when it
does not.

``LAKEMARK_CLASS_CACHE=off`` turns this off; ``LAKEMARK_CLASS_CACHE=DIR`` keeps archives in DIR
instead of ``~/.lakemark/class-cache``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["java_options", "archive_path", "ENV"]

ENV = "LAKEMARK_CLASS_CACHE"

#: A builder's lock older than this is taken to belong to a builder that died.
STALE_LOCK_S = 15 * 60

#: JVM logging of CDS goes to stdout by default: keep it off (it would break --json output).
_QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off -Xlog:class+path=off"


def _folder() -> Path | None:
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() in ("off", "0", "false", "no"):
        return None
    return Path(setting).expanduser() if setting else Path.home() / ".lakemark" / "class-cache"


def _digest(java: str) -> str:
    """What the archive depends on: the java binary and the jars Spark's JVM starts with."""
    import pyspark

    parts = []
    real = os.path.realpath(java)
    st = os.stat(real)
    parts.append(f"{real}:{st.st_size}:{int(st.st_mtime)}")
    jars = Path(pyspark.__file__).parent / "jars"
    try:
        for entry in sorted(os.scandir(jars), key=lambda e: e.name):
            info = entry.stat()
            parts.append(f"{entry.name}:{info.st_size}:{int(info.st_mtime)}")
    except OSError:
        parts.append("no-jars")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def archive_path(java: str) -> Path | None:
    """Where the archive for this Java and Spark lives (None when the cache is off)."""
    folder = _folder()
    return None if folder is None else folder / f"spark-{_digest(java)}.jsa"


def java_options(java: str, *, start_builder: bool = True) -> str:
    """Driver JVM options that use the archive, or "" when there is none yet (a background
    builder is then started, unless one is at work or the cache is off)."""
    try:
        path = archive_path(java)
    except OSError:
        return ""
    if path is None:
        return ""
    if path.is_file():
        return f"-XX:SharedArchiveFile={path} {_QUIET}"
    if start_builder:
        _start_builder(path)
    return ""


def _start_builder(path: Path) -> None:
    lock = path.with_suffix(".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_S:
                lock.unlink()
        except FileNotFoundError:
            pass
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return  # a builder is at work, or the folder cannot be written: run without
    os.close(fd)
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env[ENV] = "off"  # the builder's own JVM neither uses nor builds an archive
    try:
        subprocess.Popen(
            [sys.executable, "-m", "lakemark.session.class_cache_build", str(path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env, preexec_fn=lambda: os.nice(10),
        )
    except OSError:
        lock.unlink(missing_ok=True)
