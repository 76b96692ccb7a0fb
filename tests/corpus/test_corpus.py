"""The fast subset of the Glue compatibility corpus (``run.py`` runs all of it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: pgtest

from cases import CASES, Case, run_case  # noqa: E402
from world import World  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("case", [c for c in CASES if c.fast], ids=lambda c: c.name)
def test_corpus_case(case: Case, tmp_path: Path) -> None:
    world = World(tmp_path)
    case.check(world, run_case(case, world))
