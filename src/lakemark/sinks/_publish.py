"""Staged, published folder writes with a commit record per run (local and S3 folder targets).

A write to a Parquet/JSON/CSV/ORC folder goes through three hidden places under the target
(names starting with ``_`` are skipped by Spark's and pyarrow's dataset readers):

* ``_lakemark_staging/<write id>/`` — the run's files are written here;
* ``_lakemark_commits/<app id>-<version>.pending`` — written before the data, then updated
  with the final names of the run's files just before they are published;
* ``_lakemark_commits/<app id>-<version>.json`` — the commit record: written whole (an atomic
  rename locally, one ``PutObject`` on S3) after every file is in place. Its presence means
  "this run's output is published".

With a token, a write whose app id already has a commit record at that version or higher is
skipped. A ``.pending`` record without its commit record is the trace of a write that died
before publishing finished: its staging files and any files it had already published are
removed before the retry writes. (The app id is percent-encoded in the names.)

The same steps run over a :class:`FolderStore`: :class:`LocalStore` publishes a file with one
``rename`` inside the target's filesystem, :class:`S3Store` with one server-side copy (then the
staging objects are deleted). Either way each file appears whole, but a reader that lists the
folder while a multi-file run is being published can see part of that run's files; the commit
records say which files belong to committed runs.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..errors import SinkError
from .._fault import fault_point
from .._commit_gate import before_commit
from ..storage._fs import FileSystem, filesystem_for
from ..storage._fs_local import LocalFileSystem
from ..storage._fs_s3 import S3FileSystem
from ._location import Target, is_hidden, resolve_target
from ._model import IdempotencyToken

__all__ = ["COMMITS", "STAGING_DIR", "FolderStore", "LocalStore", "Published", "S3Store",
           "clear_trace", "commit_record", "committed_files", "staged_publish", "staging_folder",
           "store_for"]

log = logging.getLogger("lakemark")

COMMITS = "_lakemark_commits"
STAGING_DIR = "_lakemark_staging"

#: What a write id in a ``.pending`` record may look like (it names a staging folder).
_WRITE_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")


#: The folder operations a staged publish needs: storage's file-system protocol (the old
#: names stay for callers).
FolderStore = FileSystem
LocalStore = LocalFileSystem
S3Store = S3FileSystem


def store_for(target: Target) -> FolderStore:
    """The file system rooted at a resolved folder target (by its scheme)."""
    return filesystem_for(target.location.root)


def staging_folder(write_id: str) -> str:
    """The staging folder of a write, relative to the target root."""
    return f"{STAGING_DIR}/{write_id}"


def _record_name(token: IdempotencyToken) -> str:
    return f"{quote(token.app_id, safe='')}-{token.version}"


def commit_record(store: FolderStore, token: IdempotencyToken) -> dict[str, Any] | None:
    """The commit record of ``token``'s app id at its version or a higher one (None: none)."""
    prefix = quote(token.app_id, safe="")
    best: tuple[int, str] | None = None
    for name in store.names(COMMITS, start=f"{prefix}-"):
        if not name.endswith(".json") or name.startswith("."):
            continue
        app, _, version = name[:-len(".json")].rpartition("-")
        if app != prefix or not version.isdigit() or int(version) < token.version:
            continue
        if best is None or int(version) > best[0]:
            best = (int(version), name)
    if best is None:
        return None
    text = store.read_text(f"{COMMITS}/{best[1]}")
    if text is None:
        return None
    try:
        return dict(json.loads(text))
    except ValueError as exc:
        raise SinkError(f"commit record {store.root}/{COMMITS}/{best[1]} is not valid JSON; "
                        "remove it only if that run's files are removed too") from exc


def committed_files(target: str) -> list[str]:
    """The data files of the folder ``target`` (local path or ``s3://`` URI) that belong to a
    committed run: present now *and* named by a commit record under ``_lakemark_commits/``.

    Files of a run still being published (or of one that died while publishing) are left out,
    and so are files written without a commit record (writes outside a job, or with bookmarks
    disabled/paused), so use this on folders that jobs write. The folder is listed before the
    records are read, so a file deleted by an ``overwrite`` after it was listed can still be
    named; the files come back as absolute paths or ``s3://`` URIs, sorted.
    """
    resolved = resolve_target(target)
    store = store_for(resolved)
    present = {rel for rel in store.files("") if not is_hidden(rel)}
    named: set[str] = set()
    for name in store.names(COMMITS):
        if name.startswith(".") or not name.endswith(".json"):
            continue
        text = store.read_text(f"{COMMITS}/{name}")
        if text is None:
            continue
        try:
            files = json.loads(text).get("files") or ()
        except (ValueError, AttributeError) as exc:
            raise SinkError(f"commit record {store.root}/{COMMITS}/{name} is not valid "
                            "JSON") from exc
        named.update(str(rel) for rel in files)
    root = store.root.rstrip("/")
    return sorted(f"{root}/{rel}" for rel in present & named)


