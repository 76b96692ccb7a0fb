"""Fresh-process start, measured: where a scheduled run spends its time before and around its
first Spark task, and the whole-process ratio against Spark's own file source.

    python bench/startup.py [--files M] [--new N] [--repeats R] [--out bench/results/startup.json]

Scenario (both tools as a scheduler starts them, one whole process per run): M files already
taken by each tool, then a run with nothing new (N = 0) and a run with N new files.

* lakemark: ``lakemark ingest files SRC OUT --target-format parquet`` (the real command, schema
  inferred from the new files), with its class-data archive (the default) and without it
  (``LAKEMARK_CLASS_CACHE=off``).
* the peer: Spark Structured Streaming's file source with ``Trigger.AvailableNow`` and a
  checkpoint, given the schema (bench/incremental.py's worker), started with the same Spark
  settings lakemark gives its own sessions except the class-data archive (plain Spark has none).

Every measured run starts from the same state (each tool's state and output are restored from
a copy); the tools take turns in an order that flips each repetition; medians are reported
with every sample. The profile splits lakemark's fresh run into Python start and imports,
listing and planning, JVM and session start, read and write, and commit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gen import write_batch  # noqa: E402

PROFILE_WRAPPER = r"""
import json, os, sys, time
t0 = float(os.environ["LAKEMARK_BENCH_T0"])
marks = {"python_start": time.time() - t0}
import lakemark.cli, lakemark.job, lakemark.spark
marks["imports"] = time.time() - t0
real_get_spark, real_emit = lakemark.spark.get_spark, lakemark.job.Job._emit
def get_spark(*a, **k):
    marks.setdefault("spark_requested", time.time() - t0)
    s = real_get_spark(*a, **k)
    marks.setdefault("spark_ready", time.time() - t0)
    return s
def emit(self, stage, ctx, detail):
    marks.setdefault(stage, time.time() - t0)
    return real_emit(self, stage, ctx, detail)
