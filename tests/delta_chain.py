"""A three-link pipeline for the chain tests (issue 20, item 5), runnable in-process or as a
process that SIGKILLs itself at a named point of one link:

    landing/*.json --bronze--> lake/bronze --silver--> lake/silver --gold--> lake/gold

* **bronze** ingests the JSON files (``read_files`` with a ctx) and appends them to a Delta table;
* **silver** reads bronze incrementally (``read_table`` with a ctx), cleans (drops rows with a
  negative amount, trims and upper-cases the key) and appends;
* **gold** reads silver incrementally and merges per-key totals (count and sum of the new rows
  added to the totals gold holds) by ``merge_keys``: exactly once, because a retried run replays
  its pinned range and its merge is skipped by the run's token once committed.

``python tests/delta_chain.py LAKE STATE [--kill LINK:POINT]`` runs the three links in order in
one Spark session (``local[1]``), with ``LAKEMARK_FAULT=POINT`` set only while LINK runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

from lakemark import Job  # noqa: E402
from lakemark._fault import FAULT_ENV, FAULT_WAIT_ENV  # noqa: E402

LINKS = ("bronze", "silver", "gold")
SCHEMA = "id long, key string, amount long"


def write_batch(lake: Path, batch: int, ids: Iterable[int]) -> None:
    """One landing file of rows ``ids``: key ``k<id % 5>`` (padded), amount ``id`` or, for
    every seventh id, -1 (a row silver drops)."""
    landing = lake / "landing"
    landing.mkdir(parents=True, exist_ok=True)
    lines = [f'{{"id": {i}, "key": " k{i % 5} ", "amount": {-1 if i % 7 == 0 else i}}}'
             for i in ids]
    (landing / f"batch-{batch:04d}.json").write_text("\n".join(lines) + "\n")


def bronze(lake: Path, state: str, spark: Any = None) -> None:
    with Job("bronze", state=state, spark=spark) as job:
        df = job.read_files(str(lake / "landing"), format="json", ctx="landing", schema=SCHEMA)
        job.write(df, str(lake / "bronze"), ctx="bronze")


def silver(lake: Path, state: str, spark: Any = None) -> None:
    from pyspark.sql import functions as F

    with Job("silver", state=state, spark=spark) as job:
        df = job.read_table(str(lake / "bronze"), ctx="bronze")
        clean = (df.where(F.col("amount") >= 0)
                   .withColumn("key", F.upper(F.trim(F.col("key")))))
        job.write(clean, str(lake / "silver"), ctx="silver")


def gold(lake: Path, state: str, spark: Any = None) -> None:
    from pyspark.sql import functions as F

    target = lake / "gold"
    with Job("gold", state=state, spark=spark) as job:
        new = job.read_table(str(lake / "silver"), ctx="silver")
        delta = new.groupBy("key").agg(F.count("*").alias("n"), F.sum("amount").alias("total"))
        if (target / "_delta_log").exists():
            old = job.spark.read.format("delta").load(str(target))
            delta = (delta.alias("d").join(old.alias("o"), "key", "left")
                     .select("key", (F.col("d.n") + F.coalesce(F.col("o.n"), F.lit(0)))
                             .alias("n"),
                             (F.col("d.total") + F.coalesce(F.col("o.total"), F.lit(0)))
                             .alias("total")))
        job.write(delta, str(target), ctx="gold", merge_keys=["key"])


def run_links(lake: Path, state: str, spark: Any = None, kill: str | None = None) -> None:
    """The three links in order; with ``kill`` = ``LINK:POINT``, the fault hook is armed only
    while LINK runs (the process dies there)."""
    link_of_kill, _, point = (kill or "").partition(":")
    for name, link in (("bronze", bronze), ("silver", silver), ("gold", gold)):
        if name == link_of_kill:
            os.environ[FAULT_ENV] = point
        try:
            link(lake, state, spark)
        finally:
            os.environ.pop(FAULT_ENV, None)


def run_process(lake: Path, state: str, kill: str | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The links in a fresh process (``local[1]``), killed at ``kill`` if given."""
    env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_WAIT_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, str(Path(__file__).resolve()), str(lake), state]
    if kill:
        cmd += ["--kill", kill]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def _ids(path: Path, column: str = "id") -> list[Any]:
    from deltalake import DeltaTable

    if not (path / "_delta_log").exists():
        return []
    return list(DeltaTable(str(path)).to_pyarrow_table(columns=[column]).column(column)
                .to_pylist())


def check_chain(lake: Path, landed: Iterable[int], *, complete: bool = True) -> list[str]:
    """Problems found (none: every row exactly once at every link, gold = silver's totals),
    once every link has run to completion after the last batch landed. With ``complete``
    False (a round may have been killed), only what must hold at any time: no row twice, no
    row that never landed."""
    from deltalake import DeltaTable

    problems = []
    wanted = sorted(landed)
    for link, expected in (("bronze", wanted), ("silver", [i for i in wanted if i % 7])):
        got = Counter(_ids(lake / link))
        dup = sorted(i for i, n in got.items() if n > 1)
        lost = sorted(set(expected) - set(got)) if complete else []
        extra = sorted(set(got) - set(expected))
        if dup or lost or extra:
            problems.append(f"{link}: {len(dup)} duplicated (e.g. {dup[:5]}), {len(lost)} lost "
                            f"(e.g. {lost[:5]}), {len(extra)} unexpected (e.g. {extra[:5]})")
    if not complete:
        return problems
    totals: dict[str, list[int]] = {}
    for i in wanted:
        if i % 7:
            entry = totals.setdefault(f"K{i % 5}", [0, 0])
            entry[0] += 1
            entry[1] += i
    rows = DeltaTable(str(lake / "gold")).to_pyarrow_table().to_pylist() \
        if (lake / "gold" / "_delta_log").exists() else []
    got_totals = {r["key"]: [r["n"], r["total"]] for r in rows}
    if len(rows) != len(got_totals) or got_totals != totals:
        problems.append(f"gold: {sorted(got_totals.items())} != {sorted(totals.items())}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lake", type=Path)
    parser.add_argument("state")
    parser.add_argument("--kill", metavar="LINK:POINT")
    args = parser.parse_args(argv)
    from lakemark.spark import get_spark

    spark = get_spark("local[1]", {"spark.sql.shuffle.partitions": "2"})
    run_links(args.lake, args.state, spark, args.kill)
    return 0


if __name__ == "__main__":
    sys.exit(main())
