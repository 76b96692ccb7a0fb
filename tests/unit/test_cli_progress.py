"""Progress lines of `ingest files` when stdout is not a terminal (cli/_progress.py): the
printer driven by a fake clock, its interval's sources, its thread, and the command run as a
scheduler runs it (its own process, stdout a pipe)."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from test_cli_process import lakemark

from lakemark.cli._progress import DEFAULT_INTERVAL_S, ProgressLines, interval_from
from lakemark.job import JobEvent


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _printer(interval: float, tasks: Any = lambda: None) -> tuple[ProgressLines, FakeClock,
                                                                   list[str]]:
    clock, lines = FakeClock(), []
    return ProgressLines(lines.append, interval, clock=clock, tasks=tasks), clock, lines


def test_a_line_comes_at_each_interval_with_what_is_known() -> None:
    progress, clock, lines = _printer(30, tasks=lambda: (3, 8))
    assert not progress.tick()  # nothing is due at the start
    progress.on_event(JobEvent("started", None, {"run_id": "jr_1"}))
    clock.now += 29.9
    assert not progress.tick() and lines == []
    clock.now += 0.1
    assert progress.tick()
    assert lines == ["progress: 30s, listing"]
    progress.on_event(JobEvent("planned", "a", {"files": 1500, "bytes": 3 * 1024 ** 2}))
    progress.on_event(JobEvent("planned", "b", {"files": 500, "bytes": 1024 ** 2}))
    clock.now += 15
    assert not progress.tick()  # the next line is due 30 s after the last one
    clock.now += 15
    assert progress.tick()
    assert lines[-1] == ("progress: 60s, reading and writing, 2000 file(s) planned, 4.0 MiB, "
                         "Spark tasks 3/8 done")
    progress.on_event(JobEvent("written", "sink", {"rows": 41}))
    progress.on_event(JobEvent("written", "sink2", {"rows": 1}))
    clock.now += 31
    assert progress.tick()
    assert lines[-1] == ("progress: 91s, committing, 2000 file(s) planned, 4.0 MiB, "
                         "42 row(s) written")  # tasks are shown only while reading and writing


def test_interval_zero_prints_nothing() -> None:
    progress, clock, lines = _printer(0)
    clock.now += 10_000
    assert not progress.tick() and lines == []
    with progress.running():
        pass
    assert lines == []


def test_the_interval_comes_from_the_option_then_the_environment() -> None:
    assert interval_from(None, {}) == DEFAULT_INTERVAL_S == 30
    assert interval_from(None, {"LAKEMARK_PROGRESS_INTERVAL": "2.5"}) == 2.5
    assert interval_from(0.5, {"LAKEMARK_PROGRESS_INTERVAL": "2.5"}) == 0.5
    with pytest.raises(ValueError, match="LAKEMARK_PROGRESS_INTERVAL='soon'"):
        interval_from(None, {"LAKEMARK_PROGRESS_INTERVAL": "soon"})
    with pytest.raises(ValueError, match="--progress-interval must be"):
        interval_from(-1, {})
    with pytest.raises(ValueError, match="LAKEMARK_PROGRESS_INTERVAL must be"):
        interval_from(None, {"LAKEMARK_PROGRESS_INTERVAL": "nan"})


def test_the_thread_writes_lines_while_the_block_runs() -> None:
    two = threading.Event()
    lines: list[str] = []

    def write(line: str) -> None:
        lines.append(line)
        if len(lines) == 2:
            two.set()

    progress = ProgressLines(write, 0.01)
    with progress.running():
        assert two.wait(60), "no two progress lines within a minute"
    assert all(line.startswith("progress: ") for line in lines)
    # stopped with the block: its thread has ended
    assert not any(t.name == "lakemark-progress" for t in threading.enumerate())


@pytest.fixture
def landing(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "landing").mkdir()
    return {"source": str(tmp_path / "landing"), "target": str(tmp_path / "lake"),
            "state": f"sqlite:///{tmp_path / 'state.db'}", "tmp": str(tmp_path)}


def test_a_piped_run_prints_its_summary_and_only_well_formed_progress_lines(
        landing: dict[str, str]) -> None:
    Path(landing["source"], "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    out = lakemark("ingest", "files", landing["source"], landing["target"], "--job", "j",
                   "--state", landing["state"], env={"LAKEMARK_PROGRESS_INTERVAL": "0.2"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    progress = [line for line in lines if line.startswith("progress:")]
    assert all(re.fullmatch(r"progress: \d+s, [a-z ]+(, .+)?", line) for line in progress)
    assert "files taken" in out.stdout and "rows written" in out.stdout  # the summary
    # progress lines all come before the summary
    assert not any(line.startswith("progress:") for line in
                   lines[lines.index(next(x for x in lines if "files taken" in x)):])


def test_with_json_stdout_stays_one_document(landing: dict[str, str]) -> None:
    out = lakemark("ingest", "files", landing["source"], landing["target"], "--job", "j",
                   "--state", landing["state"], "--json", "--progress-interval", "0.01")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "SUCCEEDED"


def test_a_bad_interval_is_refused_by_name_before_any_state(landing: dict[str, str]) -> None:
    bad = lakemark("ingest", "files", landing["source"], landing["target"], "--job", "j",
                   "--state", landing["state"], "--progress-interval", "-1")
    assert bad.returncode == 2 and "--progress-interval must be" in bad.stderr
    env = lakemark("ingest", "files", landing["source"], landing["target"], "--job", "j",
                   "--state", landing["state"], env={"LAKEMARK_PROGRESS_INTERVAL": "x"})
    assert env.returncode == 2 and "LAKEMARK_PROGRESS_INTERVAL='x'" in env.stderr
    assert not Path(landing["tmp"], "state.db").exists()
