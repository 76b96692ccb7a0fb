"""Staged, published folder writes with a commit record per run (local folder targets).

A write to a local Parquet/JSON/CSV/ORC folder goes through three hidden places under the
target (names starting with ``_`` are skipped by Spark's and pyarrow's dataset readers):

* ``_lakemark_staging/<write id>/`` — Spark writes the run's files here;
* ``_lakemark_commits/<app id>-<version>.pending`` — written before Spark starts, then updated
  with the final names of the run's files just before they are moved into place;
* ``_lakemark_commits/<app id>-<version>.json`` — the commit record: written (by an atomic
  rename) after every file is in place. Its presence means "this run's output is published".

With a token, a write whose app id already has a commit record at that version or higher is
skipped. A ``.pending`` record without its commit record is the trace of a write that died
before publishing finished: its staging folder and any files it had already moved into place
are removed before the retry writes. (The app id is percent-encoded in the names.)

Moving files into place is one ``rename`` per file inside the target's filesystem: each file
appears whole, but a reader that lists the folder while a multi-file run is being published can
see part of that run's files (a window of a few renames).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ._location import Target, is_hidden
from ._fault import fault_point
from ._model import IdempotencyToken

__all__ = ["COMMITS", "STAGING_DIR", "Published", "commit_record", "staged_publish"]

COMMITS = "_lakemark_commits"
STAGING_DIR = "_lakemark_staging"


def _record_name(token: IdempotencyToken) -> str:
    return f"{quote(token.app_id, safe='')}-{token.version}"


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
    os.replace(tmp, path)


def commit_record(root: Path, token: IdempotencyToken) -> dict[str, Any] | None:
    """The commit record of ``token``'s app id at its version or a higher one (None: none)."""
    folder = root / COMMITS
    if not folder.is_dir():
        return None
    prefix = quote(token.app_id, safe="")
    best: tuple[int, Path] | None = None
    for entry in folder.iterdir():
        name = entry.name
        if not name.endswith(".json") or name.startswith("."):
            continue
        app, _, version = name[:-len(".json")].rpartition("-")
        if app != prefix or not version.isdigit() or int(version) < token.version:
            continue
        if best is None or int(version) > best[0]:
            best = (int(version), entry)
    if best is None:
        return None
    return dict(json.loads(best[1].read_text()))


@dataclass(frozen=True)
class Published:
    files: list[str]
    bytes: int


def _roll_back(root: Path, pending: Path) -> None:
    """Undo a write that died before its commit record: staging and moved files removed."""
    try:
        info = json.loads(pending.read_text())
    except (OSError, ValueError):
        info = {}
    staging = info.get("staging")
    if staging:
        shutil.rmtree(root / STAGING_DIR / str(staging), ignore_errors=True)
    for rel in info.get("files") or ():
        (root / rel).unlink(missing_ok=True)
    pending.unlink(missing_ok=True)


def staged_publish(target: Target, token: IdempotencyToken | None, extra: dict[str, Any],
                   write: Any) -> Published:
    """Run ``write(staging_path)`` into a fresh staging folder, then move its visible files into
    the target and (with a token) write the commit record. The staging folder is removed
    whatever happens; a failure before publishing leaves nothing visible."""
    root = Path(target.location.root)
    write_id = uuid.uuid4().hex
    staging = root / STAGING_DIR / write_id
    commits = root / COMMITS
    pending: Path | None = None
    published = False
    if token is not None:
        commits.mkdir(parents=True, exist_ok=True)
        pending = commits / f"{_record_name(token)}.pending"
        if pending.exists():
            _roll_back(root, pending)
        _write_json(pending, {"staging": write_id, "files": []})
    try:
        write(str(staging))
        fault_point("mid-write")
        moves: list[tuple[Path, str]] = []
        for dirpath, _dirs, names in os.walk(staging):
            for name in names:
                source = Path(dirpath) / name
                rel = source.relative_to(staging).as_posix()
                if not is_hidden(rel) and not name.endswith(".crc"):
                    moves.append((source, rel))
        taken = [rel for _, rel in moves if (root / rel).exists()]
        if taken:  # Spark's names carry a fresh uuid per write; never overwrite a file
            raise FileExistsError(f"{root / taken[0]} already exists")
        if pending is not None:
            _write_json(pending, {"staging": write_id, "files": [rel for _, rel in moves]})
        size = 0
        for source, rel in moves:
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            size += source.stat().st_size
            os.replace(source, dest)
        if token is not None and pending is not None:
            _write_json(commits / f"{_record_name(token)}.json", {
                "app_id": token.app_id, "version": token.version,
                "files": sorted(rel for _, rel in moves), "committed_at": time.time(), **extra,
            })
            published = True
            pending.unlink(missing_ok=True)
    except BaseException:
        if pending is not None and not published:
            _roll_back(root, pending)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            (root / STAGING_DIR).rmdir()
        except OSError:
            pass
    return Published([rel for _, rel in moves], size)
