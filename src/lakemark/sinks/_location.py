"""Where a write goes: the resolved target, what already lives there, and cleaning up after us.

Every data file lakemark writes is named ``part-NNNNN-lm<write id>-…`` (32 hex digits). That
makes one write's files findable for cleanup, and lets a folder holding nothing but leftovers of
an interrupted lakemark write (those files, or hidden ``_``/``.`` entries such as the
``_lakemark_staging`` folder) still count as empty when a new Delta table is created there, so a
retried first run is not refused.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import SinkError
from ..storage import arrow_filesystem_from_config, arrow_fs_config, arrow_path, parse_uri

if TYPE_CHECKING:
    import pyarrow.fs as pafs
    from deltalake import DeltaTable

    from ..storage import Location

__all__ = [
    "LAKEMARK_FILE",
    "Target",
    "check_folder_location",
    "check_new_table_location",
    "check_target",
    "data_file_name",
    "delete_files",
    "is_hidden",
    "list_data_files",
    "open_delta",
    "resolve_target",
    "sweep_write",
    "writer_filesystem",
]

log = logging.getLogger("lakemark")

#: Names of data files lakemark writes.
LAKEMARK_FILE = re.compile(r"^part-\d{5,}-lm[0-9a-f]{32}-")


def data_file_name(task: int, write_id: str, tail: str) -> str:
    """A data file name for ``write_id``; ``tail`` makes it unique within the write."""
    return f"part-{task:05d}-lm{write_id}-{tail}"


def is_hidden(relative: str) -> bool:
    """True if any component of a relative path starts with ``_`` or ``.`` (Spark/Delta rule)."""
    return any(part.startswith(("_", ".")) for part in relative.split("/") if part)


@dataclass(frozen=True)
class Target:
    """A resolved write target: its location and the filesystem settings to reach it."""

    location: Location
    fs_config: dict[str, Any]

    @property
    def root(self) -> str:
        """Canonical name: an absolute path or ``s3://bucket[/prefix]``."""
        return self.location.root

    @property
    def is_s3(self) -> bool:
        return self.location.is_s3

    @property
    def fs_path(self) -> str:
        """The root as a ``pyarrow.fs`` path (``bucket/prefix`` for S3)."""
        return arrow_path(self.location.root)

    @property
    def delta_uri(self) -> str:
        """The root as deltalake wants it."""
        return self.location.root

    def filesystem(self) -> pafs.FileSystem:
        return arrow_filesystem_from_config(self.fs_config)

    def storage_options(self) -> dict[str, str] | None:
        """deltalake storage options: endpoint and region as pyarrow/boto3 resolve them.

        Credentials are not included; deltalake reads them from the process environment. S3
        commits rely on conditional puts (``If-None-Match``), which deltalake uses by default
        and S3 (and moto_server) honour, so no locking provider or unsafe rename is needed.
        """
        if self.fs_config.get("kind") != "s3":
            return None
        options: dict[str, str] = {}
        override = self.fs_config.get("endpoint_override")
        scheme = self.fs_config.get("scheme") or "https"
        if override:
            options["AWS_ENDPOINT_URL"] = f"{scheme}://{override}"
            if scheme == "http":
                options["AWS_ALLOW_HTTP"] = "true"
        region = self.fs_config.get("region")
        if region:
            options["AWS_REGION"] = str(region)
        return options

    def relative(self, path: str) -> str:
        """A ``pyarrow.fs`` path under the root, relative to it."""
        base = self.fs_path.rstrip("/") + "/"
        return path[len(base):] if path.startswith(base) else path

    def absolute(self, relative: str) -> str:
        """The ``pyarrow.fs`` path of a relative path under the root."""
        return f"{self.fs_path.rstrip('/')}/{relative}"


def writer_filesystem(fs_config: dict[str, Any]) -> pafs.FileSystem:
    """The filesystem executors write through: storage's, except that for S3 the output
    streams open lazily (``allow_delayed_open``), so a file smaller than one multipart part is
    uploaded with a single PutObject: one request instead of three per file (and no reliance
    on the multipart completion response, which some S3 emulators answer in ways pyarrow's SDK
    rejects). Same endpoint, region and retry settings as
    :func:`~lakemark.storage.arrow_filesystem_from_config`.
    """
    if fs_config.get("kind") != "s3":
        return arrow_filesystem_from_config(fs_config)
    import pyarrow.fs as pafs

    return pafs.S3FileSystem(
        region=fs_config.get("region"),
        endpoint_override=fs_config.get("endpoint_override"),
        scheme=fs_config.get("scheme") or "https",
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=8),
        allow_delayed_open=True,
    )


def resolve_target(target: str) -> Target:
    """Parse ``target`` (local path, ``file://`` or ``s3://``) into a :class:`Target`."""
    location = parse_uri(target)
    if location.is_s3 and not location.bucket:
        raise SinkError(f"target {target!r} names no bucket")
    return Target(location, arrow_fs_config(location.root))


def _delta_error(target: Target, exc: BaseException) -> SinkError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return SinkError(f"Delta table {target.root}: {first}")


