"""Iceberg catalogs configured the Spark way, mapped to pyiceberg (pure: no I/O, no Spark).

Iceberg's Spark runtime resolves ``local.db.events`` through the session settings
``spark.sql.catalog.local = org.apache.iceberg.spark.SparkCatalog`` (or ``SparkSessionCatalog``)
and ``spark.sql.catalog.local.<property>`` (``type``, ``catalog-impl``, ``uri``, ``warehouse``
...), as people pass them with ``--conf``. Without the runtime jar, lakemark resolves the same
name through the same settings with :func:`spark_catalog_spec`, to the matching pyiceberg
catalog:

=========================================  =================================================
Spark setting                              pyiceberg catalog
=========================================  =================================================
``type=jdbc`` (``JdbcCatalog``)            SQL catalog (the same ``iceberg_tables`` schema);
                                           ``uri`` ``jdbc:sqlite:PATH`` or
                                           ``jdbc:postgresql://host[:port]/db`` (user and
                                           password from ``jdbc.user``/``jdbc.password`` or the
                                           URL), ``warehouse`` required
``type=rest`` (``RESTCatalog``)            REST, ``uri`` required; ``credential``, ``token``,
                                           ``warehouse``, ``prefix`` ... passed on
``type=glue`` (``GlueCatalog``)            Glue, ``warehouse`` required; ``glue.id``,
                                           ``client.region`` ... passed on
``type=hive`` or neither set (Iceberg's    Hive, ``uri`` (``thrift://``) required
default)
``type=hadoop`` (``HadoopCatalog``)        lakemark's Hadoop catalog on the same folder layout
                                           (:mod:`._iceberg_hadoop`), local ``warehouse`` only
``nessie``, any other ``catalog-impl``     refused in one line naming the catalog and setting:
                                           pyiceberg has no such catalog
=========================================  =================================================

Other ``spark.sql.catalog.<name>.<key>`` properties (``s3.endpoint``, ``client.region``,
``header.*`` ...) are passed on as pyiceberg reads the same names; Spark-only ones
(``io-impl``, ``cache-enabled``, ``default-namespace`` ...) are dropped. The catalog keeps its
Spark name, so ``local.db.events`` is table ``db.events`` of catalog ``local``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

from ..errors import ConfigError
from ._iceberg import IcebergCatalogSpec, _with_s3

__all__ = ["HADOOP_IMPL", "ICEBERG_PLUGINS", "is_iceberg_plugin", "local_root",
           "spark_catalog_spec"]

ICEBERG_PLUGINS = ("org.apache.iceberg.spark.SparkCatalog",
                   "org.apache.iceberg.spark.SparkSessionCatalog")
_IMPLS = {"org.apache.iceberg.jdbc.JdbcCatalog": "jdbc",
          "org.apache.iceberg.rest.RESTCatalog": "rest",
          "org.apache.iceberg.aws.glue.GlueCatalog": "glue",
          "org.apache.iceberg.hive.HiveCatalog": "hive",
          "org.apache.iceberg.hadoop.HadoopCatalog": "hadoop",
          "org.apache.iceberg.nessie.NessieCatalog": "nessie"}
_SPARK_ONLY = {"type", "catalog-impl", "io-impl", "cache-enabled", "cache.expiration-interval-ms",
               "default-namespace", "jdbc.user", "jdbc.password", "jdbc.useSSL",
               "jdbc.verifyServerCertificate", "jdbc.schema-version", "table-default",
               "table-override", "lock-impl", "metrics-reporter-impl", "clients"}


def is_iceberg_plugin(value: str | None) -> bool:
    """Whether a ``spark.sql.catalog.<name>`` value is Iceberg's Spark catalog plugin."""
    return str(value or "").strip() in ICEBERG_PLUGINS


def _sqlite(uri: str, setting: str) -> str:
    rest = uri[len("jdbc:sqlite:"):]
    if rest.startswith("file:"):
        rest = rest[len("file:"):]
    rest = rest.split("?", 1)[0]
    if not rest or rest == ":memory:":
        raise ConfigError(f"{setting}={uri!r} names no SQLite file; expected "
                          "jdbc:sqlite:/path/to/catalog.db")
    return f"sqlite:///{Path(rest).expanduser().resolve()}"


def _postgres(uri: str, props: Mapping[str, str], setting: str) -> str:
    parts = urlsplit(uri[len("jdbc:"):])
    query = dict(parse_qsl(parts.query))
    user = props.get("jdbc.user") or query.get("user") or parts.username or ""
    password = props.get("jdbc.password") or query.get("password") or parts.password or ""
    if not parts.hostname or not parts.path.strip("/"):
        raise ConfigError(f"{setting}={uri!r} is not jdbc:postgresql://host[:port]/database")
    auth = ""
    if user:
        auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "") + "@"
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql+psycopg://{auth}{parts.hostname}{port}/{parts.path.strip('/')}"


#: The ``py-catalog-impl`` that loads lakemark's Hadoop catalog (:mod:`._iceberg_hadoop`).
HADOOP_IMPL = "lakemark.catalog._iceberg_hadoop.HadoopCatalog"


def local_root(warehouse: str) -> Path:
    """The folder of a local warehouse (a path or ``file:`` URI); ValueError otherwise."""
    text = warehouse.strip()
    if text.lower().startswith("file://"):
        text = text[len("file://"):]
    elif text.lower().startswith("file:"):
        text = text[len("file:"):]
    elif "://" in text:
        raise ValueError(f"warehouse {warehouse!r} is not a local folder")
    return Path(text)


