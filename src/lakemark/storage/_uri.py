"""Turn what a user typed (a path or a URI) into one normalized :class:`Location`.

The normalized form matters beyond convenience: bookmark state is keyed by the source root, so
``s3a://b/p/``, ``s3://b/p`` and ``s3n://b/p`` must name the same source, and so must
``data/in``, ``./data/in/`` and ``file:///abs/data/in``.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError

__all__ = ["Location", "parse_uri", "S3_SCHEMES", "SUPPORTED"]

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
SUPPORTED = "local paths, file://, s3://, s3a://, s3n://"

# A URI scheme followed by "/" (``file:/x``, ``s3://b``). Two characters at least, so that a
# Windows drive (``C:/data``) and a relative path with a colon (``a:b``) stay local paths.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/")


@dataclass(frozen=True)
class Location:
    """A parsed source or target location.

    ``scheme`` is ``"file"`` or ``"s3"`` (``s3a``/``s3n`` are normalized to ``s3``). For S3,
    ``bucket`` is the bucket and ``key`` the key or prefix exactly as typed after the bucket
    (no leading ``/``; a trailing ``/`` is kept because it says "this is a folder"). For local
    files ``bucket`` is ``""`` and ``key`` is the absolute, normalized path. ``original`` is the
    string the user gave.
    """

    scheme: Literal["file", "s3"]
    bucket: str
    key: str
    original: str

    @property
    def is_s3(self) -> bool:
        return self.scheme == "s3"

    @property
    def path(self) -> str:
        """The local absolute path (for S3 locations: the key)."""
        return self.key

    @property
    def root(self) -> str:
        """The canonical name: an absolute path, or ``s3://bucket[/prefix]`` with no trailing /."""
        if self.scheme == "file":
            return self.key
        prefix = self.key.rstrip("/")
        return f"s3://{self.bucket}/{prefix}" if prefix else f"s3://{self.bucket}"


def parse_uri(uri: str) -> Location:
    """Parse a local path, ``file://`` URI or ``s3://``/``s3a://``/``s3n://`` URI.

    Relative local paths are made absolute against the current directory and ``~`` is
    expanded. ``file:`` URIs are percent-decoded (``file:///a%20b`` is ``/a b``); S3 keys are
    taken literally (``?`` and ``#`` are legal in keys, so no URL parsing is applied to them).
    Any other scheme raises :class:`ConfigError` naming the URI and the supported schemes.
    """
    if not isinstance(uri, str) or not uri.strip():
        raise ConfigError(f"empty source/target location {uri!r}; expected one of: {SUPPORTED}")
    match = _SCHEME.match(uri)
    if match is None:
        return Location("file", "", _local(uri), uri)
    scheme = match.group(1).lower()
    if scheme == "file":
        return Location("file", "", _file_uri(uri), uri)
    if scheme in S3_SCHEMES:
        return _s3_uri(uri, scheme)
    raise ConfigError(f"unsupported URI scheme {scheme!r} in {uri!r}; supported: {SUPPORTED}")


def _local(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def _file_uri(uri: str) -> str:
    parts = urllib.parse.urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        raise ConfigError(
            f"file URI {uri!r} names host {parts.netloc!r}; only local files are supported "
            "(write file:///absolute/path)"
        )
    path = urllib.parse.unquote(parts.path)
    if not path:
        raise ConfigError(f"file URI {uri!r} has no path")
    return os.path.abspath(path)


def _s3_uri(uri: str, scheme: str) -> Location:
    rest = uri[len(scheme) :]
    if not rest.startswith("://"):
        raise ConfigError(f"malformed S3 URI {uri!r}; expected {scheme}://bucket/prefix")
    rest = rest[3:]
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise ConfigError(f"S3 URI {uri!r} names no bucket; expected {scheme}://bucket/prefix")
    return Location("s3", bucket, key.lstrip("/"), uri)
