"""``purge_s3_path``: delete files older than a retention period under a local or S3 path."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError, UnsupportedError

__all__ = ["purge_path"]

log = logging.getLogger("lakemark.glue")

_OPTIONS = {"retentionPeriod", "excludeStorageClasses", "manifestFilePath"}


def purge_path(path: str, options: Mapping[str, Any]) -> int:
    """Delete every file under ``path`` older than ``retentionPeriod`` hours; returns the count.

    A bucket mapped to a local folder (``lakemark run --bucket-map``) is purged there.
    ``retentionPeriod`` defaults to 168 hours (7 days) as in Glue; 0 deletes everything. A
    path with nothing under it (an empty S3 prefix, a local folder not made yet) purges nothing.
    """
    from ..storage import filesystem_for, list_files, mapped_path, parse_uri

    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise UnsupportedError(f"purge option(s) not supported: {', '.join(unknown)}")
    if options.get("manifestFilePath"):
        raise UnsupportedError("purge option 'manifestFilePath' is not supported")
    try:
        hours = float(options.get("retentionPeriod", 168))
    except (TypeError, ValueError):
        raise ConfigError(f"purge option retentionPeriod must be a number of hours, "
                          f"not {options.get('retentionPeriod')!r}") from None
    cutoff_ms = int((time.time() - hours * 3600) * 1000)
    path = mapped_path(path) or path  # a bucket mapped to a local folder (--bucket-map)
    location = parse_uri(path)
    if not location.is_s3 and not os.path.exists(location.path):
        # Like an S3 prefix with nothing under it (Glue's case): nothing to purge. Scripts
        # purge their target before the first write ever made it.
        log.info("purge: %s does not exist; nothing to purge", path)
        return 0
    listing = list_files(path, recurse=True)
    old = [f for f in listing.files if f.mtime <= cutoff_ms]
    # Through the storage's file system for the path's scheme (S3: DeleteObjects batches).
    root = location.root
    if any(f.path == root for f in old):  # the path names one file: work from its folder
        root = root.rsplit("/", 1)[0]
    filesystem_for(root).delete([f.path[len(root):].lstrip("/") for f in old])
    log.info("purged %d file(s) under %s older than %g hour(s)", len(old), path, hours)
    return len(old)
