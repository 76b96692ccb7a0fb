"""The local (or a shared POSIX) file system of :mod:`._fs`: publish is a rename."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

from ..errors import SinkError

__all__ = ["LocalFileSystem"]


class LocalFileSystem:
    """A folder target on the local (or a shared POSIX) filesystem: publish is a rename."""

    def __init__(self, root: str | Path) -> None:
        self.base = Path(root)

    @property
    def root(self) -> str:
        return str(self.base)

    def _path(self, rel: str) -> Path:
        return self.base / rel

    def read_text(self, rel: str) -> str | None:
        try:
            return self._path(rel).read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SinkError(f"cannot read {self._path(rel)}: {exc.strerror or exc}") from exc

    def write_text(self, rel: str, text: str) -> None:
        path = self._path(rel)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise SinkError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def names(self, folder: str, start: str = "") -> list[str]:
        path = self._path(folder)
        if not path.is_dir():
            return []
        return [entry.name for entry in path.iterdir()
                if entry.name.startswith(start) and entry.is_file()]

    def files(self, folder: str) -> dict[str, int]:
        top = self._path(folder)
        out: dict[str, int] = {}
        for dirpath, _dirs, names in os.walk(top):
            for name in names:
                path = Path(dirpath) / name
                out[path.relative_to(top).as_posix()] = path.stat().st_size
        return out

    def exists(self, rel: str) -> bool:
        return self._path(rel).exists()

    def publish(self, source: str, dest: str, size: int) -> None:
        target = self._path(dest)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._path(source), target)
        except OSError as exc:
            raise SinkError(f"cannot publish {target}: {exc.strerror or exc}") from exc

    def delete(self, rels: Sequence[str]) -> None:
        for rel in rels:
            try:
                self._path(rel).unlink(missing_ok=True)
            except OSError as exc:
                raise SinkError(f"cannot delete {self._path(rel)}: {exc.strerror or exc}") from exc

    def remove_tree(self, folder: str) -> None:
        path = self._path(folder)
        shutil.rmtree(path, ignore_errors=True)
        parent = path.parent  # the staging folder itself goes once it is empty
        while parent != self.base and self.base in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent
