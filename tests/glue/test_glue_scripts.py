"""Unmodified Glue-style scripts run by ``lakemark run`` in a fresh process, bookmarks included.

Each script lives in ``scripts/`` and is run exactly as a data engineer would run it:
``lakemark run --state … --catalog … SCRIPT --JOB_NAME … --job-bookmark-option …``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark

SCRIPTS = Path(__file__).parent / "scripts"


class GlueEnv:
    """A state store, a catalog folder and data folders under one temporary directory."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.catalog = tmp / "connection" / "catalog"
        (self.catalog / "tables").mkdir(parents=True)
        self.databases: list[str] = []

    def add_table(self, database: str, entry: dict[str, Any]) -> None:
        if database not in self.databases:
            self.databases.append(database)
        (self.catalog / "databases.json").write_text(
            json.dumps({"DatabaseList": [{"Name": d} for d in self.databases]})
        )
        path = self.catalog / "tables" / f"{database}.json"
        tables = json.loads(path.read_text())["TableList"] if path.exists() else []
        path.write_text(json.dumps({"TableList": [*tables, {**entry, "DatabaseName": database}]}))

    def run(self, script: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
        cmd = [sys.executable, "-m", "lakemark", "run", "--state", self.state,
               "--catalog", str(self.catalog.parent), str(script), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                             cwd=self.tmp)
        if ok:
            assert out.returncode == 0, out.stdout + out.stderr
        return out

    def cli(self, *args: str) -> Any:
        cmd = [sys.executable, "-m", "lakemark", *args, "--state", self.state, "--json"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


def csv_table(name: str, location: Path, columns: list[str]) -> dict[str, Any]:
    """A header-less CSV table as a Glue crawler records it (columns col0, col1, …)."""
    return {
        "Name": name,
        "StorageDescriptor": {
            "Columns": [{"Name": c, "Type": "string"} for c in columns],
            "Location": str(location) + "/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {
                "SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                "Parameters": {"field.delim": ","},
            },
        },
        "PartitionKeys": [],
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv", "delimiter": ","},
    }


def json_rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted(folder.glob("*.json"))
            for line in f.read_text().splitlines() if line.strip()]


@pytest.fixture
def glue(tmp_path: Path) -> GlueEnv:
    return GlueEnv(tmp_path)


