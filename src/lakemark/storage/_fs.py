"""A small file-system protocol behind a registry of URI schemes (as pyiceberg's FileIO).

:class:`FileSystem` is what lakemark's own file handling needs, on ``/``-separated paths
relative to a root: read and write (atomically) small text files, list names and files,
check existence, publish (make a staged file appear whole at its final name) and delete.
:func:`filesystem_for` gives the one for a URI by its scheme: local paths and ``file://``
(:mod:`._fs_local`), ``s3://`` (:mod:`._fs_s3`, also ``s3a``/``s3n``). Another scheme is one
new module that calls :func:`register_filesystem` with a factory; nothing else changes (the
unit tests register a ``mock://`` scheme this way).

Errors are :class:`~lakemark.errors.SinkError` naming the path (the protocol serves folder
sinks and purges, which report them as such).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from ._uri import parse_uri

__all__ = ["FileSystem", "filesystem_for", "register_filesystem", "registered_schemes"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")


class FileSystem(Protocol):
    """The file operations lakemark needs, on ``/``-separated paths relative to a root.
    Errors are :class:`SinkError` naming the path."""

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


#: scheme -> factory of the file system rooted at a URI of that scheme.
_FACTORIES: dict[str, Callable[[str], FileSystem]] = {}


def register_filesystem(scheme: str, factory: Callable[[str], FileSystem]) -> None:
    """Serve URIs ``<scheme>://...`` with ``factory(uri)`` (the file system rooted there)."""
    _FACTORIES[scheme.lower()] = factory


def registered_schemes() -> list[str]:
    """The schemes served besides local paths (``file``) and S3."""
    return sorted(_FACTORIES)


def filesystem_for(uri: str) -> FileSystem:
    """The :class:`FileSystem` rooted at ``uri`` (a local path, ``file://``, ``s3://`` or a
    registered scheme); ConfigError for a scheme nothing serves."""
    match = _SCHEME.match(uri) if isinstance(uri, str) else None
    if match is not None and match.group(1).lower() in _FACTORIES:
        return _FACTORIES[match.group(1).lower()](uri)
    loc = parse_uri(uri)  # raises ConfigError for an unknown scheme
    if loc.is_s3:
        from ._fs_s3 import S3FileSystem

        return S3FileSystem(loc.bucket, loc.key)
    from ._fs_local import LocalFileSystem

    return LocalFileSystem(loc.key)

