"""A three-link chain (issue 20, item 5): JSON files → bronze (ingest) → silver (reads bronze
incrementally, cleans) → gold (per-key totals merged by key), with processes SIGKILLed at
named points between rounds: every row exactly once at every link, and gold's totals those of
silver. The chain is :mod:`delta_chain` (``tests/delta_chain.py``)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import delta_chain  # noqa: E402
from crash_support import FAULT_POINTS, KILLED  # noqa: E402


def test_chain_survives_a_kill_inside_gold(spark, tmp_path):  # type: ignore[no-untyped-def]
    lake, state = tmp_path, f"sqlite:///{tmp_path}/state.db"
    delta_chain.write_batch(lake, 0, range(0, 40))
    killed = delta_chain.run_process(lake, state, kill="gold:mid-write")
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert delta_chain.check_chain(lake, range(40), complete=False) == []
    delta_chain.write_batch(lake, 1, range(40, 60))
    delta_chain.run_links(lake, state, spark)   # gold's retry replays its pinned range
    delta_chain.gold(lake, state, spark)        # ... and gold's next run takes the rest
    assert delta_chain.check_chain(lake, range(60)) == []


@pytest.mark.long
def test_chain_many_rounds_with_random_kills(spark, tmp_path):  # type: ignore[no-untyped-def]
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    lake, state = tmp_path, f"sqlite:///{tmp_path}/state.db"
    landed = 0
    for round_ in range(8):
        size = rng.randint(1, 30)
        delta_chain.write_batch(lake, round_, range(landed, landed + size))
        landed += size
        kill = None if rng.random() < 0.2 else \
            f"{rng.choice(delta_chain.LINKS)}:{rng.choice(FAULT_POINTS)}"
        done = delta_chain.run_process(lake, state, kill=kill)
        assert done.returncode in (0, KILLED), (seed, kill, done.stderr[-2000:])
        assert delta_chain.check_chain(lake, range(landed), complete=False) == [], (seed, kill)
    delta_chain.run_links(lake, state, spark)
    delta_chain.run_links(lake, state, spark)
    assert delta_chain.check_chain(lake, range(landed)) == [], seed
