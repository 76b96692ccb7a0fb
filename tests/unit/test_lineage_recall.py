"""Shapes of real Glue scripts that used to cost column-lineage recall (issue 32): options
built with ``dict(...)``, columns named only by ``*`` or by ``partitionBy``, Glue ``Join`` of
frames sharing a field, the spelling of ``SELECT *`` columns, ResolveChoice ``make_cols``.

Each test analyses a short script (parsed, never run) against the labelled corpus's catalog
(database ``retail``, camelCase columns) and checks the exact edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakemark.catalog import FolderCatalog
from lakemark.lineage import JobLineage, analyze_source
from lakemark.lineage._html import to_html
from lakemark.lineage._openlineage import to_openlineage
from lakemark.lineage._render import to_dot

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "lineage" / "corpus"
CATALOG = FolderCatalog(CORPUS)
ORDERS = "s3://retail-lake-123456789012/orders"
CUSTOMERS = "s3://retail-lake-123456789012/customers"
ICEBERG = "s3://retail-lake-123456789012/iceberg/orders"

HEAD = """\
from awsglue.context import GlueContext
from awsglue.transforms import *
from pyspark.context import SparkContext
glueContext = GlueContext(SparkContext())
spark = glueContext.spark_session
"""


def run(body: str) -> JobLineage:
    return analyze_source(HEAD + body, job="t", catalog=CATALOG, account="123456789012",
                          region="us-east-1", file="t.py")


def edges(result: JobLineage, out: str) -> set[tuple[str, str, str, str]]:
    return {(col, e.dataset.key, e.field, e.subtype) for o, col, e in result.edges()
            if o == out and col}


def test_s3_options_built_with_dict_keywords_pairs_and_a_base() -> None:
    r = run("""\
src = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="customers")
base = {"partitionKeys": []}
for target, opts in [("a", dict(path="s3://out/a/")), ("b", dict(base, path="s3://out/b/")),
                     ("c", dict([("path", "s3://out/c/")])), ("d", {**base, "path": "s3://out/d"})]:
    glueContext.write_dynamic_frame.from_options(frame=src, connection_type="s3",
                                                 connection_options=opts, format="parquet")
""")
    assert {o.dataset.key for o in r.outputs} == {f"s3://out/{x}" for x in "abcd"}
    for x in "abcd":
        assert ("email", CUSTOMERS, "email", "IDENTITY") in edges(r, f"s3://out/{x}")
    assert r.warnings == ()


def test_s3_options_the_analyser_cannot_know_name_the_real_cause() -> None:
    r = run("""\
src = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="customers")
glueContext.write_dynamic_frame.from_options(frame=src, connection_type="s3",
                                             connection_options=load_options(), format="csv")
glueContext.write_dynamic_frame.from_options(frame=src, connection_type="s3",
                                             connection_options={"compression": "gzip"})
""")
    messages = [(w.line, w.message) for w in r.warnings]
    assert any(line == 7 and "s3 connection options are not a dict" in m
               for line, m in messages), messages
    assert any(line == 9 and "have no 'path' or 'paths'" in m for line, m in messages)
    assert not any("is not modelled" in m for _, m in messages)


def test_glue_join_keeps_frame2s_copy_of_a_shared_field_as_dot_name() -> None:
    r = run("""\
o = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="orders")
c = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="customers")
j = Join.apply(frame1=o, frame2=c, keys1=["customerId"], keys2=["customerId"])
glueContext.write_dynamic_frame.from_options(frame=j, connection_type="s3",
                                             connection_options={"path": "s3://out/j"})
d = DropFields.apply(frame=j, paths=["`.customerId`", "email"])
glueContext.write_dynamic_frame.from_options(frame=d, connection_type="s3",
                                             connection_options={"path": "s3://out/d"})
""")
    joined = edges(r, "s3://out/j")
    assert ("customerId", ORDERS, "customerId", "IDENTITY") in joined
    assert (".customerId", CUSTOMERS, "customerId", "IDENTITY") in joined
    assert ("customerId", CUSTOMERS, "customerId", "IDENTITY") not in joined
    dropped = edges(r, "s3://out/d")
    assert {c for c, *_ in dropped} == {"orderId", "customerId", "orderTotal", "orderDate",
                                        "status", "firstName", "lastName", "countryCode"}
    assert ("customerId", ORDERS, "customerId", "IDENTITY") in dropped


def test_select_star_keeps_the_catalogs_spelling_not_the_where_clauses() -> None:
    r = run("""\
df = spark.sql("SELECT * FROM retail.orders WHERE CUSTOMERID > 5 AND orderdate > '2024'")
df.write.parquet("s3://out/a")
""")
    cols = {c for c, *_ in edges(r, "s3://out/a")}
    assert cols == {"orderId", "customerId", "orderTotal", "orderDate", "status"}
    filters = {(e.dataset.key, e.field) for o, c, e in r.edges() if not c}
    assert filters == {(ORDERS, "customerId"), (ORDERS, "orderDate")}


def test_columns_of_a_schemaless_input_keep_the_spelling_the_query_writes() -> None:
    r = run("""\
u = spark.read.json("s3://cdc/orders/")
u.createOrReplaceTempView("updates")
spark.sql("SELECT orderId, upper(status) AS status FROM updates WHERE customerId > 0")\\
    .write.parquet("s3://out/a")
""")
    assert edges(r, "s3://out/a") == {("orderId", "s3://cdc/orders", "orderId", "IDENTITY"),
                                      ("status", "s3://cdc/orders", "status", "TRANSFORMATION")}
    assert {e.field for o, c, e in r.edges() if not c} == {"customerId"}


def test_merge_star_from_a_schemaless_source_takes_the_targets_catalog_columns() -> None:
    r = run("""\
u = spark.read.json("s3://cdc/orders/")
u.createOrReplaceTempView("updates")
spark.sql(\"\"\"MERGE INTO glue_catalog.retail.orders_iceberg t USING updates s
ON t.orderId = s.orderId
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *\"\"\")
""")
    assert edges(r, ICEBERG) == {(c, "s3://cdc/orders", c, "IDENTITY") for c in (
        "orderId", "customerId", "orderTotal", "status", "updatedAt")}
    joins = {(e.dataset.key, e.field) for o, c, e in r.edges() if not c}
    assert joins == {("s3://cdc/orders", "orderId"), (ICEBERG, "orderId")}


def test_delta_update_all_from_a_schemaless_source_takes_the_targets_columns() -> None:
    r = run("""\
from delta.tables import DeltaTable
u = spark.read.json("s3://cdc/orders/")
t = DeltaTable.forName(spark, "retail.orders")
t.alias("t").merge(u.alias("s"), "t.orderId = s.orderId").whenMatchedUpdateAll()\\
    .whenNotMatchedInsertAll().execute()
""")
    assert edges(r, ORDERS) == {(c, "s3://cdc/orders", c, "IDENTITY") for c in (
        "orderId", "customerId", "orderTotal", "orderDate", "status")}


def test_partition_columns_of_a_schemaless_frame_are_listed() -> None:
    r = run("""\
u = spark.read.json("s3://cdc/orders/")
u.write.partitionBy("region", "day").mode("append").parquet("s3://out/p")
dyf = glueContext.create_dynamic_frame.from_options("s3", {"paths": ["s3://cdc/orders/"]},
                                                    format="json")
glueContext.write_dynamic_frame.from_options(frame=dyf, connection_type="s3",
    connection_options={"path": "s3://out/q", "partitionKeys": ["region"]}, format="parquet")
""")
    assert edges(r, "s3://out/p") == {("region", "s3://cdc/orders", "region", "IDENTITY"),
                                      ("day", "s3://cdc/orders", "day", "IDENTITY")}
    assert edges(r, "s3://out/q") == {("region", "s3://cdc/orders", "region", "IDENTITY")}
    # the other columns are still reported as passing unlisted
    assert any("pass to s3://out/p unlisted" in w.message for w in r.warnings)


def test_make_cols_columns_are_traced_to_the_choice_column() -> None:
    r = run("""\
raw = glueContext.create_dynamic_frame.from_options(connection_type="s3",
    connection_options={"paths": ["s3://raw/products/"]}, format="json")
rc = ResolveChoice.apply(frame=raw, specs=[("price", "make_cols")])
m = ApplyMapping.apply(frame=rc, mappings=[("sku", "string", "sku", "string"),
    ("price_int", "int", "price_cents", "int"), ("price_string", "string", "label", "string")])
glueContext.write_dynamic_frame.from_options(frame=m, connection_type="s3",
    connection_options={"path": "s3://out/m"}, format="parquet")
o = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="orders")
s = o.resolveChoice(choice="make_cols").select_fields(["orderId", "orderTotal_string"])
glueContext.write_dynamic_frame.from_options(frame=s, connection_type="s3",
    connection_options={"path": "s3://out/s"}, format="parquet")
""")
    assert edges(r, "s3://out/m") == {
        ("sku", "s3://raw/products", "sku", "IDENTITY"),
        ("price_cents", "s3://raw/products", "price", "IDENTITY"),
        ("label", "s3://raw/products", "price", "IDENTITY")}
    assert edges(r, "s3://out/s") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                      ("orderTotal_string", ORDERS, "orderTotal", "IDENTITY")}
    assert any(w.line == 8 and "price_<type>" in w.message for w in r.warnings)
    # a name that only looks like one is not invented
    r = run("""\
o = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="orders")
s = o.select_fields(["orderId", "status_string"])
glueContext.write_dynamic_frame.from_options(frame=s, connection_type="s3",
    connection_options={"path": "s3://out/s"}, format="parquet")
""")
    assert edges(r, "s3://out/s") == {("orderId", ORDERS, "orderId", "IDENTITY")}
    assert any("'status_string' is not in the frame" in w.message for w in r.warnings)


ASSUMED_SCRIPT = """\
raw = glueContext.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/customers/"]},
                                                    format="json")
glueContext.write_dynamic_frame.from_catalog(frame=raw, database="retail",
                                             table_name="customers")
df = spark.read.json("s3://raw/orders/")
df.write.mode("append").saveAsTable("retail.orders")
df.write.mode("overwrite").saveAsTable("retail.daily_totals")
df.write.insertInto("retail.orders_iceberg")
"""
CUSTOMER_COLS = ("customerId", "firstName", "lastName", "email", "countryCode")


def test_a_schemaless_frame_written_into_a_catalog_table_gets_its_columns_marked_uncertain(
        ) -> None:
    r = run(ASSUMED_SCRIPT)
    found = {(o, c, e.dataset.key, e.field, e.description.startswith("uncertain: assumed"))
             for o, c, e in r.edges() if c}
    assert found == {(CUSTOMERS, c, "s3://raw/customers", c, True) for c in CUSTOMER_COLS} | {
        (ORDERS, c, "s3://raw/orders", c, True)
        for c in ("orderId", "customerId", "orderTotal", "orderDate", "status")}
    # overwrite replaces the table with the frame; insertInto is by position: nothing assumed
    assert {o.dataset.key for o in r.outputs} >= {
        "s3://retail-lake-123456789012/marts/daily_totals", ICEBERG}
    assert any(w.line == 8 and "are taken from the inputs' same-named columns" in w.message
               for w in r.warnings)


def test_assumed_edges_are_uncertain_in_openlineage_html_and_dot() -> None:
    r = run(ASSUMED_SCRIPT)
    [event] = to_openlineage([r], event_time="2026-01-01T00:00:00Z")
    out = next(o for o in event["outputs"] if o["name"] == "customers")
    assert all(f["inputFields"] == [] for f in out["facets"]["columnLineage"]["fields"].values())
    facet = out["facets"]["lakemark_columnUncertainty"]
    assert sorted(facet["assumed"]) == sorted(CUSTOMER_COLS)
    assert facet["assumed"]["email"][0]["field"] == "email"
    assert facet["eitherSide"] == {}
    page = to_html([r])
    data = page.split("const D=", 1)[1].split(";const NS=", 1)[0]
    marked = {(e["tcol"], e["unsure"]) for e in json.loads(data)["edges"] if e["tcol"]}
    assert ("email", True) in marked and all(unsure for _, unsure in marked)
    # the page's script gives such an edge the class its dotted orange style is for
    assert "path.e.unsure{" in page and '(e.unsure?" unsure":"")' in page
    assert "UNCERTAIN edge" in page
    dot = to_dot([r])
    assert dot.count("uncertain identity") == 10 and "style=dotted" in dot


def test_sql_tables_named_by_their_files_are_their_paths() -> None:
    r = run('''\
spark.sql("""MERGE INTO delta.`s3a://Lake/Current/` AS cur USING delta.`s3a://Lake/updates/` AS u
ON cur.row_id = u.row_id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
spark.sql("SELECT id, upper(name) AS name FROM parquet.`s3://raw/people`")\\
    .write.parquet("s3://out/people")
