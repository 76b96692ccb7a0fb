"""The lineage analyser on scripts in each style real Glue teams write (golden edges).

Every script is under tests/fixtures/lineage/scripts/; the expected column edges of each are
listed here in full, so a change in what the analyser finds fails a test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lakemark.catalog import FolderCatalog
from lakemark.lineage import JobLineage, analyze_source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCRIPTS = FIXTURES / "lineage" / "scripts"
CATALOG = FolderCatalog(FIXTURES / "catalog" / "123456789012-us-east-1")
ORDERS = "s3://sales-lake-123456789012/curated/orders"

HELPERS = {
    "helpers.cleaning": ("cleaning.py", (SCRIPTS / "helpers_cleaning.py").read_text()),
    "writers": ("writers.py", (SCRIPTS / "helpers_writers.py").read_text()),
}


def run(name: str, **kwargs: object) -> JobLineage:
    return analyze_source((SCRIPTS / f"{name}.py").read_text(), job=name, catalog=CATALOG,
                          account="123456789012", region="us-east-1", modules=HELPERS,
                          file=f"{name}.py", **kwargs)  # type: ignore[arg-type]


def direct(result: JobLineage) -> set[tuple[str, str, str, str, str]]:
    return {(out, col, e.dataset.key, e.field, e.subtype)
            for out, col, e in result.edges() if col}


def indirect(result: JobLineage) -> set[tuple[str, str, str, str]]:
    return {(out, e.dataset.key, e.field, e.subtype) for out, col, e in result.edges()
            if not col}


def test_classic_generated_script_code_wins_over_type_comments() -> None:
    r = run("classic")
    out = "s3://out-bucket/orders_clean"  # the @args comment names s3://out-bucket/old
    assert direct(r) == {
        (out, "id", ORDERS, "order_id", "IDENTITY"),
        (out, "customer_name", ORDERS, "customer", "IDENTITY"),
        (out, "amount", ORDERS, "amount", "TRANSFORMATION"),
    }
    [inp] = r.inputs
    assert inp.dataset.symlinks[0].namespace == "arn:aws:glue:us-east-1:123456789012"
    assert inp.dataset.symlinks[0].name == "table/sales/orders_parquet"
    assert ("order_id", "bigint") in inp.fields
    amount = [e for _, c, e in r.edges() if c == "amount"][0]
    assert amount.line == 22 and "decimal(12,2) to double" in amount.description
    assert r.warnings == ()


def test_glue_studio_sql_query_and_get_sink() -> None:
    r = run("studio")
    out = "s3://curated-bucket/user_totals"
    src = "s3://raw-bucket/events"
    assert direct(r) == {
        (out, "user_id", src, "user", "IDENTITY"),
        (out, "last_seen", src, "ts", "AGGREGATION"),
        (out, "total", src, "value", "AGGREGATION"),
    }
    assert indirect(r) == {(out, src, "user", "GROUP_BY"), (out, src, "value", "FILTER")}
    [output] = r.outputs
    assert output.dataset.symlinks[0].name == "table/analytics/user_totals"
    assert not [w for w in r.warnings if "not known to the analyser" in w.message]


def test_hand_written_dynamic_frames_join_filter_rename_drop() -> None:
    r = run("handwritten")
    out = "s3://out/big_orders"
    crm = "postgres://crm.internal:5432/crm.public.customers"
    edges = direct(r)
    assert (out, "customer_name", crm, "name", "IDENTITY") in edges
    assert (out, "country", crm, "country", "IDENTITY") in edges
    # ResolveChoice under an `if` casts amount on one branch: both possibilities are kept
    assert (out, "amount", ORDERS, "amount", "IDENTITY") in edges
    assert (out, "amount", ORDERS, "amount", "TRANSFORMATION") in edges
    cols = {c for _, c, _, _, _ in edges}
    assert "lines" not in cols and "id" not in cols and "name" not in cols
    assert indirect(r) == {(out, ORDERS, "amount", "FILTER"), (out, ORDERS, "customer", "JOIN"),
                           (out, crm, "id", "JOIN")}


def test_dataframe_and_spark_sql_with_udf() -> None:
    r = run("dataframe_sql")
    out = "s3://lake/out/people_revenue"
    people, orders = "s3://lake/people.csv", "s3://lake/orders"
    report = "postgres://db:5432/reports.sales.by_region"
    assert direct(r) == {
        (out, "masked", people, "name", "UNKNOWN"),
        (out, "region", people, "region", "IDENTITY"),
        (out, "revenue", orders, "amount", "AGGREGATION"),
        (out, "region_uc", people, "region", "TRANSFORMATION"),
        (report, "region", people, "region", "IDENTITY"),
        (report, "region_revenue", orders, "amount", "AGGREGATION"),
    }
    assert (out, orders, "status", "FILTER") in indirect(r)
    assert (out, orders, "person_id", "JOIN") in indirect(r)
    assert (out, people, "id", "JOIN") in indirect(r)
    assert (report, people, "region", "GROUP_BY") in indirect(r)
    udf = [w for w in r.warnings if "UDF mask" in w.message]
    assert udf and udf[0].line == 25


def test_args_driven_names_resolve_from_job_arguments() -> None:
    r = run("args_driven", arguments={"source_db": "sales", "source_table": "orders_parquet",
                                      "env": "prod", "target_path": "orders/v2"})
    assert direct(r) == {
        ("s3://prod-bucket/orders/v2", "order_id", ORDERS, "order_id", "IDENTITY"),
        ("s3://prod-bucket/orders/v2", "customer", ORDERS, "customer", "IDENTITY"),
    }
    assert r.warnings == ()


def test_args_without_values_are_reported_as_dynamic_never_dropped() -> None:
    r = run("args_driven")
    [inp] = r.inputs
    assert inp.dataset.dynamic and inp.dataset.name == "table/{?source_db}/{?source_table}"
    [out] = r.outputs
    assert out.dataset.dynamic and out.dataset.key == "s3://{?env}-bucket/{?target_path}"
    messages = " | ".join(w.message for w in r.warnings)
    assert "--source_db has no value" in messages and "--env has no value" in messages
    assert all(w.line for w in r.warnings)


def test_helpers_in_extra_py_files_are_followed() -> None:
    r = run("with_helpers")
    out = "s3://out/clean_orders"
    assert direct(r) == {
        (out, "id", ORDERS, "order_id", "IDENTITY"),
        (out, "customer", ORDERS, "customer", "TRANSFORMATION"),
    }


def test_unknown_function_receiving_a_frame_is_an_unknown_edge_with_a_warning() -> None:
    source = (
        "import thirdparty\n"
        "df = spark.read.parquet('s3://in/x')\n"
        "df = df.select('a', 'b')\n"
        "out = thirdparty.magic(df)\n"
        "out.write.parquet('s3://out/y')\n"
    )
    r = analyze_source(source)
    assert direct(r) == {("s3://out/y", "a", "s3://in/x", "a", "UNKNOWN"),
                         ("s3://out/y", "b", "s3://in/x", "b", "UNKNOWN")}
    assert any("thirdparty.magic" in w.message and w.line == 4 for w in r.warnings)


def test_dynamic_table_name_in_spark_sql_is_reported() -> None:
    source = (
        "import os\n"
        "t = os.environ['TABLE']\n"
        "df = spark.sql(f'select id from {t}')\n"
        "df.write.parquet('s3://out/z')\n"
    )
    r = analyze_source(source, catalog=CATALOG)
    assert r.warnings and any(w.line == 3 for w in r.warnings)


@pytest.mark.parametrize("source", [
    "def (:\n", "x = \x00", "while True:\n    pass\n", "def f():\n    return f()\nf()\n",
    "a = b.c.d(e)[f]\n", "spark.sql(12)\n", "spark.sql('select from where')\n",
])
def test_odd_scripts_never_crash(source: str) -> None:
    r = analyze_source(source)
    assert isinstance(r, JobLineage)


def test_loops_over_known_lists_are_unrolled() -> None:
    source = (
        "for name in ['a', 'b']:\n"
        "    df = spark.read.parquet(f's3://in/{name}')\n"
        "    df.select('id').write.parquet(f's3://out/{name}')\n"
    )
    r = analyze_source(source)
    assert direct(r) == {("s3://out/a", "id", "s3://in/a", "id", "IDENTITY"),
                         ("s3://out/b", "id", "s3://in/b", "id", "IDENTITY")}


# -- SELECT * / t.* (issue 19, finding 1) ---------------------------------------------------

def _sql_job(query: str, frame: str = "df = spark.read.schema('click_id string, userId string')"
             ".json('s3://in/clicks')\n") -> JobLineage:
    source = (frame + "df.createOrReplaceTempView('t')\n"
              f"out = spark.sql({query!r})\n"
              "out.write.parquet('s3://out/x')\n")
    return analyze_source(source, catalog=CATALOG)


def test_star_is_expanded_in_place_with_the_inputs_spelling() -> None:
    r = _sql_job("select *, 1 as one, upper(userId) AS userIdUp from t")
    [out] = r.outputs
    assert [name for name, _ in out.columns] == ["click_id", "userId", "one", "userIdUp"]
    assert direct(r) == {("s3://out/x", "click_id", "s3://in/clicks", "click_id", "IDENTITY"),
                         ("s3://out/x", "userId", "s3://in/clicks", "userId", "IDENTITY"),
                         ("s3://out/x", "userIdUp", "s3://in/clicks", "userId",
                          "TRANSFORMATION")}
    assert r.warnings == ()


def test_qualified_star_over_catalog_tables_keeps_positions() -> None:
    r = analyze_source(
        "df = spark.sql('SELECT o.*, c.name AS customerName FROM sales.orders_parquet o "
        "JOIN sales.crm_public_customers c ON o.customer = c.customer_id')\n"
        "df.write.parquet('s3://out/enriched')\n", catalog=CATALOG)
    [out] = r.outputs
    assert [name for name, _ in out.columns] == [
        "order_id", "customer", "amount", "ordered_at", "lines", "year", "month",
        "customerName"]
    edges = {(c, e.field, e.subtype) for _, c, e in r.edges() if c}
    assert ("customerName", "name", "IDENTITY") in edges
    assert ("ordered_at", "ordered_at", "IDENTITY") in edges


def test_union_of_stars_is_positional_and_named_after_the_first_branch() -> None:
    source = (
        "a = spark.read.schema('saleId string, amount double').csv('s3://in/store')\n"
        "b = spark.read.schema('orderRef string, total double').json('s3://in/web')\n"
        "a.createOrReplaceTempView('source1')\n"
        "b.createOrReplaceTempView('source2')\n"
        "u = spark.sql('(select * from source1) UNION ALL (select * from source2)')\n"
        "u.write.parquet('s3://out/u')\n")
    r = analyze_source(source)
    assert {(c, e.dataset.key, e.field) for _, c, e in r.edges() if c} == {
        ("saleId", "s3://in/store", "saleId"), ("saleId", "s3://in/web", "orderRef"),
        ("amount", "s3://in/store", "amount"), ("amount", "s3://in/web", "total")}


def test_star_over_unknown_columns_is_reported_not_invented() -> None:
    r = _sql_job("SELECT * FROM t WHERE severity > 2",
                 frame="df = spark.read.json('s3://in/medicare')\n")
    [out] = r.outputs
    assert all(name != "*" for name, _ in out.columns)
    assert out.columns == () and [d.key for d in out.open_inputs] == ["s3://in/medicare"]
    assert any(w.line == 3 and "whose columns are not known" in w.message for w in r.warnings)


# -- SQL that writes (issue 19, finding 2) ---------------------------------------------------

RETAIL = FolderCatalog(FIXTURES / "lineage" / "corpus")
LAKE = "s3://retail-lake-123456789012"


def _retail(sql: str, prelude: str = "") -> JobLineage:
    return analyze_source(prelude + f"spark.sql({sql!r})\n", catalog=RETAIL,
                          account="123456789012", region="us-east-1")


def test_insert_overwrite_writes_by_position_into_the_catalog_columns() -> None:
    r = _retail("INSERT OVERWRITE TABLE retail.daily_totals SELECT orderDate, "
                "SUM(orderTotal) AS s FROM retail.orders GROUP BY orderDate")
    [out] = r.outputs
    assert out.dataset.key == f"{LAKE}/marts/daily_totals"
    assert out.dataset.symlinks[0].name == "table/retail/daily_totals"
    assert direct(r) == {
        (f"{LAKE}/marts/daily_totals", "day", f"{LAKE}/orders", "orderDate", "IDENTITY"),
        (f"{LAKE}/marts/daily_totals", "total", f"{LAKE}/orders", "orderTotal", "AGGREGATION")}
    assert (f"{LAKE}/marts/daily_totals", f"{LAKE}/orders", "orderDate",
            "GROUP_BY") in indirect(r)
    assert not [w for w in r.warnings if "not a query" in w.message]


def test_insert_into_with_a_column_list_and_a_cte() -> None:
    r = _retail("WITH x AS (SELECT orderTotal, orderDate FROM retail.orders) "
                "INSERT INTO retail.daily_totals (total, day) SELECT * FROM x")
    assert {(c, f) for _, c, _, f, _ in direct(r)} == {("total", "orderTotal"),
                                                        ("day", "orderDate")}


def test_ctas_writes_to_its_location_named_as_the_new_table() -> None:
    r = _retail("CREATE TABLE retail.vip USING parquet LOCATION 's3://marts/vip/' AS "
                "SELECT customerId, lower(email) AS email FROM retail.customers")
    [out] = r.outputs
    assert out.dataset.key == "s3://marts/vip"
    assert out.dataset.symlinks[0].name == "table/retail/vip"
    assert direct(r) == {
        ("s3://marts/vip", "customerId", f"{LAKE}/customers", "customerId", "IDENTITY"),
        ("s3://marts/vip", "email", f"{LAKE}/customers", "email", "TRANSFORMATION")}
    assert r.warnings == ()


def test_merge_into_takes_every_target_column_from_its_when_clauses() -> None:
    prelude = ("s = spark.read.schema('id long, state string, amount double, note string')"
               ".json('s3://cdc/orders')\n"
               "s.createOrReplaceTempView('updates')\n")
    r = _retail("MERGE INTO glue_catalog.retail.orders_iceberg t USING "
                "(SELECT id AS orderId, state AS status, amount, note FROM updates) s "
                "ON t.orderId = s.orderId "
                "WHEN MATCHED AND s.status = 'X' THEN DELETE "
                "WHEN MATCHED THEN UPDATE SET t.status = s.status, "
                "t.orderTotal = t.orderTotal + s.amount "
                "WHEN NOT MATCHED THEN INSERT (orderId, status, updatedAt) "
                "VALUES (s.orderId, upper(s.status), current_timestamp())", prelude)
    target = f"{LAKE}/iceberg/orders"
    [out] = r.outputs
    assert out.dataset.key == target
    assert direct(r) == {
        (target, "status", "s3://cdc/orders", "state", "IDENTITY"),
        (target, "status", "s3://cdc/orders", "state", "TRANSFORMATION"),
        (target, "orderTotal", "s3://cdc/orders", "amount", "TRANSFORMATION"),
        (target, "orderTotal", target, "orderTotal", "TRANSFORMATION"),
        (target, "orderId", "s3://cdc/orders", "id", "IDENTITY")}
    assert (target, "s3://cdc/orders", "id", "JOIN") in indirect(r)


def test_merge_insert_star_uses_the_target_columns_by_name() -> None:
    prelude = ("s = spark.table('retail.orders')\n"
               "s.createOrReplaceTempView('src')\n")
    r = _retail("MERGE INTO retail.orders_iceberg t USING src s ON t.orderId = s.orderId "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *", prelude)
    target = f"{LAKE}/iceberg/orders"
    cols = {(c, f) for _, c, _, f, _ in direct(r)}
    assert cols == {("orderId", "orderId"), ("customerId", "customerId"),
                    ("orderTotal", "orderTotal"), ("status", "status")}
    assert any("updatedAt" in w.message for w in r.warnings)
    assert [o.dataset.key for o in r.outputs] == [target]


def test_sql_update_temp_view_and_ddl() -> None:
    r = _retail("UPDATE retail.customers SET email = lower(email) WHERE countryCode = 'DE'",
                "spark.sql('DROP TABLE IF EXISTS retail.tmp')\n"
                "spark.sql('CREATE OR REPLACE TEMP VIEW de AS SELECT customerId AS id "
                "FROM retail.customers')\n"
                "spark.table('de').write.parquet('s3://out/de')\n")
    assert (f"{LAKE}/customers", "email", f"{LAKE}/customers", "email",
            "TRANSFORMATION") in direct(r)
    assert ("s3://out/de", "id", f"{LAKE}/customers", "customerId", "IDENTITY") in direct(r)
    assert r.warnings == ()


# -- nothing vanishes silently (issue 19, finding 3) -----------------------------------------

READ = "df = spark.read.schema('a string, b double').parquet('s3://in/t')\n"


def _outputs(r: JobLineage) -> list[str]:
    return [o.dataset.key for o in r.outputs]


def test_describe_and_summary_are_statistics_of_the_columns() -> None:
    r = analyze_source(READ + "df.describe('b').write.json('s3://out/stats')\n"
                       "df.summary().write.json('s3://out/summary')\n")
    assert direct(r) == {("s3://out/stats", "b", "s3://in/t", "b", "AGGREGATION"),
                         ("s3://out/summary", "a", "s3://in/t", "a", "AGGREGATION"),
                         ("s3://out/summary", "b", "s3://in/t", "b", "AGGREGATION")}
    assert [n for n, _ in r.outputs[0].columns] == ["summary", "b"]


def test_rdd_round_trip_and_pandas_keep_the_write_with_unknown_edges() -> None:
    r = analyze_source(READ +
                       "x = df.rdd.map(lambda r: (r[0], r[1] * 2)).toDF(['k', 'v'])\n"
                       "x.write.parquet('s3://out/x')\n"
                       "y = spark.createDataFrame(df.toPandas().dropna(), ['k', 'v'])\n"
                       "y.write.parquet('s3://out/y')\n"
                       "df.toPandas().to_csv('s3://out/z.csv')\n")
    assert direct(r) == {
        ("s3://out/x", "k", "s3://in/t", "a", "UNKNOWN"),
        ("s3://out/x", "v", "s3://in/t", "b", "UNKNOWN"),
        ("s3://out/y", "k", "s3://in/t", "a", "UNKNOWN"),
        ("s3://out/y", "v", "s3://in/t", "b", "UNKNOWN"),
        ("s3://out/z.csv", "a", "s3://in/t", "a", "IDENTITY"),
        ("s3://out/z.csv", "b", "s3://in/t", "b", "IDENTITY")}
    lines = {w.line for w in r.warnings}
    assert 2 in lines and 4 in lines


def test_unknown_frame_method_passes_columns_through_with_a_warning() -> None:
    r = analyze_source(READ + "t = df.vendorTag('x')\nt.write.parquet('s3://out/t')\n")
    assert direct(r) == {("s3://out/t", "a", "s3://in/t", "a", "UNKNOWN"),
                         ("s3://out/t", "b", "s3://in/t", "b", "UNKNOWN")}
    assert any(w.line == 2 and "vendorTag" in w.message for w in r.warnings)


def test_write_of_an_unknown_value_is_an_output_with_a_warning() -> None:
    r = analyze_source("import vendor\nvendor.load().write.parquet('s3://out/v')\n")
    assert _outputs(r) == ["s3://out/v"]
    assert any(w.line == 2 and "could not follow" in w.message for w in r.warnings)


def test_sqlcontext_hivecontext_and_write_called_as_a_method() -> None:
    r = analyze_source(
        "from pyspark.sql import SQLContext, HiveContext\n"
        "ctx = SQLContext(sc)\n"
        "d = ctx.read.parquet('s3://in/v')\n"
        "d.registerTempTable('v')\n"
        "ctx.sql('select page from v').write().parquet('s3://out/p')\n"
        "HiveContext(sc).table('sales.orders_parquet').select('order_id').write()"
        ".mode('overwrite').save('s3://out/o')\n", catalog=CATALOG)
    assert direct(r) == {("s3://out/p", "page", "s3://in/v", "page", "IDENTITY"),
                         ("s3://out/o", "order_id", ORDERS, "order_id", "IDENTITY")}


def test_work_submitted_to_pools_and_threads_is_followed() -> None:
    r = analyze_source(
        "from concurrent.futures import ThreadPoolExecutor\n"
        "import threading\n"
        "def copy(name, dest):\n"
        "    spark.read.parquet(f's3://in/{name}').select('id').write.parquet(dest + name)\n"
        "with ThreadPoolExecutor(4) as ex:\n"
        "    fs = [ex.submit(copy, n, 's3://out/') for n in ['a', 'b']]\n"
        "list(ex.map(copy, ['c'], ['s3://m/']))\n"
        "threading.Thread(target=copy, args=('d', 's3://t/')).start()\n"
        "import retrying\n"
        "retrying.call(copy, 'e', 's3://r/')\n")
    assert sorted(_outputs(r)) == ["s3://m/c", "s3://out/a", "s3://out/b", "s3://r/e",
                                   "s3://t/d"]
    assert any(w.line == 10 and "copy is passed to retrying.call()" in w.message
               for w in r.warnings)


def test_data_dependent_conditions_keep_both_branches() -> None:
    r = analyze_source(READ +
                       "seen = []\n"
                       "for row in df.collect():\n"
                       "    seen.append(row)\n"
                       "if len(seen) == 0:\n"
                       "    df.write.parquet('s3://out/full')\n"
                       "else:\n"
                       "    df.write.parquet('s3://out/delta')\n"
                       "kind = 'big' if df.count() > 10 else 'small'\n"
                       "df.write.parquet('s3://out/' + kind)\n"
                       "DEBUG = False\n"
                       "if DEBUG:\n"
                       "    df.write.parquet('s3://out/debug')\n")
    assert _outputs(r) == ["s3://out/full", "s3://out/delta", "s3://out/{?}"]
    assert any(w.line == 10 and "'big' or 'small'" in w.message for w in r.warnings)


# -- Glue Studio helpers (issue 19, finding 4) -------------------------------------------------

def test_studio_spark_aggregate_names_columns_as_spark_does() -> None:
    r = analyze_source(
        "from pyspark.sql import functions as SqlFuncs\n"
        "def sparkAggregate(glueContext, parentFrame, groups, aggs, transformation_ctx):\n"
        "    aggsFuncs = []\n"
        "    for column, func in aggs:\n"
        "        aggsFuncs.append(getattr(SqlFuncs, func)(column))\n"
        "    result = (parentFrame.toDF().groupBy(*groups).agg(*aggsFuncs)\n"
        "              if len(groups) > 0 else parentFrame.toDF().agg(*aggsFuncs))\n"
        "    return DynamicFrame.fromDF(result, glueContext, transformation_ctx)\n"
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "agg = sparkAggregate(glueContext, parentFrame=src, groups=['customer'], "
        "aggs=[['amount', 'sum'], ['order_id', 'countDistinct'], ['amount', 'mean']], "
        "transformation_ctx='a')\n"
        "glueContext.write_dynamic_frame.from_options(frame=agg, connection_type='s3', "
        "connection_options={'path': 's3://out/agg'})\n", catalog=CATALOG)
    [out] = r.outputs
    assert [n for n, _ in out.columns] == ["customer", "sum(amount)",
                                           "count(DISTINCT order_id)", "avg(amount)"]
    assert ("s3://out/agg", "sum(amount)", ORDERS, "amount", "AGGREGATION") in direct(r)
    assert r.warnings == ()


def test_apply_mapping_built_from_the_schema_at_run_time() -> None:
    r = analyze_source(
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "m = [(f.name, f.dataType.typeName(), f.name.upper(), f.dataType.typeName())\n"
        "     for f in src.schema().fields if f.name != 'lines']\n"
        "out = ApplyMapping.apply(frame=src, mappings=m)\n"
        "names = [f for f in src.toDF().schema.names]\n"
        "out.toDF().select(names[0]).write.parquet('s3://out/no')\n"
        "glueContext.write_dynamic_frame.from_options(frame=out, connection_type='s3', "
        "connection_options={'path': 's3://out/upper'})\n", catalog=CATALOG)
    got = {(c, f, s) for o, c, _, f, s in direct(r) if o == "s3://out/upper"}
    assert got == {("ORDER_ID", "order_id", "IDENTITY"), ("CUSTOMER", "customer", "IDENTITY"),
                   ("AMOUNT", "amount", "IDENTITY"), ("ORDERED_AT", "ordered_at", "IDENTITY"),
                   ("YEAR", "year", "IDENTITY"), ("MONTH", "month", "IDENTITY")}


def test_apply_mapping_from_an_unknown_schema_passes_through_with_a_warning() -> None:
    r = analyze_source(
        "src = glueContext.create_dynamic_frame.from_options(connection_type='s3', "
        "connection_options={'paths': ['s3://in/raw']}, format='json')\n"
        "m = [(f.name, 'string', f.name, 'string') for f in src.schema().fields]\n"
        "out = ApplyMapping.apply(frame=src, mappings=m)\n"
        "out.toDF().select('a').write.parquet('s3://out/a')\n")
    assert direct(r) == {("s3://out/a", "a", "s3://in/raw", "a", "IDENTITY")}
    assert any(w.line == 3 and "ApplyMapping" in w.message for w in r.warnings)


def test_resolve_choice_make_cols_is_reported() -> None:
    r = analyze_source(
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "a = ResolveChoice.apply(frame=src, choice='make_cols')\n"
        "b = src.resolveChoice(specs=[('amount', 'make_cols'), ('customer', 'project:string')])\n"
        "b.toDF().write.parquet('s3://out/b')\n", catalog=CATALOG)
    assert {w.line for w in r.warnings if "make_cols" in w.message} == {2, 3}
    assert ("s3://out/b", "customer", ORDERS, "customer", "TRANSFORMATION") in direct(r)


# -- Relationalize (issue 19, finding 5) ---------------------------------------------------------

def test_relationalize_models_one_child_table_per_array() -> None:
    r = analyze_source(
        "src = spark.read.schema('id string, who struct<name:string,tags:array<string>>, "
        "items array<struct<sku:string,qty:int>>').json('s3://in/docs')\n"
        "dfc = Relationalize.apply(frame=DynamicFrame.fromDF(src, glueContext, 'x'), "
        "staging_path='s3://tmp/', name='root')\n"
        "for key in dfc.keys():\n"
        "    dfc.select(key).toDF().write.parquet('s3://out/' + key)\n")
    edges = {(o.rsplit("/", 1)[1], c, f, s) for o, c, _, f, s in direct(r)}
    assert edges == {
        ("root", "id", "id", "IDENTITY"), ("root", "who.name", "who.name", "IDENTITY"),
        ("root", "who.tags", "who.tags", "TRANSFORMATION"),
        ("root", "items", "items", "TRANSFORMATION"),
        ("root_who.tags", "id", "who.tags", "TRANSFORMATION"),
        ("root_who.tags", "who.tags.val", "who.tags", "IDENTITY"),
        ("root_items", "id", "items", "TRANSFORMATION"),
        ("root_items", "items.val.sku", "items.sku", "IDENTITY"),
        ("root_items", "items.val.qty", "items.qty", "IDENTITY")}
    assert sorted(o.dataset.name for o in r.outputs) == ["root", "root_items", "root_who.tags"]
    child = [o for o in r.outputs if o.dataset.name == "root_items"][0]
    assert [n for n, _ in child.columns] == ["id", "index", "items.val.sku", "items.val.qty"]


# -- schema-less joins, types, renames, names (issue 19, findings 6 and 7) ---------------------

def test_join_of_two_schemaless_inputs_marks_unlisted_columns_uncertain() -> None:
    r = analyze_source(
        "a = spark.read.json('s3://in/a')\n"
        "b = spark.read.json('s3://in/b')\n"
        "j = a.join(b, 'id')\n"
        "j.select('id', 'x').write.parquet('s3://out/j')\n")
    x = [e for _, c, e in r.edges() if c == "x"]
    assert sorted(e.dataset.key for e in x) == ["s3://in/a", "s3://in/b"]
    assert all(e.description.startswith("uncertain:") for e in x)
    assert any("one of them, not all" in w.message and w.line == 4 for w in r.warnings)
    [ident] = [e for _, c, e in r.edges() if c == "id" and e.type == "DIRECT"][:1]
    assert not ident.description.startswith("uncertain:")


def test_type_spellings_are_no_cast_and_renames_carry_their_line() -> None:
    r = analyze_source(
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "m = ApplyMapping.apply(frame=src, mappings=[('order_id', 'long', 'id', 'bigint'), "
        "('amount', 'decimal(12,2)', 'amount', 'DECIMAL(12, 2)'), ('customer', 'string', "
        "'customer', 'varchar')])\n"
        "d = m.toDF().withColumnRenamed('customer', 'who')\n"
        "d.write.parquet('s3://out/m')\n", catalog=CATALOG)
    got = {(c, e.subtype, e.line) for _, c, e in r.edges() if c}
    assert got == {("id", "IDENTITY", 2), ("amount", "IDENTITY", 1), ("who", "IDENTITY", 3)}


def test_jdbc_connection_missing_from_the_catalog_has_a_readable_namespace() -> None:
    r = analyze_source(
        "d = glueContext.create_dynamic_frame.from_options(connection_type='postgresql', "
        "connection_options={'connectionName': 'crm-prod', 'dbtable': 'public.users'})\n"
        "d.toDF().select('id').write.parquet('s3://out/u')\n", catalog=CATALOG)
    [inp] = r.inputs
    assert inp.dataset.namespace == "glue-connection://crm-prod" and inp.dataset.dynamic
    assert inp.dataset.name == "public.users"


def test_job_account_comes_from_its_role_when_the_folder_does_not_say(tmp_path: Path) -> None:
    from lakemark.lineage import scan_folder

    job = tmp_path / "exports" / "jobs" / "copy"
    (job / "script").mkdir(parents=True)
    (job / "script" / "main.py").write_text(
        "spark.read.parquet('s3://in/a').write.parquet('s3://out/a')\n")
    (job / "job.json").write_text(
        '{"Job": {"Name": "copy", "Role": "arn:aws:iam::210987654321:role/glue-etl", '
        '"Command": {"Name": "glueetl", "ScriptLocation": "s3://s/main.py"}}}')
    [r] = scan_folder(tmp_path / "exports")
    assert r.namespace == "glue://210987654321-unknown"


# -- table-format writers: Delta API, DataFrameWriterV2, foreachBatch ---------------------------

def test_delta_table_merge_update_and_writer_v2() -> None:
    r = analyze_source(
        "from delta.tables import DeltaTable\n"
        "src = spark.read.schema('id long, name string, amt double').json('s3://in/u')\n"
        "dt = DeltaTable.forPath(spark, 's3://lake/users')\n"
        "(dt.alias('t').merge(src.alias('s'), 't.id = s.id')\n"
        "   .whenMatchedUpdate(set={'name': 's.name', 'total': 't.total + s.amt'})\n"
        "   .whenNotMatchedInsertAll().execute())\n"
        "dt.update(\"name = ''\", {'name': \"upper(name)\"})\n"
        "src.writeTo('glue_catalog.sales.orders_parquet').using('iceberg').append()\n",
        catalog=CATALOG)
    users = "s3://lake/users"
    assert {(c, f, s) for o, c, _, f, s in direct(r) if o == users and _ == "s3://in/u"} == {
        ("name", "name", "IDENTITY"), ("id", "id", "IDENTITY"), ("amt", "amt", "IDENTITY"),
        ("total", "amt", "TRANSFORMATION")}
    assert (users, "total", users, "total", "TRANSFORMATION") in direct(r)
    assert (users, "name", users, "name", "TRANSFORMATION") in direct(r)
    assert (ORDERS, "id", "s3://in/u", "id", "IDENTITY") in direct(r)
    assert [o.dataset.key for o in r.outputs] == [users, users, ORDERS]


def test_foreach_batch_merge_into_from_a_kafka_stream() -> None:
    r = analyze_source(
        "def upsert(batch, batch_id):\n"
        "    batch.createOrReplaceTempView('source')\n"
        "    batch.sparkSession.sql('MERGE INTO sales.orders_parquet t USING (SELECT * FROM "
        "source) ON t.order_id = source.id WHEN MATCHED THEN UPDATE SET t.amount = "
        "source.amount * 2')\n"
        "(spark.readStream.format('kafka').option('kafka.bootstrap.servers', 'b:9092')\n"
        "    .option('subscribe', 'orders').load()\n"
        "    .writeStream.foreachBatch(upsert).start().awaitTermination())\n", catalog=CATALOG)
    assert direct(r) == {(ORDERS, "amount", "kafka://b:9092/orders", "amount",
                          "TRANSFORMATION")}
    assert (ORDERS, "kafka://b:9092/orders", "id", "JOIN") in indirect(r)


def test_values_the_script_assigns_into_args_are_used() -> None:
    r = analyze_source(
        "import sys\n"
        "args = getResolvedOptions(sys.argv, ['JOB_NAME'])\n"
        "args['src_db'] = 'sales'\n"
        "d = glueContext.create_dynamic_frame_from_catalog(database=args['src_db'], "
        "table_name='orders_parquet')\n"
        "p = d.toDF().toPandas()\n"
        "p['loaded'] = 'today'\n"
        "p.to_csv('s3://out/orders.csv')\n", catalog=CATALOG)
    assert [i.dataset.key for i in r.inputs] == [ORDERS]
    assert ("s3://out/orders.csv", "customer", ORDERS, "customer", "UNKNOWN") in direct(r)
    assert any(w.line == 7 and "column assignment" in w.message for w in r.warnings)


def test_column_lists_filtered_by_membership_and_star_of_one_side() -> None:
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "a = spark.read.schema('id long, s struct<x:int,y:string>, junk string')"
        ".parquet('s3://in/a')\n"
        "b = spark.read.schema('id long, v double').parquet('s3://in/b')\n"
        "drop = ['junk']\n"
        "a2 = a.select([c for c in a.columns if c not in drop])\n"
        "j = a2.join(b, a2.id == b.id, 'left').select(a2['*'], b.v, F.col('s.*'))\n"
        "j.write.parquet('s3://out/j')\n")
    [out] = r.outputs
    assert [n for n, _ in out.columns] == ["id", "s", "v", "x", "y"]
    assert ("s3://out/j", "x", "s3://in/a", "s.x", "IDENTITY") in direct(r)
    assert r.warnings == ()


def test_unnest_iceberg_table_identifiers_mongodb_and_opensearch() -> None:
    r = analyze_source(
        "src = spark.read.schema('id long, who struct<name:string,age:int>')"
        ".json('s3://in/people')\n"
        "flat = DynamicFrame.fromDF(src, glueContext, 'x').unnest()\n"
        "flat.toDF().write.format('iceberg').mode('overwrite').save('glue_catalog.sales.flat')\n"
        "m = glueContext.create_dynamic_frame.from_options(connection_type='mongodb', "
        "connection_options={'connection.uri': 'mongodb://u:secret@mongo.internal:27017', "
        "'database': 'shop', 'collection': 'carts'})\n"
        "glueContext.write_dynamic_frame.from_options(frame=m, connection_type='opensearch', "
        "connection_options={'opensearch.nodes': 'search:443', "
        "'opensearch.resource': 'carts-idx'})\n"
        "spark.read.format('iceberg').load('glue_catalog.sales.orders_parquet')"
        ".write.parquet('s3://out/o')\n", catalog=CATALOG)
    outs = {o.dataset.key: [n for n, _ in o.columns] for o in r.outputs}
    flat = "arn:aws:glue:unknown:unknown/table/sales/flat"
    assert outs[flat] == ["id", "who.name", "who.age"]
    assert "opensearch://search:443/carts-idx" in outs
    assert "mongodb://mongo.internal:27017/shop.carts" in {i.dataset.key for i in r.inputs}
    assert ORDERS in {i.dataset.key for i in r.inputs}
    assert "secret" not in repr(r.inputs) + repr(r.outputs) + repr(r.warnings)


def test_sql_lateral_view_struct_fields_hints_and_unaliased_names() -> None:
    pre = ("d = spark.read.schema('id string, name string, s struct<a:int>, "
           "items array<struct<sku:string,qty:int>>').parquet('s3://in/t')\n"
           "d.createOrReplaceTempView('t')\n")
    r = analyze_source(pre + "spark.sql('SELECT /*+ BROADCAST(c) */ id, item.sku, x.item.qty, "
                       "item, c.s.a AS sa, upper(name) FROM t c LATERAL VIEW explode(items) x "
                       "AS item').write.parquet('s3://out/x')\n")
    [out] = r.outputs
    assert [(n, [(e.field, e.subtype) for e in edges]) for n, edges in out.columns] == [
        ("id", [("id", "IDENTITY")]), ("sku", [("items.sku", "IDENTITY")]),
        ("qty", [("items.qty", "IDENTITY")]), ("item", [("items", "TRANSFORMATION")]),
        ("sa", [("s.a", "IDENTITY")]), ("upper(name)", [("name", "TRANSFORMATION")])]
    assert r.warnings == ()


def test_dynamodb_table_from_the_catalog_and_written_directly_is_one_dataset(
        tmp_path: Path) -> None:
    import json

    (tmp_path / "catalog" / "tables").mkdir(parents=True)
    (tmp_path / "catalog" / "databases.json").write_text(
        json.dumps({"DatabaseList": [{"Name": "ddb"}]}))
    (tmp_path / "catalog" / "tables" / "ddb.json").write_text(json.dumps({"TableList": [{
        "Name": "users", "DatabaseName": "ddb", "Parameters": {"classification": "dynamodb"},
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "string"}],
                              "Location": "arn:aws:dynamodb:us-east-1:123456789012:table/users",
                              "Parameters": {"classification": "dynamodb"}}}]}))
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "u = glueContext.create_dynamic_frame.from_catalog(database='ddb', table_name='users')\n"
        "v = u.toDF().select(F.col('id').alias('user_id'))\n"
        "glueContext.write_dynamic_frame.from_options(frame=u, connection_type='dynamodb', "
        "connection_options={'dynamodb.output.tableName': 'users'})\n"
        "v.write.parquet('s3://out/v')\n",
        catalog=FolderCatalog(tmp_path), account="123456789012", region="us-east-1")
    key = "arn:aws:dynamodb:us-east-1:123456789012/table/users"
    assert [i.dataset.key for i in r.inputs] == [key]
    assert [o.dataset.key for o in r.outputs] == [key, "s3://out/v"]
    [renamed] = [e for _, c, e in r.edges() if c == "user_id"]
    assert renamed.line == 3 and renamed.subtype == "IDENTITY"


def test_rows_collected_json_rdds_and_foreach_are_not_lost() -> None:
    r = analyze_source(READ +
                       "rows = df.collect()\n"
                       "spark.createDataFrame(rows, ['a', 'b']).write.parquet('s3://out/r')\n"
                       "spark.createDataFrame([('x', 1)], 'a string, b int')"
                       ".write.parquet('s3://out/lit')\n"
                       "made = [r for r in rows]\n"
                       "spark.createDataFrame(made).write.parquet('s3://out/made')\n"
                       "df.toJSON().saveAsTextFile('s3://out/json')\n"
                       "df.foreachPartition(lambda it: None)\n")
    outs = {o.dataset.key: [(n, [(e.field, e.subtype) for e in es]) for n, es in o.columns]
            for o in r.outputs}
    assert outs["s3://out/r"] == [("a", [("a", "UNKNOWN")]), ("b", [("b", "UNKNOWN")])]
    assert outs["s3://out/lit"] == [("a", []), ("b", [])]
    assert outs["s3://out/json"] == outs["s3://out/r"]
    assert "s3://out/made" in outs
    warned = {w.line for w in r.warnings}
    assert {6, 8} <= warned


def test_glue_studio_visual_transforms_gs_methods() -> None:
    r = analyze_source(
        "import gs_derived\nimport gs_concat\n"
        "src = spark.read.schema('first string, last string, ts string, price double, "
        "qty int, s struct<a:int>').json('s3://in/p')\n"
        "d = DynamicFrame.fromDF(src, glueContext, 'x')\n"
        "d = d.gs_derived(colName='total', expr='price * qty')\n"
        "d = d.gs_concat(colName='name', colList=['first', 'last'], spacer=' ')\n"
        "d = d.gs_to_timestamp(colName='ts', colType='autodetect', newColName='when')\n"
        "d = d.gs_split(colName='`ts`', pattern='-', newColName='parts')\n"
        "d = d.gs_array_to_cols(colName='parts', colList=['y', 'm'])\n"
        "d = d.gs_now(colName='loaded')\n"
        "d = d.gs_flatten(maxLevels=1, separator='_')\n"
        "d = d.gs_explode(colName='parts', newCol='part')\n"
        "d = d.gs_regex_extract(colName='first', regex='^(.)', newCols='initial')\n"
        "d.toDF().select('total', 'name', 'when', 'y', 's_a', 'loaded', 'part', 'initial')"
        ".write.parquet('s3://out/p')\n")
    [out] = r.outputs
    assert [(n, sorted((e.field, e.subtype) for e in es)) for n, es in out.columns] == [
        ("total", [("price", "TRANSFORMATION"), ("qty", "TRANSFORMATION")]),
        ("name", [("first", "TRANSFORMATION"), ("last", "TRANSFORMATION")]),
        ("when", [("ts", "TRANSFORMATION")]), ("y", [("ts", "TRANSFORMATION")]),
        ("s_a", [("s.a", "IDENTITY")]), ("loaded", []), ("part", [("ts", "TRANSFORMATION")]),
        ("initial", [("first", "TRANSFORMATION")])]
    assert r.warnings == ()


def test_evaluate_data_quality_process_rows_is_a_collection() -> None:
    r = analyze_source(
        "from awsgluedq.transforms import EvaluateDataQuality\n"
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "dq = EvaluateDataQuality().process_rows(frame=src, ruleset='Rules = [ColumnCount > 0]',"
        " publishing_options={}, additional_options={})\n"
        "rows = SelectFromCollection.apply(dfc=dq, key='rowLevelOutcomes')\n"
        "rows.toDF().select('order_id', 'DataQualityEvaluationResult')"
        ".write.parquet('s3://out/dq')\n", catalog=CATALOG)
    assert direct(r) == {("s3://out/dq", "order_id", ORDERS, "order_id", "IDENTITY")}
    assert [n for n, _ in r.outputs[0].columns] == ["order_id", "DataQualityEvaluationResult"]
    assert r.warnings == ()


def test_jobs_written_as_classes_are_followed() -> None:
    r = analyze_source(
        "class BaseJob:\n"
        "    FORMAT = 'parquet'\n"
        "    def __init__(self, glue_context, target):\n"
        "        self.spark = glue_context.spark_session\n"
        "        self.target = target\n"
        "    def write(self, df, name):\n"
        "        df.write.format(self.FORMAT).save(f'{self.target}/{name}')\n"
        "class OrdersJob(BaseJob):\n"
        "    def extract(self):\n"
        "        return self.spark.read.schema('id long, amt double').parquet('s3://in/o')\n"
        "    @staticmethod\n"
        "    def transform(df):\n"
        "        return df.select('id', (df.amt * 2).alias('amt2'))\n"
        "    @classmethod\n"
        "    def create(cls, target):\n"
        "        return cls(GlueContext(SparkContext.getOrCreate()), target)\n"
        "    def run(self):\n"
        "        self.write(self.transform(self.extract()), 'orders')\n"
        "if __name__ == '__main__':\n"
        "    OrdersJob.create('s3://out').run()\n")
    assert direct(r) == {("s3://out/orders", "id", "s3://in/o", "id", "IDENTITY"),
                         ("s3://out/orders", "amt2", "s3://in/o", "amt", "TRANSFORMATION")}
    assert r.warnings == ()


def test_super_calls_in_script_classes() -> None:
    r = analyze_source(
        "class Base:\n"
        "    def __init__(self, spark):\n"
        "        self.spark = spark\n"
        "    def read(self):\n"
        "        return self.spark.read.schema('id long, v string').parquet('s3://in/a')\n"
        "class Child(Base):\n"
        "    def __init__(self, spark, out):\n"
        "        super().__init__(spark)\n"
        "        self.out = out\n"
        "    def read(self):\n"
        "        return super().read().select('id')\n"
        "    def run(self):\n"
        "        self.read().write.parquet(self.out)\n"
        "Child(spark, 's3://out/c').run()\n")
    assert direct(r) == {("s3://out/c", "id", "s3://in/a", "id", "IDENTITY")}


def test_options_and_returned_names_chosen_at_run_time_stay_dynamic() -> None:
    r = analyze_source(
        "import sys\n"
        "args = getResolvedOptions(sys.argv, ['env'])\n"
        "def target(env):\n"
        "    if env == 'prod':\n"
        "        return 's3://prod/out'\n"
        "    return 's3://dev/out'\n"
        "if args['env'] == 'prod':\n"
        "    opts = {'path': 's3://prod/raw'}\n"
        "else:\n"
        "    opts = {'path': 's3://dev/raw'}\n"
        "d = glueContext.create_dynamic_frame.from_options('s3', opts, format='json')\n"
        "d.toDF().select('id').write.parquet(target(args['env']))\n")
    [inp] = r.inputs
    [out] = r.outputs
    assert inp.dataset.dynamic and out.dataset.dynamic
    assert any("'s3://prod/raw' or 's3://dev/raw'" in w.message for w in r.warnings)
    assert any("'s3://prod/out' or 's3://dev/out'" in w.message for w in r.warnings)


def test_redshift_staging_table_merged_by_postactions_is_the_real_target() -> None:
    r = analyze_source(
        "src = spark.read.schema('id long, a string').parquet('s3://in/x')\n"
        "d = DynamicFrame.fromDF(src, glueContext, 'd')\n"
        "glueContext.write_dynamic_frame.from_options(frame=d, connection_type='redshift', "
        "connection_options={'postactions': 'BEGIN; MERGE INTO mart.fact USING mart.fact_tmp "
        "ON fact.id = fact_tmp.id WHEN MATCHED THEN UPDATE SET a = fact_tmp.a WHEN NOT MATCHED "
        "THEN INSERT VALUES (fact_tmp.id, fact_tmp.a); DROP TABLE mart.fact_tmp; END;', "
        "'dbtable': 'mart.fact_tmp', 'connectionName': 'rs', "
        "'url': 'jdbc:redshift://rs.example:5439/dev'})\n"
        "glueContext.write_dynamic_frame.from_jdbc_conf(frame=d, catalog_connection='rs', "
        "connection_options={'dbtable': 'mart.keep', 'database': 'dev', 'postactions': "
        "'insert into mart.t select * from mart.keep'})\n")
    assert [o.dataset.key for o in r.outputs] == ["redshift://rs.example:5439/dev.mart.fact",
                                                  "glue-connection://rs/dev.mart.keep"]
    assert not [w for w in r.warnings if w.line == 3]


def test_python2_scripts_tabs_and_format_with_job_arguments() -> None:
    source = ("import sys\n"
              "args = getResolvedOptions(sys.argv, ['db', 'table'])\n"
              "q = 'select order_id from {db}.{table}'.format(**args)\n"
              "df = spark.sql(q)\n"
              "print 'rows', df.count()\n"
              "try:\n"
              "\tdf.write.parquet('s3://out/{}'.format(args['table']))\n"
              "except Exception, e:\n"
              "    print e\n")
    r = analyze_source(source, catalog=CATALOG,
                       arguments={"db": "sales", "table": "orders_parquet"})
    assert direct(r) == {("s3://out/orders_parquet", "order_id", ORDERS, "order_id",
                          "IDENTITY")}
    assert any("Python 2" in w.message for w in r.warnings)
    r = analyze_source(source)
    assert [o.dataset.key for o in r.outputs] == ["s3://out/{?table}"]
    assert any("format field db has no value" in w.message for w in r.warnings)


def test_unknown_calls_receiving_rows_of_a_frame_pass_it_through() -> None:
    r = analyze_source(READ +
                       "d = glueContext.create_dynamic_frame.from_rdd(df.rdd, 'x')\n"
                       "glueContext.write_dynamic_frame.from_options(frame=d, "
                       "connection_type='s3', connection_options={'path': 's3://out/t'})\n")
    assert direct(r) == {("s3://out/t", "a", "s3://in/t", "a", "UNKNOWN"),
                         ("s3://out/t", "b", "s3://in/t", "b", "UNKNOWN")}
    assert any(w.line == 2 and "from_rdd" in w.message for w in r.warnings)


def test_sql_unqualified_column_of_two_schemaless_tables_is_uncertain() -> None:
    r = analyze_source(
        "spark.read.json('s3://in/a').createOrReplaceTempView('a')\n"
        "spark.read.json('s3://in/b').createOrReplaceTempView('b')\n"
        "spark.sql('SELECT a.id, model FROM a JOIN b ON a.id = b.id')"
        ".write.parquet('s3://out/j')\n")
    model = [e for _, c, e in r.edges() if c == "model"]
    assert sorted(e.dataset.key for e in model) == ["s3://in/a", "s3://in/b"]
    assert all(e.description.startswith("uncertain:") for e in model)
    [ident] = [e for _, c, e in r.edges() if c == "id"]
    assert ident.dataset.key == "s3://in/a" and not ident.description
    assert any("(model) is in one of them" in w.message for w in r.warnings)


def test_argparse_reads_job_arguments_and_dtypes_of_known_frames() -> None:
    source = (
        "import argparse\n"
        "from pyspark.sql.functions import col\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--INPUT_PATH', required=True)\n"
        "parser.add_argument('--OUTPUT_PATH', default='s3://out/default')\n"
        "args, _ = parser.parse_known_args()\n"
        "d = glueContext.create_dynamic_frame.from_options(connection_type='s3', format='csv', "
        "connection_options={'paths': [args.INPUT_PATH]})\n"
        "m = ApplyMapping.apply(frame=d, mappings=[('a', 'string', 'Index', 'string'), "
        "('b', 'string', 'Name', 'string')])\n"
        "df = m.toDF()\n"
        "for c, t in df.dtypes:\n"
        "    if c in ['Index']:\n"
        "        df = df.withColumn(c, col(c).cast('int'))\n"
        "df.write.parquet(args.OUTPUT_PATH)\n")
    r = analyze_source(source, arguments={"INPUT_PATH": "s3://in/csv"})
    assert direct(r) == {("s3://out/default", "Index", "s3://in/csv", "a", "TRANSFORMATION"),
                         ("s3://out/default", "Name", "s3://in/csv", "b", "IDENTITY")}
    assert r.warnings == ()
    r = analyze_source(source)
    assert [i.dataset.key for i in r.inputs] == ["s3://{?INPUT_PATH}/"]
    assert any("--INPUT_PATH has no value" in w.message for w in r.warnings)


def test_select_of_columns_chosen_at_run_time_passes_the_frame_through() -> None:
    r = analyze_source(
        "from pyspark.sql.functions import when, col\n"
        "df = spark.read.option('header', True).csv('s3://in/c')\n"
        "df = df.select([when(col(c) == '', None).otherwise(col(c)).alias(c) "
        "for c in df.columns])\n"
        "df.withColumnRenamed('Person ID', 'personid').select('personid', 'class')"
        ".write.parquet('s3://out/c')\n"
        "k = spark.read.schema('a string, b int').parquet('s3://in/k')\n"
        "k.select([col(c) for c in k.columns if c.startswith('a')]).write.parquet('s3://out/k')\n")
    got = {(o, c, f) for o, c, _, f, _ in direct(r)}
    assert got == {("s3://out/c", "personid", "Person ID"), ("s3://out/c", "class", "class"),
                   ("s3://out/k", "a", "a")}
    assert all(c != "?" for o in r.outputs for c, _ in o.columns)
    assert {w.line for w in r.warnings if "pass through" in w.message} == {3}


def test_columns_of_schemaless_frames_after_unknown_code_are_unknown_edges() -> None:
    r = analyze_source(
        "import vendor\n"
        "a = vendor.clean(spark.read.json('s3://in/a'))\n"
        "a.select('x').write.parquet('s3://out/a')\n"
        "b = Map.apply(frame=glueContext.create_dynamic_frame.from_options("
        "connection_type='s3', connection_options={'paths': ['s3://in/b']}, format='json'), "
        "f=lambda r: vendor.fix(r))\n"
        "b.toDF().select('y').write.parquet('s3://out/b')\n"
        "spark.read.json('s3://in/c').select('z').write.parquet('s3://out/c')\n")
    assert {(o, c, s) for o, c, _, _, s in direct(r)} == {
        ("s3://out/a", "x", "UNKNOWN"), ("s3://out/b", "y", "UNKNOWN"),
        ("s3://out/c", "z", "IDENTITY")}


def test_sql_writes_that_cannot_be_parsed_are_reported_and_directories_are_sinks() -> None:
    r = _retail("CREATE TABLE retail.vip USING parquet AS SELEC customerId FROM retail.customers",
                "spark.sql(\"INSERT OVERWRITE DIRECTORY 's3://exports/emails' "
                "SELECT email FROM retail.customers\")\n"
                "spark.sql('MSCK REPAIR TABLE retail.orders')\n")
    assert direct(r) == {("s3://exports/emails", "email", f"{LAKE}/customers", "email",
                          "IDENTITY")}
    assert [(w.line, "CREATE statement" in w.message) for w in r.warnings] == [(3, True)]


def test_count_star_is_a_row_count_not_a_star() -> None:
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "d = spark.read.schema('k string, v double').parquet('s3://in/t')\n"
        "d.groupBy('k').agg(F.count('*').alias('n'), F.count('*'), F.sum('v'))"
        ".write.parquet('s3://out/x')\n")
    [out] = r.outputs
    assert [(n, [e.field for e in es]) for n, es in out.columns] == [
        ("k", ["k"]), ("n", []), ("count(1)", []), ("sum(v)", ["v"])]


def test_unaliased_arithmetic_is_named_as_spark_names_it() -> None:
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "d = spark.read.schema('k string, v double').parquet('s3://in/t')\n"
        "d.select(d.v * 2, F.col('v') + 1, (d.v * 3).alias('t')).write.parquet('s3://out/x')\n")
    assert [n for n, _ in r.outputs[0].columns] == ["(v * 2)", "(v + 1)", "t"]


def test_jdbc_reads_of_a_query_trace_to_the_tables_it_reads() -> None:
    r = analyze_source(
        "a = glueContext.create_dynamic_frame.from_options(connection_type='postgresql', "
        "connection_options={'url': 'jdbc:postgresql://db:5432/shop', 'query': "
        "'select o.id, c.email from sales.orders o join sales.customers c on o.cid = c.id "
        "where o.total > 10'})\n"
        "a.toDF().write.parquet('s3://out/a')\n"
        "b = (spark.read.format('jdbc').option('url', 'jdbc:mysql://my:3306/crm')\n"
        "     .option('dbtable', '(select id, upper(name) as name from users) t').load())\n"
        "b.write.parquet('s3://out/b')\n")
    assert direct(r) == {
        ("s3://out/a", "id", "postgres://db:5432/shop.sales.orders", "id", "IDENTITY"),
        ("s3://out/a", "email", "postgres://db:5432/shop.sales.customers", "email", "IDENTITY"),
        ("s3://out/b", "id", "mysql://my:3306/crm.users", "id", "IDENTITY"),
        ("s3://out/b", "name", "mysql://my:3306/crm.users", "name", "TRANSFORMATION")}
    assert ("s3://out/a", "postgres://db:5432/shop.sales.orders", "total",
            "FILTER") in indirect(r)
    assert not [w for w in r.warnings if "named after" in w.message]


def test_redshift_and_snowflake_spark_connectors() -> None:
    r = analyze_source(
        "sf = {'sfURL': 'acme.snowflakecomputing.com', 'sfDatabase': 'DW', 'sfSchema': 'PUBLIC',"
        " 'sfUser': 'etl'}\n"
        "src = spark.read.format('net.snowflake.spark.snowflake').options(**sf)"
        ".option('dbtable', 'ORDERS').load()\n"
        "(src.select('ID').write.format('io.github.spark_redshift_community.spark.redshift')\n"
        "    .option('url', 'jdbc:redshift://rs:5439/dev').option('dbtable', 'public.ids')"
        ".mode('append').save())\n")
    assert direct(r) == {("redshift://rs:5439/dev.public.ids", "ID",
                          "snowflake://acme.snowflakecomputing.com/DW.PUBLIC.ORDERS", "ID",
                          "IDENTITY")}


def test_secrets_in_urls_never_reach_the_warnings() -> None:
    r = analyze_source(
        "import os\n"
        "db = os.environ['DB']\n"
        "url = f'jdbc:postgresql://etl:Hunter2@pg:5432/{db}?password=S3cret&ssl=true'\n"
        "spark.read.jdbc(url, 'public.t').write.parquet('s3://out/t')\n")
    text = " ".join(w.message for w in r.warnings) + repr(r.inputs) + repr(r.outputs)
    assert r.warnings and "Hunter2" not in text and "S3cret" not in text
    assert r.inputs[0].dataset.key == "postgres://pg:5432/{?}.public.t"


def test_hard_coded_secrets_are_masked_in_the_source_code_kept_for_output() -> None:
    r = analyze_source(
        "opts = {'user': 'etl', 'password': 'Hunter2'}\n"
        "PASSWORD = 'abc123'\n"
        "url = 'jdbc:postgresql://etl:pw1@h:5432/db?password=S3cret'\n"
        "pw = args['password']\n")
    assert "Hunter2" not in r.source_code and "abc123" not in r.source_code
    assert "pw1" not in r.source_code and "S3cret" not in r.source_code
    assert "args['password']" in r.source_code


def test_partition_directories_built_at_run_time_write_the_table_root() -> None:
    r = analyze_source(
        "import datetime\n"
        "now = datetime.datetime.now()\n"
        "df = spark.read.schema('a string').parquet('s3://in/t')\n"
        "df.write.parquet('s3://bucket/orders' + '/ingest_year=' + "
        "'{:0>4}'.format(str(now.year)) + '/ingest_month=' + str(now.month) + '/')\n"
        "df.write.parquet('s3://bucket/x/' + str(now.year) + '/')\n")
    assert [(o.dataset.key, o.dataset.dynamic) for o in r.outputs] == [
        ("s3://bucket/orders", False), ("s3://bucket/x/{?}", True)]
    assert any("datetime.datetime.now" in w.message for w in r.warnings)


def test_glue_streaming_from_a_kinesis_arn_through_for_each_batch() -> None:
    r = analyze_source(
        "src = glueContext.create_data_frame.from_options(connection_type='kinesis', "
        "connection_options={'typeOfData': 'kinesis', 'streamARN': "
        "'arn:aws:kinesis:eu-west-1:123456789012:stream/clicks', 'classification': 'json'})\n"
        "def processBatch(data_frame, batchId):\n"
        "    if data_frame.count() > 0:\n"
        "        d = DynamicFrame.fromDF(data_frame, glueContext, 'from_data_frame')\n"
        "        m = ApplyMapping.apply(frame=d, mappings=[('url', 'string', 'page', 'string')])\n"
        "        sink = glueContext.getSink(path='s3://lake/clicks/', connection_type='s3')\n"
        "        sink.writeFrame(m)\n"
        "glueContext.forEachBatch(frame=src, batch_function=processBatch, "
        "options={'windowSize': '100 seconds'})\n")
    assert direct(r) == {("s3://lake/clicks", "page", "kinesis://eu-west-1/clicks", "url",
                          "IDENTITY")}


def test_glue_studio_conditional_router_with_a_thread_pool() -> None:
    r = analyze_source(
        "import concurrent.futures\n"
        "class GroupFilter:\n"
        "    def __init__(self, name, filters):\n"
        "        self.name = name\n"
        "        self.filters = filters\n"
        "def apply_group_filter(source_DyF, group):\n"
        "    return Filter.apply(frame=source_DyF, f=group.filters)\n"
        "def threadedRoute(glue_ctx, source_DyF, group_filters):\n"
        "    dynamic_frames = {}\n"
        "    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as executor:\n"
        "        future_to_filter = {executor.submit(apply_group_filter, source_DyF, gf): gf "
        "for gf in group_filters}\n"
        "        for future in concurrent.futures.as_completed(future_to_filter):\n"
        "            gf = future_to_filter[future]\n"
        "            if future.exception() is not None:\n"
        "                print('failed')\n"
        "            else:\n"
        "                dynamic_frames[gf.name] = future.result()\n"
        "    return DynamicFrameCollection(dynamic_frames, glue_ctx)\n"
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "routed = threadedRoute(glueContext, source_DyF=src, group_filters=[\n"
        "    GroupFilter(name='big', filters=lambda row: row['amount'] > 100),\n"
        "    GroupFilter(name='default_group', filters=lambda row: not row['amount'] > 100)])\n"
        "big = SelectFromCollection.apply(dfc=routed, key='big')\n"
        "glueContext.write_dynamic_frame.from_options(frame=big, connection_type='s3', "
        "connection_options={'path': 's3://out/big'})\n", catalog=CATALOG)
    assert ("s3://out/big", "order_id", ORDERS, "order_id", "IDENTITY") in direct(r)
    assert ("s3://out/big", ORDERS, "amount", "FILTER") in indirect(r)
    assert not [w for w in r.warnings if "collection" in w.message]


def test_indexing_a_column_expression() -> None:
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "d = spark.read.schema('a string, s struct<k:int>').parquet('s3://in/t')\n"
        "d.select(F.split('a', ',')[0].alias('first'), F.col('s')['k'].alias('k'))"
        ".write.parquet('s3://out/x')\n")
    assert direct(r) == {("s3://out/x", "first", "s3://in/t", "a", "TRANSFORMATION"),
                         ("s3://out/x", "k", "s3://in/t", "s.k", "IDENTITY")}


def test_struct_fields_by_attribute() -> None:
    r = analyze_source(
        "d = spark.read.schema('a string, s struct<k:int>').parquet('s3://in/t')\n"
        "d.select(d.s.k, d.a).write.parquet('s3://out/x')\n")
    assert direct(r) == {("s3://out/x", "k", "s3://in/t", "s.k", "IDENTITY"),
                         ("s3://out/x", "a", "s3://in/t", "a", "IDENTITY")}


def test_write_from_options_with_frame_or_dfc() -> None:
    r = analyze_source(READ + "glueContext.write_from_options(frame_or_dfc="
                       "DynamicFrame.fromDF(df, glueContext, 'x'), connection_type='s3', "
                       "connection_options={'path': 's3://out/w'}, format='parquet')\n")
    assert {(o, c) for o, c, _, _, _ in direct(r)} == {("s3://out/w", "a"), ("s3://out/w", "b")}
