"""Every file name a disk (and S3) allows is ingested: colons, percent signs, glob and URI
characters, spaces, a newline, unicode, and a path of about 1,000 bytes.

Hadoop's checksummed local file system could not even build the checksum name of `a:b.json`
(``URISyntaxException: Relative path in absolute URI``) and every run failed until someone
removed the file. (Names starting with `.` or `_` stay hidden, as in Spark and Glue.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark

NAMES = [
    "colon:a.json", "two::colons.json", "pct%41.json", "pct%20space.json", "hash#c.json",
    "question?d.json", "bracket[1].json", "star*e.json", "brace{x,y}.json", "with space.json",
    "new\nline.json", "tab\tname.json", "ünïcødé-名前.json", "back\\slash.json", "quote'\".json",
    "semi;colon=eq.json", "plus+and&.json", "tilde~at@.json", "trailing.dot..json",
]


def test_every_name_is_ingested_once(spark: Any, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    expected = {}
    for index, name in enumerate(NAMES):
        (landing / name).write_text(json.dumps({"id": index, "name": name}) + "\n")
        expected[index] = name
    deep = landing
    for level in range(4):  # a key of ~1,000 bytes, in components a disk allows
        deep = deep / (f"level{level}-" + "x" * 230)
    deep.mkdir(parents=True)
    (deep / "deep.json").write_text(json.dumps({"id": 100, "name": "deep.json"}) + "\n")
    expected[100] = "deep.json"
    assert len(str(deep / "deep.json").encode()) > 950

    state = f"sqlite:///{tmp_path / 'state.db'}"
    args = ["ingest", "files", str(landing), str(tmp_path / "lake"), "--job", "names",
            "--state", state, "--json"]
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["files"] == len(expected)
    rows = DeltaTable(str(tmp_path / "lake")).to_pyarrow_table().to_pylist()
    assert {r["id"]: r["name"] for r in rows} == expected

    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["files"] == 0
    shown = CliRunner().invoke(cli, ["runs", "show", json.loads(first.stdout)["run_id"],
                                     "--state", state, "--json"], catch_exceptions=False)
    listed = {Path(f["path"]).name for f in json.loads(shown.stdout)["sources"]["source"]["files"]}
    assert listed == set(NAMES) | {"deep.json"}
