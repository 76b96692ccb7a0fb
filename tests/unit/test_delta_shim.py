"""lakemark's ``delta`` stand-in is served only when no ``delta`` package is importable, and
then from the end of ``sys.path`` (Delta Lake's own package always wins)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lakemark.tables import delta_shim_path, install_delta_shim


def test_an_installed_delta_package_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "delta").mkdir()
    (tmp_path / "delta" / "__init__.py").write_text("")
    path = [p for p in sys.path if p != delta_shim_path()]
    monkeypatch.setattr(sys, "path", [str(tmp_path), *path])
    monkeypatch.delitem(sys.modules, "delta", raising=False)
    assert install_delta_shim() is False
    assert delta_shim_path() not in sys.path


def test_without_delta_the_shim_goes_last(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    path = [p for p in sys.path if p != delta_shim_path()]
    monkeypatch.setattr(sys, "path", path)
    monkeypatch.delitem(sys.modules, "delta", raising=False)
    if importlib.util.find_spec("delta") is not None:
        pytest.fail("a 'delta' package is installed in the test environment")
    assert install_delta_shim() is True
    assert sys.path[-1] == delta_shim_path()
    assert (Path(delta_shim_path()) / "delta" / "tables.py").is_file()