def test_seed_sample_script_processes_only_new_files(glue: GlueEnv) -> None:
    """The generated sample script of the bookmark docs, unmodified but for its output path."""
    data = glue.tmp / "relatedqueries"
    data.mkdir()
    (data / "q1.csv").write_text("spark,10\nglue,20\n")
    (data / "q2.csv").write_text("delta,30\n")
    glue.add_table("database", csv_table("relatedqueries_csv", data, ["col0", "col1"]))
    out = glue.tmp / "out"
    script = glue.tmp / "sample.py"
    script.write_text((SCRIPTS / "seed_sample.py").read_text().replace("s3://input_path", str(out)))
    args = ("--JOB_NAME", "name-1-s3-2-s3-encrypted",
            "--job-bookmark-option", "job-bookmark-enable")

    glue.run(script, *args)
    assert sorted(r["name"] for r in json_rows(out)) == ["delta", "glue", "spark"]
    (data / "q3.csv").write_text("hudi,40\n")
    glue.run(script, *args)

    rows = json_rows(out)
    assert sorted((r["name"], r["number"]) for r in rows) == [
        ("delta", "30"), ("glue", "20"), ("hudi", "40"), ("spark", "10")
    ]
    runs = glue.cli("runs", "list", "name-1-s3-2-s3-encrypted")
    assert [(r["run"], r["status"]) for r in runs] == [(1, "SUCCEEDED"), (2, "SUCCEEDED")]
    taken = [
        sorted(Path(f["path"]).name
               for f in glue.cli("runs", "show", r["run_id"])["sources"]["datasource0"]["files"])
        for r in runs
    ]
    assert taken == [["q1.csv", "q2.csv"], ["q3.csv"]]
    bookmark = glue.cli("bookmark", "show", "name-1-s3-2-s3-encrypted")
    assert (bookmark["version"], bookmark["run"], bookmark["attempt"]) == (2, 2, 0)
    assert set(bookmark["state"]) == {"datasource0"}


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_seed_sample_with_bookmarks_disabled_reads_everything_and_keeps_no_state(
    glue: GlueEnv,
) -> None:
    data = glue.tmp / "relatedqueries"
    data.mkdir()
    (data / "q1.csv").write_text("spark,10\n")
    glue.add_table("database", csv_table("relatedqueries_csv", data, ["col0", "col1"]))
    out = glue.tmp / "out"
    script = glue.tmp / "sample.py"
    script.write_text((SCRIPTS / "seed_sample.py").read_text().replace("s3://input_path", str(out)))
    glue.run(script, "--JOB_NAME", "j")  # Glue's default: job-bookmark-disable
    glue.run(script, "--JOB_NAME", "j")
    assert [r["name"] for r in json_rows(out)] == ["spark", "spark"]
    assert glue.cli("bookmark", "show", "j")["state"] == {}


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_glue_studio_script_with_sql_and_catalog_updating_sink(glue: GlueEnv) -> None:
    src = glue.tmp / "orders"
    src.mkdir()
    (src / "a.csv").write_text("order_id,amount,country\n1,10.5,DE\n2,4.5,DE\n3,7,FR\n")
    (glue.catalog / "databases.json").write_text(json.dumps({"DatabaseList": [
        {"Name": "analytics"}]}))
    target = glue.tmp / "totals"
    glue.run(SCRIPTS / "studio_style.py", "--JOB_NAME", "studio", "--source_path", str(src),
             "--target_path", str(target), "--job-bookmark-option", "job-bookmark-enable")

    table = ds.dataset(str(target), format="parquet", partitioning="hive").to_table()
    got = sorted(zip(table.column("country").to_pylist(), table.column("total").to_pylist(),
                     table.column("orders").to_pylist()))
    assert got == [("DE", 15.0, 2), ("FR", 7.0, 1)]
    tables = json.loads((glue.catalog / "tables" / "analytics.json").read_text())["TableList"]
    [entry] = tables
    assert entry["Name"] == "order_totals"
    assert entry["StorageDescriptor"]["Location"].rstrip("/") == str(target)
    assert [c["Name"] for c in entry["StorageDescriptor"]["Columns"]] == ["total", "orders"]
    assert [k["Name"] for k in entry["PartitionKeys"]] == ["country"]
    assert entry["Parameters"]["classification"] == "parquet"


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_hand_written_dynamicframe_script(glue: GlueEnv) -> None:
    events = glue.tmp / "events"
    events.mkdir()
    (events / "e.json").write_text("\n".join(json.dumps(r) for r in [
        {"id": 1, "user": {"id": "u1"}, "payload": {"kind": "click", "value": 3}},
        {"id": 2, "user": {"id": "u2"}, "payload": {"kind": "view", "value": 5}},
        {"id": 3, "user": {"id": "u2"}, "payload": {"kind": "click", "value": 7}},
    ]) + "\n")
    users = glue.tmp / "users"
    users.mkdir()
    (users / "u.csv").write_text("uid,full name\nu1,Ada\nu2,Grace\n")
    out = glue.tmp / "out"
    result = glue.run(SCRIPTS / "dynamicframe_style.py", "--JOB_NAME", "df", "--events",
                      str(events), "--users", str(users), "--out", str(out),
                      "--job-bookmark-option", "job-bookmark-enable")
    assert "ROWS 2" in result.stdout
    table = pq.read_table(str(out))
    rows = sorted(table.to_pylist(), key=lambda r: r["event_id"])
    assert rows == [
        {"event_id": 1, "user_id": "u1", "name": "Ada", "value": 3.0},
        {"event_id": 3, "user_id": "u2", "name": "Grace", "value": 7.0},
    ]
    bookmark = glue.cli("bookmark", "show", "df")
    assert set(bookmark["state"]) == {"events", "users"}


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_dataframe_script_driven_by_job_arguments(glue: GlueEnv) -> None:
    data = glue.tmp / "q"
    data.mkdir()
    (data / "1.csv").write_text("a,1\nb,5\nc,9\n")
    glue.add_table("trends", csv_table("queries", data, ["col0", "col1"]))
    target = glue.tmp / "csv_out"
    args = ("--JOB_NAME", "dfjob", "--database", "trends", "--table", "queries",
            "--target", str(target), "--min_value", "5",
            "--job-bookmark-option", "job-bookmark-enable")
    glue.run(SCRIPTS / "dataframe_style.py", *args)
    (data / "2.csv").write_text("d,7\ne,2\n")
    glue.run(SCRIPTS / "dataframe_style.py", *args)
    lines = sorted(line for f in target.glob("*.csv") for line in f.read_text().splitlines())
    assert [ln for ln in lines if not ln.startswith("name")] == [
        "b,5,dfjob", "c,9,dfjob", "d,7,dfjob"
    ]
    assert [r["status"] for r in glue.cli("runs", "list", "dfjob")] == ["SUCCEEDED"] * 2


