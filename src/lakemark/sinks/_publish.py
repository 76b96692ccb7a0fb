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
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from ..errors import SinkError
from .._fault import fault_point
from ._location import Target, is_hidden, resolve_target
from ._model import IdempotencyToken

__all__ = ["COMMITS", "STAGING_DIR", "FolderStore", "LocalStore", "Published", "S3Store",
           "clear_trace", "commit_record", "committed_files", "staged_publish", "staging_folder",
           "store_for"]

log = logging.getLogger("lakemark")

COMMITS = "_lakemark_commits"
STAGING_DIR = "_lakemark_staging"

#: Objects up to this size are published with one ``CopyObject``; larger ones (S3's single-copy
#: limit is 5 GiB) with boto3's managed multipart copy.
_SINGLE_COPY_LIMIT = 5 * 1024 ** 3

#: What a write id in a ``.pending`` record may look like (it names a staging folder).
_WRITE_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")


class FolderStore(Protocol):
    """The few operations a staged publish needs, on paths relative to a folder target's root
    (``/``-separated). Errors are :class:`SinkError` naming the target."""

    @property
    def root(self) -> str:
        """The target's canonical name, for messages."""
        ...

    def read_text(self, rel: str) -> str | None:
        """The content of the file ``rel`` (None if it does not exist)."""
        ...

    def write_text(self, rel: str, text: str) -> None:
        """Create or replace ``rel`` atomically: readers see the old content or the new."""
        ...

    def names(self, folder: str, start: str = "") -> list[str]:
        """Names of the files directly in ``folder`` that start with ``start`` (empty if there
        is no such folder)."""
        ...

    def files(self, folder: str) -> dict[str, int]:
        """Every file under ``folder`` (recursively): path relative to ``folder`` → size."""
        ...

    def exists(self, rel: str) -> bool:
        """Whether the file ``rel`` exists."""
        ...

    def publish(self, source: str, dest: str, size: int) -> None:
        """Make the file ``source`` (``size`` bytes) appear whole at ``dest``."""
        ...

    def delete(self, rels: Sequence[str]) -> None:
        """Delete files (missing ones are fine); raises if one could not be deleted."""
        ...

    def remove_tree(self, folder: str) -> None:
        """Delete ``folder`` and everything under it (best effort: failures are logged)."""
        ...


class LocalStore:
    """A folder target on the local (or a shared POSIX) filesystem: publish is a rename."""

    def __init__(self, root: Path) -> None:
        self.base = root

    @property
    def root(self) -> str:
        return str(self.base)

    def _path(self, rel: str) -> Path:
        return self.base / rel

    def read_text(self, rel: str) -> str | None:
        try:
            return self._path(rel).read_text()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SinkError(f"cannot read {self._path(rel)}: {exc.strerror or exc}") from exc

    def write_text(self, rel: str, text: str) -> None:
        path = self._path(rel)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise SinkError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def names(self, folder: str, start: str = "") -> list[str]:
        path = self._path(folder)
        if not path.is_dir():
            return []
        return [entry.name for entry in path.iterdir()
                if entry.name.startswith(start) and entry.is_file()]

    def files(self, folder: str) -> dict[str, int]:
        top = self._path(folder)
        out: dict[str, int] = {}
        for dirpath, _dirs, names in os.walk(top):
            for name in names:
                path = Path(dirpath) / name
                out[path.relative_to(top).as_posix()] = path.stat().st_size
        return out

    def exists(self, rel: str) -> bool:
        return self._path(rel).exists()

    def publish(self, source: str, dest: str, size: int) -> None:
        target = self._path(dest)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._path(source), target)
        except OSError as exc:
            raise SinkError(f"cannot publish {target}: {exc.strerror or exc}") from exc

    def delete(self, rels: Sequence[str]) -> None:
        for rel in rels:
            try:
                self._path(rel).unlink(missing_ok=True)
            except OSError as exc:
                raise SinkError(f"cannot delete {self._path(rel)}: {exc.strerror or exc}") from exc

    def remove_tree(self, folder: str) -> None:
        path = self._path(folder)
        shutil.rmtree(path, ignore_errors=True)
        parent = path.parent  # the staging folder itself goes once it is empty
        while parent != self.base and self.base in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent


class S3Store:
    """A folder target under an S3 prefix, through boto3 (the standard AWS configuration,
    ``AWS_ENDPOINT_URL[_S3]`` included): publish is a server-side copy, records are single
    ``PutObject`` requests (atomic on S3: a reader gets the whole object or none)."""

    def __init__(self, bucket: str, prefix: str, client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._client = client

    @property
    def root(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    @property
    def client(self) -> Any:
        if self._client is None:
            from ..storage import s3_client

            self._client = s3_client()
        return self._client

    def key(self, rel: str) -> str:
        """The object key of a path relative to the root."""
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def _error(self, action: str, rel: str, exc: Exception) -> SinkError:
        from botocore.exceptions import ClientError

        where = f"s3://{self.bucket}/{self.key(rel)}"
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "")) or "Unknown"
            message = str(error.get("Message", "")) or code
            return SinkError(f"cannot {action} {where}: S3 error {code}: {message}")
        return SinkError(f"cannot {action} {where}: {type(exc).__name__}: {exc}")

    def _errors(self) -> tuple[type[Exception], ...]:
        from botocore.exceptions import BotoCoreError, ClientError

        return (ClientError, BotoCoreError)

    def read_text(self, rel: str) -> str | None:
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.key(rel))
            return str(answer["Body"].read().decode("utf-8"))
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404"):
                return None
            raise self._error("read", rel, exc) from exc
        except self._errors() as exc:
            raise self._error("read", rel, exc) from exc

    def write_text(self, rel: str, text: str) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.key(rel),
                                   Body=text.encode("utf-8"), ContentType="application/json")
        except self._errors() as exc:
            raise self._error("write", rel, exc) from exc

    def _list(self, folder: str, *, delimiter: bool, start: str = "") -> dict[str, int]:
        prefix = self.key(folder).rstrip("/") + "/" if (folder or self.prefix) else ""
        params: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix + start}
        if delimiter:
            params["Delimiter"] = "/"
        out: dict[str, int] = {}
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(**params):
                for obj in page.get("Contents", ()):
                    name = str(obj["Key"])[len(prefix):]
                    if name and not name.endswith("/"):  # skip "folder" marker objects
                        out[name] = int(obj.get("Size", 0))
        except self._errors() as exc:
            raise self._error("list", folder + "/", exc) from exc
        return out

    def names(self, folder: str, start: str = "") -> list[str]:
        return list(self._list(folder, delimiter=True, start=start))

    def files(self, folder: str) -> dict[str, int]:
        return self._list(folder, delimiter=False)

    def exists(self, rel: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(rel))
            return True
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404",
                                                                    "NotFound"):
                return False
            raise self._error("inspect", rel, exc) from exc
        except self._errors() as exc:
            raise self._error("inspect", rel, exc) from exc

    def publish(self, source: str, dest: str, size: int) -> None:
        copy_source = {"Bucket": self.bucket, "Key": self.key(source)}
        try:
            if size < _SINGLE_COPY_LIMIT:
                self.client.copy_object(Bucket=self.bucket, Key=self.key(dest),
                                        CopySource=copy_source)
            else:
                self.client.copy(copy_source, self.bucket, self.key(dest))
        except self._errors() as exc:
            raise self._error("publish", dest, exc) from exc

    def delete(self, rels: Sequence[str]) -> None:
        keys = [self.key(rel) for rel in rels]
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start:start + 1000]]
            try:
                answer = self.client.delete_objects(Bucket=self.bucket,
                                                    Delete={"Objects": batch, "Quiet": True})
            except self._errors() as exc:
                raise self._error("delete", rels[start], exc) from exc
            errors = answer.get("Errors") or []
            if errors:
                first = errors[0]
                raise SinkError(f"cannot delete s3://{self.bucket}/{first.get('Key')}: S3 error "
                                f"{first.get('Code')}: {first.get('Message')} "
                                f"({len(errors)} object(s) not deleted)")

    def remove_tree(self, folder: str) -> None:
        try:
            self.delete([f"{folder}/{rel}" for rel in self.files(folder)])
        except SinkError as exc:
            log.warning("could not remove %s/%s: %s", self.root, folder, exc)


def store_for(target: Target) -> FolderStore:
    """The :class:`FolderStore` of a resolved folder target."""
    if target.is_s3:
        return S3Store(target.location.bucket, target.location.key)
    return LocalStore(Path(target.location.root))


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
