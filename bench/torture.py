"""Randomised crash/retry torture run of `lakemark ingest files` (issue 4's proof at scale).

    python bench/torture.py [--sequences 200] [--workers 2] [--seed 7] [--out FILE]

Each worker drives its own chain — a local source folder, a target (a Delta table or a Parquet
folder, chosen per chain) and an SQLite state file — through crash/retry *sequences*: new files
arrive (0–3 of them, 1–30 rows each); a run is SIGKILLed at a random named point of the run
(``LAKEMARK_FAULT``; sometimes no kill); more files may arrive; then the job is rerun — each
rerun may itself be killed again (at most 3 kills a sequence) — until a run succeeds.

After every sequence the target must hold each row of the files the bookmark covers exactly
once and nothing else (read as a reader would: ``deltalake`` for Delta, pyarrow's dataset
reader — which skips ``_``-prefixed staging and commit records — for the folder), and the
bookmark must cover no file that has not arrived. At the end of each chain one more run must
take every file that arrived. Results are written after every sequence, so an interrupted run
still leaves its record; a failure is recorded with its details, never hidden.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from lakemark.sinks._fault import FAULT_ENV, FAULT_POINTS  # noqa: E402
from lakemark.state import open_store  # noqa: E402

MAX_KILLS = 3


@dataclass
class Chain:
    """One source folder, target and state file, and the runs made against them."""

    root: Path
    target_format: str
    rng: random.Random
    next_id: int = 0
    files: dict[str, list[int]] = field(default_factory=dict)  # file name → its ids
    runs: int = 0

    def __post_init__(self) -> None:
        self.src = self.root / "in"
        self.src.mkdir(parents=True)
        self.target = self.root / "target"
        self.state = f"sqlite:///{self.root / 'state.db'}"

    def arrive(self, max_files: int = 3) -> int:
        count = self.rng.randint(0, max_files)
        for _ in range(count):
            rows = list(range(self.next_id, self.next_id + self.rng.randint(1, 30)))
            self.next_id += len(rows)
            name = f"f{len(self.files):05d}.json"
            (self.src / name).write_text("".join(json.dumps({"id": i, "v": f"r{i}"}) + "\n"
                                                 for i in rows))
            self.files[name] = rows
        return count

    def run(self, fault: str | None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
        env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
        if fault:
            env[FAULT_ENV] = fault
        self.runs += 1
        cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(self.src),
               str(self.target), "--job", "torture", "--state", self.state, "--json",
               "--master", "local[1]", "--target-format", self.target_format]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)

    def target_ids(self) -> list[int]:
        if not self.target.exists():
            return []
        if self.target_format == "delta":
            from deltalake import DeltaTable

            return list(DeltaTable(str(self.target)).to_pyarrow_table().column("id").to_pylist())
        import pyarrow.dataset as ds

        return list(ds.dataset(str(self.target), format="parquet").to_table(
            columns=["id"]).column("id").to_pylist())

    def covered(self) -> set[str]:
        """Names of the files the job's successful runs took (the bookmark's coverage)."""
        store = open_store(self.state)
        try:
            return {Path(e.path).name for run in store.list_runs("torture")
                    if run.status == "SUCCEEDED" for i in store.run_inputs(run.run_id)
                    if i.ctx == "source" for e in i.files}
        finally:
            store.close()

    def check(self) -> list[str]:
        """What is wrong now (empty when the target matches the bookmark exactly)."""
        problems = []
        covered = self.covered()
        unknown = covered - set(self.files)
        if unknown:
            problems.append(f"bookmark covers files that never arrived: {sorted(unknown)}")
        want = Counter(i for name in covered & set(self.files) for i in self.files[name])
        have = Counter(self.target_ids())
        duplicated = sorted(i for i, n in have.items() if n > 1)
        lost = sorted(i for i in want if i not in have)
        extra = sorted(i for i in have if i not in want)
        if duplicated:
            problems.append(f"{len(duplicated)} duplicated row id(s), e.g. {duplicated[:5]}")
        if lost:
            problems.append(f"{len(lost)} lost row id(s), e.g. {lost[:5]}")
        if extra:
            problems.append(f"{len(extra)} row id(s) of files the bookmark does not cover, "
                            f"e.g. {extra[:5]}")
        return problems


def sequence(chain: Chain) -> dict[str, Any]:
    """One crash/retry sequence; its record."""
    rng = chain.rng
    record: dict[str, Any] = {"arrived": chain.arrive(), "kills": [], "runs": 0}
    fault: str | None = rng.choice(FAULT_POINTS + (None,))
    while True:
        out = chain.run(fault)
        record["runs"] += 1
        if out.returncode == -9:
            record["kills"].append(fault)
            if rng.random() < 0.5:
                record["arrived"] += chain.arrive(2)
            fault = rng.choice(FAULT_POINTS) if (len(record["kills"]) < MAX_KILLS
                                                 and rng.random() < 0.3) else None
            continue
        if out.returncode != 0:
            record["error"] = f"exit {out.returncode}: {out.stderr[-1500:]}"
            return record
        if fault is not None:
            record["not_reached"] = fault  # the run had nothing to do at that point
        return record


def drive(chain: Chain, count: int, results: list[dict[str, Any]], lock: threading.Lock,
          flush: Any) -> None:
    for _ in range(count):
        record = sequence(chain)
        record["problems"] = chain.check()
        record["target_format"] = chain.target_format
        with lock:
            results.append(record)
            flush()
        if record.get("error") or record["problems"]:
            return  # keep the evidence: this chain stops here
    final = chain.run(None)
    problems = chain.check()
    missing = sorted(set(chain.files) - chain.covered())
    if final.returncode != 0:
        problems.append(f"final run failed: {final.stderr[-1500:]}")
    if missing:
        problems.append(f"{len(missing)} arrived file(s) never taken, e.g. {missing[:5]}")
    with lock:
        results.append({"final_run_of": str(chain.root.name), "problems": problems,
                        "files": len(chain.files), "rows": chain.next_id, "runs": chain.runs})
        flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sequences", type=int, default=200,
                        help="crash/retry sequences in all (split over the workers)")
    parser.add_argument("--workers", type=int, default=2, help="chains run side by side")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=None,
                        help="working folder (default: a new folder under /tmp)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "torture.json")
    args = parser.parse_args(argv)
    if args.sequences < 1 or args.workers < 1:
        parser.error("--sequences and --workers must be at least 1")
    import tempfile

    work = args.dir or Path(tempfile.mkdtemp(prefix="lakemark-torture-"))
    started = time.time()
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    formats = ["delta", "parquet"]
    chains = [Chain(work / f"chain{w}", formats[w % len(formats)],
                    random.Random(args.seed * 1000 + w)) for w in range(args.workers)]

    def flush() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary(results, args, started, chains), indent=1) + "\n")

    share = [args.sequences // args.workers + (1 if w < args.sequences % args.workers else 0)
             for w in range(args.workers)]
    threads = [threading.Thread(target=drive, args=(c, n, results, lock, flush))
               for c, n in zip(chains, share)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flush()
    doc = json.loads(args.out.read_text())
    print(json.dumps({k: doc[k] for k in ("sequences", "kills", "lost_rows", "duplicated_rows",
                                          "failures", "elapsed_s")}, indent=1))
    return 0 if doc["failures"] == 0 and doc["sequences"] == args.sequences else 1


def _commit() -> str | None:
    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return out.stdout.strip() or None


def summary(results: list[dict[str, Any]], args: argparse.Namespace, started: float,
            chains: list[Chain]) -> dict[str, Any]:
    seqs = [r for r in results if "kills" in r]
    finals = [r for r in results if "final_run_of" in r]
    kills = Counter(k for r in seqs for k in r["kills"])
    problems = [p for r in results for p in r.get("problems", [])]
    lost = sum(int(p.split()[0]) for p in problems if "lost row" in p)
    duplicated = sum(int(p.split()[0]) for p in problems if "duplicated row" in p)
    return {
        "benchmark": "torture", "status": "ok" if len(finals) == len(chains) else "running",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "loadavg": list(os.getloadavg())},
        "command": "python bench/torture.py " + " ".join(
            f"--{k} {v}" for k, v in (("sequences", args.sequences), ("workers", args.workers),
                                      ("seed", args.seed))),
        "commit": _commit(),
        "elapsed_s": round(time.time() - started, 1),
        "sequences": len(seqs),
        "sequences_by_target": dict(Counter(r["target_format"] for r in seqs)),
        "kills": sum(kills.values()),
        "kills_by_point": {p: kills.get(p, 0) for p in FAULT_POINTS},
        "fault_not_reached": sum(1 for r in seqs if r.get("not_reached")),
        "sequences_with_several_kills": sum(1 for r in seqs if len(r["kills"]) > 1),
        "runs": sum(r["runs"] for r in seqs) + len(finals),
        "files_arrived": sum(len(c.files) for c in chains),
        "rows_arrived": sum(c.next_id for c in chains),
        "lost_rows": lost,
        "duplicated_rows": duplicated,
        "failures": sum(1 for r in results if r.get("error") or r.get("problems")),
        "failure_details": [r for r in results if r.get("error") or r.get("problems")][:20],
        "final_checks": finals,
    }


if __name__ == "__main__":
    sys.exit(main())
