"""``list_files``: one listing call for every scheme, returning what a planner needs.

The planner needs the files (it sorts the few it takes) and the moment the listing *started*
(its "now": a file that lands while the listing runs must not be taken by a window that claims
to have seen everything up to the end of the listing).
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any

from ..errors import ConfigError, SourceError
from ..planning.files import FileEntry
from ._bucket_map import mapped_path, s3_name
from ._filters import Exclusions, parse_exclusions
from ._local import list_local
from ._s3 import list_s3, probe_s3
from ._s3 import s3_client as make_s3_client
from ._uri import Location, parse_uri

__all__ = ["Listing", "list_files", "list_files_after", "check_source"]


@dataclass(frozen=True)
class Listing:
    """The result of listing one source.

    ``root`` is the normalized source (an absolute local path, or ``s3://bucket/prefix`` whatever
    S3 scheme was typed): the name bookmark state is kept under. ``entries`` are the files in
    the order the storage returned them; ``files`` are the same sorted by ``(mtime, path)``
    (sorted on first use: a planner that takes a few new files out of many never pays for
    ordering the rest). ``started_ms`` is the wall clock in epoch ms read before the first
    listing call. ``requests`` counts ListObjectsV2 calls (0 for local files).
    """

    root: str
    entries: list[FileEntry]
    started_ms: int
    requests: int = 0

    @cached_property
    def files(self) -> list[FileEntry]:
        files = list(self.entries)
        with _no_gc_pauses():
            _sort(files)
        return files

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.entries)


# FileEntry's order, (mtime, path), as two stable sorts on keys compared in C.
_BY_PATH = attrgetter("path")
_BY_MTIME = attrgetter("mtime")


def _sort(files: list[FileEntry]) -> None:
    """Sort in place by (mtime, path): two stable sorts on single keys beat one on tuples."""
    files.sort(key=_BY_PATH)
    files.sort(key=_BY_MTIME)


@contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """Hold off the cycle collector while a listing builds many small acyclic objects."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def list_files(
    uri: str,
    *,
    recurse: bool = True,
    exclusions: Sequence[str] | str = (),
    s3_client: Any = None,
) -> Listing:
    """List the files of a local folder/file or an S3 prefix/object.

    * Local: a missing or unreadable path raises :class:`SourceError` naming it; a path naming a
      file lists that file. ``recurse=False`` lists only the folder's direct files.
    * S3: the key is a folder (``s3://b/data`` lists ``data/…``); if nothing exists under it but
      the key names an object, that object is listed. S3 has no folders, so a prefix with
      nothing under it lists **zero files, not an error**; a missing bucket, denied access or
      an unreachable endpoint raise :class:`SourceError` naming the URI. Folder-marker keys
      (ending in ``/`` or ``_$folder$``) are skipped. ``recurse=False`` uses ``Delimiter="/"``.
    * Both: names starting with ``.``, or ``_`` without an ``=`` (``_SUCCESS``, ``_temporary/``,
      ``.crc``; Hive folders like ``_x=1`` stay) anywhere below the root are skipped, as Spark
      does. ``exclusions`` (Glue's option; see :func:`parse_exclusions`) are matched against
      the root-relative path and against the full path or ``s3://`` URI.

    ``s3_client`` is a boto3 S3 client to use instead of :func:`s3_client`'s default one.
    """
    loc = parse_uri(uri)
    excl = parse_exclusions(exclusions)
    started = _now_ms()
    if not loc.is_s3:
        with _no_gc_pauses():
            files = list_local(loc.key, recurse=recurse, exclusions=excl)
        return Listing(loc.root, files, started, 0)
    local = mapped_path(uri)
    if local is not None:
        return Listing(loc.root, _list_mapped(uri, local, recurse, excl), started, 0)
    client = s3_client if s3_client is not None else make_s3_client()
    files, requests = list_s3(client, loc, recurse=recurse, exclusions=excl)
    return Listing(loc.root, files, started, requests)


def _list_mapped(uri: str, local: str, recurse: bool, excl: Exclusions) -> list[FileEntry]:
    """An S3 URI mapped to a local folder (``--bucket-map``): the folder's files, named by
    their ``s3://`` URIs; nothing there is an empty prefix, as on S3."""
    if not os.path.exists(local):
        return []
    with _no_gc_pauses():
        files = list_local(local, recurse=recurse, exclusions=parse_exclusions(()))
    base = local if os.path.isdir(local) else os.path.dirname(local)
    out = []
    for f in files:  # exclusions see the s3:// URI, as they would on S3
        name = s3_name(uri, f.path)
        relative = os.path.relpath(f.path, base).replace(os.sep, "/")
        if not excl or not excl.excludes(relative, name):
            out.append(FileEntry(f.mtime, name, f.size))
    return out


def list_files_after(
    uri: str,
    start_after_key: str,
    *,
    recurse: bool = True,
    exclusions: Sequence[str] | str = (),
    s3_client: Any = None,
) -> Listing:
    """List an S3 prefix from just after ``start_after_key`` (ListObjectsV2 ``StartAfter``).

    An incremental listing for sources whose keys grow lexically (dates, sequence numbers):
    only keys strictly greater than ``start_after_key`` are returned, so the cost grows with
    the new keys, not the whole prefix. ``start_after_key`` is a key in the bucket (``data/x``)
    or an S3 URI in the same bucket (``s3://b/data/x``). The URI is always taken as a folder.
    Local paths raise :class:`ConfigError`.
    """
    loc = parse_uri(uri)
    if not loc.is_s3:
        raise ConfigError(f"list_files_after works on S3 prefixes only, got {uri!r}")
    after = start_after_key
    if "://" in after:
        after_loc = parse_uri(after)
        if not after_loc.is_s3 or after_loc.bucket != loc.bucket:
            raise ConfigError(
                f"start_after_key {start_after_key!r} is not in bucket {loc.bucket!r}")
        after = after_loc.key
    excl = parse_exclusions(exclusions)
    started = _now_ms()
    local = mapped_path(uri)
    if local is not None:
        start = f"s3://{loc.bucket}/{after}"
        files = [f for f in _list_mapped(uri, local, recurse, excl) if f.path > start]
        return Listing(loc.root, files, started, 0)
    client = s3_client if s3_client is not None else make_s3_client()
    folder = loc if not loc.key or loc.key.endswith("/") else Location(
        "s3", loc.bucket, loc.key + "/", loc.original
    )
    files, requests = list_s3(
        client, folder, recurse=recurse, exclusions=excl, start_after=after or None
    )
    return Listing(loc.root, files, started, requests)


def check_source(uri: str, *, s3_client: Any = None) -> Location:
    """Check that a source can be listed, before any work or state change; return its location.

    Raises :class:`ConfigError` for an unsupported URI and :class:`SourceError` for a missing or
    unreadable local path, or (one ListObjectsV2 call) a missing or forbidden S3 bucket. An S3
    prefix with nothing under it passes: it is a valid, empty source.
    """
    loc = parse_uri(uri)
    if loc.is_s3 and mapped_path(uri) is not None:
        return loc  # a mapped bucket: a local folder, missing or empty is an empty prefix
    if loc.is_s3:
        probe_s3(s3_client if s3_client is not None else make_s3_client(), loc)
    else:
        if not os.path.exists(loc.key):
            raise SourceError(f"source path does not exist: {loc.key}", uri=str(loc.original))
        if not os.access(loc.key, os.R_OK):
            raise SourceError(
                f"cannot read source path {loc.key}: permission denied",
                uri=str(loc.original))
    return loc
