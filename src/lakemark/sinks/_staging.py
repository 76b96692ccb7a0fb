"""Where a folder write stages its files: a sibling of the target, or (old layout) inside it.

With commit records in the state store (the default, :mod:`._commit_log`) the run's files are
staged in ``<target>__lakemark_staging/<write id>/`` beside the target, so not even a running
or killed write leaves anything under the output prefix. A target with no parent (a bucket's
root, ``/``) and the old layout (``LAKEMARK_FOLDER_COMMITS=folder``) stage in
``<target>/_lakemark_staging/<write id>/`` as before.

:class:`SiblingStaged` is the target's file system with the staging folder mapped beside it:
paths under ``_lakemark_staging/`` go to the sibling, every other path to the target, all
through one file system rooted at the target's parent, so a publish is still one ``rename``
(same parent folder) or one server-side copy (same bucket).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..storage._fs import FileSystem, filesystem_for

__all__ = ["SIBLING_SUFFIX", "STAGING_DIR", "SiblingStaged", "sibling_staged"]

#: The staging folder inside the target (old layout), relative to the target's root.
STAGING_DIR = "_lakemark_staging"
#: What the sibling staging folder's name adds to the target's last path segment.
SIBLING_SUFFIX = "__lakemark_staging"


class SiblingStaged:
    """The target's file system, with ``_lakemark_staging/…`` mapped to the sibling folder
    ``<target>__lakemark_staging/…`` (see the module docstring)."""

    def __init__(self, target_root: str, parent: FileSystem, base: str) -> None:
        self._root = target_root
        self.parent = parent
        self.base = base

    @property
    def root(self) -> str:
        return self._root

    @property
    def staging_root(self) -> str:
        """The sibling staging folder (absolute path or ``s3://`` URI)."""
        return self._root + SIBLING_SUFFIX

    def _map(self, rel: str) -> str:
        if rel == STAGING_DIR or rel.startswith(STAGING_DIR + "/"):
            return self.base + SIBLING_SUFFIX + rel[len(STAGING_DIR):]
        return f"{self.base}/{rel}" if rel else self.base

    def read_text(self, rel: str) -> str | None:
        return self.parent.read_text(self._map(rel))

    def write_text(self, rel: str, text: str) -> None:
        self.parent.write_text(self._map(rel), text)

    def names(self, folder: str, start: str = "") -> list[str]:
        return self.parent.names(self._map(folder), start)

    def files(self, folder: str) -> dict[str, int]:
        return self.parent.files(self._map(folder))

    def exists(self, rel: str) -> bool:
        return self.parent.exists(self._map(rel))

    def publish(self, source: str, dest: str, size: int) -> None:
        self.parent.publish(self._map(source), self._map(dest), size)

    def delete(self, rels: Sequence[str]) -> None:
        self.parent.delete([self._map(rel) for rel in rels])

    def remove_tree(self, folder: str) -> None:
        self.parent.remove_tree(self._map(folder))


def sibling_staged(target: FileSystem) -> SiblingStaged | None:
    """``target`` with its staging beside it, or None when the target has no parent folder
    to hold a sibling (a bucket's root, the file system's root)."""
    root = target.root.rstrip("/")
    parent, sep, base = root.rpartition("/")
    if not sep or not base or not parent or parent.endswith(":/") or root.endswith(":"):
        return None
    if parent.startswith("s3://") and parent.count("/") < 2:
        return None
    return SiblingStaged(root, filesystem_for(parent if parent else "/"), base)
