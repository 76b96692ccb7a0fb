"""End to end on local Spark: `lakemark ingest files` run after run, and the commands around it.

The CLI runs in-process (click's runner) on the shared Spark session; one test runs the real
console entry point in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


def write_json(path: Path, rows: list[dict[str, Any]], mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def rows(first: int, n: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"n{i}"} for i in range(first, first + n)]


class Lake:
    """A source folder, a target and a state file under tmp_path, and a CLI runner."""

    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "out" / "table"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.runner = CliRunner()

    def cli(self, *args: str, ok: bool = True) -> Result:
        result = self.runner.invoke(cli, list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    def ingest(self, *extra: str, ok: bool = True, job: str = "j",
               target: Path | None = None) -> dict[str, Any]:
        result = self.cli(
            "ingest", "files", str(self.src), str(target or self.target), "--job", job, "--state",
            self.state, "--json", *extra, ok=ok,
        )
        if not ok:
            return {"exit_code": result.exit_code, "output": result.output}
        return json.loads(result.stdout)

    def json(self, *args: str) -> Any:
        out = self.cli(*args, "--state", self.state, "--json").stdout
        return json.loads(out)

    def ids(self) -> list[int]:
        return sorted(DeltaTable(str(self.target)).to_pyarrow_table().column("id").to_pylist())


@pytest.fixture
def lake(tmp_path: Path, spark: Any) -> Lake:
    return Lake(tmp_path)


def test_each_run_takes_only_new_files_and_runs_show_proves_it(lake: Lake) -> None:
    old = time.time() - 3600
    write_json(lake.src / "a.json", rows(0, 3), old)
    write_json(lake.src / "b.json", rows(3, 2), old)
    r1 = lake.ingest()
    assert (r1["files"], r1["rows"], r1["status"], r1["run"]) == (2, 5, "SUCCEEDED", 1)
    assert lake.ids() == list(range(5))

    write_json(lake.src / "c.json", rows(5, 4))
    r2 = lake.ingest()
    assert (r2["files"], r2["rows"], r2["run"]) == (1, 4, 2)
    assert lake.ids() == list(range(9))

    r3 = lake.ingest()
    assert (r3["files"], r3["rows"], r3["run"]) == (0, 0, 3)
    assert lake.ids() == list(range(9))

    shown = lake.json("runs", "show", r2["run_id"])
    assert [f["path"] for f in shown["sources"]["source"]["files"]] == [str(lake.src / "c.json")]
    for key in ("run_id", "job_name", "run", "attempt", "status", "started_at", "ended_at"):
        assert key in shown
    assert {"path", "mtime", "size"} <= set(shown["sources"]["source"]["files"][0])

    listed = lake.json("runs", "list", "j")
    assert [r["run_id"] for r in listed] == [r1["run_id"], r2["run_id"], r3["run_id"]]
    assert all(r["status"] == "SUCCEEDED" for r in listed)

    bm = lake.json("bookmark", "show", "j")
    assert (bm["job_name"], bm["version"], bm["run"], bm["attempt"]) == ("j", 3, 3, 0)
    assert bm["run_id"] == r3["run_id"] and bm["previous_run_id"] == r2["run_id"]
    assert bm["state"]["source"]["high"] is not None


def test_modified_file_is_processed_again(lake: Lake) -> None:
    f = write_json(lake.src / "a.json", rows(0, 2), time.time() - 3600)
    lake.ingest()
    write_json(f, rows(10, 1))
    r2 = lake.ingest()
    assert r2["files"] == 1 and lake.ids() == [0, 1, 10]


def test_untracked_a_new_column_fails_the_run_unless_merge_schema_is_asked_for(
        lake: Lake) -> None:
    write_json(lake.src / "a.json", rows(0, 2), time.time() - 3600)
    lake.ingest("--schema-evolution", "off")
    write_json(lake.src / "b.json", [{"id": 5, "extra": "x"}])
    refused = lake.ingest("--schema-evolution", "off", ok=False)
    assert refused["exit_code"] == 1
    assert "extra" in refused["output"] and "mergeSchema" in refused["output"]
    assert lake.ids() == [0, 1]
    merged = lake.ingest("--merge-schema", "--schema-evolution", "off")
    assert (merged["files"], merged["rows"]) == (1, 1)  # the refused file was not lost
    table = DeltaTable(str(lake.target)).to_pyarrow_table()
    assert sorted(zip(table.column("id").to_pylist(), table.column("extra").to_pylist())) == \
        [(0, None), (1, None), (5, "x")]
    refused = lake.ingest("--merge-schema", "--target-format", "parquet", ok=False)
    assert refused["exit_code"] == 2 and "Iceberg targets only" in refused["output"]


def test_by_default_a_new_column_reaches_the_table_in_the_same_run(lake: Lake) -> None:
    write_json(lake.src / "a.json", rows(0, 2), time.time() - 3600)
    lake.ingest()
    write_json(lake.src / "b.json", [{"id": 5, "extra": "x"}])
    run = lake.ingest()
    assert (run["files"], run["rows"], run["schema"]["added_columns"]) == (1, 1, ["extra"])
    table = DeltaTable(str(lake.target)).to_pyarrow_table()
    assert sorted(zip(table.column("id").to_pylist(), table.column("extra").to_pylist())) == \
        [(0, None), (1, None), (5, "x")]


def test_bounded_runs_split_equal_mtimes_without_loss(lake: Lake) -> None:
    t = time.time() - 3600
    for i in range(5):
        write_json(lake.src / f"f{i}.json", rows(i * 10, 1), t)
    taken = [lake.ingest("--bounded-files", "2")["files"] for _ in range(4)]
    assert taken == [2, 2, 1, 0]
    assert lake.ids() == [0, 10, 20, 30, 40]


def test_hive_partition_folders_become_columns(lake: Lake) -> None:
    write_json(lake.src / "day=2026-01-01" / "a.json", rows(0, 2))
    write_json(lake.src / "day=2026-01-02" / "b.json", rows(2, 1))
    lake.ingest("--partition-by", "day")
    table = DeltaTable(str(lake.target)).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], str(r["day"])) for r in table) == [
        (0, "2026-01-01"), (1, "2026-01-01"), (2, "2026-01-02")
    ]


def test_disable_and_pause_leave_the_bookmark_alone(lake: Lake) -> None:
    write_json(lake.src / "a.json", rows(0, 1), time.time() - 3600)
    lake.ingest()
    before = lake.json("bookmark", "show", "j")
    write_json(lake.src / "b.json", rows(1, 1))
    side = lake.target.parent / "side"
    paused = lake.ingest("--bookmark", "pause", "--target-format", "parquet", target=side)
    assert paused["files"] == 1  # new data since the last successful run
    disabled = lake.ingest("--bookmark", "disable", "--target-format", "parquet", target=side)
    assert disabled["files"] == 2  # everything
    assert lake.json("bookmark", "show", "j") == before
    assert lake.ingest()["files"] == 1  # b.json is still new for the bookmark


def test_pause_from_to_replays_exactly_the_runs_between(lake: Lake) -> None:
    runs = []
    for i in range(4):
        write_json(lake.src / f"f{i}.json", rows(i, 1))
        runs.append(lake.ingest())
        assert runs[-1]["files"] == 1
    before = lake.json("bookmark", "show", "j")
    replay = lake.ingest(
        "--bookmark", "pause", "--from", runs[0]["run_id"], "--to", runs[2]["run_id"],
    )
    shown = lake.json("runs", "show", replay["run_id"])
    assert [Path(f["path"]).name for f in shown["sources"]["source"]["files"]] == [
        "f1.json", "f2.json"
    ]
    assert lake.json("bookmark", "show", "j") == before


def test_failfast_failure_counts_an_attempt_and_keeps_the_file_unprocessed(lake: Lake) -> None:
    bad = lake.src / "bad.json"
    bad.write_text('{"id": 1, "name": "x"}\n{not json\n')
    failed = lake.ingest("--mode", "FAILFAST", ok=False)
    assert failed["exit_code"] == 1
    bm = lake.json("bookmark", "show", "j")
    assert (bm["version"], bm["run"], bm["attempt"]) == (1, 0, 1)
    assert lake.json("runs", "list", "j")[0]["status"] == "FAILED"
    write_json(bad, rows(1, 1))
    ok = lake.ingest("--mode", "FAILFAST")
    assert (ok["files"], ok["run"], ok["attempt"]) == (1, 1, 1)
    assert lake.ids() == [1]


def test_bad_input_is_refused_before_any_work(lake: Lake, tmp_path: Path) -> None:
    write_json(lake.src / "a.json", rows(0, 1))
    missing = lake.cli("ingest", "files", str(tmp_path / "nope"), str(lake.target), "--job", "j",
                       "--state", lake.state, ok=False)
    assert missing.exit_code == 1 and "nope" in missing.output
    for extra, needle in [
        (("--max-band", "-1"), "maxBand"),
        (("--bounded-files", "0"), "boundedFiles"),
        (("--bookmark", "pause", "--from", "jr_1"), "job-bookmark-to"),
        (("--from", "jr_1", "--to", "jr_2"), "pause"),
        (("--option", "header"), "--option"),
    ]:
        out = lake.ingest(*extra, ok=False)
        assert out["exit_code"] == 1 and needle in out["output"], (extra, out)
    unknown = lake.ingest("--format", "xls", ok=False)
    assert unknown["exit_code"] == 2 and "xls" in unknown["output"]
    # Nothing was recorded: the store knows no job at all (so `runs list j` is an error).
    assert lake.json("jobs", "list") == []
    missing = lake.cli("runs", "list", "j", "--state", lake.state, ok=False)
    assert missing.exit_code == 1 and "no job 'j'" in missing.output
    assert not lake.target.exists()

    not_db = tmp_path / "garbage.db"
    not_db.write_text("this is not sqlite, " * 100)
    bad_state = lake.cli("bookmark", "show", "j", "--state", f"sqlite:///{not_db}", ok=False)
    assert bad_state.exit_code == 1 and "garbage.db" in bad_state.output


def test_mark_processed_then_only_later_files_are_taken(lake: Lake) -> None:
    write_json(lake.src / "old1.json", rows(0, 1), time.time() - 7200)
    write_json(lake.src / "old2.json", rows(1, 1), time.time() - 7200)
    marked = lake.json("bookmark", "mark-processed", "j", str(lake.src), "--ctx", "source")
    assert marked["files"] == 2
    write_json(lake.src / "new.json", rows(2, 1))
    assert lake.ingest()["files"] == 1
    assert lake.ids() == [2]
    assert [r["bookmark_option"] for r in lake.json("runs", "list", "j")] == [
        "mark-processed", "enable"
    ]


def test_reset_and_rewind(lake: Lake) -> None:
    write_json(lake.src / "a.json", rows(0, 1), time.time() - 3600)
    r1 = lake.ingest("--target-format", "parquet")
    write_json(lake.src / "b.json", rows(1, 1))
    lake.ingest("--target-format", "parquet")
    lake.json("bookmark", "rewind", "j", "--to", r1["run_id"])
    again = lake.ingest("--target-format", "parquet")
    assert again["files"] == 1 and again["run"] == 3  # b.json again; run numbers keep rising
    lake.json("bookmark", "reset", "j")
    assert lake.ingest("--target-format", "parquet")["files"] == 2
    unknown = lake.cli("bookmark", "rewind", "j", "--to", "jr_nope", "--state", lake.state,
                       ok=False)
    assert unknown.exit_code == 1 and "jr_nope" in unknown.output


def test_a_second_concurrent_run_fails_naming_the_running_run(lake: Lake, spark: Any) -> None:
    from lakemark import Job

    write_json(lake.src / "a.json", rows(0, 1))
    with Job("j", state=lake.state, spark=spark) as holder:
        out = lake.ingest(ok=False)
        assert out["exit_code"] == 1 and holder.run_id in out["output"]
    assert lake.ingest()["files"] == 1


def test_python_api_script_through_lakemark_run(lake: Lake, tmp_path: Path) -> None:
    write_json(lake.src / "a.json", rows(0, 3))
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\n"
        "from lakemark import Job\n"
        "src, dst = sys.argv[1], sys.argv[2]\n"
        "with Job('api-job') as job:\n"
        "    df = job.read_files(src, format='json', ctx='in')\n"
        "    job.write(df.where('id > 0'), dst, format='delta', ctx='out')\n"
    )
    lake.cli("run", "--state", lake.state, str(script), str(lake.src), str(lake.target))
    assert lake.ids() == [1, 2]
    bm = lake.json("bookmark", "show", "api-job")
    assert bm["run"] == 1 and "in" in bm["state"]


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_the_console_command_runs_in_a_fresh_process(tmp_path: Path) -> None:
    src = tmp_path / "in"
    write_json(src / "a.json", rows(0, 2))
    state = f"sqlite:///{tmp_path / 's.db'}"
    cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(src), str(tmp_path / "t"),
           "--job", "p", "--state", state, "--target-format", "json", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["files"] == 1
    # Spark's log lines (" WARN Class: ...") stay out of the way by default; the JVM's own
    # start-up banner cannot be silenced from here.
    assert not re.search(r" (WARN|INFO) \w", out.stderr), out.stderr