@dataclass(frozen=True)
class Published:
    """What a staged publish put in place: relative paths and their total size."""

    files: list[str]
    bytes: int


def _roll_back(store: FolderStore, token: IdempotencyToken) -> None:
    """Undo a write of ``token`` that died before its commit record: its staging files and the
    files it had already published are removed, then its ``.pending`` record. If the commit
    record exists after all (the writer died between writing it and removing ``.pending``),
    only the leftovers go: the published files are committed output."""
    name = _record_name(token)
    pending = f"{COMMITS}/{name}.pending"
    text = store.read_text(pending)
    if text is None:
        return
    try:
        info = json.loads(text)
    except ValueError:
        info = {}
    if not isinstance(info, dict):
        info = {}
    staging = str(info.get("staging") or "")
    if _WRITE_ID.match(staging):
        store.remove_tree(staging_folder(staging))
    files = info.get("files")
    if store.read_text(f"{COMMITS}/{name}.json") is None and isinstance(files, list):
        # Only plain data paths under the target: a damaged record never deletes records,
        # staging of other writes or anything outside the target.
        store.delete([str(rel) for rel in files if _data_path(str(rel))])
    store.delete([pending])


def _data_path(rel: str) -> bool:
    """Whether ``rel`` is a visible relative path inside the target (no ``..``, not absolute)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and not is_hidden(rel) and all(
        part not in ("", ".", "..") for part in parts)


def clear_trace(store: FolderStore, token: IdempotencyToken) -> None:
    """Remove a dead write's ``.pending`` trace of ``token`` (see :func:`_roll_back`)."""
    _roll_back(store, token)


#: ``write(write_id)`` writes the run's files into ``staging_folder(write_id)`` and returns the
#: paths (relative to that folder) to publish, or None to publish every visible file there.
Writer = Callable[[str], "Sequence[str] | None"]


def staged_publish(store: FolderStore, token: IdempotencyToken | None, extra: dict[str, Any],
                   write: Writer) -> Published:
    """Run ``write`` into a fresh staging folder, publish the files it names (default: every
    visible file there) into the target and (with a token) write the commit record. The staging
    folder is removed whatever happens; a failure before publishing leaves nothing visible, a
    failure while publishing removes what was already published."""
    write_id = uuid.uuid4().hex
    staging = staging_folder(write_id)
    pending: str | None = None
    published = False
    chosen: list[str] = []
    done: list[str] = []
    size = 0
    if token is not None:
        pending = f"{COMMITS}/{_record_name(token)}.pending"
        _roll_back(store, token)
        store.write_text(pending, json.dumps({"staging": write_id, "files": []}))
    try:
        wanted = write(write_id)
        fault_point("mid-write")
        before_commit()  # the run checks its input was read as planned
        staged = store.files(staging)
        if wanted is None:
            chosen = sorted(rel for rel in staged
                            if not is_hidden(rel) and not rel.endswith(".crc"))
        else:
            chosen = sorted(wanted)
            missing = [rel for rel in chosen if rel not in staged]
            if missing:
                raise SinkError(f"staged file {store.root}/{staging}/{missing[0]} is missing "
                                "(was the staging folder changed during the write?)")
        taken = [rel for rel in chosen if store.exists(rel)]
        if taken:  # every writer's names carry a fresh id per write; never overwrite a file
            raise SinkError(f"{store.root}/{taken[0]} already exists; refusing to overwrite it")
        if pending is not None:
            store.write_text(pending, json.dumps({"staging": write_id, "files": chosen}))
        for rel in chosen:
            done.append(rel)  # before the call: a copy may land even if its answer is lost
            store.publish(f"{staging}/{rel}", rel, staged[rel])
            size += staged[rel]
        if token is not None and pending is not None:
            store.write_text(f"{COMMITS}/{_record_name(token)}.json", json.dumps({
                "app_id": token.app_id, "version": token.version, "files": chosen,
                "committed_at": time.time(), **extra,
            }, indent=1, sort_keys=True))
            published = True
            try:
                store.delete([pending])
            except SinkError as exc:  # committed all the same; the next write clears it
                log.warning("could not remove %s/%s: %s", store.root, pending, exc)
        elif pending is None:
            published = True
    except BaseException:
        if pending is not None and not published:
            try:
                _roll_back(store, token)  # type: ignore[arg-type]
            except SinkError as exc:  # the next write of the token retries the cleanup
                log.warning("could not undo the failed write to %s: %s", store.root, exc)
        elif pending is None and done and not published:
            try:
                store.delete(done)
            except SinkError as exc:
                log.warning("could not undo the failed write to %s: %s", store.root, exc)
        raise
    finally:
        store.remove_tree(staging)
    return Published(chosen, size)
