"""Staged, published folder writes with a commit record per run (local and S3 folder targets).

A write to a Parquet/JSON/CSV/ORC folder stages its files under the target, then publishes them;
a job's write (with a token) also keeps two records (:mod:`._commit_log`), by default in the
run's state store (the output prefix then holds only data files), or with
``LAKEMARK_FOLDER_COMMITS=folder`` under ``<target>/_lakemark_commits/``:

* ``_lakemark_staging/<write id>/`` under the target — the run's files are written here (names
  starting with ``_`` are skipped by Spark's and pyarrow's dataset readers); removed when the
  write ends, whatever happens;
* a *pending* record — written before the data, then updated with the final names of the run's
  files just before they are published;
* the *commit* record — written atomically (a compare-and-set in one store transaction; in the
  folder, an atomic rename locally or one ``PutObject`` on S3) after every file is in place.
  Its presence means "this run's output is published".

With a token, a write whose app id already has a commit record at that version or higher is
skipped. A pending record without its commit record is the trace of a write that died before
publishing finished: its staging files and any files it had already published are removed
before the retry writes. (The app id is percent-encoded in the folder layout's names.)

The same steps run over a :class:`FolderStore`: :class:`LocalStore` publishes a file with one
``rename`` inside the target's filesystem, :class:`S3Store` with one server-side copy (then the
staging objects are deleted). Either way each file appears whole, but a reader that lists the
folder while a multi-file run is being published can see part of that run's files; the commit
records say which files belong to committed runs.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SinkError, StateError
from .._fault import fault_point
from .._commit_gate import before_commit
from ..storage._fs import FileSystem, filesystem_for
from ..storage._fs_local import LocalFileSystem
from ..storage._fs_s3 import S3FileSystem
from ._location import Target, is_hidden, resolve_target
from ._commit_log import COMMITS, CommitLog, FolderLog, StateLog, logs_of
from ._model import IdempotencyToken
from ._staging import STAGING_DIR, sibling_staged

__all__ = ["COMMITS", "STAGING_DIR", "FolderStore", "LocalStore", "Published", "S3Store",
           "clear_trace", "commit_record", "committed_files", "staged_publish", "staging_folder",
           "store_for"]

log_ = logging.getLogger("lakemark")


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


def commit_record(store: FolderStore, token: IdempotencyToken,
                  log: CommitLog | None = None) -> dict[str, Any] | None:
    """The commit record of ``token``'s app id at its version or a higher one (None: none),
    from ``log`` (default: the folder's own ``_lakemark_commits/``)."""
    return (log or FolderLog(store)).committed(token)


def committed_files(target: str, state: str | None = None) -> list[str]:
    """The data files of the folder ``target`` (local path or ``s3://`` URI) that belong to a
    committed run: present now *and* named by a commit record — in the state store ``state``
    (a state URL; default ``LAKEMARK_STATE``, then ``~/.lakemark/state.db``, as jobs resolve
    it) or under the folder's ``_lakemark_commits/`` (old layout, or
    ``LAKEMARK_FOLDER_COMMITS=folder``).

    Files of a run still being published (or of one that died while publishing) are left out,
    and so are files written without a commit record (writes outside a job, or with bookmarks
    disabled/paused), so use this on folders that jobs write. The folder is listed before the
    records are read, so a file deleted by an ``overwrite`` after it was listed can still be
    named; the files come back as absolute paths or ``s3://`` URIs, sorted.
    """
    from ..state import open_store, resolve_state_url

    resolved = resolve_target(target)
    store = store_for(resolved)
    present = {rel for rel in store.files("") if not is_hidden(rel)}
    named: set[str] = set()
    url = resolve_state_url(state)
    records = FolderLog(store).records()
    if state is not None or _store_exists(url):
        opened = open_store(url, read_only=True)
        try:  # the store's records and the folder's old ones
            records = StateLog(opened, store).records()  # type: ignore[arg-type]
        finally:
            opened.close()
    for record in records:
        files = record.get("files") or ()
        # A record retention kept for its target and app id carries the files of the older
        # records it pruned (state/_folder_commits.py).
        earlier = record.get("earlier_files") or []
        if not isinstance(files, list) or not isinstance(earlier, list):
            raise SinkError(f"a commit record of {store.root} lists no files")
        named.update(str(rel) for rel in (*files, *earlier))
    root = store.root.rstrip("/")
    return sorted(f"{root}/{rel}" for rel in present & named)


def _store_exists(url: str) -> bool:
    """Whether a state URL resolved by default may hold records: an SQLite file that does not
    exist holds none (and is not created just to be read)."""
    import os

    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return True
    path = url[len(prefix):]
    return path == ":memory:" or os.path.exists(os.path.expanduser(path))


@dataclass(frozen=True)
class Published:
    """What a staged publish put in place: relative paths and their total size."""

    files: list[str]
    bytes: int


def _roll_back(store: FolderStore, log: CommitLog, token: IdempotencyToken) -> None:
    """Undo a write of ``token`` that died before its commit record: its staging files and the
    files it had already published are removed, then its pending record (in ``log`` and, behind
    the state store, in the folder's old records). If the commit record exists after all (the
    writer died between writing it and removing ``.pending``, folder layout), only the
    leftovers go: the published files are committed output."""
    for each in logs_of(log):
        found = each.pending(token)
        if found is None:
            continue
        info, committed = found
        staging = str(info.get("staging") or "")
        # the folder's records name a staging folder inside the target; the store's, one
        # beside it (inside when the target has no parent)
        if isinstance(each, FolderLog):
            home: FolderStore = each.store
        elif isinstance(each, StateLog):
            home = sibling_staged(each.legacy.store) or each.legacy.store
        else:
            home = store
        if _WRITE_ID.match(staging):
            home.remove_tree(staging_folder(staging))
        files = info.get("files")
        if not committed and isinstance(files, list):
            # Only plain data paths under the target: a damaged record never deletes records,
            # staging of other writes or anything outside the target.
            store.delete([str(rel) for rel in files if _data_path(str(rel))])
        each.drop(token, None)


def _data_path(rel: str) -> bool:
    """Whether ``rel`` is a visible relative path inside the target (no ``..``, not absolute)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and not is_hidden(rel) and all(
        part not in ("", ".", "..") for part in parts)


def clear_trace(store: FolderStore, token: IdempotencyToken,
                log: CommitLog | None = None) -> None:
    """Remove a dead write's pending trace of ``token`` (see :func:`_roll_back`)."""
    _roll_back(store, log or FolderLog(store), token)


#: ``write(write_id)`` writes the run's files into ``staging_folder(write_id)`` and returns the
#: paths (relative to that folder) to publish, or None to publish every visible file there.
Writer = Callable[[str], "Sequence[str] | None"]


def staged_publish(store: FolderStore, token: IdempotencyToken | None, extra: dict[str, Any],
                   write: Writer, log: CommitLog | None = None) -> Published:
    """Run ``write`` into a fresh staging folder, publish the files it names (default: every
    visible file there) into the target and (with a token) write the commit record in ``log``
    (default: the folder's own ``_lakemark_commits/``). The staging folder is removed whatever
    happens; a failure before publishing leaves nothing visible, a failure while publishing
    removes what was already published."""
    write_id = uuid.uuid4().hex
    staging = staging_folder(write_id)
    records = log or FolderLog(store)
    published = False
    chosen: list[str] = []
    done: list[str] = []
    size = 0
    if token is not None:
        _roll_back(store, records, token)
        records.begin(token, write_id, [])
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
        if token is not None:
            records.begin(token, write_id, chosen)
        for rel in chosen:
            done.append(rel)  # before the call: a copy may land even if its answer is lost
            store.publish(f"{staging}/{rel}", rel, staged[rel])
            size += staged[rel]
        if token is not None:
            records.commit(token, write_id, {
                "app_id": token.app_id, "version": token.version, "files": chosen,
                "committed_at": time.time(), **extra,
            })
            published = True
            try:
                records.drop(token, write_id)
            except (SinkError, StateError) as exc:  # committed all the same; next write clears
                log_.warning("could not remove the pending record %s: %s",
                             records.where(token), exc)
        else:
            published = True
    except BaseException:
        if done and not published:
            try:
                _undo(store, records, token, write_id, done)
            except (SinkError, StateError) as exc:  # the next write of the token retries it
                log_.warning("could not undo the failed write to %s: %s", store.root, exc)
        elif token is not None and not published:
            try:
                records.drop(token, write_id)
            except (SinkError, StateError) as exc:
                log_.warning("could not undo the failed write to %s: %s", store.root, exc)
        raise
    finally:
        store.remove_tree(staging)
    return Published(chosen, size)


def _undo(store: FolderStore, records: CommitLog, token: IdempotencyToken | None,
          write_id: str, done: list[str]) -> None:
    """Remove the files a failed write ``write_id`` published, and its pending record —
    unless its commit record landed after all (an answer lost after the commit): then the
    files are committed output and stay."""
    if token is not None:
        record = records.committed(token)
        if record is not None and int(record.get("version", -1)) == token.version \
                and set(done) <= set(record.get("files") or ()):
            return
    store.delete(done)
    if token is not None:
        records.drop(token, write_id)
