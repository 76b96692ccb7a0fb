"""A fresh ``lakemark ingest files`` process against a warm Spark Connect server, against a
fresh classic process (issue 34's speed target), first sketch.

    python bench/connect.py [--files M] [--new N] [--repeats R] [--out bench/results/connect.json]
    python bench/connect.py prepare DIR [--files M] [--new N]   # the scenario, once
    python bench/connect.py run DIR remote|classic [--endpoint sc://…]   # one measured run

Scenario (as a scheduler starts a job, one whole process per run): M files already taken by
the job (one earlier run), then a run that finds N new files among the M + N and writes them
to Parquet. Every measured run starts from the same state: the job's state database and
output are restored from a copy made after the earlier run (the restore is inside both
commands, so it costs each the same). ``remote`` runs with ``--remote`` against a server
started once with ``lakemark server start`` and warmed by one unmeasured run; ``classic``
starts Spark in its own process, as lakemark does without a server.

``prepare``/``run`` let any whole-process timer (``/usr/bin/time -v``, hyperfine, …) time the
two commands itself; the default mode times them here (wall clock of the whole process,
the two in turn, order flipped each repetition) and writes medians, ratios, every sample
and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gen import write_batch  # noqa: E402

JOB = "orders_connect_bench"


def _lakemark(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), timeout=1800)


def _ingest_args(root: Path) -> list[str]:
    return ["ingest", "files", str(root / "src"), str(root / "out"), "--job", JOB,
            "--target-format", "parquet", "--state", f"sqlite:///{root / 'state.db'}",
            "--json", "--progress-interval", "0"]


def prepare(root: Path, files: int, new: int) -> None:
    """M files taken by one earlier (classic) run, a copy of that state, then N new files."""
    if root.exists():
        shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    old = time.time() - 3600
    write_batch(root / "src", 0, files, rows=20, mtime=old)
    done = _lakemark(*_ingest_args(root))
    if done.returncode != 0:
        raise SystemExit(f"the earlier run failed: {done.stderr[-2000:]}")
    shutil.copy(root / "state.db", root / "state.db.base")
    shutil.copytree(root / "out", root / "out.base")
    write_batch(root / "src", 1, new, rows=20)


def _restore(root: Path) -> None:
    shutil.copy(root / "state.db.base", root / "state.db")
    shutil.rmtree(root / "out", ignore_errors=True)
    shutil.copytree(root / "out.base", root / "out")


def run_once(root: Path, mode: str, endpoint: str | None) -> dict:
    """Restore the state, then one ``lakemark ingest files`` process; its JSON summary."""
    _restore(root)
    args = _ingest_args(root) + (["--remote", endpoint] if mode == "remote" and endpoint else [])
    env = dict(os.environ)
    if mode == "classic":
        env.pop("SPARK_REMOTE", None)
    done = _lakemark(*args, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _timed(root: Path, mode: str, endpoint: str | None, new: int) -> float:
    cmd = [sys.executable, str(Path(__file__).resolve()), "run", str(root), mode]
    if endpoint:
        cmd += ["--endpoint", endpoint]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    summary = json.loads(done.stdout)
    if summary["files"] != new:
        raise SystemExit(f"{mode} run took {summary['files']} files, not {new}")
    return wall


def measure(root: Path, files: int, new: int, repeats: int, port: int) -> dict:
    prepare(root, files, new)
    home = root / "home"
    env = {**os.environ, "LAKEMARK_HOME": str(home)}
    started = _lakemark("server", "start", "--port", str(port), "--json", env=env)
    if started.returncode != 0:
        raise SystemExit(started.stderr)
    endpoint = json.loads(started.stdout)["endpoint"]
    try:
        run_once(root, "remote", endpoint)  # the server's first use (cold) is not measured
        walls: dict[str, list[float]] = {"remote": [], "classic": []}
        for i in range(repeats):
            order = ("remote", "classic") if i % 2 == 0 else ("classic", "remote")
            for mode in order:
                walls[mode].append(_timed(root, mode, endpoint, new))
    finally:
        _lakemark("server", "stop", env=env)
    med = {m: statistics.median(v) for m, v in walls.items()}
    return {"scenario": {"files": files, "new": new, "repeats": repeats},
            "load": list(os.getloadavg()), "cpus": os.cpu_count(),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "wall_s": walls, "median_wall_s": med,
            "classic_over_remote": med["classic"] / med["remote"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", choices=["prepare", "run"])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("mode", nargs="?", choices=["remote", "classic"])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--port", type=int, default=15012)
    parser.add_argument("--endpoint")
    parser.add_argument("--out", default=str(BENCH / "results" / "connect.json"))
    opts = parser.parse_args()
    if opts.step == "prepare":
        prepare(Path(opts.dir), opts.files, opts.new)
    elif opts.step == "run":
        print(json.dumps(run_once(Path(opts.dir), opts.mode, opts.endpoint)))
    else:
        root = Path(os.environ.get("TMPDIR", "/tmp")) / "lakemark-bench-connect"
        result = measure(root, opts.files, opts.new, opts.repeats, opts.port)
        Path(opts.out).write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result["median_wall_s"]), f"ratio {result['classic_over_remote']:.2f}")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