def test_unsupported_api_fails_naming_it_and_leaves_the_bookmark(glue: GlueEnv) -> None:
    result = glue.run(SCRIPTS / "unsupported.py", "--JOB_NAME", "bad",
                      "--job-bookmark-option", "job-bookmark-enable", ok=False)
    assert result.returncode != 0
    assert "dynamodb" in result.stderr
    [run] = glue.cli("runs", "list", "bad")
    assert run["status"] == "FAILED"
    assert glue.cli("bookmark", "show", "bad")["state"] == {}


def test_missing_required_argument_is_named(glue: GlueEnv) -> None:
    result = glue.run(SCRIPTS / "dataframe_style.py", "--JOB_NAME", "x", "--database", "d",
                      ok=False)
    assert result.returncode != 0
    assert "--table" in result.stderr and "--target" in result.stderr
    # Nothing was recorded: not a run, not even the state store.
    assert not Path(glue.state.removeprefix("sqlite:///")).exists()


# ------------------------------------------------------------------ Glue fidelity (issue 18)

@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_resolve_choice_tutorial_keeps_every_value_of_a_choice_column(glue: GlueEnv) -> None:
    """A CSV column of longs with two text ids is choice(long, string), whatever the catalog
    says; each resolveChoice strategy gives Glue's documented result and nothing is lost."""
    data = glue.tmp / "claims"
    data.mkdir()
    lines = ["DRG Definition,Provider Id,Provider Name,Total Discharges"]
    lines += [f"039 - X,{10001 + i},Hospital {i},{20 + i * 10}" for i in range(4)]
    lines += ["948 - Y,ABC0,Clinic A,12", "948 - Y,ABC1,Clinic B,40"]
    (data / "part-0.csv").write_text("\n".join(lines) + "\n")
    cols = [("drg definition", "string"), ("provider id", "bigint"),
            ("provider name", "string"), ("total discharges", "bigint")]
    glue.add_table("payments", {
        "Name": "claims",
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t} for n, t in cols],
            "Location": str(data) + "/",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}},
        },
        "PartitionKeys": [],
        "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
    })
    out = glue.tmp / "out"
    result = glue.run(SCRIPTS / "payments_resolve_choice.py", "--JOB_NAME", "claims",
                      "--out", str(out))
    assert "|-- provider id: choice\n|    |-- long\n|    |-- string" in result.stdout

    def ids(name: str, key: str = "provider id") -> list[Any]:
        return sorted((r.get(key) for r in json_rows(out / name)), key=repr)

    longs = [10001, 10002, 10003, 10004]
    assert ids("cast") == sorted(longs + [None, None], key=repr)
    assert ids("project") == sorted(longs + [None, None], key=repr)
    assert ids("match_catalog") == sorted(longs + [None, None], key=repr)
    cols_rows = json_rows(out / "make_cols")
    assert sorted(r["provider id_string"] for r in cols_rows if "provider id_string" in r) == \
        ["ABC0", "ABC1"]
    assert sorted(r["provider id_long"] for r in cols_rows if "provider id_long" in r) == longs
    structs = [r["provider id"] for r in json_rows(out / "make_struct")]
    assert sorted(s.get("string", "") for s in structs) == ["", "", "", "", "ABC0", "ABC1"]
    assert sorted(s["long"] for s in structs if "long" in s) == longs
    busy = json_rows(out / "busy")
    assert sorted(((r.get("provider id"), r["total discharges"]) for r in busy), key=repr) == [
        (10003, 40), (10004, 50), (None, 40)]


