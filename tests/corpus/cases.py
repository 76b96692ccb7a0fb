"""The corpus cases: for each script, the world it needs, its arguments and what it must give.

Expected results follow Glue's documented behaviour (the AWS Developer Guide pages and the
aws-glue-samples tutorials each script names). A case's ``check`` raises AssertionError saying
what differs; ``expect_failure`` cases must fail with one line naming the missing service.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from world import World, json_rows, parquet_rows

Runs = list[subprocess.CompletedProcess[str]]


@dataclass(frozen=True)
class Case:
    name: str
    script: str
    pattern: str
    setup: Callable[[World], list[list[str]]]  # the argument lists of each run, in order
    check: Callable[[World, Runs], None]
    fast: bool = False
    needs_s3: bool = False
    needs_postgres: bool = False
    expect_failure: bool = False


def _ok(runs: Runs) -> None:
    for r in runs:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


# --------------------------------------------------------------------------------- the cases

def _studio_csv(w: World) -> list[list[str]]:
    src = w.folder("sales", {"2024/a.csv": "sale_id,store,amount,sold_on\n1,north,10.50,"
                             "2024-01-02\n2,south,3.25,2024-01-03\n3,north,7,2024-01-03\n"})
    return [["--JOB_NAME", "studio-csv", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _studio_csv_check(w: World, runs: Runs) -> None:
    _ok(runs)
    rows = sorted(parquet_rows(w.tmp / "out"), key=lambda r: r["sale_id"])
    got = [(r["sale_id"], r["store"], r["amount"], str(r["sold_on"])) for r in rows]
    assert got == [(1, "north", Decimal("10.50"), "2024-01-02"),
                   (2, "south", Decimal("3.25"), "2024-01-03"),
                   (3, "north", Decimal("7.00"), "2024-01-03")], got


def _studio_join(w: World) -> list[list[str]]:
    readings = w.folder("readings", {"r.json": "\n".join(json.dumps(r) for r in [
        {"serialNumber": "s1", "sensorReadingTime": 1, "distance": 10},
        {"serialNumber": "s2", "sensorReadingTime": 2, "distance": 20},
        {"serialNumber": "s9", "sensorReadingTime": 3, "distance": 30}]) + "\n"})
    devices = w.folder("devices", {"d.json": "\n".join(json.dumps(r) for r in [
        {"serialNumber": "s1", "ownerEmail": "a@x", "ownerPhone": "1", "model": "A"},
        {"serialNumber": "s2", "ownerEmail": "b@x", "ownerPhone": "2", "model": "B"}]) + "\n"})
    return [["--JOB_NAME", "stedi", "--readings", str(readings), "--devices", str(devices),
             "--dst", str(w.tmp / "out")]]


def _studio_join_check(w: World, runs: Runs) -> None:
    _ok(runs)
    rows = sorted(json_rows(w.tmp / "out"), key=lambda r: r["serialNumber"])
    assert rows == [
        {"serialNumber": "s1", "sensorReadingTime": 1, "distance": 10, "model": "A"},
        {"serialNumber": "s2", "sensorReadingTime": 2, "distance": 20, "model": "B"},
    ], rows


def _studio_sql(w: World) -> list[list[str]]:
    data = w.folder("orders", {"o.json": "\n".join(json.dumps(r) for r in [
        {"customer": "ann", "total": 10.0, "status": "PAID"},
        {"customer": "ann", "total": 5.0, "status": "PAID"},
        {"customer": "bob", "total": 7.5, "status": "OPEN"},
        {"customer": "bob", "total": 2.5, "status": "PAID"}]) + "\n"})
    w.table("shop", "orders", data, "json",
            [("customer", "string"), ("total", "double"), ("status", "string")])
    return [["--JOB_NAME", "studio-sql", "--dst", str(w.tmp / "out")]]


def _studio_sql_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["customer"], r["orders"], r["spent"]) for r in json_rows(w.tmp / "out"))
    assert got == [("ann", 2, 15.0), ("bob", 1, 2.5)], got


def _custom(w: World) -> list[list[str]]:
    src = w.folder("names", {"n.json": '{"id": 1, "name": " ada "}\n{"id": 2, "name": "  "}\n'
                             '{"id": 3, "name": "grace"}\n'})
    return [["--JOB_NAME", "custom", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _custom_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["id"], r["name"]) for r in json_rows(w.tmp / "out"))
    assert got == [(1, "ADA"), (3, "GRACE")], got


def _medicare(w: World) -> list[list[str]]:
    lines = ["DRG Definition,Provider Id,Provider Name,Total Discharges"]
    lines += [f"039 - A,{10001 + i},H{i},{15 + i}" for i in range(5)]
    lines += ["948 - B,ABC0,INC,12", "948 - B,ABC1,INC- ST JOSEPH,14"]
    data = w.folder("medicare", {"Medicare_Hospital_Provider.csv": "\n".join(lines) + "\n"})
    w.table("payments", "medicare", data, "csv",
            [("drg definition", "string"), ("provider id", "bigint"),
             ("provider name", "string"), ("total discharges", "bigint")],
            parameters={"skip.header.line.count": "1", "delimiter": ","},
            serde_parameters={"field.delim": ","})
    return [["--JOB_NAME", "medicare", "--dst", str(w.tmp / "out")]]


def _medicare_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "|-- provider id: choice" in runs[0].stdout, runs[0].stdout
    rows = parquet_rows(w.tmp / "out")
    assert sorted(r["provider id_long"] for r in rows if r["provider id_long"] is not None) == \
        [10001, 10002, 10003, 10004, 10005]
    assert sorted(r["provider id_string"] for r in rows if r["provider id_string"]) == \
        ["ABC0", "ABC1"]
    assert list(rows[0])[-1] == "provider id_string"  # appended last, as the tutorial shows


def _relationalize(w: World) -> list[list[str]]:
    people = [
        {"id": "p1", "name": "Mike", "contact_details": [{"type": "fax", "value": "1"},
                                                        {"type": "phone", "value": "2"}],
         "links": [{"note": "web", "url": "u1"}]},
        {"id": "p2", "name": "Shelley", "contact_details": [{"type": "twitter", "value": "s"}],
         "links": []},
    ]
    data = w.folder("persons", {"p.json": "\n".join(json.dumps(p) for p in people) + "\n"})
    w.table("legislators", "persons_json", data, "json")
    return [["--JOB_NAME", "rel", "--dst", str(w.tmp / "out"), "--TempDir", str(w.tmp / "tmp")]]


def _relationalize_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "KEYS ['hist_root', 'hist_root_contact_details', 'hist_root_links']" in \
        runs[0].stdout, runs[0].stdout
    root = {r["id"]: r for r in json_rows(w.tmp / "out" / "hist_root")}
    details = json_rows(w.tmp / "out" / "hist_root_contact_details")
    mike = [d for d in details if d["id"] == root["p1"]["contact_details"]]
    assert sorted((d["index"], d["contact_details.val.type"]) for d in mike) == \
        [(0, "fax"), (1, "phone")], details


def _df_mix(w: World) -> list[list[str]]:
    data = w.folder("events", {"e.json": "\n".join(json.dumps(r) for r in [
        {"user": "u1", "ts": 1704067200, "page": "a"},
        {"user": "u1", "ts": 1704153600, "page": "b"},
        {"user": "u2", "ts": 1704067200, "page": "c"}]) + "\n"})
    w.table("web", "events", data, "json",
            [("user", "string"), ("ts", "bigint"), ("page", "string")])
    return [["--JOB_NAME", "mix", "--dst", str(w.tmp / "out"),
             "--dst_plain", str(w.tmp / "plain")]]


def _df_mix_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["user"], r["page"]) for r in parquet_rows(w.tmp / "out"))
    assert got == [("u1", "b"), ("u2", "c")], got
    plain = sorted((r["user"], str(r["day"])) for r in parquet_rows(w.tmp / "plain"))
    assert plain == [("u1", "2024-01-02"), ("u2", "2024-01-01")], plain


def _records(w: World) -> list[list[str]]:
    src = w.folder("recs", {"r.json": "\n".join(json.dumps(r) for r in [
        {"id": 1, "kind": "a", "score": 9}, {"id": 2, "score": 7},
        {"id": 3, "kind": "b", "score": 1}, {"id": 4, "kind": "c"}]) + "\n"})
    return [["--JOB_NAME", "recs", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _records_check(w: World, runs: Runs) -> None:
    _ok(runs)
    out = runs[0].stdout
    assert "MAP_ERRORS 1" in out and "TOTAL_ERRORS 2" in out, out
    got = [(r["id"], r["label"]) for r in json_rows(w.tmp / "out")]
    assert got == [(1, "A-1")], got


def _athena(w: World) -> list[list[str]]:
    data = w.folder("contacts", {"c.csv": "id,name,addr.city,age,balance,unused\n"
                                 "1,Ann,Oslo,34,10.456,\n2,Bob,Rome,300,7,\n"})
    w.table("crm", "contacts_raw", data, "csv",
            [("id", "string"), ("name", "string"), ("addr.city", "string"), ("age", "string"),
             ("balance", "string"), ("unused", "string")],
            parameters={"skip.header.line.count": "1"}, serde_parameters={"field.delim": ","})
    return [["--JOB_NAME", "athena", "--dst", str(w.tmp / "out")]]


def _athena_check(w: World, runs: Runs) -> None:
    _ok(runs)
    who = sorted(json_rows(w.tmp / "out" / "who"), key=lambda r: r["id"])
    assert who == [{"id": 1, "person": {"name": "Ann", "city": "Oslo"}},
                   {"id": 2, "person": {"name": "Bob", "city": "Rome"}}], who
    money = sorted(json_rows(w.tmp / "out" / "money"), key=lambda r: r["balance"])
    # tinyint: 300 does not fit and becomes null; decimal(10,2) rounds; "unused" is all null
    assert money == [{"balance": 7.0}, {"age": 34, "balance": 10.46}], money


def _dynamodb(w: World) -> list[list[str]]:
    return [["--JOB_NAME", "ddb"]]


def _error_text(r: subprocess.CompletedProcess[str]) -> str:
    """The ``error: …`` message lakemark printed (the console may wrap it; joined here)."""
    lines = r.stderr.splitlines()
    start = max((i for i, ln in enumerate(lines) if ln.startswith("error:")), default=None)
    assert start is not None, r.stderr[-2000:]
    return " ".join(ln.strip() for ln in lines[start:])


def _dynamodb_check(w: World, runs: Runs) -> None:
    r = runs[0]
    assert r.returncode != 0, r.stdout
    text = _error_text(r)
    assert "'dynamodb'" in text and "connection_type 's3'" in text, text
    assert "Traceback" not in r.stderr, r.stderr[-2000:]


def _bookmarks(w: World) -> list[list[str]]:
    src = w.folder("landing", {"day=1/a.json": '{"id": 1}\n{"id": 2}\n'})
    args = ["--JOB_NAME", "inc", "--src", str(src), "--dst", str(w.tmp / "out"),
            "--job-bookmark-option", "job-bookmark-enable"]
    w.seed["second"] = src / "day=2" / "b.json"
    return [args, args]


def _bookmarks_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "NEW 2" in runs[0].stdout and "NEW 1" in runs[1].stdout, \
        runs[0].stdout + runs[1].stdout
    assert sorted(r["id"] for r in parquet_rows(w.tmp / "out")) == [1, 2, 3]


def _prod_mapped(w: World) -> list[list[str]]:
    raw = w.folder("acme-prod-raw", {"events/e1.json": "\n".join(json.dumps(r) for r in [
        {"event_id": 1, "kind": "click", "day": "2024-05-01"},
        {"event_id": 2, "kind": "view", "day": "2024-05-01"},
        {"event_id": 3, "kind": "click", "day": "2024-05-02"}]) + "\n"})
    curated = w.folder("acme-prod-curated", {"_staging/events/old.json": '{"stale": 1}\n'})
    w.table("acme_raw", "events", w.tmp / "PLACEHOLDER", "json",
            [("event_id", "bigint"), ("kind", "string"), ("day", "string")])
    tables = w.catalog / "tables" / "acme_raw.json"
    tables.write_text(tables.read_text().replace(str(w.tmp / "PLACEHOLDER") + "/",
                                                 "s3://acme-prod-raw/events/"))
    w.seed["run_options"] = ["--bucket-map", f"s3://acme-prod-raw={raw}",
                             "--bucket-map", f"s3://acme-prod-curated={curated}"]
    w.seed["second"] = raw / "events" / "e2.json"
    w.seed["second_text"] = '{"event_id": 4, "kind": "view", "day": "2024-05-02"}\n'
    # No S3 at all: a request that escaped the mapping would fail the run.
    w.env.update(AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_ACCESS_KEY_ID="x",
                 AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1", AWS_MAX_ATTEMPTS="1")
    args = ["--JOB_NAME", "acme-events", "--job-bookmark-option", "job-bookmark-enable"]
    return [args, args]


def _prod_mapped_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "STAGED 3" in runs[0].stdout and "STAGED 1" in runs[1].stdout, \
        runs[0].stdout + runs[1].stdout
    curated = w.tmp / "acme-prod-curated"
    assert not (curated / "_staging" / "events" / "old.json").exists()
    rows = sorted(parquet_rows(curated / "events"), key=lambda r: r["event_id"])
    got = [(r["event_id"], r["event_type"], str(r["event_day"])) for r in rows]
    assert got == [(1, "click", "2024-05-01"), (2, "view", "2024-05-01"),
                   (3, "click", "2024-05-02"), (4, "view", "2024-05-02")], got


def _json_mixed(w: World) -> list[list[str]]:
    src = w.folder("feed", {"f.json": "\n".join(json.dumps(r) for r in [
        {"order": 1, "qty": 3, "price": 2.5, "vendor_code": 501},
        {"order": 2, "qty": "4", "price": "n/a", "vendor_code": "X12"},
        {"order": 3, "qty": "many", "price": 1, "vendor_code": 502}]) + "\n"})
    return [["--JOB_NAME", "feed", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _json_mixed_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "qty: choice" in runs[0].stdout, runs[0].stdout  # printSchema shows the choice
    rows = {r["order"]: r for r in json_rows(w.tmp / "out")}
    got = [(rows[i].get("qty"), rows[i].get("price"), rows[i].get("vendor_code_long"),
            rows[i].get("vendor_code_string"), rows[i].get("total")) for i in (1, 2, 3)]
    assert got == [(3, 2.5, 501, None, 7.5), (4, None, None, "X12", None),
                   (None, 1.0, 502, None, None)], got


def _quarantine(w: World) -> list[list[str]]:
    src = w.folder("signups", {"s.json": "\n".join(json.dumps(r) for r in [
        {"id": 1, "email": "a@Example.com", "amount": "10.5"},
        {"id": 2, "amount": "3"},
        {"id": 3, "email": "c@x.org", "amount": "abc"},
        {"id": 4, "email": "d@x.org", "amount": "0.99"},
        {"id": 5, "email": "e@y.net", "amount": "7"}]) + "\n"})
    runs = []
    for n, bad in ((1, "2"), (2, "1")):
        runs.append(["--JOB_NAME", "signups", "--src", str(src), "--dst", str(w.tmp / f"out{n}"),
                     "--quarantine", str(w.tmp / f"bad{n}"), "--max_bad", bad])
    return runs


def _quarantine_check(w: World, runs: Runs) -> None:
    _ok(runs[:1])
    rows = sorted(json_rows(w.tmp / "out1"), key=lambda r: r["id"])
    assert [(r["id"], r["domain"], r["amount_cents"]) for r in rows] == [
        (1, "example.com", 1050), (4, "x.org", 99), (5, "y.net", 700)], rows
    bad = sorted(json.loads(r["record"])["id"] for r in json_rows(w.tmp / "bad1"))
    assert bad == [2, 3], bad
    # Two bad records, one tolerated: the job fails, naming the threshold, and writes nothing.
    assert runs[1].returncode != 0
    assert "more than stageThreshold=1" in runs[1].stderr, runs[1].stderr[-2000:]
    assert not (w.tmp / "out2").exists() and not (w.tmp / "bad2").exists()


def _plain_s3(w: World) -> list[list[str]]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=w.env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    s3.create_bucket(Bucket="clicks")
    body = "\n".join(json.dumps(r) for r in [
        {"day": "2024-01-01", "page": "a"}, {"day": "2024-01-01", "page": "a"},
        {"day": "2024-01-02", "page": "b"}]) + "\n"
    s3.put_object(Bucket="clicks", Key="raw/c.json", Body=body.encode())
    return [["--JOB_NAME", "plain", "--src", "s3://clicks/raw/", "--dst", "s3://clicks/daily/"]]


def _plain_s3_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "BACK 2" in runs[0].stdout, runs[0].stdout


def _json_folder(w: World, name: str, rows: list[dict[str, Any]]) -> Any:
    return w.folder(name, {"part-0.json": "\n".join(json.dumps(r) for r in rows) + "\n"})


def _split(w: World) -> list[list[str]]:
    src = _json_folder(w, "orders", [{"id": 1, "amount": 250}, {"id": 2, "amount": 40},
                                     {"id": 3, "amount": 100}, {"id": 4, "amount": None}])
    return [["--JOB_NAME", "split", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _split_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "BIG 2 SMALL 2" in runs[0].stdout, runs[0].stdout
    got = sorted((r["id"], r["review"]) for r in json_rows(w.tmp / "out"))
    assert got == [(1, True), (2, False), (3, True), (4, False)], got


def _nested(w: World) -> list[list[str]]:
    src = _json_folder(w, "orders", [
        {"order_id": 1, "customer": {"fname": "Ann", "lname": "L",
                                     "address": {"city": "Oslo", "zip": "0150"}}},
        {"order_id": 2, "customer": {"fname": "Bob", "lname": "M",
                                     "address": {"city": "Rome", "zip": "00100"}}}])
    return [["--JOB_NAME", "nested", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _nested_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted(json_rows(w.tmp / "out"), key=lambda r: r["order_id"])
    assert got == [
        {"order_id": 1, "customer.first_name": "Ann", "customer.address.city": "Oslo"},
        {"order_id": 2, "customer.first_name": "Bob", "customer.address.city": "Rome"}], got


def _unbox(w: World) -> list[list[str]]:
    src = w.folder("items", {"i.csv": 'id|attrs\n1|{"color": "red", "size": 3}\n'
                             '2|{"color": "blue", "size": 5}\n'})
    return [["--JOB_NAME", "unbox", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _unbox_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["id"], r["color"], r["size"]) for r in json_rows(w.tmp / "out"))
    assert got == [(1, "red", 3), (2, "blue", 5)], got


def _purge(w: World) -> list[list[str]]:
    src = _json_folder(w, "src", [{"id": 1}, {"id": 2}])
    args = ["--JOB_NAME", "purge", "--src", str(src), "--dst", str(w.tmp / "out")]
    return [args, args]


def _purge_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert sorted(r["id"] for r in parquet_rows(w.tmp / "out")) == [1, 2]


def _pushdown(w: World) -> list[list[str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = w.tmp / "logs"
    for (y, m), n in {("2024", "01"): 1, ("2024", "02"): 2, ("2023", "02"): 3}.items():
        folder = root / f"year={y}" / f"month={m}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"msg": [f"{y}-{m}-{i}" for i in range(n)]}),
                       folder / "part-0.parquet")
    w.table("ops", "logs", root, "parquet", [("msg", "string")],
            partition_keys=[("year", "string"), ("month", "string")])
    w.table("ops", "logs_feb", w.tmp / "feb", "parquet",
            [("msg", "string"), ("year", "string"), ("month", "string")])
    return [["--JOB_NAME", "pushdown"]]


def _pushdown_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "ROWS 2" in runs[0].stdout, runs[0].stdout
    got = sorted(r["msg"] for r in parquet_rows(w.tmp / "feb"))
    assert got == ["2024-02-0", "2024-02-1"], got


def _headerless(w: World) -> list[list[str]]:
    data = w.folder("stock", {"a.csv": "sku-1,5\nsku-2,7\n", "b.csv": "sku-3,11\n"})
    w.table("inventory", "stock", data, "csv", [("col0", "string"), ("col1", "bigint")],
            serde_parameters={"field.delim": ","})
    return [["--JOB_NAME", "headerless", "--dst", str(w.tmp / "out")]]


def _headerless_check(w: World, runs: Runs) -> None:
    _ok(runs)
    lines = [line for f in (w.tmp / "out").rglob("*.csv")
             for line in f.read_text().splitlines() if line.strip()]
    assert "sku,qty" in lines, lines  # Glue's CSV writer writes a header (writeHeader=true)
    assert sorted(x for x in lines if x != "sku,qty") == ["sku-1,5", "sku-2,7", "sku-3,11"], lines


def _kinesis(w: World) -> list[list[str]]:
    return [["--JOB_NAME", "stream"]]


def _one_line_failure(word: str) -> Callable[[World, Runs], None]:
    def check(w: World, runs: Runs) -> None:
        r = runs[0]
        assert r.returncode != 0, r.stdout
        text = _error_text(r)
        assert word in text, text
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
    return check


def _staff(w: World) -> list[list[str]]:
    data = w.folder("staff", {"s.csv": "name,dept,salary\nann,eng,100\nbob,eng,80\n"
                              "cy,ops,50\n"})
    w.table("hr", "staff", data, "csv",
            [("name", "string"), ("dept", "string"), ("salary", "int")],
            parameters={"skip.header.line.count": "1"}, serde_parameters={"field.delim": ","})
    return [["--JOB_NAME", "staff", "--dst", str(w.tmp / "out")]]


def _staff_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["dept"], r["avg_salary"], r["n"]) for r in json_rows(w.tmp / "out"))
    assert got == [("eng", 90.0, 2), ("ops", 50.0, 1)], got


def _filter_dedup(w: World) -> list[list[str]]:
    src = w.folder("people", {"p.csv": "email,age,country\na@x,30,NO\na@x,30,NO\nb@x,12,NO\n"
                              "c@x,45,IT\n"})
    return [["--JOB_NAME", "dedup", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _filter_dedup_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["email"], r["age"]) for r in json_rows(w.tmp / "out"))
    assert got == [("a@x", 30), ("c@x", 45)], got
    assert sorted(p.name for p in (w.tmp / "out").iterdir() if p.is_dir()) == \
        ["country=IT", "country=NO"]


def _xml(w: World) -> list[list[str]]:
    src = w.folder("books", {"b.xml": '<catalog><book id="bk1"><title>A</title><price>4.5'
                             '</price></book><book id="bk2"><title>B</title><price>10'
                             '</price></book></catalog>'})
    return [["--JOB_NAME", "xml", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _xml_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["book_id"], r["title"], r["price"]) for r in json_rows(w.tmp / "out"))
    assert got == [("bk1", "A", 4.5), ("bk2", "B", 10.0)], got


def _getsink(w: World) -> list[list[str]]:
    (w.catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "lake"}]}))
    src = _json_folder(w, "visits", [{"page": "a", "region": "eu"},
                                     {"page": "b", "region": "us"}])
    return [["--JOB_NAME", "sink", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _getsink_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert sorted((r["page"], r["region"]) for r in parquet_rows(w.tmp / "out")) == \
        [("a", "eu"), ("b", "us")]
    [entry] = json.loads((w.catalog / "tables" / "lake.json").read_text())["TableList"]
    assert entry["Name"] == "visits" and [k["Name"] for k in entry["PartitionKeys"]] == \
        ["region"], entry


def _spigot(w: World) -> list[list[str]]:
    src = _json_folder(w, "src", [{"id": i} for i in range(5)])
    return [["--JOB_NAME", "spigot", "--src", str(src), "--sample", str(w.tmp / "sample")]]


def _spigot_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "COUNT 5" in runs[0].stdout, runs[0].stdout
    assert len(json_rows(w.tmp / "sample")) == 2


def _jdbc(w: World) -> list[list[str]]:
    import psycopg

    from pgtest import DATABASE, HOST, PORT, jdbc_url, pg_user

    user = pg_user()
    assert user is not None, "PostgreSQL is not reachable"
    with psycopg.connect(host=HOST, port=PORT, dbname=DATABASE, user=user) as conn:
        conn.execute("DROP TABLE IF EXISTS corpus_accounts")
        conn.execute("CREATE TABLE corpus_accounts (account_id int primary key, owner text)")
        conn.execute("INSERT INTO corpus_accounts VALUES (1, 'ann'), (2, 'bob')")
    w.seed["pg"] = (HOST, PORT, DATABASE, user)
    args = ["--JOB_NAME", "jdbc", "--url", jdbc_url(), "--user", user,
            "--dst", str(w.tmp / "out"), "--job-bookmark-option", "job-bookmark-enable"]
    return [args, args]


def _jdbc_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "NEW 2" in runs[0].stdout and "NEW 1" in runs[1].stdout, \
        runs[0].stdout + runs[1].stdout
    assert sorted(r["account_id"] for r in json_rows(w.tmp / "out")) == [1, 2, 3]


def _map_nested(w: World) -> list[list[str]]:
    src = w.folder("places", {"p.csv": "name,lat,lon\noslo,59.9,10.7\nrome,41.9,12.5\n"})
    return [["--JOB_NAME", "mapn", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _map_nested_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted(json_rows(w.tmp / "out"), key=lambda r: r["name"])
    assert got == [{"name": "Oslo", "geo": {"lat": 59.9, "lon": 10.7}},
                   {"name": "Rome", "geo": {"lat": 41.9, "lon": 12.5}}], got


def _orc(w: World) -> list[list[str]]:
    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    (w.tmp / "orc").mkdir()
    (w.tmp / "pq").mkdir()
    po.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}),
                   str(w.tmp / "orc" / "part-0.orc"))
    pq.write_table(pa.table({"user_id": pa.array([3], pa.int64()), "user_name": ["c"]}),
                   str(w.tmp / "pq" / "part-0.parquet"))
    return [["--JOB_NAME", "orc", "--orc", str(w.tmp / "orc"), "--parquet", str(w.tmp / "pq"),
             "--dst", str(w.tmp / "out")]]


def _orc_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "ALL 3" in runs[0].stdout, runs[0].stdout
    assert sorted((r["id"], r["name"]) for r in json_rows(w.tmp / "out")) == \
        [(1, "a"), (2, "b"), (3, "c")]


def _optional(w: World) -> list[list[str]]:
    src = _json_folder(w, "src", [{"id": 1}])
    return [["--JOB_NAME", "opt", "--src", str(src), "--dst", str(w.tmp / "out"),
             "--out_format", "json"]]


def _optional_check(w: World, runs: Runs) -> None:
    _ok(runs)
    assert "FORMAT json" in runs[0].stdout and json_rows(w.tmp / "out") == [{"id": 1}]


def _rel_rename(w: World) -> list[list[str]]:
    src = _json_folder(w, "people", [
        {"id": "p1", "contacts": [{"kind": "fax", "value": "1"}, {"kind": "mail", "value": "m"}]},
        {"id": "p2", "contacts": [{"kind": "phone", "value": "2"}]}])
    return [["--JOB_NAME", "relr", "--src", str(src), "--dst", str(w.tmp / "out")]]


def _rel_rename_check(w: World, runs: Runs) -> None:
    _ok(runs)
    got = sorted((r["index"], r["kind"], r["value"]) for r in json_rows(w.tmp / "out" / "c"))
    assert got == [(0, "fax", "1"), (0, "phone", "2"), (1, "mail", "m")], got


CASES: list[Case] = [
    Case("studio_csv_to_parquet", "studio_csv_to_parquet.py",
         "Glue Studio S3 CSV -> ApplyMapping -> partitioned glueparquet", _studio_csv,
         _studio_csv_check, fast=True),
    Case("studio_join_same_key", "studio_join_same_key.py",
         "Glue Studio Join on a shared key name + DropFields `.key`", _studio_join,
         _studio_join_check),
    Case("studio_sql_query", "studio_sql_query.py", "Glue Studio SQL Query node (sparkSqlQuery)",
         _studio_sql, _studio_sql_check),
    Case("studio_custom_transform", "studio_custom_transform.py",
         "Glue Studio Custom Transform + SelectFromCollection", _custom, _custom_check),
    Case("tutorial_resolve_choice_make_cols", "tutorial_resolve_choice_make_cols.py",
         "AWS Medicare resolveChoice tutorial (make_cols)", _medicare, _medicare_check, fast=True),
    Case("tutorial_relationalize", "tutorial_relationalize.py",
         "AWS legislators tutorial: Relationalize + write each table", _relationalize,
         _relationalize_check),
    Case("handwritten_df_mix", "handwritten_df_mix.py",
         "hand-written DynamicFrame/DataFrame mix, window, plain partitioned write", _df_mix,
         _df_mix_check),
    Case("record_functions_errors", "record_functions_errors.py",
         "Map/Filter functions with error records", _records, _records_check),
    Case("apply_mapping_athena_types", "apply_mapping_athena_types.py",
         "ApplyMapping with Athena types, dotted targets, DropNullFields, SplitFields", _athena,
         _athena_check),
    Case("dynamodb_unsupported", "dynamodb_unsupported.py",
         "DynamoDB source (cannot exist locally)", _dynamodb, _dynamodb_check,
         expect_failure=True, fast=True),
    Case("bookmarked_json_increments", "bookmarked_json_increments.py",
         "incremental S3 JSON job with bookmarks, two runs", _bookmarks, _bookmarks_check),
    Case("split_rows_union", "split_rows_union.py",
         "SplitRows comparison_dict + Map + union of the branches", _split, _split_check),
    Case("rename_select_nested", "rename_select_nested.py",
         "RenameField/SelectFields on nested paths + UnnestFrame", _nested, _nested_check),
    Case("unbox_json_column", "unbox_json_column.py",
         "Unbox a JSON string column of a CSV + ApplyMapping on unboxed paths", _unbox,
         _unbox_check),
    Case("purge_then_overwrite", "purge_then_overwrite.py",
         "purge_s3_path before write_dynamic_frame (rerun replaces)", _purge, _purge_check),
    Case("catalog_pushdown_partitions", "catalog_pushdown_partitions.py",
         "push_down_predicate on a partitioned table + write_dynamic_frame.from_catalog",
         _pushdown, _pushdown_check),
    Case("crawled_headerless_csv", "crawled_headerless_csv.py",
         "console-generated job (## @type) on a header-less crawled CSV", _headerless,
         _headerless_check),
    Case("kinesis_streaming_unsupported", "kinesis_streaming_unsupported.py",
         "Glue streaming job on Kinesis (cannot exist locally)", _kinesis,
         _one_line_failure("kinesis"), expect_failure=True),
    Case("custom_jdbc_connector_unsupported", "custom_jdbc_connector_unsupported.py",
         "Studio custom/Marketplace JDBC connector (cannot exist locally)", _kinesis,
         _one_line_failure("custom.jdbc"), expect_failure=True),
    Case("create_data_frame_catalog", "create_data_frame_catalog.py",
         "create_data_frame.from_catalog + DataFrame aggregation + fromDF write", _staff,
         _staff_check),
    Case("studio_filter_dedup_json_partitioned", "studio_filter_dedup_json_partitioned.py",
         "Glue Studio Filter + Drop Duplicates + partitioned JSON target", _filter_dedup,
         _filter_dedup_check),
    Case("xml_source", "xml_source.py", "XML source with rowTag, attributes mapped", _xml,
         _xml_check),
    Case("getsink_update_catalog", "getsink_update_catalog.py",
         "Studio S3 target creating/updating a catalog table (getSink)", _getsink,
         _getsink_check),
    Case("spigot_show_count", "spigot_show_count.py",
         "debugging calls: show, count, printSchema, Spigot, logger", _spigot, _spigot_check),
    Case("jdbc_postgres_bookmarks", "jdbc_postgres_bookmarks.py",
         "JDBC (PostgreSQL) extraction with jobBookmarkKeys, two runs", _jdbc, _jdbc_check,
         needs_postgres=True),
    Case("map_nested_records", "map_nested_records.py",
         "Map.apply building nested records", _map_nested, _map_nested_check),
    Case("avro_and_orc_sources", "avro_and_orc_sources.py",
         "ORC + Parquet sources aligned by ApplyMapping, union", _orc, _orc_check),
    Case("optional_job_arguments", "optional_job_arguments.py",
         "optional job arguments ('--x' in sys.argv idiom)", _optional, _optional_check,
         fast=True),
    Case("relationalize_rename_backquoted", "relationalize_rename_backquoted.py",
         "rename Relationalize's dotted child columns with back quotes", _rel_rename,
         _rel_rename_check),
    Case("plain_spark_s3", "plain_spark_s3.py",
         "plain spark.read.json / df.write.partitionBy on s3:// (moto_server)", _plain_s3,
         _plain_s3_check, needs_s3=True),
    Case("production_buckets_mapped", "production_buckets_mapped.py",
         "production job with hard-coded buckets and catalog locations, run on local folders "
         "(--bucket-map), two bookmarked runs", _prod_mapped, _prod_mapped_check),
    Case("json_mixed_types_resolve", "json_mixed_types_resolve.py",
         "JSON feed with mixed types: resolveChoice cast/make_cols + toDF(ResolveOption)",
         _json_mixed, _json_mixed_check, fast=True),
    Case("error_records_quarantine", "error_records_quarantine.py",
         "Map.apply with stageThreshold, errorsAsDynamicFrame to a quarantine path",
         _quarantine, _quarantine_check),
]


def run_case(case: Case, world: World) -> Runs:
    """Set up the world, run the script (once per argument list) and return the processes."""
    runs: Runs = []
    for i, args in enumerate(case.setup(world)):
        if i == 1 and "second" in world.seed:  # a second run sees one new file
            world.seed["second"].parent.mkdir(parents=True, exist_ok=True)
            world.seed["second"].write_text(world.seed.get("second_text", '{"id": 3}\n'))
        if i == 1 and "pg" in world.seed:  # ... or one new row
            import psycopg

            host, port, db, user = world.seed["pg"]
            with psycopg.connect(host=host, port=port, dbname=db, user=user) as conn:
                conn.execute("INSERT INTO corpus_accounts VALUES (3, 'cy')")
        runs.append(world.run(case.script, *args))
    return runs
