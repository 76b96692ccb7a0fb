"""Randomised crash/retry torture run of ``lakemark ingest files`` (issue 4's proof at scale).

    python bench/torture.py [--sequences 200] [--workers 2] [--seed 7] [--chain-length 25]
                            [--targets delta,parquet,json] [--takeover-chance 0.25]
                            [--out bench/results/torture.json]

Each worker drives its own *chains* one after the other. A chain is a local source folder, a
target (a Delta table, a Parquet folder or a JSON folder, chosen at random per chain) and an
SQLite state file, taken through ``--chain-length`` crash/retry *sequences*: new files arrive
(0–3 of them, 1–30 rows each); a run is SIGKILLed at a random named point of the run
(``LAKEMARK_FAULT``; one time in eight no kill); more files may arrive; then the job is rerun —
each rerun may itself be killed again at a random point (at most 3 kills a sequence) — until a
run succeeds.

With ``--takeover-chance`` a sequence starts with a *lease takeover* instead (issue 17): run A is
held alive at a random named point (``LAKEMARK_FAULT_WAIT``), more files may arrive, and run B
takes A's lease over with ``--force`` — either running to its end while A waits, or (the race)
planning, then waiting while A goes on and ends, then writing. A must be refused (exit 1,
"taken over"); B must succeed or, in the race, fail fenced ("other input") without moving the
bookmark. Then the job is rerun as after a kill.

After every sequence the target, read as a reader reads it (``deltalake`` for Delta, pyarrow's
dataset reader for a folder — it skips the ``_``-prefixed staging folder and commit records),
must hold each row of the files the bookmark covers exactly once and no other row; every data
file a folder reader sees must be named by a commit record. At the end of each chain one more
run must take every file that arrived. The checks live in ``tests/crash_support.py`` and are the
crash tests' own.

Results are written after every sequence (``status: running`` until the end), so an
interrupted run still leaves its record. A failure is recorded with its details and the chain's
folder is kept for inspection; the worker goes on with a fresh chain.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from crash_support import (  # noqa: E402
    FAULT_POINTS,
    KILLED,
    check_exactly_once,
    run_ingest,
    start_held,
)

JOB = "torture"
MAX_KILLS = 3
NO_KILL_CHANCE = 1 / 8
RERUN_KILL_CHANCE = 0.3
LATE_ARRIVAL_CHANCE = 0.5
TARGETS = ("delta", "parquet", "json")
#: Where run A is held for a takeover: every point but inside the state commit's transaction
#: (a takeover waits for that transaction, so B would wait for A; tests/spark/test_takeover.py).
TAKEOVER_POINTS = tuple(p for p in FAULT_POINTS if p != "during-job-commit")
RACE_CHANCE = 0.5
#: The checks read targets with deltalake/pyarrow and open SQLite: one thread at a time.
CHECK_LOCK = threading.Lock()


@dataclass
class Chain:
    """One source folder, target and state file, and the files that arrived in it."""

    root: Path
    target_format: str
    rng: random.Random
    next_id: int = 0
    files: dict[str, list[int]] = field(default_factory=dict)  # file name → its row ids
    runs: int = 0

    def __post_init__(self) -> None:
        self.src = self.root / "in"
        self.src.mkdir(parents=True)
        self.target = self.root / "target"
        self.state = f"sqlite:///{self.root / 'state.db'}"

    def arrive(self, max_files: int = 3) -> int:
        """0..``max_files`` new JSON-lines files of 1–30 rows each; how many arrived."""
        count = self.rng.randint(0, max_files)
        for _ in range(count):
            ids = list(range(self.next_id, self.next_id + self.rng.randint(1, 30)))
            self.next_id += len(ids)
            name = f"f{len(self.files):05d}.json"
            (self.src / name).write_text("".join(json.dumps({"id": i, "v": f"r{i}"}) + "\n"
                                                 for i in ids))
            self.files[name] = ids
        return count

    def run(self, fault: str | None) -> subprocess.CompletedProcess[str]:
        """One ``ingest files`` run of this chain, SIGKILLed at ``fault`` if given."""
        self.runs += 1
        return run_ingest(str(self.src), str(self.target), job=JOB, state=self.state,
                          fault=fault, target_format=self.target_format)

    def held(self, point: str, *, force: bool = False) -> tuple[subprocess.Popen[str], bool,
                                                                   Path]:
        """An ``ingest files`` run of this chain held at ``point``: the process, whether it
        reached the point, and the gate that releases it."""
        self.runs += 1
        gate = self.root / f"gate-{self.runs}"
        proc, reached = start_held(str(self.src), str(self.target), job=JOB, state=self.state,
                                   point=point, gate=gate, target_format=self.target_format,
                                   force=force)
        return proc, reached, gate

    def check(self, *, all_taken: bool = False) -> dict[str, Any]:
        """The shared exactly-once check of the target against the bookmark, as a record."""
        with CHECK_LOCK:
            found = check_exactly_once(self.target, self.target_format, state=self.state,
                                       job=JOB, files=self.files, all_taken=all_taken)
        return {"rows_in_target": found.rows, "lost_rows": found.lost,
                "duplicated_rows": found.duplicated, "extra_rows": found.extra,
                "problems": found.problems}


def _ended(proc: subprocess.Popen[str], gate: Path) -> tuple[int, str]:
    gate.touch()
    _, err = proc.communicate(timeout=900)
    return proc.returncode, " ".join(err.split())


def takeover(chain: Chain, record: dict[str, Any]) -> str | None:
    """Run A held at a random point, taken over by run B (``--force``); None, or what went
    wrong. The outcomes go into ``record["takeover"]``."""
    rng = chain.rng
    point = rng.choice(TAKEOVER_POINTS)
    race = rng.random() < RACE_CHANCE
    info: dict[str, Any] = {"point": point, "race": race}
    record["takeover"] = info
    a, reached, gate_a = chain.held(point)
    record["runs"] += 1
    info["reached"] = reached
    if not reached:  # e.g. mid-write with nothing to write: A simply ended
        a_code, a_err = _ended(a, gate_a)
        return None if a_code == 0 else f"run A (not held) exit {a_code}: {a_err[-3000:]}"
    if rng.random() < LATE_ARRIVAL_CHANCE:
        record["arrived"] += chain.arrive(2)
    record["runs"] += 1
    if race:  # B plans while A waits, then waits while A goes on and ends
        b, b_reached, gate_b = chain.held("after-plan-recorded", force=True)
        a_code, a_err = _ended(a, gate_a)
        b_code, b_err = _ended(b, gate_b)
    else:  # B runs to its end while A waits
        chain.runs += 1
        out = run_ingest(str(chain.src), str(chain.target), job=JOB, state=chain.state,
                         target_format=chain.target_format, force=True)
        b_code, b_err = out.returncode, " ".join(out.stderr.split())
        a_code, a_err = _ended(a, gate_a)
    info.update(a_exit=a_code, b_exit=b_code, b_fenced=b_code == 1 and "other input" in b_err)
    if a_code != 1 or "taken over" not in a_err:
        return f"run A (taken over at {point}) exit {a_code}: {a_err[-3000:]}"
    if b_code != 0 and not info["b_fenced"]:
        return f"run B (took over at {point}) exit {b_code}: {b_err[-3000:]}"
    return None


def sequence(chain: Chain, takeover_chance: float = 0.0) -> dict[str, Any]:
    """One crash/retry sequence on ``chain`` (starting with a lease takeover one time in
    ``1 / takeover_chance``); its record."""
    rng = chain.rng
    record: dict[str, Any] = {"arrived": chain.arrive(), "kills": [], "runs": 0,
                              "not_reached": []}
    if takeover_chance and rng.random() < takeover_chance:
        error = takeover(chain, record)
        if error:
            record["error"] = error
            record["first_fault"] = None
            return record
    fault: str | None = None if rng.random() < NO_KILL_CHANCE else rng.choice(FAULT_POINTS)
    record["first_fault"] = fault
    while True:
        out = chain.run(fault)
        record["runs"] += 1
        if out.returncode == KILLED and fault is not None:
            record["kills"].append(fault)
            if rng.random() < LATE_ARRIVAL_CHANCE:
                record["arrived"] += chain.arrive(2)
            fault = (rng.choice(FAULT_POINTS) if len(record["kills"]) < MAX_KILLS
                     and rng.random() < RERUN_KILL_CHANCE else None)
            continue
        if fault is not None and out.returncode == 0:
            record["not_reached"].append(fault)  # e.g. mid-write in a run with nothing new
        if out.returncode != 0:
            record["error"] = f"exit {out.returncode}: {out.stderr[-3000:]}"
            return record
        try:
            result = json.loads(out.stdout)
            record["last"] = {k: result.get(k) for k in ("run", "attempt", "files", "skipped")}
        except ValueError:
            record["last"] = {"stdout": out.stdout[-500:]}
        return record


class Results:
    """The run's records, written to ``out`` (whole, atomically) after each one."""

    def __init__(self, args: argparse.Namespace, started: float) -> None:
        self.args = args
        self.started = started
        self.records: list[dict[str, Any]] = []
        self.chains: list[Chain] = []
        self.lock = threading.Lock()
        self.finished = False
        self.interrupted: str | None = None  # the signal that cut the run short
        self.commit = _commit()  # the code this run started with

    def add(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.records.append(record)
            self.flush()

    def add_chain(self, chain: Chain) -> None:
        with self.lock:
            self.chains.append(chain)

    def flush(self) -> None:
        out: Path = self.args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps(self.summary(), indent=1) + "\n")
        tmp.replace(out)

    def summary(self) -> dict[str, Any]:
        seqs = [r for r in self.records if "kills" in r]
        takeovers = [r["takeover"] for r in seqs if "takeover" in r]
        finals = [r for r in self.records if "final_run_of" in r]
        kills = Counter(k for r in seqs for k in r["kills"])
        first = Counter(r["first_fault"] or "none" for r in seqs)
        not_reached = Counter(k for r in seqs for k in r["not_reached"])
        failed = [r for r in self.records if r.get("error") or r.get("problems")]
        complete = self.finished and len(seqs) >= self.args.sequences
        return {
            "benchmark": "torture",
            "status": (("failed" if failed else "complete") if complete
                       else f"interrupted by {self.interrupted}" if self.interrupted
                       else "running"),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                        "loadavg": [round(x, 2) for x in os.getloadavg()],
                        "python": platform.python_version()},
            "command": "python bench/torture.py " + " ".join(
                f"--{k.replace('_', '-')} {v}" for k, v in (
                    ("sequences", self.args.sequences), ("workers", self.args.workers),
                    ("seed", self.args.seed), ("chain_length", self.args.chain_length),
                    ("targets", ",".join(self.args.targets)),
                    ("takeover_chance", self.args.takeover_chance))),
            "commit": self.commit,
            "seed": self.args.seed,
            "workers": self.args.workers,
            "elapsed_s": round(time.time() - self.started, 1),
            "sequences_requested": self.args.sequences,
            "sequences": len(seqs),
            "sequences_by_target": dict(Counter(r["target_format"] for r in seqs)),
            "chains": len(self.chains),
            "chains_by_target": dict(Counter(c.target_format for c in self.chains)),
            "first_fault_by_point": {p: first.get(p, 0) for p in (*FAULT_POINTS, "none")},
            "kills": sum(kills.values()),
            "kills_by_point": {p: kills.get(p, 0) for p in FAULT_POINTS},
            "kills_by_target": dict(Counter(r["target_format"] for r in seqs
                                            for _ in r["kills"])),
            "fault_not_reached_by_point": {p: n for p, n in not_reached.items()},
            "sequences_with_several_kills": sum(1 for r in seqs if len(r["kills"]) > 1),
            "takeovers": len(takeovers),
            "takeovers_by_point": dict(Counter(t["point"] for t in takeovers
                                               if t.get("reached"))),
            "takeover_races": sum(1 for t in takeovers if t.get("race") and t.get("reached")),
            "takeover_races_fenced": sum(1 for t in takeovers if t.get("b_fenced")),
            "takeover_points_not_reached": sum(1 for t in takeovers if not t.get("reached")),
            "runs": sum(r["runs"] for r in seqs) + len(finals),
            "reruns": sum(r["runs"] - 1 for r in seqs),
            "files_arrived": sum(len(c.files) for c in self.chains),
            "rows_arrived": sum(c.next_id for c in self.chains),
            "rows_checked": sum(r.get("rows_in_target", 0) for r in seqs),
            "lost_rows": sum(r.get("lost_rows", 0) for r in self.records),
            "duplicated_rows": sum(r.get("duplicated_rows", 0) for r in self.records),
            "extra_rows": sum(r.get("extra_rows", 0) for r in self.records),
            "failures": len(failed),
            "failure_details": failed[:20],
            "final_checks": finals,
        }