''')
    assert {o.dataset.key for o in r.outputs} == {"s3://Lake/Current", "s3://out/people"}
    joins = {(e.dataset.key, e.field) for o, c, e in r.edges() if not c}
    assert joins == {("s3://Lake/Current", "row_id"), ("s3://Lake/updates", "row_id")}
    assert edges(r, "s3://out/people") == {("id", "s3://raw/people", "id", "IDENTITY"),
                                           ("name", "s3://raw/people", "name",
                                            "TRANSFORMATION")}
    assert not any("catalog table" in w.message for w in r.warnings)


def test_create_table_ddl_gives_the_columns_later_writes_use() -> None:
    r = run('''\
df = spark.read.option("header", True).csv("s3://landing/users.csv")
spark.sql("""CREATE TABLE IF NOT EXISTS glue_catalog.media.users (
    user_id STRING, gender STRING, region STRING) USING ICEBERG
    LOCATION 's3://media-lake/users'""")
df.createOrReplaceTempView("updates")
spark.sql("""MERGE INTO glue_catalog.media.users t USING updates s ON t.user_id = s.user_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
spark.table("media.users").groupBy("region").count().write.parquet("s3://out/by_region")
''')
    assert edges(r, "s3://media-lake/users") == {
        (c, "s3://landing/users.csv", c, "IDENTITY") for c in ("user_id", "gender", "region")}
    [users] = [o for o in r.outputs if o.dataset.key == "s3://media-lake/users"]
    assert users.dataset.symlinks[0].name == "table/media/users"
    assert edges(r, "s3://out/by_region") == {
        ("region", "s3://media-lake/users", "region", "IDENTITY")}
    assert not any("not in catalog" in w.message for w in r.warnings)


def test_insert_by_position_into_a_hive_table_created_with_partition_columns() -> None:
    r = run('''\
spark.sql("""CREATE EXTERNAL TABLE IF NOT EXISTS backup_items (item map<string,string>,
    kind string) PARTITIONED BY (created string) STORED AS ORC
    LOCATION 's3://backups/items/'""")
spark.read.json("s3://raw/items/").createOrReplaceTempView("raw_items")
spark.sql("""INSERT OVERWRITE TABLE backup_items PARTITION (created)
SELECT payload, type, to_date(ts) FROM raw_items""")
''')
    assert edges(r, "s3://backups/items") == {
        ("item", "s3://raw/items", "payload", "IDENTITY"),
        ("kind", "s3://raw/items", "type", "IDENTITY"),
        ("created", "s3://raw/items", "ts", "TRANSFORMATION")}
    assert r.warnings == ()


def test_resolve_choice_cast_of_a_column_of_a_schemaless_input_is_a_transformation() -> None:
    r = run("""\
raw = glueContext.create_dynamic_frame.from_options(connection_type="s3",
    connection_options={"paths": ["s3://raw/products/"]}, format="json")
rc = ResolveChoice.apply(frame=raw, specs=[("stock", "cast:int")])
glueContext.write_dynamic_frame.from_options(frame=rc.select_fields(["stock"]),
    connection_type="s3", connection_options={"path": "s3://out/s"}, format="parquet")
""")
    assert edges(r, "s3://out/s") == {("stock", "s3://raw/products", "stock", "TRANSFORMATION")}


def test_a_star_inside_a_function_reads_every_column() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.customers")
o.select("customerId", F.to_json(F.struct("*")).alias("payload"),
         F.sha2(F.concat_ws("|", "*"), 256).alias("row_hash")).write.parquet("s3://out/h")
""")
    found = edges(r, "s3://out/h")
    for name in ("payload", "row_hash"):
        assert {f for c, _, f, s in found if c == name and s == "TRANSFORMATION"} == \
            set(CUSTOMER_COLS)
    assert not any("'*'" in w.message for w in r.warnings)


def test_pivot_columns_are_named_after_the_values_given_else_reported() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.orders")
o.groupBy("customerId").pivot("status", ["NEW", "SHIPPED"]).agg(F.sum("orderTotal"))\\
    .write.parquet("s3://out/one")
o.groupBy("customerId").pivot("status", ["NEW"]).agg(F.sum("orderTotal"), F.max("orderDate"))\\
    .write.parquet("s3://out/two")
o.groupBy("customerId").pivot("status").sum("orderTotal").write.parquet("s3://out/unknown")
""")
    assert edges(r, "s3://out/one") == {
        ("customerId", ORDERS, "customerId", "IDENTITY"),
        ("NEW", ORDERS, "orderTotal", "AGGREGATION"),
        ("SHIPPED", ORDERS, "orderTotal", "AGGREGATION")}
    assert {c for c, *_ in edges(r, "s3://out/two")} == {
        "customerId", "NEW_sum(orderTotal)", "NEW_max(orderDate)"}
    # no column named after the aggregate is invented when the values are not known
    assert edges(r, "s3://out/unknown") == {("customerId", ORDERS, "customerId", "IDENTITY")}
    assert any(w.line == 12 and "pivot() without its list of values" in w.message
               and f"{ORDERS}.orderTotal" in w.message for w in r.warnings)
    pivots = {(o, e.field, e.subtype) for o, c, e in r.edges() if not c}
    assert ("s3://out/unknown", "status", "GROUP_BY") in pivots


def test_the_dot_copy_of_a_glue_join_can_be_renamed_mapped_and_selected() -> None:
    r = run("""\
o = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="orders")
c = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="customers")
j = Join.apply(frame1=o, frame2=c, keys1=["customerId"], keys2=["customerId"])
r = j.rename_field("`.customerId`", "customer_ref").select_fields(["orderId", "customer_ref"])
glueContext.write_dynamic_frame.from_options(frame=r, connection_type="s3",
                                             connection_options={"path": "s3://out/r"})
m = ApplyMapping.apply(frame=j, mappings=[("`.customerId`", "bigint", "cref", "string")])
glueContext.write_dynamic_frame.from_options(frame=m, connection_type="s3",
                                             connection_options={"path": "s3://out/m"})
df = j.toDF()
df.select("orderId", df["`.customerId`"]).write.parquet("s3://out/d")
""")
    assert edges(r, "s3://out/r") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                      ("customer_ref", CUSTOMERS, "customerId", "IDENTITY")}
    assert edges(r, "s3://out/m") == {("cref", CUSTOMERS, "customerId", "TRANSFORMATION")}
    assert edges(r, "s3://out/d") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                      (".customerId", CUSTOMERS, "customerId", "IDENTITY")}


def test_semi_and_anti_joins_keep_only_the_left_columns() -> None:
    r = run("""\
