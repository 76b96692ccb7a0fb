"""Section 14 of bench/README.md (Iceberg incremental source and commit time, issue 22), from
``results/iceberg_incremental.json`` and ``results/iceberg_planning_ab.json``.

Used by ``bench/report.py``; kept apart so that file stays one screenful per section. The
paragraphs on the sink's commit history describe measurements made when that change was made
(they are not in the JSON) and are kept as written then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: How the commit step got its present cost (measured with that change, on a table of 1,000
#: snapshots of 1,000 rows; see git history of this section).
COMMIT_HISTORY = (
    "**Commit: before and after its change, on a 1,000-snapshot table** (15 commits each, two "
    "rounds interleaved, load average 15.3–16.3): the code before that change (`f5ba40c`) took a "
    "median of 880 and 908 ms per commit, 249–286 ms CPU; after it 144 and 106 ms, 63–79 ms CPU "
    "(each figure includes the first commit of its process). Per commit, pyiceberg (a) "
    "deep-copied the whole table metadata — every snapshot and its summary — at the end of "
    "`update_table_metadata`, once for the transaction's view and again inside the catalog's "
    "`commit_table`: about half of the CPU; (b) parsed and validated the metadata JSON when the "
    "sink opened the table and again when `commit_table` reloaded it; (c) with `add_files` (a "
    "fast append) wrote a manifest list one entry longer every commit; and lakemark's token "
    "check found each ancestor with `snapshot_by_id`, a linear search. Since: appends merge "
    "manifests as Iceberg's do (`commit.manifest-merge.enabled`, true unless the table says "
    "false; set on new tables); catalogs opened by lakemark reuse metadata they already parsed "
    "or wrote, by metadata file, and hand out metadata whose deep copy shares its frozen parts "
    "(`catalog/_iceberg_reuse.py`); the ancestry walk goes through a map. What remains at 1,000 "
    "snapshots is writing the metadata JSON (pyiceberg serializes every snapshot summary "
    "through Python), the catalog's SQLite commit and the manifests.\n")


def _f(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def render(add: Callable[[str], None], table: Callable[[list[str], list[list[Any]]], str],
           ic: dict[str, Any] | None, ab: dict[str, Any] | None,
           earlier: tuple[dict[str, Any] | None, ...] = ()) -> None:
    """Add section 14 through ``add`` (``table`` renders a Markdown table); ``earlier``: runs
    of the same command at earlier revisions, oldest first."""
    add("## 14. Iceberg: incremental source run and commit time (issue 22)\n")
    if not ic or ic.get("status") != "ok" or "read_best_s" not in ic:
        add("not measured\n")
        return
    label = {"incremental": "lakemark, incremental (10 snapshots)",
             "full": "lakemark, full read",
             "spark_incremental": "Spark only, the same files as incremental",
             "spark_full": "Spark only, the same files as full"}
    n = ic["new_snapshots"]
    label["incremental"] = f"lakemark, incremental ({n} snapshots)"
    add(table(["run", "samples s", "median s", "best s", "of it read_table s (median)",
               "of that the DataFrame s", "files", "rows"],
              [[label[c], ", ".join(_f(x) for x in ic["read_s"][c]), _f(ic["read_median_s"][c]),
                _f(ic["read_best_s"][c]),
                _f(ic["read_table_median_s"][c]) if not c.startswith("spark_") else "–",
                _f(ic["dataframe_median_s"][c]), ic["files_read"][c],
                f"{ic['rows_read'][c]:,}"] for c in label]) + "\n")
    m = ic["machine"]
    share = 100 * n / ic["snapshots"]
    add(f"Full / incremental: **{ic['ratio_full_over_incremental']:.1f}×** of medians, "
        f"{ic['ratio_best_full_over_best_incremental']:.1f}× of bests (goal ≥ 20×; section 13's "
        f"Delta source reports bests). Spark alone over the same files: "
        f"{ic['floor_ratio_full_over_incremental']:.1f}× of medians; the incremental lakemark "
        f"run / Spark alone over its files: {ic['incremental_over_floor']:.2f}× (medians).\n")
    add(f"**Table**, shaped as section 13's Delta table: {ic['snapshots']:,} append snapshots of "
        f"{ic['rows_per_snapshot']:,} rows (one Parquet file each, written by pyarrow; columns "
        f"`id` long, `k` long, `x` double, `s` string), {ic['table_rows']:,} rows, "
        f"{ic['table_bytes'] / 2**20:,.0f} MiB, on a SQLite SQL catalog, each snapshot committed "
        "by the sink's commit step (below). The aggregate is section 13's: "
        f"`{ic['aggregate']}`. **incremental**: a job whose bookmark ends {n} snapshots "
        f"({share:g}%) before the current one, run with `pause` so each repeat reads the same "
        "range; **full**: the same job with bookmarks disabled (the table at its current "
        "snapshot); **Spark only**: the same aggregate over the same data files through "
        "`spark.read.schema(…).parquet(…)`, no job. Each lakemark time is a whole run (lease, "
        "planning, the run's record, the DataFrame, Spark's job, commit); `read_table` is "
        "lakemark's part before Spark runs, the DataFrame Spark's part of it. Before each "
        "lakemark run the process's parsed metadata and manifest lists are dropped (a real next "
        "run meets a new metadata file). One warm session, local[2], the four cases rotating "
        f"each of {ic['repeats']} repeats. {ic['spark']}; load average {m['loadavg_at_start']} at "
        f"start, {m['loadavg_at_end']} at end, on {m['cpus']} cores shared with other builds. "
        f"Command: `{ic['command']}` (`--cache` keeps the table between runs; its commit times "
        "are those measured when it was built)"
        + (f"; code measured: `{ic['code']}`" if ic.get("code") else "") + ".\n")
    if ab:
        med, ratio = ab["median"], ab["ratio_before_over_after"]
        add(f"**Planning, before and after** (`bench/iceberg_planning_ab.py`: lakemark's part of "
            f"`read_table` for the last {ab['new_snapshots']} snapshots of the same table — open "
            "the table as `read_iceberg` does for a run continuing from a bookmark, the process's "
            "parsed metadata dropped first; the snapshots the planner needs, the range, its data "
            "files, the schema — in fresh processes alternating between "
            f"`{ab['before']}` and `{ab['after']}`, {len(ab['samples']['after']['wall_ms'])} "
            f"samples each): median {_f(med['before']['wall_ms'])} → "
            f"{_f(med['after']['wall_ms'])} ms wall ({ratio['wall_ms']}×), "
            f"{_f(med['before']['cpu_ms'])} → {_f(med['after']['cpu_ms'])} ms CPU "
            f"({ratio['cpu_ms']}×); load average {ab['loadavg_at_start']} at start, "
            f"{ab['loadavg_at_end']} at end. Command: `{ab['command']}`.\n")
    runs = [r for r in (*earlier, ic) if r and "read_best_s" in r]
    if len(runs) > 1:
        def row(r: dict[str, Any]) -> list[Any]:
            med, best, mc = r["read_median_s"], r["read_best_s"], r["machine"]
            return [f"`{r.get('code', '?')}`", r["measured_at"], r["repeats"],
                    f"{mc['loadavg_at_start'][0]} → {mc['loadavg_at_end'][0]}",
                    f"{_f(med['incremental'])} ({_f(best['incremental'])})",
                    _f(r["read_table_median_s"]["incremental"]),
                    _f(med["spark_incremental"]),
                    f"{_f(med['full'])} ({_f(best['full'])})",
                    f"{r['ratio_full_over_incremental']:.1f}× "
                    f"({r['ratio_best_full_over_best_incremental']:.1f}×)"]

        add("**The same command at each revision of this change** (the first row is the code "
            "before it; that run did not yet drop the parsed metadata between runs, which "
            "favours it):\n")
        add(table(["code", "measured (UTC)", "repeats", "load (1 min) start → end",
                   "incremental median (best) s", "of it read_table s",
                   "Spark alone, its files s", "full median (best) s",
                   "full / incremental, medians (bests)"], [row(r) for r in runs]) + "\n")
        add("Whole runs move by seconds with this machine's load, so their ratios differ "
            "within noise from row to row; lakemark's own part, `read_table`, falls at each "
            "step. Most of the distance from this section's earlier 8.8× was the table's "
            "shape: that table had 1,000 rows per snapshot, 50 times fewer than section 13's "
            "Delta table, so its full read was small next to any run's fixed cost.\n")
    add("**What changed in the incremental planning.** (1) For each snapshot taken, a run "
        "reads its manifest list and the manifests that snapshot wrote with fastavro instead "
        "of pyiceberg's reader (which converts every Avro file's header schema into an Iceberg "
        "schema and decodes every entry in full), and stops reading a manifest once the list's "
        "`added_files_count` added entries were seen (`planning/iceberg_manifests.py`). This "
        "matters at every 100th commit: that snapshot merged the table's manifests into one "
        "holding every live file (991 entries for the 991st), which the run used to decode in "
        "full to find one file; its new entries come first, so it now reads one. (2) A run "
        "continuing from a bookmark no longer has pyiceberg parse and validate the whole "
        "metadata JSON into its model (every snapshot and summary, ~0.7 MB at 1,000 snapshots, "
        "about two thirds of the planning's CPU after (1)): it asks the catalog for the "
        "metadata file with the catalog's own query, reads it with `json.loads` and makes "
        "objects only of the snapshots on the pinned snapshot's ancestry down to the bookmark "
        "and of one schema (`catalog/_iceberg_light.py`; whole-table reads, other catalog types "
        "and shapes it does not take go through pyiceberg as before). (3) The planner gets only "
        "that ancestry, and snapshots are found through a map (`snapshot_by_id` is a linear "
        "search).\n")
    add("**What is left.** lakemark's planning of an incremental run is now tens of ms of CPU "
        "(the A/B above): opening the SQL catalog (pyiceberg builds a SQLAlchemy engine and "
        "checks its tables on every open), its query for the metadata file, `json.loads` of "
        "that file (the one part that still grows with the history), two small Avro files per "
        "snapshot taken. The rest of an incremental run is the job's start and commit, Spark "
        "building the DataFrame and running the aggregate: the whole run took "
        f"{ic['incremental_over_floor']:.2f}× what Spark alone took over the same files "
        "(medians; single samples move by seconds with this machine's load, and the job's "
        "start and commit write the state store).\n")
    cm = ic["commit_ms"]
    add("**Commit time** of the sink's commit step (open the table, token check over its "
        "history, pyiceberg `add_files` with the token in the snapshot summary, catalog commit; "
        f"Spark's file writing left out), {ic['snapshots']:,} commits in one process while the "
        f"table above was built: median of commits 2–101 **{cm['first_100_median']} ms**, of "
        f"the last 100 **{cm['last_100_median']} ms** (p95 {cm['last_100_p95']} ms, max "
        f"{cm['last_100_max']:,} ms; CPU median {cm['first_100_cpu_median']} and "
        f"{cm['last_100_cpu_median']} ms; goal ≤ 200 ms). The manifest list of the last "
        f"snapshot holds {ic['manifests_in_last_list']} manifests (merged every 100 commits); "
        f"the metadata JSON is {ic['metadata_json_bytes'] / 1000:,.0f} KB. Load average "
        f"{ic['loadavg_when_table_built']} when the last commit was made "
        f"({ic['table_built_at']}).\n")
    add(COMMIT_HISTORY)
