"""Bucket mapping: ``s3://BUCKET[/prefix]`` served from a local folder (``lakemark run
--bucket-map``).

A production Glue script names real buckets in its arguments, its code and its catalog's table
locations. To run it unmodified on local data, each mapped bucket (or prefix of one) is read
and written in a local folder instead: ``s3://prod-bucket/in/a.json`` under the mapping
``s3://prod-bucket=/data/prod`` is the file ``/data/prod/in/a.json``.

The mapping is resolved once by the command (``parse_bucket_map``) and handed to the process
that runs the script in the environment variable ``LAKEMARK_BUCKET_MAP`` (a JSON object
``{"s3://bucket[/prefix]": "/abs/dir"}``), read when a path is resolved, never at import.
Listings of a mapped URI name their files by the **original** ``s3://`` URI, so bookmarks and
run manifests are the same as on AWS; readers, writers and ``purge_s3_path`` turn a mapped URI
into its local path with :func:`mapped_path`. The longest matching prefix wins; a prefix
matches whole path segments only (``s3://b/in`` maps ``s3://b/in/x``, not ``s3://b/inbox``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping

from ..errors import ConfigError

__all__ = ["BUCKET_MAP_ENV", "bucket_map", "mapped_path", "parse_bucket_map", "s3_name"]

BUCKET_MAP_ENV = "LAKEMARK_BUCKET_MAP"

_S3 = ("s3://", "s3a://", "s3n://")


def _split(uri: str) -> tuple[str, str] | None:
    """``(bucket, key)`` of an S3 URI (any S3 scheme), or None for anything else."""
    lower = uri.lower()
    for scheme in _S3:
        if lower.startswith(scheme):
            bucket, _, key = uri[len(scheme):].partition("/")
            return bucket, key.strip("/")
    return None


def parse_bucket_map(items: Iterable[str], option: str = "--bucket-map") -> dict[str, str]:
    """``{"s3://bucket[/prefix]": "/abs/dir"}`` from ``s3://BUCKET[/prefix]=DIR`` items.

    A malformed item raises :class:`ConfigError` naming ``option`` and the item: no ``=``, not
    an S3 URI, no bucket, an empty folder, or the same prefix mapped twice.
    """
    out: dict[str, str] = {}
    for item in items:
        uri, sep, folder = item.partition("=")
        parts = _split(uri.strip()) if sep else None
        if parts is None or not parts[0] or not folder.strip():
            raise ConfigError(f"{option} {item!r}: expected s3://BUCKET[/prefix]=DIR "
                              "(an S3 URI, '=', a local folder)")
        bucket, key = parts
        name = f"s3://{bucket}/{key}" if key else f"s3://{bucket}"
        if name in out:
            raise ConfigError(f"{option} {item!r}: {name} is mapped twice")
        out[name] = os.path.abspath(os.path.expanduser(folder.strip()))
    return out


def bucket_map(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The mapping in effect (``LAKEMARK_BUCKET_MAP``; empty when unset)."""
    text = (os.environ if environ is None else environ).get(BUCKET_MAP_ENV)
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{BUCKET_MAP_ENV} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{BUCKET_MAP_ENV} must be a JSON object of s3:// URI -> folder")
    return {str(k): str(v) for k, v in value.items()}


def _match(uri: str, mapping: Mapping[str, str]) -> tuple[str, str, str] | None:
    """``(mapped prefix, its folder, the rest of the key)`` for the longest match."""
    parts = _split(uri)
    if parts is None or not mapping:
        return None
    bucket, key = parts
    best: tuple[str, str, str] | None = None
    for name, folder in mapping.items():
        m_bucket, m_key = _split(name) or ("", "")
        if m_bucket != bucket:
            continue
        if m_key and key != m_key and not key.startswith(m_key + "/"):
            continue
        rest = key[len(m_key):].lstrip("/")
        if best is None or len(name) > len(best[0]):
            best = (name, folder, rest)
    return best


def mapped_path(uri: str, mapping: Mapping[str, str] | None = None) -> str | None:
    """The local path an S3 URI is mapped to, or None when it is not mapped (or not S3)."""
    found = _match(uri, bucket_map() if mapping is None else mapping)
    if found is None:
        return None
    _, folder, rest = found
    return os.path.join(folder, rest) if rest else folder


def s3_name(uri: str, local: str, mapping: Mapping[str, str] | None = None) -> str:
    """The ``s3://`` name of ``local`` (a path under the folder ``uri`` is mapped to)."""
    found = _match(uri, bucket_map() if mapping is None else mapping)
    if found is None:
        raise ConfigError(f"{uri} is not mapped to a local folder")
    name, folder, _ = found
    rel = os.path.relpath(local, folder).replace(os.sep, "/")
    return name if rel == "." else f"{name}/{rel}"
