"""Reading the options Spark hands a Python data source: save mode, ``partitionBy`` and flags.

Shared by the ``delta`` and ``iceberg`` sources (:mod:`.delta`, :mod:`.iceberg`). Pure
functions of the option mapping; each bad value is one ConfigError naming the option.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError

__all__ = ["DRIVER_PID_OPTION", "FORMATS", "PARTITION_OPTION", "REPLACE_WHERE_OPTION",
           "SAVE_MODE_OPTION", "SERVED", "SERVING_DEFAULTS", "SERVING_ENV", "SERVINGS",
           "SPARK_CATALOG_OPTION", "ZONE_OPTION", "flag", "lower_options", "partition_by",
           "save_mode", "serving_choice"]

SERVING_ENV = "LAKEMARK_FORMAT_SERVING"
SERVINGS = ("patch", "datasource")
#: The format names the serving switch applies to.
FORMATS = ("delta", "iceberg")
#: What :data:`SERVING_ENV` may name: a format, or one direction of it.
SERVED = tuple(f"{f}{d}" for f in FORMATS for d in ("", ".read", ".write"))
#: The serving of what :data:`SERVING_ENV` does not name: ``datasource`` where the data source
#: measured at par with the wrapper or faster (bench/README.md sections 10 and 10b: Delta
#: writes); everything else is ``patch`` (Delta reads: the data source reads a 1 GiB table at
#: ~0.5x Spark's Parquet reader; Iceberg: its data source is ~0.5x the wrapper at 4 M rows).
SERVING_DEFAULTS = {"delta.write": "datasource"}
#: Hidden writer option: the save mode the script asked for (Spark's API passes only
#: append/overwrite to a Python data source).
SAVE_MODE_OPTION = "lakemark.saveMode"
#: Hidden writer option: the ``partitionBy`` columns, as a JSON list.
PARTITION_OPTION = "lakemark.partitionBy"
#: Hidden writer option: the session's time zone (partition values of timestamps).
ZONE_OPTION = "lakemark.sessionTimeZone"
#: Hidden reader/writer option: the ``spark.sql.catalog.<name>.*`` settings (JSON) of the
#: Spark catalog a three-part Iceberg name starts with (Python workers cannot see them). They
#: may hold credentials (``s3.secret-access-key``, ``token``): the name matches Spark's
#: ``spark.redaction.regex`` so plans, the UI and logs show its value redacted.
SPARK_CATALOG_OPTION = "lakemark.sparkCatalogSecrets"
#: Hidden Delta writer option: a ``replaceWhere`` the driver already checked and planned
#: (JSON ``{"expr", "filters", "removes"}``: deltalake partition filters, or the live files the
#: commit removes when the predicate is over data columns and the DataFrame was widened with
#: the rows they keep). Only lakemark's driver-side hook can plan it (it needs Spark).
REPLACE_WHERE_OPTION = "lakemark.replaceWherePlan"
#: Hidden writer option: the pid of the Python driver process, so that a crash-test fault
#: point reached in the driver-side commit worker kills the driver, as a lost driver dies.
DRIVER_PID_OPTION = "lakemark.driverPid"

#: Spark's save-mode names as lakemark's writers take them.
_MODES = {"append": "append", "overwrite": "overwrite", "error": "error",
          "errorifexists": "error", "default": "error", "ignore": "ignore"}


def serving_choice(raw: str) -> dict[str, str]:
    """:data:`SERVING_ENV`'s value as ``{name or "*": serving}``: one serving for every
    format (``patch``, ``datasource``) or per format or direction
    (``delta:patch,iceberg.read:datasource``)."""
    choice: dict[str, str] = {}
    items = [p.strip() for p in raw.split(",") if p.strip()]
    for item in items:
        name, sep, value = (p.strip().lower() for p in item.rpartition(":"))
        if value not in SERVINGS:
            if len(items) == 1 and not sep:
                raise ConfigError(f"{SERVING_ENV}={raw!r}: must be patch or datasource")
            raise ConfigError(f"{SERVING_ENV}={raw!r}: {item!r} must be patch, datasource or "
                              "NAME:patch|datasource")
        if sep and name not in SERVED:
            raise ConfigError(f"{SERVING_ENV}={raw!r}: unknown name {name!r} in {item!r} "
                              f"(names: {', '.join(SERVED)})")
        choice[name if sep else "*"] = value
    return choice


def lower_options(options: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """``{lower-case key: (key as given, value)}``."""
    return {str(k).lower(): (str(k), str(v)) for k, v in options.items() if v is not None}


def save_mode(what: str, options: Mapping[str, Any], overwrite: bool) -> str:
    """``append``, ``overwrite``, ``error`` or ``ignore``: the mode the script gave (hidden
    option set by lakemark's writer hook), else what Spark passed (``overwrite`` flag)."""
    given = lower_options(options).get(SAVE_MODE_OPTION.lower())
    if given is None:
        return "overwrite" if overwrite else "append"
    how = _MODES.get(given[1].strip().lower())
    if how is None:
        raise ConfigError(f"writing {what}: unknown save mode {given[1]!r} (append, overwrite, "
                          "ignore, error/errorifexists)")
    return how


def partition_by(what: str, options: Mapping[str, Any]) -> list[str]:
    """The ``partitionBy`` columns (hidden option, a JSON list of names; none when absent)."""
    given = lower_options(options).get(PARTITION_OPTION.lower())
    if given is None:
        return []
    try:
        cols = json.loads(given[1])
    except ValueError:
        cols = None
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise ConfigError(f"writing {what}: option {PARTITION_OPTION} must be a JSON list of "
                          f"column names, not {given[1]!r}")
    return cols


def flag(what: str, options: Mapping[str, Any], name: str) -> bool:
    """A true/false option (any case of its name); absent is false."""
    given = lower_options(options).get(name.lower())
    if given is None:
        return False
    text = given[1].strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"writing {what}: option {given[0]} must be true or false, not "
                          f"{given[1]!r}")
    return text == "true"