o = spark.table("retail.orders")
c = spark.table("retail.customers")
o.join(c, "customerId", "left_anti").write.parquet("s3://out/anti")
o.join(c, on=["customerId"], how="leftsemi").write.parquet("s3://out/semi")
o.join(c, o.customerId == c.customerId, "left_semi").write.parquet("s3://out/cond")
""")
    for out in ("s3://out/anti", "s3://out/semi", "s3://out/cond"):
        assert edges(r, out) == {(c, ORDERS, c, "IDENTITY") for c in (
            "orderId", "customerId", "orderTotal", "orderDate", "status")}, out
        joins = {(e.dataset.key, e.field) for o, c, e in r.edges() if o == out and not c}
        assert joins == {(ORDERS, "customerId"), (CUSTOMERS, "customerId")}


def test_multi_name_aliases_of_stack_and_posexplode() -> None:
    r = run("""\
o = spark.table("retail.orders")
o.selectExpr("orderId", "stack(2, 'total', orderTotal, 'state', status) as (k, v)")\\
    .write.parquet("s3://out/expr")
o.createOrReplaceTempView("o")
spark.sql("SELECT orderId, stack(2, 'total', orderTotal, 'state', status) AS (k, v) FROM o")\\
    .write.parquet("s3://out/sql")
spark.sql("SELECT posexplode(items) AS (pos, item) FROM retail.orders_json")\\
    .write.parquet("s3://out/pos")
""")
    for out in ("s3://out/expr", "s3://out/sql"):
        assert edges(r, out) == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                 ("v", ORDERS, "orderTotal", "TRANSFORMATION"),
                                 ("v", ORDERS, "status", "TRANSFORMATION")}, out
        [written] = [w for w in r.outputs if w.dataset.key == out]
        assert [name for name, _ in written.columns] == ["orderId", "k", "v"]
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    assert edges(r, "s3://out/pos") == {("pos", raw, "items", "TRANSFORMATION"),
                                        ("item", raw, "items", "TRANSFORMATION")}


def test_slices_of_known_column_lists() -> None:
    r = run("""\
o = spark.table("retail.orders")
o.select(o.columns[1:3]).write.parquet("s3://out/slice")
o.select([c for c in o.columns[-2:]]).write.parquet("s3://out/tail")
""")
    assert {c for c, *_ in edges(r, "s3://out/slice")} == {"customerId", "orderTotal"}
    assert {c for c, *_ in edges(r, "s3://out/tail")} == {"orderDate", "status"}
    assert r.warnings == ()


def test_fields_of_an_exploded_array_of_known_structs() -> None:
    r = run("""\
from pyspark.sql import functions as F
j = spark.table("retail.orders_json")
j.select("orderId", F.explode("items").alias("item")).select("orderId", "item.*")\\
    .write.parquet("s3://out/items")
""")
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    # as the same thing in SQL (LATERAL VIEW explode(items) t AS item … item.*) gives: each
    # field of the element is the array's field
    assert edges(r, "s3://out/items") == {("orderId", raw, "orderId", "IDENTITY")} | {
        (f, raw, f"items.{f}", "IDENTITY") for f in ("sku", "qty", "price")}
    assert r.warnings == ()


def test_a_new_name_known_only_at_run_time_never_keeps_the_old_one() -> None:
    r = run("""\
import re
from pyspark.sql import functions as F
o = spark.table("retail.orders")
o.select([F.col(c).alias(re.sub("([A-Z])", "_\\\\1", c).lower()) for c in o.columns])\\
    .write.parquet("s3://out/snake")
o.withColumnRenamed("orderId", NAMES.get("orderId")).write.parquet("s3://out/renamed")
""")
    snake = edges(r, "s3://out/snake")
    assert ("{?orderId}", ORDERS, "orderId", "IDENTITY") in snake
    assert not any(c == "orderId" for c, *_ in snake)
    renamed = {c for c, *_ in edges(r, "s3://out/renamed")}
    assert "{?orderId}" in renamed and "orderId" not in renamed
    assert any(w.line == 9 and "shown as {?orderId}" in w.message for w in r.warnings)
    assert any(w.line == 11 and "shown as {?orderId}" in w.message for w in r.warnings)


def test_to_df_with_names_known_only_at_run_time() -> None:
    r = run("""\
o = spark.table("retail.orders")
o.toDF(*NEW_NAMES).write.parquet("s3://out/a")
o.toDF(*[NAMES[c] for c in o.columns]).write.parquet("s3://out/b")
o.toDF("id", NAMES["customerId"], "total", "day", "state").write.parquet("s3://out/c")
""")
    for out in ("s3://out/a", "s3://out/b"):
        assert {c for c, *_ in edges(r, out)} == {"{?orderId}", "{?customerId}", "{?orderTotal}",
                                                 "{?orderDate}", "{?status}"}
    assert edges(r, "s3://out/c") >= {("id", ORDERS, "orderId", "IDENTITY"),
                                      ("{?customerId}", ORDERS, "customerId", "IDENTITY")}
    assert [w.line for w in r.warnings if "toDF() with column names" in w.message] == [7, 8, 9]


def test_fields_selected_or_dropped_by_names_known_only_at_run_time() -> None:
    r = run("""\
d = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="orders")
d.select_fields(KEEP).toDF().write.parquet("s3://out/sf")
DropFields.apply(frame=d, paths=DROP).toDF().write.parquet("s3://out/df")
spark.table("retail.orders").drop(*DROP).write.parquet("s3://out/drop")
""")
    for out in ("s3://out/sf", "s3://out/df", "s3://out/drop"):
        found = edges(r, out)
        assert {c for c, *_ in found} == {"orderId", "customerId", "orderTotal", "orderDate",
                                         "status"}, out
        assert {s for *_, s in found} == {"UNKNOWN"}, out
    assert [w.line for w in r.warnings if "names the analyser cannot know" in w.message] == \
        [7, 8, 9]


def test_insert_into_is_by_position() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.orders")
o.select("orderId", "customerId", F.col("orderTotal").alias("amount"), "status",
         "orderDate").write.insertInto("retail.orders_iceberg", overwrite=True)
o.select("orderId").write.insertInto("retail.orders")
o.select(*PICK).write.insertInto("retail.customers")
""")
    assert edges(r, ICEBERG) == {
        ("orderId", ORDERS, "orderId", "IDENTITY"),
        ("customerId", ORDERS, "customerId", "IDENTITY"),
        ("orderTotal", ORDERS, "orderTotal", "IDENTITY"),
        ("status", ORDERS, "status", "IDENTITY"),
        ("updatedAt", ORDERS, "orderDate", "IDENTITY")}
    messages = [(w.line, w.message) for w in r.warnings]
    assert any(line == 10 and "1 columns for 5 table columns" in m for line, m in messages)
    assert any(line == 11 and "order of the frame's columns is not known" in m
               for line, m in messages)