lakemark.spark.get_spark, lakemark.job.Job._emit = get_spark, emit
import atexit
atexit.register(lambda: open(os.environ["LAKEMARK_BENCH_MARKS"], "w").write(json.dumps(marks)))
sys.argv = ["lakemark", *sys.argv[1:]]
lakemark.cli.main()
"""


class Case:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.src = root / "src"
        self.state = f"sqlite:///{root / 'lakemark-state.db'}"
        self.out = root / "out-lakemark"
        self.stream_out = root / "out-spark_stream"
        self.checkpoint = root / "stream-checkpoint"

    def kept(self, tool: str) -> list[Path]:
        if tool == "spark_stream":
            return [self.checkpoint, self.stream_out]
        return [self.root / "lakemark-state.db", self.out]


def lakemark_cmd(case: Case) -> list[str]:
    return [sys.executable, "-m", "lakemark", "ingest", "files", str(case.src), str(case.out),
            "--job", "startup", "--target-format", "parquet", "--state", case.state,
            "--master", "local[2]", "--json"]


def stream_cmd(case: Case) -> list[str]:
    return [sys.executable, str(BENCH / "incremental.py"), "worker", "spark_stream",
            str(case.root)]


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                         env=dict(os.environ, **(env or {})))
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {out.stderr[-2000:]}")
    return wall, out.stdout


def snapshot(case: Case, tool: str) -> Path:
    snap = case.root / "snapshots" / tool
    shutil.rmtree(snap, ignore_errors=True)
    snap.mkdir(parents=True)
    for path in case.kept(tool):
        if path.is_dir():
            shutil.copytree(path, snap / path.name)
        elif path.exists():
            shutil.copy2(path, snap / path.name)
    return snap


def restore(case: Case, tool: str, snap: Path) -> None:
    for path in case.kept(tool):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        saved = snap / path.name
        if saved.is_dir():
            shutil.copytree(saved, path)
        elif saved.exists():
            shutil.copy2(saved, path)


def profile(case: Case) -> dict[str, float]:
    marks_file = case.root / "marks.json"
    env = {"LAKEMARK_BENCH_T0": repr(time.time()), "LAKEMARK_BENCH_MARKS": str(marks_file)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", PROFILE_WRAPPER, *lakemark_cmd(case)[3:]],
                   capture_output=True, text=True, timeout=1800, env=dict(os.environ, **env),
                   check=True)
    marks: dict[str, float] = json.loads(marks_file.read_text())
    marks["exit"] = time.perf_counter() - started
    return {k: round(v, 3) for k, v in sorted(marks.items(), key=lambda kv: kv[1])}


def measure(case: Case, n_new: int, repeats: int) -> dict[str, Any]:
    tools = {"lakemark": (lakemark_cmd(case), {}),
             "lakemark_no_class_cache": (lakemark_cmd(case), {"LAKEMARK_CLASS_CACHE": "off"}),
             # plain Spark, as its users run it: no class-data archive
             "spark_stream": (stream_cmd(case), {"LAKEMARK_CLASS_CACHE": "off"})}
    snaps = {"lakemark": snapshot(case, "lakemark"),
             "spark_stream": snapshot(case, "spark_stream")}
    samples: dict[str, list[float]] = {t: [] for t in tools}
    profiles = []
    for rep in range(repeats):
        order = list(tools) if rep % 2 == 0 else list(reversed(tools))
        for tool in order:
            cmd, env = tools[tool]
            base = "spark_stream" if tool == "spark_stream" else "lakemark"
            restore(case, base, snaps[base])
            wall, stdout = timed(cmd, env)
            if tool.startswith("lakemark"):
                assert json.loads(stdout)["files"] == n_new, stdout
            samples[tool].append(round(wall, 3))
        restore(case, "lakemark", snaps["lakemark"])
        profiles.append(profile(case))
    restore(case, "lakemark", snaps["lakemark"])
    restore(case, "spark_stream", snaps["spark_stream"])
    med = {t: sorted(v)[len(v) // 2] for t, v in samples.items()}
    return {"new_files": n_new, "wall_s_median": med, "wall_s_samples": samples,
            "ratio_spark_stream_over_lakemark": round(med["spark_stream"] / med["lakemark"], 2),
            "ratio_without_over_with_class_cache": round(
                med["lakemark_no_class_cache"] / med["lakemark"], 2),
            "lakemark_profile_s": profiles[len(profiles) // 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(BENCH / "results" / "startup.json"))
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lakemark-startup-"))
    case = Case(root)
    try:
        # The archive a user's machine has after its first run: build it before measuring.
        from lakemark.session import class_cache as _class_cache
        from lakemark.session import class_cache_build as _class_cache_build

        java = shutil.which("java") or "java"
        archive = _class_cache.archive_path(java)
        if archive is not None and not archive.exists():
            archive.parent.mkdir(parents=True, exist_ok=True)
            _class_cache_build.build(archive)
        write_batch(case.src, 0, args.files, rows=20, layout="date")
        time.sleep(1.1)
        timed(lakemark_cmd(case))  # history: both tools take the M files
        timed(stream_cmd(case), {"LAKEMARK_CLASS_CACHE": "off"})
        results = [measure(case, 0, args.repeats)]
        write_batch(case.src, 1, args.new, rows=20, layout="date")
        time.sleep(0.05)
        results.append(measure(case, args.new, args.repeats))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    doc = {"scenario": "startup", "command": f"python bench/startup.py --files {args.files} "
           f"--new {args.new} --repeats {args.repeats}",
           "files_already_taken": args.files, "loadavg_at_end": [round(x, 2) for x in
                                                                  os.getloadavg()],
           "cases": results}
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    for case_result in results:
        print(json.dumps({k: case_result[k] for k in (
            "new_files", "wall_s_median", "ratio_spark_stream_over_lakemark",
            "ratio_without_over_with_class_cache")}))


if __name__ == "__main__":
    main()