def drive(worker: int, count: int, args: argparse.Namespace, work: Path,
          results: Results) -> None:
    """Run ``count`` sequences on fresh chains of ``args.chain_length`` sequences each."""
    rng = random.Random(args.seed * 1000 + worker)
    kinds: list[str] = []
    done = 0
    chain_no = 0
    while done < count:
        if not kinds:  # every kind once per round, in a random order
            kinds = list(args.targets)
            rng.shuffle(kinds)
        chain = Chain(work / f"w{worker}-chain{chain_no:02d}", kinds.pop(),
                      random.Random(rng.getrandbits(64)))
        chain_no += 1
        results.add_chain(chain)
        broken = False
        for _ in range(min(args.chain_length, count - done)):
            try:
                record = sequence(chain, args.takeover_chance)
                record.update(chain.check())
            except Exception as exc:  # recorded, never hidden: a hung run, an unreadable target
                record = {"kills": [], "runs": 0, "not_reached": [], "first_fault": None,
                          "error": f"{type(exc).__name__}: {exc}"[-3000:], "problems": []}
            record["target_format"] = chain.target_format
            record["chain"] = chain.root.name
            done += 1
            results.add(record)
            if record.get("error") or record["problems"]:
                broken = True  # keep the evidence: this chain's folder stays as it is
                break
        if broken:
            continue
        try:
            final = chain.run(None)
            found = chain.check(all_taken=True)
            if final.returncode != 0:
                found["problems"].append(f"final run: exit {final.returncode}: "
                                         f"{final.stderr[-3000:]}")
        except Exception as exc:
            found = {"problems": [f"final run: {type(exc).__name__}: {exc}"[-3000:]]}
        results.add({"final_run_of": chain.root.name, "target_format": chain.target_format,
                     "files": len(chain.files), "rows": chain.next_id, "runs": chain.runs,
                     **found})


