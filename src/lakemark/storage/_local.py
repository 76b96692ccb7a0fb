"""Listing a local folder (or one file) with ``os.scandir``.

Symbolic links are followed, as Hadoop's local file system does; a folder reached twice through
links is listed once, so a link cycle cannot make the walk endless. Entries that vanish while the
walk runs (a writer renaming its temporary file) are skipped; a folder that cannot be read is an
error, because skipping it would silently lose input. A broken file link (dangling, or a loop of
links) is listed with the link's own mtime and size 0, so the run that plans it sets it aside
with its reason (lakemark.run.quarantine) rather than the listing failing or dropping it.
"""

from __future__ import annotations

import errno
import os
import stat

from ..errors import SourceError
from ..planning.files import FileEntry
from ._filters import Exclusions, is_hidden

__all__ = ["list_local"]

_FORMAT_BITS = stat.S_IFMT(0o177777)
_REGULAR = stat.S_IFREG
_DIRECTORY = stat.S_IFDIR


def _entry(path: str, st: os.stat_result) -> FileEntry:
    return FileEntry(mtime=st.st_mtime_ns // 1_000_000, path=path, size=st.st_size)


def list_local(root: str, *, recurse: bool, exclusions: Exclusions) -> list[FileEntry]:
    """Files under the absolute path ``root`` (unsorted).

    ``root`` naming a single file lists that file (the hidden rule does not apply to a file named
    explicitly; exclusions do, matched against its name and its full path).
    """
    try:
        st = os.stat(root)
    except FileNotFoundError:
        raise SourceError(f"source path does not exist: {root}", uri=str(root)) from None
    except NotADirectoryError:
        raise SourceError(
            f"source path does not exist (a parent is a file): {root}",
            uri=str(root)) from None
    except OSError as exc:
        raise SourceError(
            f"cannot read source path {root}: {exc.strerror or exc}",
            uri=str(root)) from None
    if stat.S_ISREG(st.st_mode):
        name = os.path.basename(root)
        return [] if exclusions.excludes(name, root) else [_entry(root, st)]
    if not stat.S_ISDIR(st.st_mode):
        raise SourceError(f"source path is neither a file nor a folder: {root}", uri=str(root))

    files: list[FileEntry] = []
    seen_dirs = {(st.st_dev, st.st_ino)}
    pending = [(root, "")]
    while pending:
        folder, rel_folder = pending.pop()
        found, folders = _list_folder(folder, rel_folder, root, exclusions)
        files.extend(found)
        if recurse:
            for path, rel, ident in folders:
                if ident not in seen_dirs:
                    seen_dirs.add(ident)
                    pending.append((path, rel))
    return files


def _list_folder(
    folder: str, rel_folder: str, root: str, exclusions: Exclusions
) -> tuple[list[FileEntry], list[tuple[str, str, tuple[int, int]]]]:
    """The files of one folder and its sub-folders as (path, relative path, identity)."""
    visible = [
        e for e in _scan(folder, is_root=folder == root)
        if not ((e.name[0] in "._" and is_hidden(e.name)) or e.name.endswith("._COPYING_"))
    ]
    broken: list[FileEntry] = []
    try:
        stats = [e.stat() for e in visible]  # follows links
    except OSError:
        visible, stats, broken = _stat_carefully(visible, root)
    files = [
        FileEntry(st.st_mtime_ns // 1_000_000, e.path, st.st_size)
        for e, st in zip(visible, stats)
        if st.st_mode & _FORMAT_BITS == _REGULAR
    ] + broken
    if exclusions:
        prefix = len(folder.rstrip(os.sep)) + 1
        files = [f for f in files if not exclusions.excludes(rel_folder + f.path[prefix:], f.path)]
    folders = [
        (e.path, rel_folder + e.name + "/", (st.st_dev, st.st_ino))
        for e, st in zip(visible, stats)
        if st.st_mode & _FORMAT_BITS == _DIRECTORY
    ]
    return files, folders


def _stat_carefully(
    entries: list[os.DirEntry[str]], root: str
) -> tuple[list[os.DirEntry[str]], list[os.stat_result], list[FileEntry]]:
    """Stat one by one: skip entries that vanished, fail on unreadable ones; broken links
    (dangling or looping) come back as files of their own (size 0, the link's mtime)."""
    kept, stats, broken = [], [], []
    for entry in entries:
        try:
            stats.append(entry.stat())
        except (FileNotFoundError, NotADirectoryError):
            link = _broken_link(entry)
            if link is not None:
                broken.append(link)
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                link = _broken_link(entry)
                if link is not None:
                    broken.append(link)
                    continue
            raise SourceError(
                f"cannot read {entry.path} under source {root}: {exc.strerror or exc}",
                uri=entry.path) from None
        kept.append(entry)
    return kept, stats, broken


def _broken_link(entry: os.DirEntry[str]) -> FileEntry | None:
    """A link whose target is missing or loops, as a file entry (None: not a link, or gone)."""
    try:
        st = os.lstat(entry.path)
    except OSError:
        return None
    if not stat.S_ISLNK(st.st_mode):
        return None
    return FileEntry(st.st_mtime_ns // 1_000_000, entry.path, 0)


def _scan(folder: str, *, is_root: bool) -> list[os.DirEntry[str]]:
    """The entries of one folder; unreadable folders raise :class:`SourceError` naming them."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except FileNotFoundError:
        if is_root:
            raise SourceError(f"source path does not exist: {folder}", uri=str(folder)) from None
        return []  # removed while we walked
    except OSError as exc:
        raise SourceError(
            f"cannot read folder {folder}: {exc.strerror or exc}",
            uri=str(folder)) from None