def _hadoop_warehouse(value: str | None, name: str, prefix: str) -> str:
    """A Hadoop catalog's warehouse: a local folder (Iceberg's Hadoop tables need a file system
    with atomic rename, which S3 lacks)."""
    text = str(value or "").strip()
    if not text:
        raise ConfigError(f"Spark catalog {name!r} (hadoop) needs a warehouse: set "
                          f"{prefix}.warehouse to the folder of its tables")
    try:
        return str(local_root(text).expanduser().resolve())
    except ValueError:
        raise ConfigError(f"Spark catalog {name!r} is an Iceberg Hadoop catalog ({prefix}.type="
                          f"hadoop) with warehouse {text!r}: lakemark opens Hadoop catalogs on "
                          "local folders only (their commits need a file system with atomic "
                          "rename, which S3 is not, as Iceberg documents); use type jdbc, rest "
                          "or glue for tables on S3") from None


def _warehouse(value: str | None, name: str, prefix: str, kind: str) -> str:
    text = str(value or "").strip()
    if not text:
        raise ConfigError(f"Spark catalog {name!r} ({kind}) needs a warehouse: set "
                          f"{prefix}.warehouse to the folder or s3:// prefix for table files")
    if "://" not in text:
        return Path(text).expanduser().resolve().as_uri()
    return "s3://" + text.split("://", 1)[1] if text.lower().startswith(("s3a://", "s3n://")) \
        else text


def spark_catalog_spec(name: str, conf: Mapping[str, str],
                       env: Mapping[str, str] | None = None) -> IcebergCatalogSpec | None:
    """The pyiceberg catalog Spark catalog ``name`` is configured as in ``conf`` (the
    session's settings), or None when ``spark.sql.catalog.<name>`` is not Iceberg's plugin.
    ConfigError, naming the catalog and the setting, for what pyiceberg cannot open."""
    env = os.environ if env is None else env
    prefix = f"spark.sql.catalog.{name}"
    if not is_iceberg_plugin(conf.get(prefix)):
        return None
    props = {k[len(prefix) + 1:]: str(v) for k, v in conf.items()
             if k.startswith(prefix + ".") and v is not None}
    impl = props.get("catalog-impl", "").strip()
    kind = props.get("type", "").strip().lower()
    if impl and kind:
        raise ConfigError(f"Spark catalog {name!r} sets both {prefix}.type and "
                          f"{prefix}.catalog-impl; Iceberg allows only one")
    if impl:
        if impl not in _IMPLS:
            raise ConfigError(f"Spark catalog {name!r}: {prefix}.catalog-impl={impl} has no "
                              "pyiceberg counterpart; lakemark maps the jdbc, rest, glue, hive "
                              "and hadoop catalogs (or put Iceberg's Spark runtime jar on the "
                              "classpath)")
        kind = _IMPLS[impl]
    kind = kind or "hive"  # Iceberg's default
    source = f"Spark catalog {name!r} ({prefix}.*)"
    passed = {k: v for k, v in props.items() if k not in _SPARK_ONLY}
    if kind == "jdbc":
        uri = props.get("uri", "").strip()
        if uri.lower().startswith("jdbc:sqlite:"):
            sql = _sqlite(uri, f"{prefix}.uri")
        elif uri.lower().startswith("jdbc:postgresql:"):
            sql = _postgres(uri, props, f"{prefix}.uri")
        else:
            raise ConfigError(f"Spark catalog {name!r}: {prefix}.uri={uri!r} is not a JDBC URL "
                              "lakemark maps (jdbc:sqlite:PATH or jdbc:postgresql://host/db)")
        properties = {**passed, "type": "sql", "uri": sql,
                      "warehouse": _warehouse(props.get("warehouse"), name, prefix, "jdbc")}
    elif kind == "rest":
        if not props.get("uri", "").strip():
            raise ConfigError(f"Spark catalog {name!r} (rest) needs {prefix}.uri")
        properties = {**passed, "type": "rest"}
    elif kind == "glue":
        properties = {**passed, "type": "glue",
                      "warehouse": _warehouse(props.get("warehouse"), name, prefix, "glue")}
        endpoint = (env.get("AWS_ENDPOINT_URL_GLUE") or env.get("AWS_ENDPOINT_URL") or "").strip()
        if endpoint and "glue.endpoint" not in properties:
            properties["glue.endpoint"] = endpoint
        region = (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip()
        if region and not {"glue.region", "client.region"} & set(properties):
            properties["glue.region"] = region
    elif kind == "hive":
        if not props.get("uri", "").strip():
            raise ConfigError(f"Spark catalog {name!r} is a Hive catalog ({prefix}.type=hive, "
                              f"Iceberg's default) and needs {prefix}.uri (thrift://host:9083)")
        properties = {**passed, "type": "hive"}
    elif kind == "hadoop":
        properties = {**passed, "py-catalog-impl": HADOOP_IMPL,
                      "warehouse": _hadoop_warehouse(props.get("warehouse"), name, prefix)}
    else:
        raise ConfigError(f"Spark catalog {name!r}: {prefix}.type={kind} has no pyiceberg "
                          "counterpart; lakemark maps the jdbc, rest, glue, hive and hadoop "
                          "types")
    return IcebergCatalogSpec(name, _with_s3(properties, env), configured=True, source=source)
