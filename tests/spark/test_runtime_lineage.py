"""Runtime lineage: with LAKEMARK_OPENLINEAGE=file:PATH, runs of `lakemark ingest files` and
`lakemark run` append OpenLineage START then COMPLETE (or FAIL) events with the datasets the
run planned and wrote; without it nothing is written. Each case is a fresh process, started
together."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from lakemark.lineage.runtime import run_uuid


def write_json(path: Path, ids: range) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in ids))


def start(cmd: list[str], events: Path | None, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "LAKEMARK_OPENLINEAGE"}
    if events is not None:
        env["LAKEMARK_OPENLINEAGE"] = f"file:{events}"
    return subprocess.Popen([sys.executable, "-m", "lakemark", *cmd], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_runs_emit_start_and_complete_or_fail_and_nothing_when_off(tmp_path: Path) -> None:
    src = tmp_path / "landing"
    write_json(src / "a.json", range(0, 3))
    write_json(src / "b.json", range(3, 5))
    bad = tmp_path / "bad"
    write_json(bad / "a.json", range(0, 2))
    (bad / "z.json").write_text("{not json\n")
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\nfrom lakemark import Job\n"
        "with Job('scripted', state=sys.argv[3]) as job:\n"
        "    df = job.read_files(sys.argv[1], format='json', ctx='in')\n"
        "    job.write(df.where('id > 1').select('id'), sys.argv[2], format='parquet',"
        " ctx='out')\n")
    state = f"sqlite:///{tmp_path / 's.db'}"
    ok_events, bad_events, run_events = (tmp_path / "ok.jsonl", tmp_path / "bad.jsonl",
                                         tmp_path / "run.jsonl")
    off_dir = tmp_path / "off"
    off_dir.mkdir()
    procs = {
        "ok": start(["ingest", "files", str(src), str(tmp_path / "t"), "--job", "ok",
                     "--state", state, "--target-format", "delta", "--json"], ok_events,
                    tmp_path),
        "bad": start(["ingest", "files", str(bad), str(tmp_path / "tb"), "--job", "bad",
                      "--state", state, "--mode", "FAILFAST", "--json"], bad_events, tmp_path),
        "run": start(["run", "--state", state, str(script), str(src), str(tmp_path / "tr"),
                      state], run_events, tmp_path),
        "off": start(["ingest", "files", str(src), str(tmp_path / "to"), "--job", "off",
                      "--state", f"sqlite:///{off_dir / 's.db'}", "--json"], None, off_dir),
    }
    out = {name: (p.communicate(timeout=300), p.returncode) for name, p in procs.items()}
    for name in ("ok", "run", "off"):
        assert out[name][1] == 0, out[name][0][1]
    assert out["bad"][1] != 0

    start_ev, complete = lines(ok_events)
    run_id = json.loads(out["ok"][0][0])["run_id"]
    assert [start_ev["eventType"], complete["eventType"]] == ["START", "COMPLETE"]
    for ev in (start_ev, complete):
        assert ev["job"] == {"namespace": "lakemark", "name": "ok", "facets": ev["job"]["facets"]}
        assert ev["run"]["runId"] == run_uuid(run_id) and uuid.UUID(ev["run"]["runId"])
        assert ev["run"]["facets"]["lakemark_run"]["runId"] == run_id
    assert [(i["namespace"], i["name"]) for i in complete["inputs"]] == \
        [("file", str(src.resolve()))]
    [output] = complete["outputs"]
    assert (output["namespace"], output["name"]) == ("file", str((tmp_path / "t").resolve()))
    schema = {f["name"]: f["type"] for f in output["facets"]["schema"]["fields"]}
    # A tracked read (the default) adds the rescued-data column, traced to its source too.
    assert schema == {"id": "bigint", "name": "string", "_rescued_data": "string"}
    lineage = output["facets"]["columnLineage"]["fields"]
    assert set(lineage) == {"id", "name", "_rescued_data"}
    [edge] = lineage["name"]["inputFields"]
    assert (edge["namespace"], edge["name"], edge["field"]) == ("file", str(src.resolve()),
                                                                "name")
    assert edge["transformations"][0]["subtype"] == "IDENTITY"

    start_ev, fail = lines(bad_events)
    assert [start_ev["eventType"], fail["eventType"]] == ["START", "FAIL"]
    assert fail["job"]["name"] == "bad"
    assert [(i["namespace"], i["name"]) for i in fail["inputs"]] == [("file", str(bad.resolve()))]
    assert fail["outputs"] == []
    assert fail["run"]["facets"]["errorMessage"]["message"]

    start_ev, complete = lines(run_events)
    assert [start_ev["eventType"], complete["eventType"]] == ["START", "COMPLETE"]
    assert complete["job"]["name"] == "scripted"
    [output] = complete["outputs"]
    assert output["name"] == str((tmp_path / "tr").resolve())
    assert [(f["name"], f["type"]) for f in output["facets"]["schema"]["fields"]] == \
        [("id", "bigint")]
    # The frame written was filtered and projected: traced from the plan that ran.
    lineage = output["facets"]["columnLineage"]
    [edge] = lineage["fields"]["id"]["inputFields"]
    assert (edge["name"], edge["field"], edge["transformations"][0]["subtype"]) == \
        (str(src.resolve()), "id", "IDENTITY")
    [where] = lineage["dataset"]
    assert (where["field"], where["transformations"][0]["type"],
            where["transformations"][0]["subtype"]) == ("id", "INDIRECT", "FILTER")

    # off by default: the run without the variable wrote no events anywhere
    assert sorted(p.name for p in off_dir.iterdir()) == ["s.db"]
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["bad.jsonl", "ok.jsonl",
                                                                "run.jsonl"]
