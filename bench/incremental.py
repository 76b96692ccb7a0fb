"""Scenario 1: one incremental run after many runs, lakemark against its peers.

The same date-partitioned JSON tree is processed by four tools, each with its own output:

* ``lakemark``: ``Job.read_files(ctx=…)`` → ``job.write(format="parquet")``, SQLite state.
* ``spark_stream``: Spark Structured Streaming's file source, ``Trigger.AvailableNow``, a
  checkpoint, a Parquet sink (what a PySpark user would pick instead).
* ``full_reread``: ``spark.read.json(root) → write.parquet(overwrite)``, every run.
* ``floor``: the raw listing (``os.scandir`` + ``stat``) and reading only the new files, as
  if their names were known for free.

History: K batches of M/K files arrive one after another; after each batch lakemark and the
Spark file source each run once (one warm session: history only builds state). The measured
runs (N = 0, then N new files) are each made in a **fresh process per tool**, as a scheduler
runs a job, and again in the history's warm session (a long-lived driver); ``fresh=False``
(the ``--quick`` smoke test) measures only the warm session. Each measured run is repeated
from the same starting state (state and output restored from a copy) and the median is
reported.

MaxBand: the history compresses hourly runs into seconds, so the default 15-minute band would
cover every file of the history (a state no hourly job ever has). lakemark runs with
``max_band_ms`` scaled to the compressed clock (``BAND_MS``); the result JSON records it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gen import SCHEMA_DDL, write_batch  # noqa: E402

BAND_MS = 1_000  # --quick uses QUICK_BAND_MS
QUICK_BAND_MS = 200
TOOLS = ("lakemark", "spark_stream", "full_reread", "floor")


# -- measurements ---------------------------------------------------------------------------
def _vm_hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def driver_peak_mib() -> dict[str, float]:
    """Peak resident memory of this Python driver and of its JVM (VmHWM of each)."""
    py = _vm_hwm_kib(os.getpid())
    jvm = max((_vm_hwm_kib(p) for p in _descendants(os.getpid())), default=0)
    return {"python_mib": round(py / 1024, 1), "jvm_mib": round(jvm / 1024, 1),
            "total_mib": round((py + jvm) / 1024, 1)}


def du(path: Path) -> int:
    if not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- the tools ------------------------------------------------------------------------------
class Workdir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.src = root / "src"
        self.state_db = root / "lakemark-state.db"
        self.checkpoint = root / "stream-checkpoint"
        self.cut_file = root / "floor-cut.json"

    @property
    def band_ms(self) -> int:
        """lakemark's maxBand for this history (kept in the workdir for worker processes)."""
        path = self.root / "band_ms"
        return int(path.read_text()) if path.exists() else BAND_MS

    def out(self, tool: str) -> Path:
        return self.root / f"out-{tool}"

    @property
    def state_url(self) -> str:
        return f"sqlite:///{self.state_db}"


def run_lakemark(spark: Any, w: Workdir) -> dict[str, Any]:
    from lakemark import Job
    from lakemark.state import open_store

    marks: dict[str, float] = {}

    def on_event(event: Any) -> None:
        marks.setdefault(event.stage, time.perf_counter())

    t0 = time.perf_counter()
    with Job("bench-incremental", state=w.state_url, spark=spark, on_event=on_event) as job:
        df = job.read_files(str(w.src), format="json", ctx="orders", schema=SCHEMA_DDL,
                            max_band_ms=w.band_ms)
        planned = len(job.plans["orders"].files)
        t_plan = marks.get("planned", time.perf_counter())
        t_read = time.perf_counter()
        job.write(df, str(w.out("lakemark")), format="parquet", ctx="sink")
        t_write = time.perf_counter()
    wall = time.perf_counter() - t0
    store = open_store(w.state_url)
    try:
        state = store.get_bookmark("bench-incremental").state.get("orders", {})
    finally:
        store.close()
    return {"planning_s": round(t_plan - t0, 4), "wall_s": round(wall, 4), "files": planned,
            "start_s": round(marks.get("started", t0) - t0, 4),
            "list_s": round(marks.get("listed", t0) - marks.get("started", t0), 4),
            "plan_and_record_s": round(t_plan - marks.get("listed", t_plan), 4),
            "dataframe_s": round(t_read - t_plan, 4), "write_s": round(t_write - t_read, 4),
            "commit_s": round(t0 + wall - t_write, 4),
            "state_bytes": len(json.dumps(state, separators=(",", ":")).encode()),
            "state_store_bytes": du(w.state_db),
            "band_entries": len(state.get("band", []))}


