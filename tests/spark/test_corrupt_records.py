"""One bad line must not stick a job: corrupt records are kept aside, never a table column, and
a batch without an optional field writes nulls (issue: hardening, "one bad line").

Most tests read untracked (``--schema-evolution off``), where the sink sets such lines aside;
the last one shows the default, a tracked schema, keeping them in ``_rescued_data``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark


class Landing:
    def __init__(self, tmp: Path) -> None:
        self.source = tmp / "landing"
        self.source.mkdir()
        self.target = tmp / "lake"
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.n = 0

    def arrive(self, text: str) -> Path:
        self.n += 1
        path = self.source / f"part-{self.n:03d}.json"
        path.write_text(text)
        return path

    def ingest(self, *extra: str) -> Any:
        tracking = [] if "--schema-evolution" in extra else ["--schema-evolution", "off"]
        result = CliRunner().invoke(cli, ["ingest", "files", str(self.source), str(self.target),
                                          "--job", "j", "--state", self.state, "--json",
                                          *tracking, *extra],
                                    catch_exceptions=False)
        return result

    def table(self) -> DeltaTable:
        return DeltaTable(str(self.target))


def test_a_malformed_line_is_kept_aside_and_later_clean_runs_go_on(spark: Any,
                                                                   tmp_path: Path) -> None:
    land = Landing(tmp_path)
    bad_file = land.arrive('{"id": 1, "name": "a"}\n{"id":3, bad\n{"id": 2, "name": "b"}\n')
    first = land.ingest()
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert (out["rows"], out["corrupt_records"]) == (2, 1)
    names = [f.name for f in land.table().schema().fields]
    assert "_corrupt_record" not in names
    kept = [json.loads(line) for line in Path(out["rejected_file"]).read_text().splitlines()]
    assert [k["record"] for k in kept] == ['{"id":3, bad']
    assert kept[0]["file"].endswith(bad_file.name)
    assert Path(out["rejected_file"]).parent.name == "_lakemark_rejected"

    land.arrive('{"id": 4, "name": "d"}\n')
    second = land.ingest()
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["corrupt_records"] == 0

    land.arrive('{"id": 5}\n')  # the optional field is absent from this whole batch
    third = land.ingest()
    assert third.exit_code == 0, third.output
    rows = sorted(land.table().to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 4, "name": "d"},
                    {"id": 5, "name": None}]


def test_failfast_names_the_file_and_leaves_it_unprocessed(spark: Any, tmp_path: Path) -> None:
    land = Landing(tmp_path)
    land.arrive('{"id": 1}\n')
    bad_file = land.arrive('{"id": 2}\n{"id": oops\n')
    out = land.ingest("--mode", "FAILFAST")
    assert out.exit_code == 1
    assert bad_file.name in out.output
    assert not land.target.exists() or not (land.target / "_delta_log").exists()
    fixed = land.ingest()  # PERMISSIVE: the same files go in, the bad line kept aside
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.stdout)["corrupt_records"] == 1


def test_by_default_a_malformed_line_is_kept_in_the_rescued_data(spark: Any,
                                                                 tmp_path: Path) -> None:
    land = Landing(tmp_path)
    bad_file = land.arrive('{"id": 1, "name": "a"}\n{"id":3, bad\n')
    run = land.ingest("--schema-evolution", "addNewColumns")  # what ingest does by default
    assert run.exit_code == 0, run.output
    out = json.loads(run.stdout)
    assert (out["rows"], out["corrupt_records"], out["schema"]["corrupt_records"]) == (2, 0, 1)
    rows = sorted(land.table().to_pyarrow_table().to_pylist(), key=lambda r: r["id"] or 0)
    kept = json.loads(rows[0]["_rescued_data"])
    assert rows[0]["id"] is None and kept["_corrupt_record"] == '{"id":3, bad'
    assert kept["_file_path"].endswith(bad_file.name)
    assert rows[1]["id"] == 1 and rows[1]["_rescued_data"] is None