def test_functions_of_several_columns_named_by_strings() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.orders")
o.select(F.datediff("orderDate", "orderDate").alias("days"),
         F.nvl("status", "orderId").alias("s"),
         F.format_string("%s-%s", "orderId", "status").alias("label"),
         F.date_format("orderDate", "yyyy").alias("year")).write.parquet("s3://out/f")
""")
    found = {(c, f) for c, _, f, _ in edges(r, "s3://out/f")}
    assert found == {("days", "orderDate"), ("s", "status"), ("s", "orderId"),
                     ("label", "orderId"), ("label", "status"), ("year", "orderDate")}


def test_hudi_key_options_name_columns_and_connector_paths_are_datasets() -> None:
    r = run("""\
hudi_options = {
    "hoodie.table.name": "events",
    "hoodie.datasource.write.recordkey.field": "event_id,source",
    "hoodie.datasource.write.partitionpath.field": "event_date:SIMPLE",
    "hoodie.datasource.write.precombine.field": "updated_at",
}
spark.read.json("s3://raw/events/").write.format("hudi").options(**hudi_options)\\
    .mode("append").save("s3://lake/hudi/events/")
raw = glueContext.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/ev2/"]},
                                                    format="json")
glueContext.write_dynamic_frame.from_options(frame=raw, connection_type="marketplace.spark",
    connection_options={"path": "s3://lake/hudi/ev2/", "connectionName": "hudi",
                        **hudi_options})
""")
    for src, out in (("s3://raw/events", "s3://lake/hudi/events"),
                     ("s3://raw/ev2", "s3://lake/hudi/ev2")):
        assert edges(r, out) == {(c, src, c, "IDENTITY") for c in (
            "event_id", "source", "event_date", "updated_at")}, out
    assert not any("is not modelled" in w.message for w in r.warnings)


def test_glue_join_on_a_same_named_key_of_schemaless_frames() -> None:
    r = run("""\
a = glueContext.create_dynamic_frame.from_options(connection_type="s3", format="json",
    connection_options={"paths": ["s3://landing/steps/"]})
b = glueContext.create_dynamic_frame.from_options(connection_type="s3", format="json",
    connection_options={"paths": ["s3://trusted/devices/"]})
j = Join.apply(frame1=a, frame2=b, keys1=["serialnumber"], keys2=["serialnumber"])
d = DropFields.apply(frame=j, paths=["`.serialnumber`"])
glueContext.write_dynamic_frame.from_options(frame=d, connection_type="s3", format="json",
    connection_options={"path": "s3://out/steps"})
glueContext.write_dynamic_frame.from_options(frame=j, connection_type="s3", format="json",
    connection_options={"path": "s3://out/both"})
""")
    assert edges(r, "s3://out/steps") == {
        ("serialnumber", "s3://landing/steps", "serialnumber", "IDENTITY")}
    assert edges(r, "s3://out/both") == {
        ("serialnumber", "s3://landing/steps", "serialnumber", "IDENTITY"),
        (".serialnumber", "s3://trusted/devices", "serialnumber", "IDENTITY")}


EXPLODE_API = """\
from pyspark.sql import functions as F
o = spark.table("retail.orders_json")
{lines}.write.parquet("s3://out/lines")
"""


@pytest.mark.parametrize("lines", [
    # the DataFrame API …
    'o.select("orderId", F.explode("items").alias("item"))'
    '.select("orderId", "item.sku", (F.col("item.qty") * F.col("item.price")).alias("total"))',
    'o.withColumn("item", F.explode_outer(F.col("items")))'
    '.select("orderId", F.col("item")["sku"].alias("sku"),'
    ' F.expr("item.qty * item.price AS total"))',
    'o.selectExpr("orderId", "explode(items) AS item")'
    '.selectExpr("orderId", "item.sku", "item.qty * item.price AS total")',
    # … and SQL give the same lineage for the same flattening
    'o.createOrReplaceTempView("oj") or spark.sql("SELECT orderId, item.sku, '
    'item.qty * item.price AS total FROM oj LATERAL VIEW explode(items) x AS item")',
])
def test_explode_in_the_dataframe_api_and_lateral_view_agree(lines: str) -> None:
    r = run(EXPLODE_API.format(lines=lines))
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    assert edges(r, "s3://out/lines") == {
        ("orderId", raw, "orderId", "IDENTITY"), ("sku", raw, "items.sku", "IDENTITY"),
        ("total", raw, "items.qty", "TRANSFORMATION"),
        ("total", raw, "items.price", "TRANSFORMATION")}
    assert r.warnings == ()


def test_star_of_a_lateral_view_element_lists_its_fields() -> None:
    r = run("""\
spark.table("retail.orders_json").createOrReplaceTempView("oj")
spark.sql("SELECT orderId, item.* FROM oj LATERAL VIEW explode(items) x AS item")\\
    .write.parquet("s3://out/items")
spark.read.json("s3://raw/events/").createOrReplaceTempView("ev")
spark.sql("SELECT e.* FROM ev LATERAL VIEW explode(entries) t AS e").write.parquet("s3://out/e")
""")
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    assert edges(r, "s3://out/items") == {("orderId", raw, "orderId", "IDENTITY")} | {
        (f, raw, f"items.{f}", "IDENTITY") for f in ("sku", "qty", "price")}
    # an element whose fields are not known: nothing listed (never a column named *), warned
    assert edges(r, "s3://out/e") == set()
    assert any(w.line == 10 for w in r.warnings)


def test_window_keys_are_indirect_inputs_not_sources_of_the_value() -> None:
    r = run("""\
spark.table("retail.orders").createOrReplaceTempView("orders")
spark.sql('''
    WITH ranked AS (
        SELECT orderId,
               SUM(orderTotal) OVER (PARTITION BY customerId) AS lifetime,
               ROW_NUMBER() OVER (PARTITION BY customerId ORDER BY orderDate DESC) AS rn
        FROM orders)
    SELECT orderId, lifetime, rn FROM ranked WHERE rn = 1
''').write.parquet("s3://out/w")
""")
    # the value of SUM(x) OVER (PARTITION BY k) is made of x; k only chooses the rows it is
    # computed over (as GROUP BY does): an INDIRECT WINDOW input, as Spark's plan gives it
    assert edges(r, "s3://out/w") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                      ("lifetime", ORDERS, "orderTotal", "AGGREGATION")}
    out = next(o for o in r.outputs if o.dataset.key == "s3://out/w")
    assert {(e.field, e.subtype) for e in out.indirect if e.subtype == "WINDOW"} == {
        ("customerId", "WINDOW"), ("orderDate", "WINDOW")}
    assert r.warnings == ()


def test_fields_dropped_from_a_frame_of_unknown_columns_are_gone() -> None:
    r = run("""\