def run_spark_stream(spark: Any, w: Workdir) -> dict[str, Any]:
    t0 = time.perf_counter()
    query = (spark.readStream.schema(SCHEMA_DDL).format("json").load(str(w.src))
             .writeStream.format("parquet")
             .option("checkpointLocation", str(w.checkpoint))
             .option("path", str(w.out("spark_stream")))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    wall = time.perf_counter() - t0
    planning = 0.0
    rows = 0
    for p in query.recentProgress:
        d = p.get("durationMs", {}) if isinstance(p, dict) else p.durationMs
        planning += sum(d.get(k, 0) for k in ("latestOffset", "getBatch", "queryPlanning"))
        rows += (p.get("numInputRows", 0) if isinstance(p, dict) else p.numInputRows)
    return {"planning_s": round(planning / 1000, 4), "wall_s": round(wall, 4), "rows": rows,
            "checkpoint_bytes": du(w.checkpoint),
            "sink_metadata_bytes": du(w.out("spark_stream") / "_spark_metadata")}


def raw_listing(root: Path) -> list[tuple[str, int]]:
    """os.scandir walk with a stat per file: (path, mtime_ms), hidden names skipped."""
    found: list[tuple[str, int]] = []
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.name.startswith((".", "_")):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    found.append((entry.path, entry.stat(follow_symlinks=False).st_mtime_ns
                                  // 1_000_000))
    return found


def run_floor(spark: Any, w: Workdir, read: bool = True) -> dict[str, Any]:
    """Raw listing, then read exactly the files newer than the last run's listing time."""
    cut = json.loads(w.cut_file.read_text())["cut_ms"] if w.cut_file.exists() else -1
    t0 = time.perf_counter()
    started = time.time_ns() // 1_000_000
    listed = raw_listing(w.src)
    new = [p for p, m in listed if cut < m <= started]
    t_plan = time.perf_counter()
    if new and read:
        df = (spark.read.schema(SCHEMA_DDL).option("basePath", str(w.src)).json(new))
        df.write.mode("append").parquet(str(w.out("floor")))
    wall = time.perf_counter() - t0
    w.cut_file.write_text(json.dumps({"cut_ms": started}))
    return {"planning_s": round(t_plan - t0, 4), "wall_s": round(wall, 4), "files": len(new),
            "state_bytes": du(w.cut_file)}


def run_full_reread(spark: Any, w: Workdir) -> dict[str, Any]:
    t0 = time.perf_counter()
    spark.read.schema(SCHEMA_DDL).json(str(w.src)).write.mode("overwrite").parquet(
        str(w.out("full_reread")))
    return {"planning_s": None, "wall_s": round(time.perf_counter() - t0, 4), "state_bytes": 0}


RUNNERS = {"lakemark": run_lakemark, "spark_stream": run_spark_stream,
           "floor": run_floor, "full_reread": run_full_reread}


def spark_session() -> Any:
    from lakemark.spark import get_spark

    return get_spark("local[2]", {"spark.ui.enabled": "false",
                                  "spark.sql.shuffle.partitions": "2"}, app_name="lakemark-bench")


# -- orchestration --------------------------------------------------------------------------
def build_history(spark: Any, w: Workdir, files: int, runs: int, rows: int) -> list[dict[str, Any]]:
    """K batches; after each, one lakemark run, one file-source run and one floor run."""
    per_run: list[dict[str, Any]] = []
    per = files // runs
    for k in range(runs):
        write_batch(w.src, k, per, rows=rows, layout="date")
        time.sleep(w.band_ms / 1000 + 0.05)  # the previous batch leaves the (scaled) band
        lm = run_lakemark(spark, w)
        ss = run_spark_stream(spark, w)
        run_floor(spark, w, read=False)  # only moves its cut: the floor has no history cost
        assert lm["files"] == per, (k, lm)
        per_run.append({"run": k + 1, "lakemark_wall_s": lm["wall_s"],
                        "spark_stream_wall_s": ss["wall_s"],
                        "lakemark_state_bytes": lm["state_bytes"],
                        "spark_checkpoint_bytes": ss["checkpoint_bytes"]})
    return per_run


def measure(tool: str, w: Workdir, fresh: bool, spark: Any = None) -> dict[str, Any]:
    """One measured run of ``tool``: in a fresh process (as a scheduler runs it) or here."""
    if not fresh:
        return RUNNERS[tool](spark, w)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "worker", tool, str(w.root)],
        capture_output=True, text=True, check=False, env={**os.environ,
                                                          "PYSPARK_PYTHON": sys.executable})
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} worker failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_s"] = round(time.perf_counter() - t0, 3)
    return result


def _state_paths(w: Workdir, tool: str) -> list[Path]:
    """What a run of ``tool`` changes: its state and its output (the source is shared)."""
    return {"lakemark": [*w.root.glob(w.state_db.name + "*"), w.out("lakemark")],
            "spark_stream": [w.checkpoint, w.out("spark_stream")],
            "floor": [w.cut_file, w.out("floor")],
            "full_reread": [w.out("full_reread")]}[tool]


def _snapshot(w: Workdir, tool: str) -> Path:
    """Copy ``tool``'s state and output aside, so a measured run can be repeated from it."""
    snap = w.root / "snapshots" / tool
    shutil.rmtree(snap, ignore_errors=True)
    snap.mkdir(parents=True)
    for path in _state_paths(w, tool):
        if path.is_dir():
            shutil.copytree(path, snap / path.name)
        elif path.exists():
            shutil.copy2(path, snap / path.name)
    return snap