def open_delta(target: Target) -> DeltaTable | None:
    """The Delta table at ``target``, or None if there is none (yet)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    options = target.storage_options()
    try:
        if not DeltaTable.is_deltatable(target.delta_uri, storage_options=options):
            return None
        return DeltaTable(target.delta_uri, storage_options=options)
    except TableNotFoundError:
        return None  # removed between the two calls
    except Exception as exc:  # deltalake's DeltaError and object-store errors
        raise _delta_error(target, exc) from exc


def _first_foreign(fs: pafs.FileSystem, root: str) -> str | None:
    """The first entry under ``root`` that is neither hidden nor a lakemark leftover."""
    import pyarrow.fs as pafs

    pending = [root]
    while pending:
        folder = pending.pop()
        for info in fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True)):
            name = info.base_name
            if name.startswith(("_", ".")):
                continue
            if info.type == pafs.FileType.Directory:
                pending.append(info.path)
            elif not LAKEMARK_FILE.match(name):
                return str(info.path)
    return None


def check_new_table_location(target: Target, fs: pafs.FileSystem) -> None:
    """SinkError unless a new Delta table may be created at ``target``.

    Allowed: nothing there, an empty folder, or a folder with only hidden entries and
    leftovers of interrupted lakemark writes.
    """
    import pyarrow.fs as pafs

    try:
        info = fs.get_file_info(target.fs_path)
        if info.type == pafs.FileType.File:
            raise SinkError(f"target {target.root} is a file, not a Delta table or a folder")
        foreign = None
        if info.type == pafs.FileType.Directory:
            foreign = _first_foreign(fs, target.fs_path)
    except OSError as exc:
        raise SinkError(f"cannot inspect target {target.root}: {exc}") from exc
    if foreign is not None:
        raise SinkError(
            f"target {target.root} is a non-empty folder that is not a Delta table (it holds "
            f"{target.relative(foreign)!r}); refusing to write a Delta table over it"
        )


def check_target(target: Target, fs: pafs.FileSystem) -> None:
    """SinkError if the target is a file, or an S3 target's bucket does not exist."""
    import pyarrow.fs as pafs

    try:
        if target.is_s3:
            bucket = target.location.bucket
            if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                raise SinkError(f"bucket {bucket!r} of target {target.root} does not exist")
        kind = fs.get_file_info(target.fs_path).type
    except OSError as exc:
        raise SinkError(f"cannot inspect target {target.root}: {exc}") from exc
    if kind == pafs.FileType.File:
        raise SinkError(f"target {target.root} is a file, not a table or folder")


def check_folder_location(target: Target, fs: pafs.FileSystem, format: str) -> None:
    """SinkError if a folder-format write to ``target`` would clobber a file or Delta table."""
    import pyarrow.fs as pafs

    try:
        info = fs.get_file_info(target.fs_path)
        log_info = fs.get_file_info(target.absolute("_delta_log"))
    except OSError as exc:
        raise SinkError(f"cannot inspect target {target.root}: {exc}") from exc
    if info.type == pafs.FileType.File:
        raise SinkError(f"target {target.root} is a file, not a folder")
    if log_info.type == pafs.FileType.Directory:
        raise SinkError(
            f"target {target.root} is a Delta table; write it with format='delta', not "
            f"{format!r}"
        )


def list_data_files(target: Target, fs: pafs.FileSystem) -> dict[str, pafs.FileInfo]:
    """Visible files under ``target`` (hidden ``_``/``.`` paths excluded), by relative path."""
    import pyarrow.fs as pafs

    try:
        infos = fs.get_file_info(pafs.FileSelector(target.fs_path, recursive=True,
                                                   allow_not_found=True))
    except OSError as exc:
        raise SinkError(f"cannot list target {target.root}: {exc}") from exc
    out = {}
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        rel = target.relative(info.path)
        if not is_hidden(rel):
            out[rel] = info
    return out


def delete_files(target: Target, fs: pafs.FileSystem, relatives: list[str]) -> None:
    """Delete files under ``target`` (best effort: failures are logged, never raised).

    S3 objects go in ``DeleteObjects`` batches through boto3 (pyarrow's ``delete_file`` would
    leave a ``folder/`` marker object behind for every emptied partition folder). Locally,
    folders left empty by the deletions are removed too (up to the root).
    """
    if target.is_s3:
        _delete_objects(target, relatives)
        return
    for rel in relatives:
        path = target.absolute(rel)
        try:
            fs.delete_file(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("could not delete %s: %s", path, exc)
            continue
        _prune_empty_parents(os.path.dirname(path), target.fs_path)


def _delete_objects(target: Target, relatives: list[str]) -> None:
    from ..storage import s3_client

    if not relatives:
        return
    bucket = target.location.bucket
    prefix = target.location.key.rstrip("/")
    keys = [f"{prefix}/{rel}" if prefix else rel for rel in relatives]
    try:
        client = s3_client()
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start:start + 1000]]
            answer = client.delete_objects(Bucket=bucket,
                                           Delete={"Objects": batch, "Quiet": True})
            for error in answer.get("Errors", []):
                log.warning("could not delete s3://%s/%s: %s", bucket, error.get("Key"),
                            error.get("Message"))
    except Exception as exc:  # botocore errors: cleanup must not hide the original outcome
        log.warning("could not delete %d object(s) under %s: %s", len(keys), target.root, exc)


def _prune_empty_parents(folder: str, root: str) -> None:
    root = root.rstrip("/")
    while folder.startswith(root + "/"):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)


def sweep_write(target: Target, fs: pafs.FileSystem, write_id: str,
                keep: frozenset[str] = frozenset()) -> list[str]:
    """Delete every file of ``write_id`` under ``target`` except ``keep``; return them."""
    marker = f"-lm{write_id}-"
    found = [rel for rel in list_data_files(target, fs)
             if marker in rel.rsplit("/", 1)[-1] and rel not in keep]
    delete_files(target, fs, found)
    return found