raw = glueContext.create_dynamic_frame.from_options(connection_type="s3", format="json",
    connection_options={"paths": ["s3://landing/signups/"]})
scrubbed = DropFields.apply(frame=raw, paths=["ssn", "address.zip"])
scrubbed.toDF().select("signup_id", "ssn", "address.zip", "address.city").write.parquet("s3://o/a")
users = spark.read.json("s3://landing/users/").drop("password")
users.select("user_id", "password").write.parquet("s3://o/b")
either = scrubbed.toDF().unionByName(spark.read.json("s3://landing/more/"))
either.select("ssn").write.parquet("s3://o/c")
""")
    # the columns are not known, but those named in DropFields / drop are not there any more:
    # no edge is invented from the open input for them, and each reference is reported
    assert edges(r, "s3://o/a") == {("signup_id", "s3://landing/signups", "signup_id", "IDENTITY"),
                                    ("city", "s3://landing/signups", "address.city", "IDENTITY")}
    assert edges(r, "s3://o/b") == {("user_id", "s3://landing/users", "user_id", "IDENTITY")}
    gone = [(w.line, w.message.split("'")[1]) for w in r.warnings if "was dropped" in w.message]
    assert gone == [(9, "ssn"), (9, "address.zip"), (11, "password")]
    # a union with a frame that may still have the column: it is not known to be gone
    assert {f for c, _, f, _ in edges(r, "s3://o/c")} == {"ssn"}


def test_posexplode_with_two_names_gives_both_columns() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.orders_json")
o.select(F.posexplode("items").alias("pos", "it")).select("pos", "it.sku").write.parquet("s3://o/a")
o.selectExpr("posexplode(items) AS (n, it)").select("n", "it.qty").write.parquet("s3://o/b")
""")
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    # the position is made from the array; the element's fields are the array's fields
    assert edges(r, "s3://o/a") == {("pos", raw, "items", "TRANSFORMATION"),
                                    ("sku", raw, "items.sku", "IDENTITY")}
    assert edges(r, "s3://o/b") == {("n", raw, "items", "TRANSFORMATION"),
                                    ("qty", raw, "items.qty", "IDENTITY")}
    assert r.warnings == ()


@pytest.mark.parametrize(("path", "key"), [
    ("s3://landing/prices/2024-*.csv", "s3://landing/prices"),
    ("s3a://landing/prices/*/part-*.json", "s3://landing/prices"),
    ("s3://landing/prices/{eu,us}/", "s3://landing/prices"),
    ("s3://landing/prices/day=2024-0[1-3]-*/", "s3://landing/prices"),
    ("/data/in/*.csv", "file/data/in"),
])
def test_a_glob_names_the_folder_above_it(path: str, key: str) -> None:
    r = run(f"spark.read.option('header', True).csv({path!r}).select('sku')"
            ".write.parquet('s3://o/p')\n")
    assert edges(r, "s3://o/p") == {("sku", key, "sku", "IDENTITY")}


def test_a_table_the_script_creates_is_named_by_its_databases_location() -> None:
    r = run("""\
o = spark.table("retail.orders").select("orderId")
o.write.saveAsTable("retail.Orders_By_Day", format="parquet", mode="overwrite")
o.write.saveAsTable("hr.order_ids")
""")
    # database retail has LocationUri s3://retail-lake-123456789012/: Spark (and Glue) make a
    # new table there, under its lowercased name; hr has no location: the catalog symlink
    by_key = {o.dataset.key: o.dataset for o in r.outputs}
    made = by_key["s3://retail-lake-123456789012/orders_by_day"]
    assert [s.name for s in made.symlinks] == ["table/retail/Orders_By_Day"]
    assert edges(r, made.key) == {("orderId", ORDERS, "orderId", "IDENTITY")}
    assert "arn:aws:glue:us-east-1:123456789012/table/hr/order_ids" in by_key
    assert [w.line for w in r.warnings if "not in" in w.message] == [7, 8]


def test_save_as_table_with_a_path_is_named_by_that_path() -> None:
    r = run("""\
o = spark.table("retail.orders").select("orderId", "status")
o.write.mode("overwrite").option("path", "s3://exports/new_tbl/").saveAsTable("h2.new_tbl")
o.write.saveAsTable("retail.fresh", format="parquet", path="s3://exports/fresh")
o.write.mode("append").option("path", "s3://elsewhere/x").saveAsTable("retail.daily_totals")
""")
    # a table not in the catalog written with a path is an external table at that path (its
    # files are there, not under the database's location); a table the catalog has keeps its
    # own location
    by_key = {o.dataset.key: o.dataset for o in r.outputs}
    assert set(by_key) == {"s3://exports/new_tbl", "s3://exports/fresh",
                           "s3://retail-lake-123456789012/marts/daily_totals"}
    assert [s.name for s in by_key["s3://exports/new_tbl"].symlinks] == ["table/h2/new_tbl"]
    assert [s.name for s in by_key["s3://exports/fresh"].symlinks] == ["table/retail/fresh"]
    assert edges(r, "s3://exports/new_tbl") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                                ("status", ORDERS, "status", "IDENTITY")}
    assert not [w for w in r.warnings if "location" in w.message]


def test_spigot_samples_are_outputs() -> None:
    r = run("""\
a = glueContext.create_dynamic_frame.from_catalog(database="music", table_name="artists")
Spigot.apply(frame=a, path="s3://dbg/one/", options={"topk": 10})
a.spigot("s3://dbg/two/", {"prob": 0.1}).toDF().select("id").write.parquet("s3://o/ids")
""")
    artists = "s3://music-raw-123456789012/artists"
    # Spigot writes a sample of the records to S3 (and passes the frame on)
    for sample in ("s3://dbg/one", "s3://dbg/two"):
        assert edges(r, sample) == {(c, artists, c, "IDENTITY")
                                    for c in ("id", "artist_name", "country")}
    assert edges(r, "s3://o/ids") == {("id", artists, "id", "IDENTITY")}


def test_a_field_of_an_element_picked_by_position() -> None:
    r = run("""\
from pyspark.sql import functions as F
o = spark.table("retail.orders_json")
o.select(F.col("items")[0]["sku"].alias("first_sku"), o.items[1].qty,
         F.col("items").getItem(0).getField("price").alias("p")).write.parquet("s3://o/x")
""")
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    # one element of the array: its field is the array's field (not the whole array)
    assert edges(r, "s3://o/x") == {("first_sku", raw, "items.sku", "TRANSFORMATION"),
                                    ("qty", raw, "items.qty", "TRANSFORMATION"),
                                    ("p", raw, "items.price", "TRANSFORMATION")}
    assert r.warnings == ()


