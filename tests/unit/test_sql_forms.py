"""Which spark.sql statements lakemark serves on Delta/Iceberg without jars (issue 32), as
:func:`lakemark.planning.sql_forms.plan_sql` classifies them: the SQL forms of Delta's and
Iceberg's documentation, and everything else left to Spark untouched."""

from __future__ import annotations

import pytest

from lakemark.errors import ConfigError, UnsupportedError
from lakemark.planning.sql_forms import CreateAs, History, Query, TableRef, plan_sql


def test_path_table_with_version_becomes_a_view_and_the_rest_stays() -> None:
    plan = plan_sql("SELECT o.id, c.name FROM delta.`/lake/orders` VERSION AS OF 3 AS o "
                    "JOIN customers c ON o.cid = c.id WHERE o.amount > 10", view_prefix="v")
    assert isinstance(plan, Query)
    assert plan.refs == (TableRef("delta", "/lake/orders", True, "v_delta_0", version=3),)
    assert plan.sql == ("SELECT o.id, c.name FROM `v_delta_0` AS o JOIN customers AS c "
                        "ON o.cid = c.id WHERE o.amount > 10")


@pytest.mark.parametrize("clause", ["TIMESTAMP AS OF", "FOR SYSTEM_TIME AS OF"])
def test_timestamp_literal_is_kept_as_given(clause: str) -> None:
    plan = plan_sql(f"SELECT * FROM delta.`s3://b/t` {clause} '2024-05-01 10:30:00'")
    assert isinstance(plan, Query)
    assert plan.refs[0].timestamp == "2024-05-01 10:30:00" and plan.refs[0].version is None
    assert "2024" not in plan.sql  # the value never goes back into the SQL text


def test_timestamp_expression_is_left_for_spark_to_evaluate() -> None:
    plan = plan_sql("SELECT * FROM delta.`/t` TIMESTAMP AS OF date_sub(current_date(), 1)")
    assert isinstance(plan, Query) and plan.refs[0].timestamp_sql is not None
    assert "CURRENT_DATE" in plan.refs[0].timestamp_sql.upper()


def test_same_table_twice_in_a_union_and_a_cte() -> None:
    plan = plan_sql("WITH old AS (SELECT * FROM delta.`/t` VERSION AS OF 0) "
                    "SELECT * FROM delta.`/t` EXCEPT SELECT * FROM old", view_prefix="p")
    assert isinstance(plan, Query)
    assert sorted((r.view, r.version) for r in plan.refs) == [("p_delta_0", None),
                                                             ("p_delta_1", 0)]


def test_iceberg_catalog_names_and_their_time_travel() -> None:
    plan = plan_sql("SELECT * FROM local.db.events FOR SYSTEM_VERSION AS OF 10963874102873",
                    iceberg_catalogs=["local"])
    assert isinstance(plan, Query)
    assert plan.refs[0] == TableRef("iceberg", "local.db.events", False, plan.refs[0].view,
                                    version=10963874102873)
    plain = plan_sql("SELECT count(*) FROM local.db.events", iceberg_catalogs=["local"])
    assert isinstance(plain, Query) and plain.refs[0].version is None
    with pytest.raises(UnsupportedError, match="branch or tag"):
        plan_sql("SELECT * FROM local.db.events VERSION AS OF 'audit-branch'",
                 iceberg_catalogs=["local"])
    meta = plan_sql("SELECT snapshot_id FROM local.db.events.snapshots s "
                    "ORDER BY committed_at", iceberg_catalogs=["local"])
    assert isinstance(meta, Query) and meta.refs[0].metadata == "snapshots"
    assert meta.refs[0].name == "local.db.events"
    with pytest.raises(UnsupportedError, match="local.db.events.bogus is not an Iceberg "
                                               "metadata table"):
        plan_sql("SELECT * FROM local.db.events.bogus", iceberg_catalogs=["local"])


def test_names_created_here_and_time_travel_on_names_are_delta() -> None:
    plan = plan_sql("SELECT * FROM events", delta_names=["default.events"])
    assert isinstance(plan, Query) and plan.refs[0].name == "events"
    assert not plan.refs[0].by_path
    travel = plan_sql("SELECT * FROM lake.orders VERSION AS OF 1")
    assert isinstance(travel, Query) and travel.refs[0].name == "lake.orders"


@pytest.mark.parametrize("sql", [
    "SELECT * FROM orders", "SELECT * FROM parquet.`/data/x`",
    "CREATE TABLE p USING parquet AS SELECT 1 AS id", "INSERT INTO t SELECT * FROM s",
    "SELECT 'delta.`x`' AS s FROM t", "SHOW TABLES", 42])
