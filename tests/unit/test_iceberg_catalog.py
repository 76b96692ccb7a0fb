"""Iceberg catalog and table-name resolution (lakemark.catalog._iceberg): no JVM, no catalog I/O
except opening a real SQLite catalog in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakemark.catalog._iceberg import (
    CATALOG_ENV,
    WAREHOUSE_ENV,
    IcebergTableName,
    load_iceberg_catalog,
    parse_table_name,
    resolve_iceberg_catalog,
    spec_for_table,
)
from lakemark.errors import ConfigError


def test_default_is_sqlite_under_home(tmp_path: Path) -> None:
    spec = resolve_iceberg_catalog(env={}, home=tmp_path)
    base = tmp_path / ".lakemark" / "iceberg"
    assert spec.name == "lakemark" and spec.source == "the default"
    assert spec.properties["uri"] == f"sqlite:///{base / 'catalog.db'}"
    assert spec.warehouse == (base / "warehouse").as_uri()


def test_argument_wins_over_environment(tmp_path: Path) -> None:
    env = {CATALOG_ENV: f"sqlite:///{tmp_path / 'env.db'}"}
    assert resolve_iceberg_catalog(None, env=env).properties["uri"].endswith("env.db")
    spec = resolve_iceberg_catalog(f"sqlite:///{tmp_path / 'arg.db'}", env=env)
    assert spec.properties["uri"].endswith("arg.db")
    assert spec.warehouse == (tmp_path / "warehouse").as_uri()


def test_postgresql_needs_a_warehouse(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=WAREHOUSE_ENV) as caught:
        resolve_iceberg_catalog("postgresql://u:secret@h/db", env={})
    assert "secret" not in str(caught.value) and "***" in str(caught.value)
    spec = resolve_iceberg_catalog("postgresql://u@h/db", env={WAREHOUSE_ENV: str(tmp_path)})
    assert spec.properties["uri"] == "postgresql+psycopg://u@h/db"
    assert spec.warehouse == tmp_path.as_uri()


@pytest.mark.parametrize("value", ["mysql://h/db", "sqlite:///", "sqlite:///:memory:",
                                   "no such name!", "unconfigured"])
def test_bad_catalog_names_it_and_its_source(value: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=CATALOG_ENV) as caught:
        resolve_iceberg_catalog(None, env={CATALOG_ENV: value})
    assert repr(value) in str(caught.value)


def test_configured_catalog_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyiceberg.catalog  # noqa: F401 - imported first: its import-time config must not win

    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    (tmp_path / ".pyiceberg.yaml").write_text(
        f"catalog:\n  team:\n    type: sql\n    uri: sqlite:///{tmp_path / 'team.db'}\n"
        f"    warehouse: {tmp_path.as_uri()}\n")
    spec = resolve_iceberg_catalog("team", env={})
    assert (spec.name, spec.configured) == ("team", True)
    catalog = load_iceberg_catalog(spec)
    catalog.create_namespace("db")
    assert ("db",) in catalog.list_namespaces()
    # a three-part name picks a configured catalog over the resolved one
    default = resolve_iceberg_catalog(env={}, home=tmp_path)
    assert spec_for_table(default, parse_table_name("team.db.t")).name == "team"
    assert spec_for_table(default, parse_table_name("lakemark.db.t")) is default
    with pytest.raises(ConfigError, match="'other'"):
        spec_for_table(default, parse_table_name("other.db.t"))


def test_table_names() -> None:
    assert parse_table_name("db.events") == IcebergTableName(None, "db", "events")
    assert parse_table_name("c.db.t").identifier == ("db", "t")
    assert str(parse_table_name("c.db.t")) == "c.db.t"
    for bad in ("events", "a.b.c.d", "db..t", "db.t x", "", ".t", "db.t/../x"):
        with pytest.raises(ConfigError, match="Iceberg table name") as caught:
            parse_table_name(bad)
        assert repr(bad) in str(caught.value)
    with pytest.raises(ConfigError):
        parse_table_name(None)


def test_default_catalog_opens_and_creates_its_folder(tmp_path: Path) -> None:
    spec = resolve_iceberg_catalog(env={}, home=tmp_path)
    catalog = load_iceberg_catalog(spec)
    assert catalog.list_namespaces() == []
    assert (tmp_path / ".lakemark" / "iceberg" / "catalog.db").exists()


def test_check_write_checks_iceberg_targets_without_io(tmp_path: Path) -> None:
    from lakemark.sinks import check_write

    catalog = f"sqlite:///{tmp_path / 'c.db'}"
    check_write("db.events", format="iceberg", iceberg_catalog=catalog)
    check_write("db.events", format="iceberg", iceberg_catalog=catalog, mode="overwrite",
                partition_by=["day"], options={"mergeSchema": "true"})
    for kwargs, match in (({"options": {"mergeSchema": "maybe"}}, "mergeSchema"),
                          ({"options": {"path": "x"}}, "path")):
        with pytest.raises(ConfigError, match=match):
            check_write("db.events", format="iceberg", iceberg_catalog=catalog, **kwargs)
    with pytest.raises(ConfigError, match="'events'"):
        check_write("events", format="iceberg", iceberg_catalog=catalog)
    assert list(tmp_path.iterdir()) == []


def test_glue_resolves_to_the_glue_data_catalog_with_the_environment_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))  # no user configuration
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_REGION": "eu-west-1",
           "LAKEMARK_ICEBERG_WAREHOUSE": str(tmp_path / "wh")}
    spec = resolve_iceberg_catalog("glue", env=env)
    assert (spec.name, dict(spec.properties)) == ("glue", {
        "type": "glue", "warehouse": (tmp_path / "wh").as_uri(),
        "glue.endpoint": "http://127.0.0.1:5000", "glue.region": "eu-west-1"})
    with pytest.raises(ConfigError, match="LAKEMARK_ICEBERG_WAREHOUSE"):
        resolve_iceberg_catalog("glue", env={})


def test_an_s3_warehouse_gives_the_file_io_the_environment_endpoint_and_region(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow does not read AWS_ENDPOINT_URL, and without a region pyiceberg asks AWS where
    the bucket is: both are passed to pyiceberg's FileIO for an S3 warehouse, and only then."""
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_DEFAULT_REGION": "eu-west-1",
           "LAKEMARK_ICEBERG_WAREHOUSE": "s3://lake/wh"}
    for catalog in (f"sqlite:///{tmp_path / 'c.db'}", "glue"):
        spec = resolve_iceberg_catalog(catalog, env=env)
        assert spec.warehouse == "s3://lake/wh"
        assert (spec.properties["s3.endpoint"], spec.properties["s3.region"]) == (
            "http://127.0.0.1:5000", "eu-west-1")
    spec = resolve_iceberg_catalog("sqlite:///c.db",
                                   env={**env, "AWS_ENDPOINT_URL_S3": "http://s3.local:9000"})
    assert spec.properties["s3.endpoint"] == "http://s3.local:9000"  # botocore's order
    local = resolve_iceberg_catalog("sqlite:///c.db", env={**env, WAREHOUSE_ENV: str(tmp_path)})
    assert "s3.endpoint" not in local.properties and "s3.region" not in local.properties


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_rest_catalog_is_passed_to_pyiceberg_and_unreachable_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A REST catalog (pyiceberg configuration ``type: rest``, or an ``http(s)://`` URI) goes
    to pyiceberg's REST client as configured; one that cannot be reached is a ConfigError of
    one line naming its URI, without its credential or password."""
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    uri = f"http://127.0.0.1:{_closed_port()}/api"
    monkeypatch.setenv("PYICEBERG_CATALOG__TEAM__TYPE", "rest")
    monkeypatch.setenv("PYICEBERG_CATALOG__TEAM__URI", uri)
    monkeypatch.setenv("PYICEBERG_CATALOG__TEAM__CREDENTIAL", "client:s3cret")
    spec = resolve_iceberg_catalog(None, env={CATALOG_ENV: "team"})
    assert (spec.name, spec.properties["type"], spec.properties["uri"]) == ("team", "rest", uri)
    assert spec.properties["credential"] == "client:s3cret"
    with pytest.raises(ConfigError) as caught:
        load_iceberg_catalog(spec)
    message = str(caught.value)
    assert message.startswith(f"Iceberg catalog {uri!r} (from {CATALOG_ENV}) cannot be opened: "
                              "not reachable ([Errno 111] Connection refused")
    assert "\n" not in message and "s3cret" not in message

    with_password = uri.replace("http://", "http://me:pw0rd@")
    spec = resolve_iceberg_catalog(with_password, env={WAREHOUSE_ENV: "s3://lake/wh"})
    assert spec.properties == {"type": "rest", "uri": with_password,
                               "warehouse": "s3://lake/wh"}
    with pytest.raises(ConfigError, match="not reachable") as caught:
        load_iceberg_catalog(spec)
    assert "pw0rd" not in str(caught.value) and "me:***@127.0.0.1" in str(caught.value)


def test_a_warehouse_name_is_no_location_for_a_new_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some REST servers name warehouses (``warehouse: analytics``); lakemark writes a new
    table's files before the catalog creates it, so such a warehouse is refused by name."""
    from lakemark.sinks._iceberg import iceberg_table_root

    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.setenv("PYICEBERG_CATALOG__NAMED__URI", f"sqlite:///{tmp_path / 'n.db'}")
    monkeypatch.setenv("PYICEBERG_CATALOG__NAMED__WAREHOUSE", "analytics")
    with pytest.raises(ConfigError, match="warehouse 'analytics', not a location"):
        iceberg_table_root("db.t", mode="append", partition_by=(), options={},
                           iceberg_catalog="named")
    assert not (tmp_path / "analytics").exists()