def _commit() -> str | None:
    """The checked-out commit, with ``+dirty`` if the code a run uses differs from it."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src",
                            "bench/torture.py", "tests/crash_support.py"],
                           capture_output=True, text=True).stdout.strip()
    return (head + ("+dirty" if dirty else "")) or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sequences", type=int, default=200,
                        help="crash/retry sequences in all, split over the workers")
    parser.add_argument("--workers", type=int, default=2, help="chains run side by side")
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--chain-length", type=int, default=25,
                        help="sequences per chain before a worker starts a fresh one")
    parser.add_argument("--targets", default=",".join(TARGETS),
                        help="target formats chains are drawn from (comma-separated)")
    parser.add_argument("--takeover-chance", type=float, default=0.25,
                        help="share of sequences that start with a lease takeover (0: none)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="working folder (default: a new folder under /tmp; kept)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "torture.json",
                        help="results file, rewritten after every sequence")
    args = parser.parse_args(argv)
    args.targets = [t for t in args.targets.split(",") if t]
    if args.sequences < 1 or args.workers < 1 or args.chain_length < 1:
        parser.error("--sequences, --workers and --chain-length must be at least 1")
    bad = [t for t in args.targets if t not in TARGETS]
    if bad or not args.targets:
        parser.error(f"--targets takes some of {','.join(TARGETS)}")
    work = args.dir or Path(tempfile.mkdtemp(prefix="lakemark-torture-"))
    print(f"working folder: {work}", flush=True)
    results = Results(args, time.time())

    def stop(signum: int, _frame: Any) -> None:
        """Record a run cut short (SIGTERM/SIGINT) as ``interrupted``, then end it."""
        with results.lock:
            results.interrupted = signal.Signals(signum).name
            results.flush()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    share = [args.sequences // args.workers + (1 if w < args.sequences % args.workers else 0)
             for w in range(args.workers)]
    threads = [threading.Thread(target=drive, args=(w, n, args, work, results))
               for w, n in enumerate(share) if n]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with results.lock:
        results.finished = True
        results.flush()
    doc = json.loads(args.out.read_text())
    print(json.dumps({k: doc[k] for k in ("status", "sequences", "kills", "kills_by_point",
                                          "takeovers", "takeovers_by_point",
                                          "takeover_races_fenced",
                                          "lost_rows", "duplicated_rows", "failures",
                                          "elapsed_s")}, indent=1))
    return 0 if doc["status"] == "complete" else 1


if __name__ == "__main__":
    sys.exit(main())
