"""What lakemark's reader/writer wrapper (:mod:`lakemark.spark_io`) does for ``delta`` and
``iceberg`` under ``LAKEMARK_FORMAT_SERVING=datasource`` in a classic (py4j) session.

Spark's Python data source API has no way to receive a ``save`` call's ``errorifexists`` /
``ignore`` save modes or its ``partitionBy`` columns (Spark refuses both before the source
sees the write), nor the session's settings in the Python workers. These functions pass them
on as hidden options (:mod:`._options`) and let Spark call the registered data source; the
data source does the work.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ._options import (
    DRIVER_PID_OPTION,
    PARTITION_OPTION,
    REPLACE_WHERE_OPTION,
    SAVE_MODE_OPTION,
    SPARK_CATALOG_OPTION,
    ZONE_OPTION,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["hidden_options", "iceberg_catalog_option", "lakemark_errors", "load", "save"]

log = logging.getLogger("lakemark.datasources")


def _zone(spark: SparkSession) -> str:
    return str(spark.conf.get("spark.sql.session.timeZone") or "UTC")


def iceberg_catalog_option(spark: SparkSession, table: str) -> dict[str, str]:
    """``{SPARK_CATALOG_OPTION: json}`` with the ``spark.sql.catalog.<cat>.*`` settings of a
    three-part name's Spark catalog when it has Iceberg's plugin; else nothing."""
    from ..catalog._iceberg_spark import is_iceberg_plugin

    parts = table.split(".")
    if len(parts) != 3:
        return {}
    prefix = f"spark.sql.catalog.{parts[0]}"
    try:
        if not is_iceberg_plugin(spark.conf.get(prefix, None)):
            return {}
        conf = {k: str(v) for k, v in dict(spark.conf.getAll).items()
                if k == prefix or k.startswith(prefix + ".")}
    except Exception:  # a stopped session
        return {}
    return {SPARK_CATALOG_OPTION: json.dumps(conf)} if conf else {}


def hidden_options(spark: SparkSession, fmt: str, path: str, endpoint: str
                   ) -> dict[str, str]:
    """The options the data source needs from the driver: its S3 endpoint settings
    (``endpoint``, JSON without secrets), the session's time zone, an Iceberg name's Spark
    catalog settings."""
    from ..catalog._iceberg import CATALOG_ENV, WAREHOUSE_ENV
    from ..tables import FS_OPTION, TZ_OPTION

    settings = dict(json.loads(endpoint or "{}"))
    if fmt == "iceberg":  # the driver's catalog choice ("" unsets it in a reused worker)
        settings.update({k: os.environ.get(k, "") for k in (CATALOG_ENV, WAREHOUSE_ENV)})
    out = {FS_OPTION: json.dumps(settings), TZ_OPTION: _zone(spark), ZONE_OPTION: _zone(spark)}
    if fmt == "iceberg":
        out.update(iceberg_catalog_option(spark, path))
    return out


def load(spark: SparkSession, fmt: str, path: str, options: Mapping[str, str],
         endpoint: str) -> DataFrame:
    """``spark.read.format(fmt).options(...).load(path)`` served by the data source."""
    from pyspark.sql import DataFrame

    reader = spark._jsparkSession.read().format(fmt)
    for key, value in {**options, **hidden_options(spark, fmt, path, endpoint)}.items():
        reader = reader.option(key, str(value))
    with lakemark_errors():
        return DataFrame(reader.load(path), spark)


def save(df: DataFrame, fmt: str, path: str, mode: str | None, partition_by: Sequence[str],
         options: Mapping[str, str], endpoint: str) -> None:
    """``df.write.format(fmt).mode(mode).partitionBy(...).options(...).save(path)`` handed to
    the registered data source: the save mode and ``partitionBy`` as hidden options, Spark
    given ``append`` (or ``overwrite``). A Delta write's driver-side part runs here first
    (:func:`_delta_first`)."""
    how = (mode or "errorifexists").strip().lower()
    given = {**options, SAVE_MODE_OPTION: how, PARTITION_OPTION: json.dumps(list(partition_by)),
             DRIVER_PID_OPTION: str(os.getpid())}
    if fmt == "delta":
        with lakemark_errors():
            planned = _delta_first(df, path, how, given)
        if planned is None:
            return
        df, given = planned
    spark_mode = "overwrite" if how == "overwrite" else "append"
    writer = df._jdf.write().format(fmt).mode(spark_mode)
    given.update(hidden_options(df.sparkSession, fmt, path, endpoint))
    for key, value in given.items():
        writer = writer.option(key, str(value))
    with lakemark_errors():
        writer.save(path)


def _delta_first(df: DataFrame, path: str, how: str, options: dict[str, str]
                 ) -> tuple[DataFrame, dict[str, str]] | None:
    """What only the driver can do for a Delta write, before Spark calls the data source:
    a write already recorded (``txnAppId``/``txnVersion``) or ``ignore`` on an existing table
    is skipped here, with its log line in the driver's log (None); ``replaceWhere`` is checked
    on the DataFrame and planned with Spark (:func:`lakemark.tables._delta_save.plan_replace_where`)
    and handed over as :data:`REPLACE_WHERE_OPTION` — with the rows to keep when the predicate
    is over data columns."""
    from ..sinks import TXN_APP_ID, TXN_VERSION, token_from_options
    from ..sinks._location import open_delta, resolve_target
    from ..tables._delta_save import SAVE_MODES, already_recorded, plan_replace_where

    lower = {k.lower(): k for k in options}
    txn = {TXN_APP_ID: options[lower["txnappid"]]} if "txnappid" in lower else {}
    if "txnversion" in lower:
        txn[TXN_VERSION] = options[lower["txnversion"]]
    token = token_from_options(None, txn, format="delta",
                               mode="overwrite" if how == "overwrite" else "append")
    expr = options.get(lower.get("replacewhere", ""))
    if token is None and how != "ignore" and expr is None:
        return df, options
    target = resolve_target(path)
    table = open_delta(target)
    if already_recorded(table, token, target.root):
        return None
    if how == "ignore" and table is not None:
        log.info("writing Delta table %s skipped: it exists and the save mode is 'ignore'",
                 target.root)
        return None
    if expr is None:
        return df, options
    filters, df, removes = plan_replace_where(df, expr, SAVE_MODES.get(how, how), table,
                                         target.root, path)
    out = {k: v for k, v in options.items() if k.lower() != "replacewhere"}
    out[REPLACE_WHERE_OPTION] = json.dumps({"expr": expr, "filters": filters,
                                            "removes": [list(r) for r in removes]})
    return df, out


_RAISED = re.compile(r"lakemark\.errors\.(\w+): ([^\n]*)")


@contextlib.contextmanager
def lakemark_errors() -> Iterator[None]:
    """lakemark's own error, raised in a Python worker that planned the read or the write,
    raised again here as that error with its one line (Spark wraps it in an
    ``AnalysisException`` holding the worker's traceback)."""
    from .. import errors

    try:
        yield
    except errors.LakemarkError:
        raise
    except Exception as exc:
        found = _RAISED.findall(str(exc))
        kind = getattr(errors, found[-1][0], None) if found else None
        if isinstance(kind, type) and issubclass(kind, errors.LakemarkError):
            try:
                raised = kind(found[-1][1])
            except TypeError:  # an error class with required keywords
                raise errors.LakemarkError(found[-1][1]) from None
            raise raised from None
        raise
