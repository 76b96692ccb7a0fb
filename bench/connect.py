"""A fresh ``lakemark ingest files --remote`` process against a warm Spark Connect server, against
its peers (issue 34's speed targets).

    python bench/connect.py [--files M] [--new N] [--repeats R] [--throughput-mib S]
                            [--modes remote,stream-remote] [--throughput-only]
                            [--out bench/results/connect.json]
    python bench/connect.py prepare DIR [--files M] [--new N]   # the scenario, once
    python bench/connect.py run DIR MODE [--endpoint sc://…] [--empty]   # one measured run

Scenario (as a scheduler starts a job, one whole process per run): M files already taken by
each tool (one earlier run), then a run that finds N new files among the M + N and writes them
to Parquet. Every measured run starts from the same state: the tool's state (bookmark database
or checkpoint) and output are restored from a copy made after the earlier run (the restore is
inside every command, so it costs each the same). The modes:

* ``remote``: ``lakemark ingest files --remote`` against a server started once with
  ``lakemark server start`` and warmed by one unmeasured run;
* ``classic``: the same command starting Spark in its own process, as without a server;
* ``stream``: Spark's file source (``readStream.json`` → Parquet sink, checkpoint,
  ``Trigger.AvailableNow``, the schema given) in a fresh classic process (plain Spark: no
  class-data archive);
* ``stream-remote``: the same query from a fresh process over Connect, on the same warm server.

``--empty`` restores the state after all M + N files were taken: a run with nothing new.
The throughput case ingests S MiB of larger JSON files (no earlier run) with ``remote`` and
``classic``. The default mode times every run here (wall clock of the whole process, the modes
in turn, order flipped each repetition) and writes medians, ratios, every sample and the
machine's load average; ``prepare``/``run`` let an external whole-process timer time them.
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

from gen import SCHEMA_DDL, write_batch  # noqa: E402

JOB = "orders_connect_bench"
MODES = ("remote", "classic", "stream", "stream-remote")
#: What each tool keeps between runs: restored before every measured run.
KEPT = {"lakemark": ("state.db", "out"), "stream": ("checkpoint", "out-stream")}

STREAM = r"""
import json, sys
from pyspark.sql import SparkSession
root, endpoint = sys.argv[1], sys.argv[2]
if endpoint:
    spark = SparkSession.builder.remote(endpoint).getOrCreate()
else:
    from lakemark.spark import get_spark
    spark = get_spark(None, {"spark.ui.enabled": "false"}, app_name="connect-bench-stream")
query = (spark.readStream.schema(sys.argv[3]).format("json").load(root + "/src")
         .writeStream.format("parquet").option("checkpointLocation", root + "/checkpoint")
         .option("path", root + "/out-stream").trigger(availableNow=True).start())
query.awaitTermination()
rows = sum((p.numInputRows if hasattr(p, "numInputRows") else p["numInputRows"]) or 0
           for p in query.recentProgress)
