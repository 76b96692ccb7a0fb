"""File operations of the clean-up of processed source files: look at a file, delete it, move
it without ever overwriting — on local disks and on S3 (copy, then delete).

What to do with each file is decided in :mod:`lakemark.planning.cleanup`; this module only
does it. Every operation is idempotent where the decision needs it: deleting a file that is
gone is not an error, and a move that stopped between its copy and its delete is recognised
(:meth:`FileOps.same_file`) and finished by deleting the source.
"""

from __future__ import annotations

import errno
import filecmp
import os
import shutil
import uuid
from typing import Any

from ..planning.cleanup import Seen
from ._s3 import _mtime_ms
from ._bucket_map import mapped_path
from ._uri import Location, parse_uri

__all__ = ["FileOps"]


def _located(uri: str) -> Location:
    """Where ``uri`` is: an ``s3://`` URI mapped to a local folder (``lakemark run
    --bucket-map``, as its listing was) is that local file."""
    loc = parse_uri(uri)
    local = mapped_path(uri) if loc.is_s3 else None
    return parse_uri(local) if local else loc


class FileOps:
    """Local and S3 file operations for one clean-up pass (one S3 client, made when needed)."""

    def __init__(self, s3_client: Any = None) -> None:
        self._client = s3_client

    @property
    def client(self) -> Any:
        if self._client is None:
            from ._s3 import s3_client

            self._client = s3_client()
        return self._client

    # -- looking ------------------------------------------------------------------------------
    def stat(self, uri: str) -> Seen | None:
        """What is at ``uri`` now (None: nothing), with mtime and size as a listing gives them
        (on S3 from ListObjectsV2, the call the listing made, so the mtimes compare exactly)."""
        loc = _located(uri)
        if not loc.is_s3:
            try:
                st = os.stat(loc.path)
            except FileNotFoundError:
                return None
            return Seen(st.st_mtime_ns // 1_000_000, st.st_size)
        page = self.client.list_objects_v2(Bucket=loc.bucket, Prefix=loc.key, MaxKeys=1)
        for obj in page.get("Contents", ()):
            if obj["Key"] == loc.key:
                return Seen(_mtime_ms(obj["LastModified"]), int(obj["Size"]))
        return None

    def same_file(self, src: str, dest: str) -> bool:
        """Whether ``dest`` is a complete copy of ``src`` (same size and content; on S3 the
        same ETag, which a single-request copy keeps)."""
        a, b = _located(src), _located(dest)
        if a.is_s3 != b.is_s3:
            return False
        if not a.is_s3:
            try:
                if os.path.samefile(a.path, b.path):
                    return True
                return (os.path.getsize(a.path) == os.path.getsize(b.path)
                        and filecmp.cmp(a.path, b.path, shallow=False))
            except OSError:
                return False
        try:
            head_a = self.client.head_object(Bucket=a.bucket, Key=a.key)
            head_b = self.client.head_object(Bucket=b.bucket, Key=b.key)
        except Exception:  # noqa: BLE001 - either missing: not the same file
            return False
        return bool(head_a["ContentLength"] == head_b["ContentLength"]
                    and head_a.get("ETag") == head_b.get("ETag"))

    # -- changing -----------------------------------------------------------------------------
    def delete(self, uri: str) -> None:
        """Remove ``uri``; a file already gone is not an error."""
        loc = _located(uri)
        if loc.is_s3:
            self.client.delete_object(Bucket=loc.bucket, Key=loc.key)
            return
        try:
            os.unlink(loc.path)
        except FileNotFoundError:
            pass

    def move(self, src: str, dest: str) -> None:
        """Move ``src`` to ``dest``, never overwriting: FileExistsError if ``dest`` exists.

        Local: a hard link then the source's removal (atomic, and refused when ``dest``
        exists), or across file systems a copy to a temporary name beside ``dest`` that is
        then linked into place. S3: a copy (boto3's managed copy, multipart past 5 GiB), then
        the source's delete.
        """
        a, b = _located(src), _located(dest)
        if a.is_s3 != b.is_s3:
            raise ValueError(f"cannot move {src} to {dest}: one is on S3, the other local")
        if a.is_s3:
            self._move_s3(a.bucket, a.key, b.bucket, b.key)
            return
        try:
            os.makedirs(os.path.dirname(b.path), exist_ok=True)
        except FileExistsError:  # a file where a folder is needed: not "dest exists"
            raise NotADirectoryError(errno.ENOTDIR, "a file is in the way of the archive "
                                     "folder", os.path.dirname(b.path)) from None
        try:
            os.link(a.path, b.path)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise FileExistsError(errno.EEXIST, "archive destination exists", dest) from None
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
            self._copy_local(a.path, b.path)
        os.unlink(a.path)

    @staticmethod
    def _copy_local(src: str, dest: str) -> None:
        """Copy across file systems: to a temporary name beside ``dest``, then into place
        without overwriting (a link; a rename after a check where links are not allowed)."""
        tmp = os.path.join(os.path.dirname(dest), f".lakemark-archive-{uuid.uuid4().hex}")
        try:
            shutil.copy2(src, tmp)
            try:
                os.link(tmp, dest)
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    raise FileExistsError(errno.EEXIST, "archive destination exists",
                                          dest) from None
                if os.path.exists(dest):
                    raise FileExistsError(errno.EEXIST, "archive destination exists",
                                          dest) from None
                os.rename(tmp, dest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _move_s3(self, bucket: str, key: str, dest_bucket: str, dest_key: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=dest_bucket, Key=dest_key)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code not in ("404", "NoSuchKey", "NotFound"):
                raise
        else:
            raise FileExistsError(errno.EEXIST, "archive destination exists",
                                  f"s3://{dest_bucket}/{dest_key}")
        self.client.copy({"Bucket": bucket, "Key": key}, dest_bucket, dest_key)
        self.client.delete_object(Bucket=bucket, Key=key)
