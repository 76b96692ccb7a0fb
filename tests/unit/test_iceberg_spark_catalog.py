"""Spark catalog settings (``spark.sql.catalog.<name>.*``, as passed with ``--conf``) mapped to
the matching pyiceberg catalog, and what cannot be mapped refused by name (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakemark.catalog._iceberg import resolve_iceberg_catalog, spec_for_table, parse_table_name
from lakemark.catalog._iceberg_spark import spark_catalog_spec
from lakemark.errors import ConfigError

PLUGIN = "org.apache.iceberg.spark.SparkCatalog"


def _conf(name: str = "local", **settings: str) -> dict[str, str]:
    out = {f"spark.sql.catalog.{name}": PLUGIN}
    out.update({f"spark.sql.catalog.{name}.{k.replace('_', '-')}": v
                for k, v in settings.items()})
    return out


def test_not_an_iceberg_catalog() -> None:
    assert spark_catalog_spec("local", {}, env={}) is None
    assert spark_catalog_spec("spark_catalog", {
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"},
        env={}) is None


def test_jdbc_sqlite_is_pyicebergs_sql_catalog(tmp_path: Path) -> None:
    conf = _conf(type="jdbc", uri=f"jdbc:sqlite:{tmp_path}/cat.db", warehouse=str(tmp_path),
                 io_impl="org.apache.iceberg.hadoop.HadoopFileIO")
    spec = spark_catalog_spec("local", conf, env={})
    assert spec is not None and spec.name == "local"
    assert dict(spec.properties) == {"type": "sql", "uri": f"sqlite:///{tmp_path}/cat.db",
                                     "warehouse": tmp_path.as_uri()}
    # the name keeps its catalog part, and the resolved spec is used as it is
    name = parse_table_name("local.db.events")
    assert spec_for_table(resolve_iceberg_catalog(spec), name) is spec


def test_jdbc_postgresql_takes_user_and_password(tmp_path: Path) -> None:
    conf = {**_conf(catalog_impl="org.apache.iceberg.jdbc.JdbcCatalog",
                    uri="jdbc:postgresql://db.example:5433/lake?ssl=true",
                    warehouse="s3a://bucket/wh"),
            "spark.sql.catalog.local.jdbc.user": "etl",
            "spark.sql.catalog.local.jdbc.password": "p@ss"}
    spec = spark_catalog_spec("local", conf, env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                                                  "AWS_REGION": "eu-west-1"})
    assert spec is not None
    assert spec.properties["uri"] == "postgresql+psycopg://etl:p%40ss@db.example:5433/lake"
    assert spec.properties["warehouse"] == "s3://bucket/wh"
    assert spec.properties["s3.endpoint"] == "http://127.0.0.1:9"
    assert "jdbc.password" not in spec.properties


def test_rest_glue_and_hive_pass_their_properties() -> None:
    rest = spark_catalog_spec("cat", _conf("cat", type="rest", uri="http://rest:8181",
                                           credential="id:secret", warehouse="wh"), env={})
    assert rest is not None and dict(rest.properties) == {
        "type": "rest", "uri": "http://rest:8181", "credential": "id:secret", "warehouse": "wh"}
    glue = spark_catalog_spec("glue_catalog", {
        **_conf("glue_catalog", catalog_impl="org.apache.iceberg.aws.glue.GlueCatalog",
                warehouse="s3://lake/wh", io_impl="org.apache.iceberg.aws.s3.S3FileIO"),
        "spark.sql.catalog.glue_catalog.glue.id": "123456789012"},
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_REGION": "us-east-1"})
    assert glue is not None
    assert {k: glue.properties[k] for k in ("type", "warehouse", "glue.id", "glue.endpoint",
                                            "glue.region")} == {
        "type": "glue", "warehouse": "s3://lake/wh", "glue.id": "123456789012",
        "glue.endpoint": "http://127.0.0.1:5000", "glue.region": "us-east-1"}
    hive = spark_catalog_spec("h", _conf("h", uri="thrift://metastore:9083"), env={})
    assert hive is not None and dict(hive.properties) == {"type": "hive",
                                                          "uri": "thrift://metastore:9083"}


@pytest.mark.parametrize(("settings", "match"), [
    ({"type": "hadoop", "warehouse": "s3a://lake/wh"},
     r"Spark catalog 'local' is an Iceberg Hadoop catalog \(spark.sql.catalog.local.type="
     r"hadoop\) with warehouse 's3a://lake/wh': lakemark opens Hadoop catalogs on local "
     r"folders only"),
    ({"catalog_impl": "org.apache.iceberg.hadoop.HadoopCatalog", "warehouse": "s3://lake/wh"},
     "Hadoop catalog"),
    ({"type": "hadoop"}, r"\(hadoop\) needs a warehouse"),
    ({"type": "nessie", "uri": "http://n"}, r"spark.sql.catalog.local.type=nessie has no "
                                            "pyiceberg counterpart"),
    ({"catalog_impl": "com.example.MyCatalog"}, r"catalog-impl=com.example.MyCatalog has no "
                                                "pyiceberg counterpart"),
    ({"type": "jdbc", "uri": "jdbc:mysql://h/db", "warehouse": "/w"},
     r"spark.sql.catalog.local.uri='jdbc:mysql://h/db' is not a JDBC URL lakemark maps"),
    ({"type": "jdbc", "uri": "jdbc:sqlite:/tmp/c.db"}, r"needs a warehouse: set "
                                                      r"spark.sql.catalog.local.warehouse"),
    ({"type": "rest"}, r"needs spark.sql.catalog.local.uri"),
    ({"warehouse": "/w"}, r"Hive catalog .*needs spark.sql.catalog.local.uri"),
    ({"type": "rest", "catalog_impl": "org.apache.iceberg.rest.RESTCatalog", "uri": "x"},
     "both spark.sql.catalog.local.type and spark.sql.catalog.local.catalog-impl"),
])
def test_what_cannot_be_mapped_is_refused_in_one_line(settings: dict[str, str],
                                                       match: str) -> None:
    with pytest.raises(ConfigError, match=match) as caught:
        spark_catalog_spec("local", _conf(**settings), env={})
    assert "\n" not in str(caught.value)