print(json.dumps({"rows": rows}))
"""


def _lakemark(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakemark", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), timeout=1800)


def _ingest_args(root: Path) -> list[str]:
    return ["ingest", "files", str(root / "src"), str(root / "out"), "--job", JOB,
            "--target-format", "parquet", "--state", f"sqlite:///{root / 'state.db'}",
            "--json", "--progress-interval", "0"]


def _stream(root: Path, endpoint: str | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LAKEMARK_CLASS_CACHE": "off"}  # plain Spark: no class-data archive
    env.pop("SPARK_REMOTE", None)
    return subprocess.run([sys.executable, "-c", STREAM, str(root), endpoint or "", SCHEMA_DDL],
                          capture_output=True, text=True, env=env, timeout=1800)


def _save(root: Path, tool: str, suffix: str) -> None:
    for name in KEPT[tool]:
        path, copy = root / name, root / f"{name}.{suffix}"
        if copy.is_dir():
            shutil.rmtree(copy)
        if path.is_dir():
            shutil.copytree(path, copy)
        elif path.exists():
            shutil.copy(path, copy)


def _restore(root: Path, tool: str, suffix: str) -> None:
    for name in KEPT[tool]:
        path, copy = root / name, root / f"{name}.{suffix}"
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        if copy.is_dir():
            shutil.copytree(copy, path)
        elif copy.exists():
            shutil.copy(copy, path)


def prepare(root: Path, files: int, new: int, rows: int = 20) -> None:
    """M files taken by one earlier (classic) run of each tool, a copy of that state, then N
    new files. With M = 0 there is no earlier run (the copy is of nothing)."""
    if root.exists():
        shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    if files:
        write_batch(root / "src", 0, files, rows=rows, mtime=time.time() - 3600)
        done = _lakemark(*_ingest_args(root))
        if done.returncode != 0:
            raise SystemExit(f"the earlier run failed: {done.stderr[-2000:]}")
        done = _stream(root, None)
        if done.returncode != 0:
            raise SystemExit(f"the file source's earlier run failed: {done.stderr[-2000:]}")
    for tool in KEPT:
        _save(root, tool, "base")
    write_batch(root / "src", 1, new, rows=rows)


def run_once(root: Path, mode: str, endpoint: str | None, empty: bool = False) -> dict:
    """Restore the state, then one process of ``mode``; its JSON summary."""
    tool = "stream" if mode.startswith("stream") else "lakemark"
    _restore(root, tool, "full" if empty else "base")
    if tool == "stream":
        done = _stream(root, endpoint if mode == "stream-remote" else None)
    else:
        args = _ingest_args(root) + (["--remote", endpoint] if mode == "remote" else [])
        env = dict(os.environ)
        env.pop("SPARK_REMOTE", None)
        done = _lakemark(*args, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed: {done.stderr[-2000:]}")
    out = done.stdout.strip()
    return json.loads(out.splitlines()[-1] if tool == "stream" else out)


def _timed(root: Path, mode: str, endpoint: str | None, empty: bool = False) -> tuple[float, dict]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "run", str(root), mode]
    if endpoint:
        cmd += ["--endpoint", endpoint]
    if empty:
        cmd.append("--empty")
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return round(wall, 3), json.loads(done.stdout)


def _check(mode: str, summary: dict, files: int, rows: int) -> None:
    got = summary["rows"] if mode.startswith("stream") else (summary["files"], summary["rows"])
    want = rows if mode.startswith("stream") else (files, rows)
    if got != want:
        raise SystemExit(f"{mode} run took {got}, not {want}")


def _rounds(root: Path, modes: tuple[str, ...], endpoint: str, repeats: int, files: int,
            rows: int, empty: bool = False) -> dict[str, list[float]]:
    walls: dict[str, list[float]] = {m: [] for m in modes}
    for i in range(repeats):
        for mode in (modes if i % 2 == 0 else tuple(reversed(modes))):
            wall, summary = _timed(root, mode, endpoint, empty)
            _check(mode, summary, files, rows)
            walls[mode].append(wall)
    return walls


def _median(walls: dict[str, list[float]]) -> dict[str, float]:
    return {m: round(statistics.median(v), 3) for m, v in walls.items()}


def measure(root: Path, files: int, new: int, repeats: int, port: int,
            throughput_mib: int, modes: tuple[str, ...] = MODES) -> dict:
    """Every case on one warm server: the N-new run against the three peers, the empty run,
    and the throughput run. ``modes``: the N-new run's modes to measure (``remote`` always);
    with fewer than all of them the empty and throughput cases are left out
    (``--throughput-mib 0`` leaves out the throughput case alone)."""
    modes = tuple(m for m in MODES if m in modes or m == "remote")
    every = modes == MODES
    load = {"start": [round(x, 2) for x in os.getloadavg()]}
    prepare(root, files, new)
    home = root.parent / f"{root.name}-home"
    env = {**os.environ, "LAKEMARK_HOME": str(home)}
    started = _lakemark("server", "start", "--port", str(port), "--json", env=env)
    if started.returncode != 0:
        raise SystemExit(started.stderr)
    endpoint = json.loads(started.stdout)["endpoint"]
    rows = new * 20
    try:
        # the server's first use (cold) is not measured; it also leaves the "full" state
        run_once(root, "remote", endpoint)
        _save(root, "lakemark", "full")
        if "stream-remote" in modes:
            run_once(root, "stream-remote", endpoint)
        walls = _rounds(root, modes, endpoint, repeats, new, rows)
        load["after_new"] = [round(x, 2) for x in os.getloadavg()]
        result: dict = {}
        if every:
            empty = _rounds(root, ("remote",), endpoint, repeats, 0, 0, empty=True)
            result["empty_run"] = {"wall_s": empty["remote"],
                                   "median_wall_s": _median(empty)["remote"]}
        if every and throughput_mib:
            result["throughput"] = _throughput(root, throughput_mib, endpoint, repeats)
        load["end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        _lakemark("server", "stop", env=env)
        shutil.rmtree(home, ignore_errors=True)
    med = _median(walls)
    peers = {"stream": "stream_over_remote", "classic": "classic_over_remote",
             "stream-remote": "stream_remote_over_remote"}
    return {"scenario": {"files": files, "new": new, "rows_per_file": 20, "repeats": repeats,
                         "format": "JSON lines -> Parquet", "server": "lakemark server start "
                         "(local[*]), warmed by one unmeasured run of each tool"},
            "load": load, "cpus": os.cpu_count(),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "wall_s": walls, "median_wall_s": med,
            "ratios": {name: round(med[m] / med["remote"], 2) for m, name in peers.items()
                       if m in med},
            **result}


def measure_throughput(root: Path, mib: int, repeats: int, port: int) -> dict:
    """The throughput case alone (``--throughput-only``), on a server warmed by one unmeasured
    ``remote`` run of it."""
    load = {"start": [round(x, 2) for x in os.getloadavg()]}
    home = root.parent / f"{root.name}-home"
    env = {**os.environ, "LAKEMARK_HOME": str(home)}
    started = _lakemark("server", "start", "--port", str(port), "--json", env=env)
    if started.returncode != 0:
        raise SystemExit(started.stderr)
    try:
        through = _throughput(root, mib, json.loads(started.stdout)["endpoint"], repeats,
                              warm=True)
    finally:
        _lakemark("server", "stop", env=env)
        shutil.rmtree(home, ignore_errors=True)
    load["end"] = [round(x, 2) for x in os.getloadavg()]
    return {"load": load, "cpus": os.cpu_count(),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "throughput": through}


def _throughput(root: Path, mib: int, endpoint: str, repeats: int, warm: bool = False) -> dict:
    """``mib`` MiB of larger JSON files (no earlier run): ``remote`` against ``classic``.
    ``warm``: one unmeasured ``remote`` run first."""
    big = root.parent / f"{root.name}-throughput"
    per_file = 20_000  # rows of about 167 bytes: about 3.2 MiB a file
    n_big = max(1, mib * 1024 * 1024 // (per_file * 167))
    prepare(big, 0, n_big, rows=per_file)
    size = sum(f.stat().st_size for f in (big / "src").rglob("*.json"))
    try:
        if warm:
            run_once(big, "remote", endpoint)
        through = _rounds(big, ("remote", "classic"), endpoint, repeats, n_big,
                          n_big * per_file)
    finally:
        shutil.rmtree(big, ignore_errors=True)
    tmed = _median(through)
    return {"bytes": size, "files": n_big, "rows": n_big * per_file,
            "wall_s": through, "median_wall_s": tmed,
            "remote_MiB_per_s": round(size / 2**20 / tmed["remote"], 2),
            "classic_MiB_per_s": round(size / 2**20 / tmed["classic"], 2),
            "remote_over_classic_wall": round(tmed["remote"] / tmed["classic"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", choices=["prepare", "run"])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("mode", nargs="?", choices=MODES)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--throughput-mib", type=int, default=1024)
    parser.add_argument("--port", type=int, default=15012)
    parser.add_argument("--endpoint")
    parser.add_argument("--empty", action="store_true")
    parser.add_argument("--out", default=str(BENCH / "results" / "connect.json"))
    parser.add_argument("--throughput-only", action="store_true",
                        help="only the throughput case (remote against classic), on a server "
                             "warmed by one unmeasured remote run")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="the N-new run's modes to measure, comma-separated (remote is "
                             "always one); fewer than all leaves out the empty and throughput "
                             "cases")
    opts = parser.parse_args()
    if opts.step == "prepare":
        prepare(Path(opts.dir), opts.files, opts.new)
    elif opts.step == "run":
        print(json.dumps(run_once(Path(opts.dir), opts.mode, opts.endpoint, opts.empty)))
    else:
        root = Path(os.environ.get("TMPDIR", "/tmp")) / "lakemark-bench-connect"
        try:
            modes = tuple(m.strip() for m in opts.modes.split(",") if m.strip())
            wrong = [m for m in modes if m not in MODES]
            if wrong:
                parser.error(f"--modes: {wrong[0]!r} is not one of {', '.join(MODES)}")
            if opts.throughput_only:
                result = measure_throughput(root, opts.throughput_mib, opts.repeats, opts.port)
            else:
                result = measure(root, opts.files, opts.new, opts.repeats, opts.port,
                                 opts.throughput_mib, modes)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        result["command"] = " ".join(["python", "bench/connect.py", *sys.argv[1:]])
        Path(opts.out).write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result.get("median_wall_s")), json.dumps(result.get("ratios")),
              json.dumps(result.get("throughput", {}).get("median_wall_s")))


if __name__ == "__main__":
    main()
