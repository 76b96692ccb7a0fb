"""Quarantine end to end on local Spark: a file that cannot be read is set aside, the run
commits the others, the job never sticks, and a retry takes the file exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark

OLD = time.time() - 3600


def table(first: int, n: int) -> pa.Table:
    return pa.table({"id": list(range(first, first + n)),
                     "name": [f"n{i}" for i in range(first, first + n)]})


def write(fmt: str, path: Path, first: int, n: int, mtime: float = OLD) -> Path:
    """A good file of ``fmt`` with ids first..first+n-1."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = table(first, n)
    if fmt == "parquet":
        pq.write_table(rows, path, compression="NONE")
    elif fmt == "orc":
        po.write_table(rows, path)
    elif fmt == "avro":
        schema = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
            {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]})
        with open(path, "wb") as f:
            fastavro.writer(f, schema, rows.to_pylist())
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows.to_pylist()))
    os.utime(path, (mtime, mtime))
    return path


def truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    os.utime(path, (OLD, OLD))
    return path


class Lake:
    def __init__(self, tmp: Path) -> None:
        self.src = tmp / "in"
        self.src.mkdir()
        self.target = tmp / "out"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.runner = CliRunner()

    def cli(self, *args: str) -> Result:
        return self.runner.invoke(cli, list(args), catch_exceptions=False)

    def ingest(self, *extra: str, code: int = 0, fmt: str = "json") -> dict[str, Any]:
        result = self.cli("ingest", "files", str(self.src), str(self.target), "--job", "j",
                          "--state", self.state, "--format", fmt, "--json", *extra)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return json.loads(result.stdout)

    def json(self, *args: str) -> Any:
        result = self.cli(*args, "--state", self.state, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def ids(self) -> list[int]:
        return sorted(DeltaTable(str(self.target)).to_pyarrow_table().column("id").to_pylist())

    def aside(self) -> dict[str, str]:
        return {Path(f["path"]).name: f["reason"]
                for f in self.json("quarantine", "list", "j")["files"]}


@pytest.fixture
def lake(tmp_path: Path, spark: Any) -> Lake:
    return Lake(tmp_path)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_a_truncated_file_is_set_aside_and_the_good_file_committed(lake: Lake, fmt: str) -> None:
    write(fmt, lake.src / f"good.{fmt}", 0, 5)
    truncate(write(fmt, lake.src / f"cut.{fmt}", 100, 50))
    first = lake.ingest(code=3, fmt=fmt)
    assert (first["status"], first["rows"], first["quarantined_files"]) == ("SUCCEEDED", 5, 1)
    assert lake.ids() == list(range(5))
    assert list(lake.aside()) == [f"cut.{fmt}"]
    shown = lake.json("runs", "show", first["run_id"])
    assert [Path(q["path"]).name for q in shown["quarantined"]] == [f"cut.{fmt}"]
    assert shown["quarantined"][0]["size"] == (lake.src / f"cut.{fmt}").stat().st_size
    # Not stuck, not taken again on its own: the next run has nothing to do.
    second = lake.ingest(fmt=fmt)
    assert (second["files"], second["quarantined_files"]) == (0, 0)
    assert lake.ids() == list(range(5))


def test_broken_links_are_set_aside_and_do_not_stop_the_listing(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 3)
    (lake.src / "loop.json").symlink_to(lake.src / "loop.json")
    (lake.src / "dangling.json").symlink_to(lake.src / "missing.json")
    out = lake.ingest(code=3)
    assert out["quarantined_files"] == 2
    assert lake.ids() == [0, 1, 2]
    reasons = lake.aside()
    assert "loop" in reasons["loop.json"] and "dangling" in reasons["dangling.json"]
    assert lake.ingest()["files"] == 0


def test_a_record_over_the_limit_is_set_aside_and_a_retry_takes_it_once(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 3)
    big = lake.src / "big.json"
    big.write_text(json.dumps({"id": 99, "name": "x" * 300_000}) + "\n")
    os.utime(big, (OLD, OLD))
    lake.ingest("--max-record-bytes", "100KiB", code=3)
    assert lake.ids() == [0, 1, 2]
    assert "over the record size limit of 102400 bytes" in lake.aside()["big.json"]
    assert lake.ingest("--max-record-bytes", "100KiB")["files"] == 0
    # With a larger limit and a retry, the next run takes the file, once.
    marked = lake.json("quarantine", "retry", "j")
    assert [Path(m["path"]).name for m in marked["marked"]] == ["big.json"]
    again = lake.ingest("--max-record-bytes", "1MiB")
    assert (again["files"], again["rows"]) == (1, 1)
    assert lake.ids() == [0, 1, 2, 99]
    assert lake.aside() == {}
    done = lake.json("quarantine", "list", "j", "--all")["files"]
    assert [(f["status"], f["retried_by"]) for f in done] == [("retried", again["run_id"])]
    assert lake.json("runs", "show", again["run_id"])["retried"][0]["path"] == str(big)
    assert lake.ingest()["files"] == 0
    assert lake.ids() == [0, 1, 2, 99]


def test_a_retried_file_still_bad_goes_back_with_the_new_reason(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 2)
    big = lake.src / "big.json"
    big.write_text(json.dumps({"id": 99, "name": "x" * 300_000}) + "\n")
    lake.ingest("--max-record-bytes", "100KiB", code=3)
    lake.json("quarantine", "retry", "j", str(big))
    lake.ingest("--max-record-bytes", "200KiB", code=3)
    assert "limit of 204800 bytes" in lake.aside()["big.json"]
    assert lake.ids() == [0, 1]


def test_damage_inside_a_parquet_page_is_pinned_at_read_time(lake: Lake) -> None:
    write("parquet", lake.src / "a.parquet", 0, 4)
    bad = write("parquet", lake.src / "b.parquet", 100, 500)
    write("parquet", lake.src / "c.parquet", 1000, 3)
    meta = pq.ParquetFile(bad).metadata.row_group(0).column(0)
    data = bytearray(bad.read_bytes())
    start = meta.data_page_offset
    data[start:start + 12] = b"\xff" * 12  # the first page header: the footer stays intact
    bad.write_bytes(bytes(data))
    os.utime(bad, (OLD, OLD))
    out = lake.ingest(code=3, fmt="parquet")
    assert out["quarantined_files"] == 1
    assert lake.ids() == [0, 1, 2, 3, 1000, 1001, 1002]
    assert list(lake.aside()) == ["b.parquet"]
    assert lake.ingest(fmt="parquet")["files"] == 0


def test_strict_mode_fails_naming_the_file_and_keeps_the_bookmark(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 2)
    (lake.src / "loop.json").symlink_to(lake.src / "loop.json")
    result = lake.cli("ingest", "files", str(lake.src), str(lake.target), "--job", "j",
                      "--state", lake.state, "--on-bad-file", "fail")
    assert result.exit_code == 1
    assert "loop.json" in result.stderr and "on_bad_file=fail" in result.stderr
    assert not lake.target.exists()
    assert lake.aside() == {}
    lake.ingest(code=3)  # the default takes the good file and sets the link aside
    assert lake.ids() == [0, 1]


def test_the_threshold_fails_a_run_that_sets_aside_too_many(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 2)
    for name in ("l1.json", "l2.json"):
        (lake.src / name).symlink_to(lake.src / "missing")
    result = lake.cli("ingest", "files", str(lake.src), str(lake.target), "--job", "j",
                      "--state", lake.state, "--max-bad-files", "50%")
    assert result.exit_code == 1 and "more than max_bad_files 50%" in result.stderr
    assert not lake.target.exists()
    lake.ingest("--max-bad-files", "2", code=3)
    assert lake.ids() == [0, 1]


def test_bad_policy_options_are_refused_before_any_state_change(lake: Lake) -> None:
    write("json", lake.src / "a.json", 0, 2)
    result = lake.cli("ingest", "files", str(lake.src), str(lake.target), "--job", "j",
                      "--state", lake.state, "--max-bad-files", "lots")
    assert result.exit_code == 2 and "--max-bad-files 'lots'" in result.output
    assert not Path(lake.state.removeprefix("sqlite:///")).exists()  # nothing was created


def test_a_python_job_sets_the_file_aside_and_its_next_attempt_goes_on(
        lake: Lake, spark: Any) -> None:
    """The Job API: user code holds the frame, so the attempt that meets the damage fails
    (one line) with the file set aside; the next attempt commits the other files."""
    from lakemark import Job
    from lakemark.errors import ReadError
    from lakemark.state import open_store

    write("parquet", lake.src / "a.parquet", 0, 3)
    bad = write("parquet", lake.src / "b.parquet", 100, 500)
    start = pq.ParquetFile(bad).metadata.row_group(0).column(0).data_page_offset
    data = bytearray(bad.read_bytes())
    data[start:start + 12] = b"\xff" * 12
    bad.write_bytes(bytes(data))
    store = open_store(lake.state)
    with pytest.raises(ReadError) as failed, Job("j", state=store, spark=spark) as job:
        df = job.read_files(str(lake.src), format="parquet", ctx="src")
        job.write(df, str(lake.target), format="delta", ctx="out")
    assert "b.parquet" in str(failed.value) and "\n" not in str(failed.value)
    assert [Path(q.path).name for q in store.quarantined("j")] == ["b.parquet"]
    with Job("j", state=store, spark=spark) as job:
        df = job.read_files(str(lake.src), format="parquet", ctx="src")
        job.write(df, str(lake.target), format="delta", ctx="out")
    assert [Path(q.entry.path).name for q in job.set_aside["src"]] == ["b.parquet"]
    assert lake.ids() == [0, 1, 2]
    store.close()


def test_the_command_prints_lakemark_lines_not_java_stack_traces(tmp_path: Path) -> None:
    src = tmp_path / "in"
    write("parquet", src / "a.parquet", 0, 3)
    truncate(write("parquet", src / "b.parquet", 10, 100))
    bad = write("parquet", src / "c.parquet", 1000, 500)
    start = pq.ParquetFile(bad).metadata.row_group(0).column(0).data_page_offset
    data = bytearray(bad.read_bytes())
    data[start:start + 12] = b"\xff" * 12
    bad.write_bytes(bytes(data))
    cmd = [sys.executable, "-m", "lakemark", "ingest", "files", str(src), str(tmp_path / "t"),
           "--job", "p", "--state", f"sqlite:///{tmp_path / 's.db'}", "--format", "parquet",
           "--target-format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 3, out.stderr
    assert "\tat " not in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "Exception" not in out.stderr, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "2 source file(s) could not be read and were set aside" in last, out.stderr


def test_a_glue_script_with_bookmarks_sets_damaged_files_aside(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """from_options with a transformation_ctx reads through the job: a truncated file is set
    aside, the good one is read, and the next run takes neither again."""
    from lakemark.glue import GlueContext
    from lakemark.glue.job import Job as GlueJob
    from lakemark.state import open_store

    state = tmp_path / "state.db"
    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{state}")
    src = tmp_path / "in"
    write("parquet", src / "good.parquet", 0, 3)
    truncate(write("parquet", src / "cut.parquet", 10, 100))
    glue = GlueContext(spark.sparkContext)

    def run() -> list[int]:
        job = GlueJob(glue)
        job.init("g", {"job_bookmark_option": "job-bookmark-enable"})
        frame = glue.create_dynamic_frame.from_options(
            connection_type="s3", connection_options={"paths": [str(src)]}, format="parquet",
            transformation_ctx="src")
        ids = sorted(r["id"] for r in frame.toDF().collect())
        job.commit()
        return ids

    assert run() == [0, 1, 2]
    assert run() == []
    store = open_store(f"sqlite:///{state}")
    assert [Path(q.path).name for q in store.quarantined("g")] == ["cut.parquet"]
    store.close()


def test_an_untracked_read_leaves_the_damaged_file_out(lake: Lake, spark: Any) -> None:
    """Without a ctx every run reads everything: the set-aside file is left out each time."""
    from lakemark import Job
    from lakemark.state import open_store

    write("parquet", lake.src / "good.parquet", 0, 3)
    truncate(write("parquet", lake.src / "cut.parquet", 10, 100))
    store = open_store(lake.state)
    for _ in range(2):
        with Job("u", state=store, spark=spark) as job:
            frame = job.read_files(str(lake.src), format="parquet")
            assert sorted(r["id"] for r in frame.collect()) == [0, 1, 2]
    assert [Path(q.path).name for q in store.quarantined("u")] == ["cut.parquet"]
    store.close()


def test_clean_up_leaves_set_aside_files_in_place(lake: Lake, tmp_path: Path) -> None:
    write("json", lake.src / "a.json", 0, 2)
    (lake.src / "loop.json").symlink_to(lake.src / "loop.json")
    lake.ingest("--clean-source", "delete", code=3)
    assert not (lake.src / "a.json").exists()
    assert (lake.src / "loop.json").is_symlink()


def test_a_glue_script_that_fails_on_a_damaged_file_goes_on_without_it_next_time(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Damage only a full read sees (a gzip'd CSV cut short) fails the Glue script's attempt;
    the file is set aside then (as ``lakemark run`` ends the script's open jobs), so the next
    attempt commits the good files instead of failing the same way forever."""
    import gzip

    from lakemark.glue import GlueContext, finish_open_jobs
    from lakemark.glue.job import Job as GlueJob
    from lakemark.state import open_store

    state = tmp_path / "state.db"
    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{state}")
    src = tmp_path / "landing" / "dt=2026-11-27"
    src.mkdir(parents=True)
    (src / "part 1 #ü.csv").write_text("order_id,amount\n1,10.5\n2,3.25\n")
    packed = gzip.compress(("order_id,amount\n" + "".join(
        f"{i},{i}.0\n" for i in range(100, 400))).encode())
    (src / "part-2.csv.gz").write_bytes(packed[: len(packed) * 2 // 3])
    glue = GlueContext(spark.sparkContext)

    def attempt() -> list[int]:
        job = GlueJob(glue)
        job.init("orders", {"job_bookmark_option": "job-bookmark-enable"})
        try:
            frame = glue.create_dynamic_frame.from_options(
                connection_type="s3", connection_options={"paths": [str(src.parent)],
                                                          "recurse": True},
                format="csv", format_options={"withHeader": True}, transformation_ctx="src")
            ids = sorted(int(r["order_id"]) for r in frame.toDF().collect())
        except Exception as exc:
            finish_open_jobs(exc)
            raise
        job.commit()
        return ids

    with pytest.raises(Exception, match="part-2.csv.gz"):
        attempt()
    store = open_store(f"sqlite:///{state}")
    assert [Path(q.path).name for q in store.quarantined("orders")] == ["part-2.csv.gz"]
    store.close()
    assert attempt() == [1, 2]
    assert attempt() == []


def test_lakemark_run_exits_3_when_a_script_run_set_files_aside(tmp_path: Path) -> None:
    """`lakemark run` ends a script whose run committed but set a file aside as `ingest files`
    does: a warning line naming the job and exit status 3; the next run (nothing new) exits 0."""
    src = tmp_path / "in"
    write("parquet", src / "a.parquet", 0, 3)
    truncate(write("parquet", src / "b.parquet", 10, 100))
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\nfrom lakemark import Job\n"
        "with Job('scripted', state=sys.argv[3]) as job:\n"
        "    df = job.read_files(sys.argv[1], format='parquet', ctx='in')\n"
        "    job.write(df, sys.argv[2], format='json', ctx='out')\n")
    state = f"sqlite:///{tmp_path / 's.db'}"
    cmd = [sys.executable, "-m", "lakemark", "run", "--state", state, str(script), str(src),
           str(tmp_path / "t"), state]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 3, first.stderr
    last = first.stderr.strip().splitlines()[-1]
    assert last.startswith("warning: job scripted committed, but 1 source file(s)"), first.stderr
    rows = [json.loads(line) for f in (tmp_path / "t").glob("*.json")
            for line in f.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == [0, 1, 2]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