def _restore(w: Workdir, tool: str, snap: Path) -> None:
    for path in _state_paths(w, tool):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    for saved in snap.iterdir():
        if saved.is_dir():
            shutil.copytree(saved, w.root / saved.name)
        else:
            shutil.copy2(saved, w.root / saved.name)


def _median_sample(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The sample with the median wall time (its other figures stay consistent with it),
    with every sample's wall time alongside."""
    ordered = sorted(samples, key=lambda r: r["wall_s"])
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["wall_s_samples"] = [r["wall_s"] for r in samples]
    return chosen


def _ratios(case: dict[str, Any], fresh: bool) -> dict[str, float | None]:
    lm, ss, fl = case["lakemark"], case["spark_stream"], case["floor"]
    ratios = {
        "spark_stream_wall_over_lakemark_wall": _ratio(ss["wall_s"], lm["wall_s"]),
        "full_reread_wall_over_lakemark_wall": _ratio(case["full_reread"]["wall_s"],
                                                      lm["wall_s"]),
        "lakemark_wall_over_floor_wall": _ratio(lm["wall_s"], fl["wall_s"]),
        "lakemark_planning_over_raw_listing": _ratio(lm["planning_s"], fl["planning_s"]),
        "lakemark_state_over_spark_checkpoint": _ratio(lm["state_bytes"],
                                                       ss["checkpoint_bytes"], 8),
    }
    if fresh:
        ratios["spark_stream_process_over_lakemark_process"] = _ratio(ss["process_s"],
                                                                      lm["process_s"])
    return ratios


def measure_case(w: Workdir, spark: Any, n_new: int, *, modes: tuple[str, ...],
                 repeats: int) -> dict[str, dict[str, Any]]:
    """Each tool's run over the same new files, ``repeats`` times per mode, each repetition
    from the same starting state (restored from a snapshot). The tools take turns, in an order
    that flips every repetition, so that none always runs first (cold page cache for the
    Spark jars) or last. The full re-read, which has no state and is not the claim, runs once
    per mode."""
    snaps = {tool: _snapshot(w, tool) for tool in TOOLS}
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {m: {t: [] for t in TOOLS}
                                                           for m in modes}
    for rep in range(repeats):
        order = TOOLS if (rep + bool(n_new)) % 2 == 0 else tuple(reversed(TOOLS))
        for tool in order:
            for mode in modes:
                if tool == "full_reread" and samples[mode][tool]:
                    continue
                _restore(w, tool, snaps[tool])
                result = measure(tool, w, mode == "fresh", spark)
                assert result.get("files", n_new) == n_new, (tool, mode, n_new, result)
                samples[mode][tool].append(result)
    shutil.rmtree(w.root / "snapshots", ignore_errors=True)
    cases: dict[str, dict[str, Any]] = {}
    for mode in modes:
        case: dict[str, Any] = {tool: _median_sample(samples[mode][tool]) for tool in TOOLS}
        case["repeats"] = repeats
        case["ratios"] = _ratios(case, mode == "fresh")
        cases[mode] = case
    return cases


def scenario(workroot: Path, *, files: int, runs: int, new: int, rows: int,
             fresh: bool, band_ms: int = BAND_MS, repeats: int = 3) -> dict[str, Any]:
    """History, then the measured runs with N = 0 and N = ``new``: in fresh processes and in
    the history's warm session (``fresh``), or only in the warm session (the smoke test)."""
    w = Workdir(workroot)
    w.root.mkdir(parents=True, exist_ok=True)
    (w.root / "band_ms").write_text(str(band_ms))
    spark = spark_session()
    t0 = time.perf_counter()
    history = build_history(spark, w, files, runs, rows)
    history_s = time.perf_counter() - t0
    modes = ("fresh", "warm") if fresh else ("warm",)
    by_mode: dict[str, dict[str, Any]] = {mode: {} for mode in modes}
    for n_new in (0, new):
        if n_new:
            write_batch(w.src, runs, n_new, rows=rows, layout="date")
            time.sleep(0.05)
        for mode, case in measure_case(w, spark, n_new, modes=modes,
                                       repeats=repeats).items():
            by_mode[mode][f"new_{n_new}"] = case
    return {"files_processed_before": files, "earlier_runs": runs, "new_files": [0, new],
            "rows_per_file": rows, "layout": "date", "format": "json",
            "fresh_process_per_measured_run": fresh, "lakemark_max_band_ms": w.band_ms,
            "history_s": round(history_s, 2), "history": history,
            "cases": by_mode[modes[0]],
            **({"warm_cases": by_mode["warm"]} if fresh else {})}


def _ratio(a: float | None, b: float | None, digits: int = 3) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, digits)


def _worker(tool: str, root: str) -> None:
    spark = spark_session()
    result = RUNNERS[tool](spark, Workdir(Path(root)))
    result["driver_peak"] = driver_peak_mib()
    spark.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "worker":
        _worker(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit("internal worker: incremental.py worker TOOL WORKDIR")
