"""Without a JVM: the on_modified option of the Job API is checked before anything is
planned, and the Arrow read path reads a text file only in its planned byte range."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from lakemark import Job
from lakemark.errors import ConfigError
from lakemark.sources._tasks import TaskSpec, read_task
from lakemark.state import open_store
from lakemark.storage import arrow_fs_config, stat_files


def test_a_bad_policy_is_refused_by_name_before_anything_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    state = f"sqlite:///{tmp_path / 'state.db'}"
    with Job("j", state=state) as job:
        with pytest.raises(ConfigError, match="option on_modified must be one of retake, skip, "
                                              "append, got 'often'"):
            job.read_files(str(tmp_path / "in"), format="json", ctx="src", on_modified="often")
        with pytest.raises(ConfigError, match="on_modified append .* a parquet file"):
            job.plan_files(str(tmp_path / "in"), ctx="src", format="parquet",
                           on_modified="append")
        run_id = job.run_id
    store = open_store(state)
    assert store.run_inputs(run_id) == []  # nothing planned, nothing recorded
    store.close()


def _records(path: Path, start: int, end: int, header: bool = False) -> list[str]:
    spec = TaskSpec(arrow_fs_config(str(path)), "csv" if header else "json",
                    options=(("header", "true"),) if header else ())
    batch = pa.record_batch({"path": [str(path)], "uri": [str(path)], "folder": [0],
                             "start": pa.array([start], pa.int64()),
                             "end": pa.array([end], pa.int64())})
    out: list[str] = []
    for got in read_task(spec, iter([batch])):
        out.extend(got.column(0).to_pylist())
    return out


def test_the_arrow_path_reads_only_the_planned_bytes(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    log.write_text('{"id": 1}\n{"id": 2}\n')
    planned = log.stat().st_size
    with log.open("a") as handle:  # appended after the plan
        handle.write('{"id": 3}\n')
    assert _records(log, 0, planned) == ['{"id": 1}', '{"id": 2}']
    # The appended tail alone (policy append): from the size taken before.
    assert _records(log, planned, log.stat().st_size) == ['{"id": 3}']


def test_a_csv_tail_has_no_header_line_to_drop(tmp_path: Path) -> None:
    data = tmp_path / "t.csv"
    data.write_text("id,name\n1,a\n")
    taken = data.stat().st_size
    with data.open("a") as handle:
        handle.write("2,b\n")
    assert _records(data, 0, taken, header=True) == ["1,a"]
    assert _records(data, taken, data.stat().st_size, header=True) == ["2,b"]


def test_stat_files_reports_a_listing_s_units_and_gone_files(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text("{}\n")
    st = f.stat()
    assert stat_files([str(f), str(tmp_path / "gone")]) == {
        str(f): (st.st_mtime_ns // 1_000_000, st.st_size), str(tmp_path / "gone"): None}


def test_stat_files_reports_links_that_lead_nowhere_as_gone(tmp_path: Path) -> None:
    """A loop of links or a path under a file has nothing to read behind it: the check after
    the read must not fail on it (the listing lists it and quarantine sets it aside)."""
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    (tmp_path / "file").write_text("x")
    under = tmp_path / "file" / "x.json"
    assert stat_files([str(loop), str(under)]) == {str(loop): None, str(under): None}
