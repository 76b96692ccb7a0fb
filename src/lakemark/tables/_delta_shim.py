"""Serving ``import delta.tables`` with lakemark's stand-in when delta-spark is absent.

The stand-in package lives in ``_shim/delta`` inside lakemark; nothing named ``delta`` is
installed at the top level. :func:`install_delta_shim` (called by ``lakemark run`` and
``lakemark.register(spark)``) appends that folder to the **end** of ``sys.path``, and only when
no ``delta`` package can be imported already -- so Delta Lake's own package, when installed,
always wins, and a process that never calls it sees no ``delta`` at all.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

__all__ = ["delta_shim_path", "install_delta_shim"]


def delta_shim_path() -> str:
    """The folder holding lakemark's ``delta`` package."""
    return str(Path(__file__).parent / "_shim")


def install_delta_shim() -> bool:
    """Make ``from delta.tables import DeltaTable`` resolve to lakemark's stand-in unless a
    ``delta`` package is importable already. True when lakemark's package is (now) served."""
    path = delta_shim_path()
    if path in sys.path:
        return True
    if importlib.util.find_spec("delta") is not None:
        return False
    sys.path.append(path)
    importlib.invalidate_caches()
    return True
