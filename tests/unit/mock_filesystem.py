"""A third URI scheme, ``mock://``, in one file: an in-memory :class:`FileSystem`.

Registering it is all it takes for lakemark's file handling (staged folder publishes, purges)
to work on ``mock://`` URIs; ``tests/unit/test_storage_fs.py`` uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lakemark.storage import register_filesystem

#: Every mock:// file: full path (``bucket/key``) -> content.
OBJECTS: dict[str, bytes] = {}


class MockFileSystem:
    """The file system rooted at a ``mock://`` URI, over :data:`OBJECTS`."""

    def __init__(self, uri: str) -> None:
        self.base = uri.removeprefix("mock://").strip("/")

    @property
    def root(self) -> str:
        return f"mock://{self.base}"

    def _key(self, rel: str) -> str:
        return f"{self.base}/{rel}".strip("/")

    def read_text(self, rel: str) -> str | None:
        data = OBJECTS.get(self._key(rel))
        return None if data is None else data.decode()

    def write_text(self, rel: str, text: str) -> None:
        OBJECTS[self._key(rel)] = text.encode()

    def names(self, folder: str, start: str = "") -> list[str]:
        return [rel for rel in self.files(folder) if "/" not in rel and rel.startswith(start)]

    def files(self, folder: str) -> dict[str, int]:
        prefix = self._key(folder) + "/"
        return {key[len(prefix):]: len(data) for key, data in OBJECTS.items()
                if key.startswith(prefix)}

    def exists(self, rel: str) -> bool:
        return self._key(rel) in OBJECTS

    def publish(self, source: str, dest: str, size: int) -> None:
        OBJECTS[self._key(dest)] = OBJECTS.pop(self._key(source))

    def delete(self, rels: Sequence[str]) -> None:
        for rel in rels:
            OBJECTS.pop(self._key(rel), None)

    def remove_tree(self, folder: str) -> None:
        self.delete(list(self.files(folder)))


register_filesystem("mock", MockFileSystem)
