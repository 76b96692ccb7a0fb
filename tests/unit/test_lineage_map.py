"""Glue ``Map.apply`` / ``dyf.map``: the record function's body is read (issue 19, finding 4):
assigned fields are traced to the fields they read, deleted ones dropped, the rest pass on;
a function that does what cannot be followed stays UNKNOWN, with a warning."""

from __future__ import annotations

from pathlib import Path

from lakemark.catalog import FolderCatalog
from lakemark.lineage import JobLineage, analyze_source

CATALOG = FolderCatalog(Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
                        / "123456789012-us-east-1")
READ = ("from awsglue.transforms import Map\n"
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n")
WRITE = ("glueContext.write_dynamic_frame.from_options(frame=m, connection_type='s3', "
         "connection_options={'path': 's3://out/m'}, format='parquet')\n")


def run(body: str) -> JobLineage:
    return analyze_source(READ + body + WRITE, catalog=CATALOG, account="123456789012",
                          region="us-east-1")


def columns(r: JobLineage) -> dict[str, set[tuple[str, str, int]]]:
    [out] = r.outputs
    return {c: {(e.field, e.subtype, e.line) for e in es} for c, es in out.columns}


def test_map_function_assignments_deletions_and_locals_are_followed() -> None:
    r = run("def fix(rec):\n"                               # 3
            "    rec['who'] = rec['customer']\n"            # 4
            "    total = rec['amount'] * 2\n"               # 5
            "    rec['total'] = total\n"                    # 6
            "    if rec['year'] > 2000:\n"                  # 7
            "        rec['month'] = rec['month'] + 1\n"     # 8
            "    del rec['lines']\n"                        # 9
            "    rec.pop('ordered_at')\n"                   # 10
            "    return rec\n"                              # 11
            "m = Map.apply(frame=src, f=fix)\n")            # 12
    cols = columns(r)
    assert set(cols) == {"order_id", "customer", "amount", "year", "month", "who", "total"}
    assert cols["who"] == {("customer", "IDENTITY", 4)}
    assert cols["total"] == {("amount", "TRANSFORMATION", 6)}
    assert cols["month"] == {("month", "TRANSFORMATION", 8)}
    assert cols["customer"] == {("customer", "IDENTITY", 2)}
    assert not any("not analysed" in w.message for w in r.warnings)


def test_dynamicframe_map_with_a_lambda_making_a_new_record() -> None:
    cols = columns(run("m = src.map(lambda r: {'id': r['order_id'], "
                       "'c': r.get('customer'), 'y2': r['year'] * 2})\n"))
    assert cols == {"id": {("order_id", "IDENTITY", 3)}, "c": {("customer", "IDENTITY", 3)},
                    "y2": {("year", "TRANSFORMATION", 3)}}


def test_a_map_function_that_passes_the_record_on_stays_unknown_and_is_reported() -> None:
    r = run("import vendor\n"
            "def fix(rec):\n"
            "    rec['x'] = 1\n"
            "    return vendor.clean(rec)\n"
            "m = Map.apply(frame=src, f=fix)\n")
    assert {s for es in columns(r).values() for _, s, _ in es} == {"UNKNOWN"}
    assert any("Map function" in w.message and "not analysed" in w.message and w.line == 7
               for w in r.warnings)
