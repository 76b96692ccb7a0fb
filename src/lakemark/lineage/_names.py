"""Safe file names for things named by others (job names, S3 keys, database names).

A Glue job may be called ``../../etc`` and an S3 key may be anything; the extractor turns
every such name into one path component that cannot leave the output folder, and checks the
final path again after resolving it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import ConfigError

__all__ = ["inside", "safe_component"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")
_MAX = 120


def safe_component(name: str) -> str:
    """``name`` as a single, harmless path component.

    Characters other than letters, digits and ``. _ = + -`` become ``_``, leading dots are
    removed, and the result is never ``""``, ``.`` or ``..``. When anything had to change, a
    short hash of the original is appended so two different names never map to one file.
    """
    cleaned = _UNSAFE.sub("_", name).lstrip(".")
    if len(cleaned) > _MAX:
        cleaned = cleaned[:_MAX]
    if cleaned == name and cleaned not in ("", ".", ".."):
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned or '_'}-{digest}"


def inside(root: Path, *parts: str) -> Path:
    """``root / parts…`` after sanitising each part; :class:`ConfigError` if the result would
    still resolve outside ``root`` (e.g. through a symlink already there)."""
    path = root.joinpath(*(safe_component(p) for p in parts))
    real_root = root.resolve()
    real = path.resolve()
    if real != real_root and real_root not in real.parents:
        raise ConfigError(f"refusing to write {path}: it resolves outside {root}")
    return path
