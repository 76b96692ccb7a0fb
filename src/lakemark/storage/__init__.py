"""Listing and object I/O by URI scheme: local paths, ``file://`` and ``s3://`` (``s3a://``,
``s3n://``).

* :func:`parse_uri` normalizes what the user typed into a :class:`Location`.
* :func:`list_files` lists a folder, file or prefix into a :class:`Listing` of
  :class:`~lakemark.planning.files.FileEntry` sorted by ``(mtime, path)``, plus the time the
  listing started (the planner's "now"). :func:`list_files_after` is the S3 ``StartAfter``
  variant for lexically growing keys; :func:`check_source` validates a source up front.
* :func:`partition_values` reads Hive ``key=value`` folders; :func:`parse_exclusions` compiles
  Glue's ``exclusions`` globs.
* :func:`s3_client` builds the boto3 client (standard AWS configuration, including
  ``AWS_ENDPOINT_URL[_S3]``); :func:`arrow_filesystem` and friends give ``pyarrow.fs``
  filesystems whose endpoint/region settings (:func:`arrow_fs_config`, no secrets) can be
  shipped to executors and rebuilt there (:func:`arrow_filesystem_from_config`).
* :func:`filesystem_for` gives the :class:`FileSystem` (read, write, list, exists, publish,
  delete on root-relative paths) of a URI by its scheme: local and S3 built in, another
  scheme one module calling :func:`register_filesystem` (:mod:`._fs`).
* :func:`stat_files` gives files' size and mtime now, in a listing's units (:mod:`._stat`).
* :func:`mapped_path` serves ``s3://`` buckets mapped to local folders (``lakemark run
  --bucket-map``, :mod:`._bucket_map`): listings keep the ``s3://`` names.
"""

from __future__ import annotations

from ._bucket_map import BUCKET_MAP_ENV, bucket_map, mapped_path, parse_bucket_map
from ._arrow import arrow_filesystem, arrow_filesystem_from_config, arrow_fs_config, arrow_path
from ._fs import FileSystem, filesystem_for, register_filesystem, registered_schemes
from ._filters import Exclusions, is_hidden, parse_exclusions, partition_values
from ._listing import Listing, check_source, list_files, list_files_after
from ._s3 import s3_client
from ._stat import stat_files
from ._uri import Location, parse_uri

__all__ = [
    "BUCKET_MAP_ENV",
    "Exclusions",
    "FileSystem",
    "Listing",
    "Location",
    "arrow_filesystem",
    "arrow_filesystem_from_config",
    "arrow_fs_config",
    "arrow_path",
    "bucket_map",
    "check_source",
    "filesystem_for",
    "is_hidden",
    "list_files",
    "list_files_after",
    "mapped_path",
    "parse_bucket_map",
    "parse_exclusions",
    "parse_uri",
    "partition_values",
    "register_filesystem",
    "registered_schemes",
    "s3_client",
    "stat_files",
]