@pytest.mark.long  # a long scenario (runs in ./dev test; -m "not long" skips it)
def test_legislators_join_keeps_shared_fields_once(glue: GlueEnv) -> None:
    """Join.apply of frames sharing non-key fields (``image``, ``links``) as in AWS's
    legislators tutorial: each field once, the second frame's value where it has one."""
    def table(name: str, rows: list[dict[str, Any]]) -> None:
        folder = glue.tmp / name
        folder.mkdir()
        (folder / "part-0.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        glue.add_table("congress", {
            "Name": name,
            "StorageDescriptor": {"Columns": [], "Location": str(folder) + "/",
                                  "SerdeInfo": {"SerializationLibrary":
                                                "org.openx.data.jsonserde.JsonSerDe"}},
            "PartitionKeys": [], "Parameters": {"classification": "json"},
        })

    link = [{"note": "website", "url": "http://x"}]
    table("people", [
        {"id": "p1", "name": "Ann", "image": "ann.jpg", "links": link, "gender": "f"},
        {"id": "p2", "name": "Bob", "image": None, "links": None, "gender": "m"},
        {"id": "p3", "name": "Cy", "image": "cy.jpg", "links": link, "gender": "m"},
    ])
    table("roles", [
        {"person_id": "p1", "organization_id": "senate", "role": "member"},
        {"person_id": "p2", "organization_id": "house", "role": "member"},
        {"person_id": "p2", "organization_id": "senate", "role": "chair"},
        {"person_id": "p9", "organization_id": "house", "role": "member"},
    ])
    table("groups", [
        {"id": "senate", "name": "Senate", "image": "senate.png", "links": link,
         "other_names": [{"name": "upper"}], "seats": 100},
        {"id": "house", "name": "House", "image": "house.png", "links": link,
         "other_names": [{"name": "lower"}], "seats": 435},
    ])
    out = glue.tmp / "out"
    result = glue.run(SCRIPTS / "legislators_join.py", "--JOB_NAME", "leg", "--out", str(out))
    assert "history 3" in result.stdout
    rows = pq.read_table(str(out / "history")).to_pylist()
    names = list(rows[0])
    assert len(names) == len(set(names))
    assert {"image", "links", "org_name", "name", "seats", "role", "id"} <= set(names)
    assert not {"person_id", "org_id", ".image", ".links"} & set(names)
    got = sorted((r["name"], r["org_name"], r["image"]) for r in rows)
    assert got == [("Ann", "Senate", "ann.jpg"), ("Bob", "House", "house.png"),
                   ("Bob", "Senate", "senate.png")]
    by_org = ds.dataset(str(out / "by_org"), format="parquet", partitioning="hive").to_table()
    assert sorted(by_org.column("org_name").to_pylist()) == ["House", "Senate", "Senate"]
