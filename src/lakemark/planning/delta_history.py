"""A Delta commit's ``operation`` and ``operationParameters`` as Delta on Spark records them
(pure: no I/O), so that ``DeltaTable.history()`` can be filtered by the names users know.

deltalake (delta-rs) writes the ``commitInfo`` of every commit lakemark makes and does not let
a caller set ``operation`` or ``operationParameters`` (it raises), so lakemark records Delta
on Spark's values for its own writes under two extra ``commitInfo`` keys,
:data:`OPERATION_KEY` and :data:`PARAMETERS_KEY` (a JSON object), and ``history()`` shows
those. For commits without them (written by delta-rs directly, or by lakemark through
deltalake's own operations) :func:`spark_view` maps delta-rs's record to Delta on Spark's:

==========================  ===================================================================
delta-rs                    Delta on Spark
==========================  ===================================================================
``WRITE``                   the same (``mode``, ``partitionBy``, ``predicate`` for replaceWhere)
``CREATE TABLE``            the same, parameters ``isManaged``, ``description``,
``CREATE OR REPLACE TABLE`` ``partitionBy``, ``properties`` taken from the recorded metadata
``UPDATE``, ``DELETE``      the same, ``predicate`` as a JSON list of predicates
``MERGE``                   the same, ``mergePredicate`` becomes ``predicate`` (a JSON list)
``OPTIMIZE``                the same, ``predicate``, ``zOrderBy`` (JSON list), ``auto``
``RESTORE``                 the same, ``version`` and ``timestamp``
others                      unchanged (``VACUUM START``/``END``, ``SET TBLPROPERTIES`` ...)
==========================  ===================================================================

Commits written by Delta on Spark already carry its names and are shown as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["OPERATION_KEY", "PARAMETERS_KEY", "SAVE_MODE_NAMES", "record", "spark_view",
           "write_record"]

OPERATION_KEY = "lakemark.operation"
PARAMETERS_KEY = "lakemark.operationParameters"

#: A save mode as Spark's ``SaveMode.name()`` spells it (what Delta records as ``mode``).
SAVE_MODE_NAMES = {"append": "Append", "overwrite": "Overwrite", "error": "ErrorIfExists",
                   "errorifexists": "ErrorIfExists", "ignore": "Ignore"}


def record(operation: str, parameters: Mapping[str, str | None]) -> dict[str, str]:
    """The ``commitInfo`` entries that make ``history()`` show ``operation`` with
    ``parameters`` for a commit lakemark writes."""
    return {OPERATION_KEY: operation, PARAMETERS_KEY: json.dumps(dict(parameters))}


def write_record(mode: str, partition_by: Sequence[str],
                 predicate: str | None = None) -> dict[str, str]:
    """Delta on Spark's record of a DataFrame write (``WRITE``): the save mode, the
    ``partitionBy`` list (JSON) and, for ``replaceWhere``, its predicate as given."""
    parameters: dict[str, str | None] = {
        "mode": SAVE_MODE_NAMES.get(mode.strip().lower(), mode),
        "partitionBy": json.dumps(list(partition_by))}
    if predicate is not None:
        parameters["predicate"] = predicate
    return record("WRITE", parameters)


def _as_list(value: Any) -> str:
    """A delta-rs predicate (text, or a JSON list as text, or absent) as Delta's JSON list."""
    if value is None or value == "":
        return "[]"
    text = str(value)
    if text.startswith("["):
        try:
            if isinstance(json.loads(text), list):
                return text
        except ValueError:
            pass
    return json.dumps([text])


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _created(parameters: Mapping[str, Any]) -> dict[str, str | None]:
    try:
        meta = json.loads(str(parameters.get("metadata") or "{}"))
    except ValueError:
        meta = {}
    return {"isManaged": "false", "description": _text(meta.get("description")),
            "partitionBy": json.dumps(list(meta.get("partitionColumns") or [])),
            "properties": json.dumps(dict(meta.get("configuration") or {}))}


def _from_delta_rs(operation: str, parameters: Mapping[str, Any]
                   ) -> dict[str, str | None] | None:
    if operation in ("CREATE TABLE", "CREATE OR REPLACE TABLE"):
        return _created(parameters)
    if operation in ("UPDATE", "DELETE"):
        return {"predicate": _as_list(parameters.get("predicate"))}
    if operation == "MERGE":
        out: dict[str, str | None] = {
            "predicate": _as_list(parameters.get("mergePredicate",
                                                 parameters.get("predicate")))}
        for key in ("matchedPredicates", "notMatchedPredicates",
                    "notMatchedBySourcePredicates"):
            out[key] = _text(parameters.get(key)) or "[]"
        return out
    if operation == "OPTIMIZE":
        return {"predicate": _as_list(parameters.get("predicate")),
                "zOrderBy": _as_list(parameters.get("zOrderBy")), "auto": "false"}
    if operation == "RESTORE":
        return {"version": _text(parameters.get("version")),
                "timestamp": _text(parameters.get("datetime", parameters.get("timestamp")))}
    return None


def spark_view(commit: Mapping[str, Any]) -> tuple[str | None, dict[str, str | None] | None]:
    """``(operation, operationParameters)`` of one ``commitInfo`` as Delta on Spark records
    them (see the module docstring)."""
    operation = commit.get("operation")
    raw = commit.get("operationParameters")
    parameters: dict[str, str | None] | None = (
        {str(k): _text(v) for k, v in raw.items()} if isinstance(raw, Mapping) else None)
    if commit.get(OPERATION_KEY):
        try:
            given = json.loads(str(commit.get(PARAMETERS_KEY) or "{}"))
        except ValueError:
            given = None
        if isinstance(given, dict):
            return str(commit[OPERATION_KEY]), {str(k): _text(v) for k, v in given.items()}
        return str(commit[OPERATION_KEY]), parameters
    engine = str(commit.get("engineInfo") or "")
    if operation is None or not engine.startswith("delta-rs"):
        return operation, parameters  # Delta on Spark's own record (or unknown): as written
    mapped = _from_delta_rs(str(operation), parameters or {})
    return str(operation), mapped if mapped is not None else parameters