def test_other_statements_are_sparks_own(sql: object) -> None:
    assert plan_sql(sql) is None  # type: ignore[arg-type]


def test_describe_history() -> None:
    assert plan_sql("DESCRIBE HISTORY delta.`/lake/t`") == History("/lake/t", True, None)
    assert plan_sql("desc history lake.orders limit 1;") == History("lake.orders", False, 1)
    with pytest.raises(ConfigError, match="LIMIT needs a whole number"):
        plan_sql("DESCRIBE HISTORY delta.`/t` LIMIT x")


def test_ctas_and_rtas() -> None:
    plan = plan_sql("CREATE TABLE IF NOT EXISTS delta.`/lake/daily` USING DELTA "
                    "PARTITIONED BY (day) AS SELECT day, count(*) AS n FROM delta.`/lake/t` "
                    "GROUP BY day")
    assert isinstance(plan, CreateAs)
    assert (plan.name, plan.by_path, plan.how, plan.if_not_exists, plan.partition_by) == (
        "/lake/daily", True, "create", True, ("day",))
    assert plan.operation == "CREATE TABLE AS SELECT"
    assert "delta.`/lake/t`" in plan.query  # read through the same hook when it runs
    named = plan_sql("CREATE OR REPLACE TABLE sales USING delta LOCATION '/lake/sales' "
                     "AS SELECT * FROM staging")
    assert isinstance(named, CreateAs) and named.location == "/lake/sales"
    assert named.operation == "CREATE OR REPLACE TABLE AS SELECT"
    replace = plan_sql("REPLACE TABLE delta.`/lake/daily` USING delta AS SELECT 1 AS n")
    assert isinstance(replace, CreateAs) and replace.operation == "REPLACE TABLE AS SELECT"


@pytest.mark.parametrize("sql, words", [
    ("CREATE TABLE delta.`/t` USING delta TBLPROPERTIES ('delta.appendOnly'='true') "
     "AS SELECT 1 AS id", "TBLPROPERTIES"),
    ("CREATE TABLE events (id BIGINT) USING delta", "with a column list"),
    ("MERGE INTO delta.`/t` AS t USING updates AS u ON t.id = u.id "
     "WHEN MATCHED THEN UPDATE SET *", "MERGE on delta.`/t`"),
    ("SELECT * FROM delta.`/t` VERSION AS OF 1.5", "needs an integer version"),
])
def test_refused_in_one_line_by_name(sql: str, words: str) -> None:
    with pytest.raises((ConfigError, UnsupportedError)) as info:
        plan_sql(sql)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_delete_and_update_on_delta() -> None:
    from lakemark.planning.sql_forms import DeltaDml

    assert plan_sql("DELETE FROM delta.`/lake/t` WHERE day < '2024-01-01'") == DeltaDml(
        "delete", "/lake/t", True, "day < '2024-01-01'")
    update = plan_sql("UPDATE delta.`/lake/t` AS e SET e.status = 'late', n = n + 1 "
                      "WHERE e.id = 3")
    assert update == DeltaDml("update", "/lake/t", True, "id = 3",
                              (("status", "'late'"), ("n", "n + 1")))
    assert plan_sql("DELETE FROM orders WHERE id = 1") is None  # not a Delta table here
    named = plan_sql("DELETE FROM events", delta_names=["default.events"])
    assert isinstance(named, DeltaDml) and named.condition is None and not named.by_path


def test_insert_into_delta() -> None:
    from lakemark.planning.sql_forms import DeltaInsert

    plan = plan_sql("INSERT INTO delta.`/lake/t` SELECT * FROM staging")
    assert plan == DeltaInsert("/lake/t", True, False, None, False, None,
                               "SELECT * FROM staging")
    values = plan_sql("INSERT OVERWRITE delta.`/lake/t` (id, kind) VALUES (1, 'a')")
    assert isinstance(values, DeltaInsert) and values.overwrite
    assert values.columns == ("id", "kind") and values.query.startswith("VALUES")
    replace = plan_sql("INSERT INTO delta.`/lake/t` REPLACE WHERE day = '2024-05-01' "
                       "SELECT * FROM fixes")
    assert isinstance(replace, DeltaInsert) and replace.replace_where == "day = '2024-05-01'"
    assert plan_sql("INSERT INTO orders SELECT * FROM s") is None
    with pytest.raises(UnsupportedError, match="PARTITION clause"):
        plan_sql("INSERT INTO delta.`/lake/t` PARTITION (day='x') SELECT 1")
