"""The size and mtime of files as a listing would report them now (for the check that a run
read each file as planned): local ``os.stat``, S3 ``HeadObject``. Same units as the listings
(epoch milliseconds, bytes), so an unchanged file compares equal to its planned entry.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable

from ..errors import SourceError
from ._bucket_map import mapped_path
from ._s3 import _mtime_ms, s3_client
from ._uri import parse_uri

__all__ = ["stat_files"]

#: ``os.stat`` errors of a path with nothing to read behind it: removed, under a path part that
#: is no folder, or a loop of symbolic links (a broken link the listing listed and quarantine
#: set aside must not fail the check after the read).
_UNREACHABLE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


def stat_files(paths: Iterable[str]) -> dict[str, tuple[int, int] | None]:
    """``(mtime_ms, size)`` of each path or URI now; None for one that is gone (or a link
    that leads nowhere)."""
    out: dict[str, tuple[int, int] | None] = {}
    client = None
    for path in paths:
        local = mapped_path(path) if path.startswith(("s3://", "s3a://", "s3n://")) else None
        location = parse_uri(path)
        if location.is_s3 and local is None:
            if client is None:
                client = s3_client()
            try:
                head = client.head_object(Bucket=location.bucket, Key=location.key)
            except Exception as exc:  # noqa: BLE001 - botocore's ClientError and friends
                code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
                if code in ("404", "NoSuchKey", "NotFound"):
                    out[path] = None
                    continue
                raise SourceError(f"cannot check {path} after the read: {exc}",
                                  uri=path) from None
            out[path] = (_mtime_ms(head["LastModified"]), int(head["ContentLength"]))
            continue
        try:
            st = os.stat(local or location.path)
        except OSError as exc:
            if exc.errno not in _UNREACHABLE:
                raise
            out[path] = None  # gone, or a link that leads nowhere (a loop): set aside, not read
            continue
        out[path] = (st.st_mtime_ns // 1_000_000, st.st_size)
    return out