def test_ctas_of_a_new_table_is_named_where_spark_creates_it() -> None:
    r = run("""\
spark.sql("CREATE TABLE glue_catalog.retail.by_country USING iceberg AS "
          "SELECT countryCode, COUNT(*) AS n FROM retail.customers GROUP BY countryCode")
spark.sql("CREATE TABLE retail.emails (email STRING)")
spark.sql("INSERT INTO retail.emails SELECT email FROM retail.customers")
spark.sql("CREATE TABLE hr.by_country AS SELECT countryCode FROM retail.customers")
""")
    keys = {o.dataset.key for o in r.outputs}
    assert {"s3://retail-lake-123456789012/by_country", "s3://retail-lake-123456789012/emails",
            "arn:aws:glue:us-east-1:123456789012/table/hr/by_country"} <= keys
    assert edges(r, "s3://retail-lake-123456789012/emails") == {
        ("email", CUSTOMERS, "email", "IDENTITY")}


def test_select_expr_of_a_struct_star_lists_its_fields() -> None:
    r = run("""\
o = spark.table("retail.orders_json")
o.selectExpr("orderId", "customer.*").write.parquet("s3://o/a")
""")
    raw = "s3://retail-lake-123456789012/raw/orders_json"
    # customer.* is the struct's fields, not every column of the frame
    assert edges(r, "s3://o/a") == {("orderId", raw, "orderId", "IDENTITY"),
                                    ("id", raw, "customer.id", "IDENTITY"),
                                    ("name", raw, "customer.name", "IDENTITY")}


def test_unknown_mappings_and_pandas_functions_mark_their_columns_uncertain() -> None:
    r = run("""\
import json
config = json.loads(open("mapping.json").read())
c = glueContext.create_dynamic_frame.from_catalog(database="retail", table_name="customers")
ApplyMapping.apply(frame=c, mappings=config["mappings"]).toDF().write.parquet("s3://o/m")
o = spark.table("retail.orders")
o.groupBy("customerId").applyInPandas(lambda g: g, schema="customerId long, score double")\\
    .write.parquet("s3://o/p")
""")
    # nothing is stated as fact: each column passes as an uncertain edge, and it is reported
    for out in ("s3://o/m", "s3://o/p"):
        found = [e for o, c, e in r.edges() if o == out and c]
        assert found and all(e.description.startswith("uncertain:") for e in found)
    # the pandas function's columns are those of its declared schema
    assert {c for o, c, _ in r.edges() if o == "s3://o/p" and c} == {"customerId", "score"}
    assert {w.line for w in r.warnings} >= {9, 11}


def test_rdd_map_of_a_tuple_lambda_is_followed_by_position() -> None:
    r = run("""\
o = spark.table("retail.orders")
o.rdd.map(lambda r: (r.orderId, r["orderTotal"] * 2)).toDF(["orderId", "double_total"])\\
    .write.parquet("s3://o/d")
""")
    assert edges(r, "s3://o/d") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                    ("double_total", ORDERS, "orderTotal", "TRANSFORMATION")}
    assert r.warnings == ()


def test_window_keys_in_the_dataframe_api_are_indirect_as_in_sql() -> None:
    r = run("""\
from pyspark.sql import Window
from pyspark.sql import functions as F
o = spark.table("retail.orders")
w = Window.partitionBy("customerId").orderBy(F.col("orderDate").desc()).rowsBetween(-1, 0)
o.select("orderId", F.sum("orderTotal").over(Window.partitionBy("customerId")).alias("lifetime"),
         F.row_number().over(w).alias("rn")).write.parquet("s3://out/w")
o.withColumn("prev", F.lag("orderTotal").over(w)).select("prev").write.parquet("s3://out/p")
""")
    assert edges(r, "s3://out/w") == {("orderId", ORDERS, "orderId", "IDENTITY"),
                                      ("lifetime", ORDERS, "orderTotal", "AGGREGATION")}
    for out in ("s3://out/w", "s3://out/p"):
        o = next(o for o in r.outputs if o.dataset.key == out)
        assert {e.field for e in o.indirect if e.subtype == "WINDOW"} == {"customerId",
                                                                          "orderDate"}
    assert r.warnings == ()


def test_dynamodb_reads_and_writes_are_named_by_their_table() -> None:
    r = run("""\
a = glueContext.create_dynamic_frame.from_options(connection_type="dynamodb",
    connection_options={
        "dynamodb.export": "ddb",
        "dynamodb.tableArn": "arn:aws:dynamodb:eu-west-1:210987654321:table/Orders"})
a.toDF().select("order_id").write.parquet("s3://o/ddb")
b = glueContext.create_dynamic_frame.from_options(connection_type="dynamodb",
    connection_options={"dynamodb.input.tableName": "Users"})
glueContext.write_dynamic_frame.from_options(frame=b, connection_type="dynamodb",
    connection_options={"dynamodb.output.tableName": "UsersCopy"})
""")
    # as a catalog table over DynamoDB is named: arn:aws:dynamodb:<region>:<account>/table/<t>
    assert edges(r, "s3://o/ddb") == {
        ("order_id", "arn:aws:dynamodb:eu-west-1:210987654321/table/Orders", "order_id",
         "IDENTITY")}
    assert "arn:aws:dynamodb:us-east-1:123456789012/table/UsersCopy" in {
        o.dataset.key for o in r.outputs}
    assert not any("not modelled" in w.message for w in r.warnings)


def test_a_time_window_column_is_named_window() -> None:
    r = run("""\
from pyspark.sql import functions as F
plays = spark.table("music.plays_curated")
hourly = plays.groupBy(F.window("played_at", "1 hour"), "track_id").agg(
    F.sum("seconds").alias("secs"))
hourly.select(F.col("window.start").alias("hour"), "track_id", "secs").write.parquet("s3://o/h")
""")
    # Spark names the struct column of F.window(...) `window` (fields start, end): its fields
    # come from the time column (was named `window(played_at)`, so `window.start` was lost)
    plays = "s3://music-curated-123456789012/plays"
    assert edges(r, "s3://o/h") == {("hour", plays, "played_at", "TRANSFORMATION"),
                                    ("track_id", plays, "track_id", "IDENTITY"),
                                    ("secs", plays, "seconds", "AGGREGATION")}
    assert r.warnings == ()


