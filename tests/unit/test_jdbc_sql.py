"""Identifier quoting and strict literal rendering for JDBC sources (no database here; the
real-PostgreSQL tests in tests/services/test_jdbc_source.py run the rendered SQL)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.jdbc import JdbcKeys, KeyRange
from lakemark.sources.jdbc_sql import (
    dialect_of,
    quote_identifier,
    quote_table,
    redact_url,
    render_literal,
    render_predicate,
    split_table_name,
)


def test_identifiers_per_dialect() -> None:
    assert quote_identifier('a"b', "postgresql") == '"a""b"'
    assert quote_identifier("a`b", "mysql") == "`a``b`"
    assert quote_identifier("a]b", "sqlserver") == "[a]]b]"
    with pytest.raises(ConfigError):
        quote_identifier("a\x00b", "postgresql")


def test_table_names_split_fold_and_requote() -> None:
    assert split_table_name("HR.Emp", "postgresql") == ["hr", "emp"]
    assert split_table_name('"My.Schema"."x""y"', "postgresql") == ["My.Schema", 'x"y']
    assert split_table_name("hr.emp", "oracle") == ["HR", "EMP"]
    assert quote_table("`a.b`.c", "mysql") == "`a.b`.`c`"
    for bad in ("", "a.", '"a', "a.b.c.d", '"a"x'):
        with pytest.raises(ConfigError, match="dbtable"):
            split_table_name(bad, "postgresql")


@given(st.text())
def test_postgres_dollar_quoting_cannot_be_closed_early(value: str) -> None:
    if "\x00" in value:
        with pytest.raises(ConfigError):
            render_literal(value, "postgresql")
        return
    text = render_literal(value, "postgresql")
    tag = text[: text.index("$", 1) + 1]
    assert text == f"{tag}{value}{tag}"
    assert (value + tag).find(tag) == len(value)


@given(st.text().filter(lambda v: "\x00" not in v))
def test_other_dialects_strings(value: str) -> None:
    assert render_literal(value, "mysql") == "_utf8mb4 X'" + value.encode().hex() + "'"
    body = render_literal(value, "sqlserver")[2:-1]
    assert body.replace("''", "") .count("'") == 0
    with pytest.raises(ConfigError, match="string bookmark keys"):
        render_literal(value, "generic")


def test_numbers_dates_and_refusals() -> None:
    assert render_literal(-12, "generic") == "-12"
    assert render_literal(Decimal("1E+3"), "generic") == "1000"
    assert render_literal(1e20, "generic") == "100000000000000000000"
    assert render_literal(dt.date(2024, 2, 29), "postgresql") == "DATE '2024-02-29'"
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert render_literal(aware, "postgresql") == \
        "TIMESTAMP WITH TIME ZONE '2024-01-01 12:00:00+02:00'"
    assert render_literal(aware, "mysql") == "TIMESTAMP '2024-01-01 10:00:00'"
    for bad in (True, None, float("nan"), Decimal("NaN"), b"x"):
        with pytest.raises(ConfigError):
            render_literal(bad, "postgresql")  # type: ignore[arg-type]


def test_predicate_rendering_uses_actual_column_names() -> None:
    r = KeyRange(JdbcKeys(("a", "b")), (1, "x"), (2, "y"))
    sql = render_predicate(r.predicate(), "postgresql", {"a": "A"})
    assert sql == ('(("A" > 1) OR ("A" = 1 AND "b" > $lm0$x$lm0$)) AND '
                   '(("A" < 2) OR ("A" = 2 AND "b" <= $lm0$y$lm0$))')
    assert render_predicate((), "postgresql") == "1=1"
    assert render_predicate(((),), "postgresql") == "1=0"


def test_dialects_and_redaction() -> None:
    assert dialect_of("jdbc:postgresql://h/db") == "postgresql"
    assert dialect_of("jdbc:mariadb://h/db") == "mysql"
    assert dialect_of("jdbc:h2:mem:") == "generic"
    assert redact_url("jdbc:mysql://h:3306/shop?user=etl&password=hunter2") == \
        "jdbc:mysql://h:3306/shop?user=etl&password=***"
    assert "pw" not in redact_url("jdbc:postgresql://u:pw@h/db")


def test_missing_driver_names_the_debian_package_and_hides_the_password() -> None:
    from lakemark.errors import EnvironmentProblem, SourceError
    from lakemark.sources.jdbc import JdbcSource, _converted, driver_jars
    from lakemark.spark import spark_settings

    source = JdbcSource("jdbc:postgresql://h/db?password=pw-hidden", "t")
    err = _converted(Exception("java.lang.ClassNotFoundException: org.postgresql.Driver"), source)
    assert isinstance(err, EnvironmentProblem) and "libpostgresql-jdbc-java" in str(err)
    other = _converted(Exception("FATAL: bad login for url jdbc:postgresql://h/db?password=pw-hidden"),
                       source)
    assert isinstance(other, SourceError) and "pw-hidden" not in str(other)
    _, settings = spark_settings("local[1]", {"spark.jars": "/x/own.jar"})
    assert settings["spark.jars"].split(",") == ["/x/own.jar", *driver_jars()]
