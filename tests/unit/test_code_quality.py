"""The house's habits, checked by the suite so that CI fails on them: ruff's rule set (see
``[tool.ruff]`` in pyproject.toml) over the code, tests and benchmarks, and mypy over the package
(``[tool.mypy]``). Both run as their own processes from this virtual environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    proc = _run("ruff", "check", "--no-cache", "--output-format", "concise",
                "src", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing() -> None:
    proc = _run("mypy", "--no-error-summary")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_package_says_it_is_typed() -> None:
    assert (ROOT / "src" / "lakemark" / "py.typed").is_file()