def test_from_json_with_a_declared_schema_gives_its_fields() -> None:
    r = run("""\
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType
schema = StructType([StructField("sku", StringType()), StructField("price", DoubleType())])
raw = spark.read.text("s3://in/raw/")
raw.select(F.from_json(F.col("value"), schema).alias("data")).select("data.*") \\
    .write.parquet("s3://o/parsed")
raw.select(F.from_json("value", "id STRING, qty INT").alias("j")).select("j.*") \\
    .write.parquet("s3://o/ddl")
""")
    # select("data.*") of a parsed struct: one column per field of the declared schema, each
    # made from the parsed column (was a warning and no columns)
    assert edges(r, "s3://o/parsed") == {("sku", "s3://in/raw", "value", "TRANSFORMATION"),
                                         ("price", "s3://in/raw", "value", "TRANSFORMATION")}
    assert edges(r, "s3://o/ddl") == {("id", "s3://in/raw", "value", "TRANSFORMATION"),
                                      ("qty", "s3://in/raw", "value", "TRANSFORMATION")}
    assert r.warnings == ()


def test_cache_table_as_select_is_a_temp_view() -> None:
    r = run("""\
spark.sql("CACHE TABLE c AS SELECT customerId, email FROM retail.customers")
spark.sql("CACHE LAZY TABLE o AS SELECT orderId FROM retail.orders")
spark.sql("SELECT email FROM c").write.parquet("s3://o/c")
spark.table("o").write.parquet("s3://o/o")
""")
    # CACHE TABLE … AS SELECT makes a temp view of the query (was: an unknown table 'c')
    assert edges(r, "s3://o/c") == {("email", CUSTOMERS, "email", "IDENTITY")}
    assert edges(r, "s3://o/o") == {("orderId", ORDERS, "orderId", "IDENTITY")}
    assert r.warnings == ()


def test_drop_of_one_sides_column_after_a_join_keeps_the_other() -> None:
    r = run("""\
o = spark.table("retail.orders")
c = spark.table("retail.customers")
o.join(c, o.customerId == c.customerId).drop(c.customerId).select("customerId", "email") \\
    .write.parquet("s3://o/keep_left")
o.join(c, o.customerId == c.customerId, "left").drop(o.customerId).select("customerId") \\
    .write.parquet("s3://o/keep_right")
o.join(c, o.customerId == c.customerId).drop("customerId").write.parquet("s3://o/none")
""")
    # a join on a condition keeps both customerId columns; drop(df.customerId) removes that
    # side's only (it removed both: the written customerId had no edge and no warning)
    assert edges(r, "s3://o/keep_left") == {("customerId", ORDERS, "customerId", "IDENTITY"),
                                            ("email", CUSTOMERS, "email", "IDENTITY")}
    assert edges(r, "s3://o/keep_right") == {
        ("customerId", CUSTOMERS, "customerId", "IDENTITY")}
    # by name, Spark drops every column called customerId
    assert not {c for c, *_ in edges(r, "s3://o/none")} & {"customerId"}
    assert r.warnings == ()


def test_reduce_with_a_lambda_and_a_starting_frame_is_a_fold() -> None:
    r = run("""\
from functools import reduce
from pyspark.sql import functions as F
c = spark.table("retail.customers").select("firstName", "lastName")
reduce(lambda d, col: d.withColumn(col, F.trim(col)), c.columns, c).write.parquet("s3://o/t")
RENAMES = {"email": "mail"}
reduce(lambda d, kv: d.withColumnRenamed(kv[0], kv[1]), RENAMES.items(),
       spark.table("retail.customers")).select("mail").write.parquet("s3://o/r")
""")
    # functools.reduce(f, items, df): f applied to df and each item in turn (was a warning
    # and a frame of unknown inputs)
    assert edges(r, "s3://o/t") == {("firstName", CUSTOMERS, "firstName", "TRANSFORMATION"),
                                    ("lastName", CUSTOMERS, "lastName", "TRANSFORMATION")}
    assert edges(r, "s3://o/r") == {("mail", CUSTOMERS, "email", "IDENTITY")}
    assert r.warnings == ()


def test_sql_pivot_is_reported_not_silently_empty() -> None:
    r = run("""\
spark.sql("SELECT * FROM (SELECT customerId, status, orderTotal FROM retail.orders) "
          "PIVOT (SUM(orderTotal) FOR status IN ('A' AS a, 'B' AS b))").write.parquet("s3://o/p")
""")
    # the SQL PIVOT clause is not traced: the output was written with no columns and no
    # warning; now the script and line say so
    assert any(w.line == 6 and "SQL PIVOT" in w.message for w in r.warnings)
    assert any(w.line == 6 and "s3://o/p" in w.message for w in r.warnings)


def test_sql_field_of_a_struct_made_in_a_subquery_is_that_fields_input() -> None:
    r = run("""\
spark.sql("SELECT s.a AS fa FROM (SELECT STRUCT(firstName AS a, lastName AS b) AS s "
          "FROM retail.customers)").write.parquet("s3://o/s")
spark.sql("SELECT n.x FROM (SELECT named_struct('x', email, 'y', countryCode) AS n "
          "FROM retail.customers)").write.parquet("s3://o/n")
""")
    # s.a is firstName only (it was firstName and lastName: a wrong edge, no warning)
    assert edges(r, "s3://o/s") == {("fa", CUSTOMERS, "firstName", "IDENTITY")}
    assert edges(r, "s3://o/n") == {("x", CUSTOMERS, "email", "IDENTITY")}
    assert r.warnings == ()


def test_field_of_a_struct_the_script_makes_is_that_fields_input() -> None:
    r = run("""\
from pyspark.sql import functions as F
c = spark.table("retail.customers")
s = c.select(F.struct(F.col("firstName").alias("a"), F.upper("lastName").alias("b")).alias("s"))
s.select(F.col("s.a").alias("fa"), "s.b").write.parquet("s3://o/s")
c.withColumn("n", F.struct("email", "countryCode")).select("n.email", "n") \\
    .write.parquet("s3://o/n")
""")
    # s.a of F.struct(firstName AS a, upper(lastName) AS b) is firstName alone (it was both
    # columns: wrong edges, no warning); the whole struct still reads every field
    assert edges(r, "s3://o/s") == {("fa", CUSTOMERS, "firstName", "IDENTITY"),
                                    ("b", CUSTOMERS, "lastName", "TRANSFORMATION")}
    assert edges(r, "s3://o/n") == {("email", CUSTOMERS, "email", "IDENTITY"),
                                    ("n", CUSTOMERS, "email", "TRANSFORMATION"),
                                    ("n", CUSTOMERS, "countryCode", "TRANSFORMATION")}
    assert r.warnings == ()
