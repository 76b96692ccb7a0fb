"""The exactly-once JDBC sink's pure parts (no JVM, no database): table names, quoting, the
staging name, the connection arguments and which engines get a transactional commit."""

from __future__ import annotations

import pytest

from lakemark.errors import ConfigError
from lakemark.sinks import IdempotencyToken, JdbcTarget
from lakemark.sinks._jdbc import _connect_args, _split_table, _Sql, jdbc_dialect, staging_name


def test_table_names_split_into_schema_and_table_with_quotes_removed() -> None:
    assert _split_table("orders") == (None, "orders")
    assert _split_table("sales.orders") == ("sales", "orders")
    assert _split_table('"My Schema"."a.b ""c"""') == ("My Schema", 'a.b "c"')
    assert _split_table("`db`.`t`") == ("db", "t")
    for bad in ("a.b.c", "", "a.", '"open', "."):
        with pytest.raises(ConfigError, match="dbtable"):
            _split_table(bad)


def test_identifiers_are_quoted_per_dialect_and_values_are_placeholders() -> None:
    pg = _Sql("postgresql", 'we"ird')
    assert pg.table("t") == '"we""ird"."t"'
    assert pg.move("stage", "t", ["id", 'x"y']) == (
        'INSERT INTO "we""ird"."t" ("id", "x""y") SELECT "id", "x""y" FROM "we""ird"."stage"')
    my = _Sql("mysql", None)
    assert my.table("a`b") == "`a``b`"
    for statement in (pg.recorded(), pg.record_token(), my.recorded(), my.record_token(),
                      pg.set_rows()):
        assert "%s" in statement and "'" not in statement  # no value pasted in
    assert "ON CONFLICT" in pg.record_token() and "ON DUPLICATE KEY" in my.record_token()
    assert my.create_like("s", "t") == "CREATE TABLE `s` LIKE `t`"


def test_the_staging_table_is_named_for_target_and_token() -> None:
    one = staging_name("pg#t", IdempotencyToken("j/out", 3))
    assert one == staging_name("pg#t", IdempotencyToken("j/out", 3))
    assert one != staging_name("pg#t", IdempotencyToken("j/out", 4))
    assert one != staging_name("pg#u", IdempotencyToken("j/out", 3))
    assert one.startswith("_lakemark_stage_") and len(one) <= 63  # PostgreSQL's name limit


def test_connection_arguments_come_from_the_url_and_options() -> None:
    target = JdbcTarget({"url": "jdbc:postgresql://db.example:6543/sales?user=u&password=p",
                         "dbtable": "t"})
    assert _connect_args(target) == {"host": "db.example", "port": 6543, "dbname": "sales",
                                     "user": "u", "password": "p"}
    given = JdbcTarget({"url": "jdbc:mysql://h/d", "lakemark.url": "jdbc:mariadb://h/d",
                        "dbtable": "t", "user": "o", "password": "q"})
    assert _connect_args(given) == {"host": "h", "dbname": "d", "user": "o", "password": "q"}
    assert given.url == "jdbc:mariadb://h/d"
    assert "lakemark.url" not in given.spark_options("s")
    assert given.spark_options("s")["dbtable"] == "s"


def test_the_display_name_has_no_credentials() -> None:
    target = JdbcTarget({"url": "jdbc:postgresql://h/d?user=u&password=sekret",
                         "dbtable": "t", "password": "sekret"})
    assert "sekret" not in target.display and target.display.endswith("#t")
    for url in ("jdbc:postgresql://etl:S3c/retSlash05@127.0.0.1:9/shop",
                "jdbc:oracle:thin:scott/Orc1ePassW0rd01@//127.0.0.1:1521/orcl"):
        shown = JdbcTarget({"url": url, "dbtable": "t"}).display
        assert "S3c/ret" not in shown and "Orc1e" not in shown and "***" in shown


def test_only_postgresql_and_mysql_family_urls_get_a_transactional_commit() -> None:
    assert jdbc_dialect("jdbc:postgresql://h/d") == "postgresql"
    assert jdbc_dialect("jdbc:mariadb://h/d") == jdbc_dialect("jdbc:mysql://h/d") == "mysql"
    for url in ("jdbc:sqlserver://h;databaseName=d", "jdbc:oracle:thin:@h:1521/d",
                "jdbc:redshift://h:5439/d"):
        assert jdbc_dialect(url) is None
