"""Module-level helpers of the API models: ``str.format`` placeholders, path datasets with
Hive partitions built at run time, reader schemas."""

from __future__ import annotations

import re
import string
from typing import Any

from ._datasets import path_dataset as _path_dataset
from ._graph import DatasetRef
from ._objects import Obj
from ._values import DynStr

__all__ = ["_Placeholders", "_schema_names", "path_dataset"]


class _Placeholders(string.Formatter):
    """``str.format`` that shows a field it has no value for as ``{?name}`` (e.g.
    ``sql.format(**args)`` where ``args`` are job arguments) and notes why."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__()
        self.reasons = reasons

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        try:
            return super().get_value(key, args, kwargs)
        except (IndexError, KeyError):
            self.reasons.append(f"format field {key} has no value")
            return "{?" + str(key) + "}"

    def format_field(self, value: Any, format_spec: str) -> Any:
        if isinstance(value, str) and value.startswith("{?"):
            return value
        return super().format_field(value, format_spec)


_PARTITION = re.compile(r"^[^/=]+=[^/]*\{\?[^/]*$")


def path_dataset(path: str | DynStr) -> DatasetRef:
    """The dataset of a path; a Hive-style partition directory built at run time
    (``…/orders/ingest_year={?}/ingest_month={?}/``) is part of the table at its root, so
    the dataset is the root (``…/orders``), no longer dynamic when the rest is known."""
    if isinstance(path, DynStr):
        parts = path.text.rstrip("/").split("/")
        while len(parts) > 3 and _PARTITION.match(parts[-1]):
            parts.pop()
        root = "/".join(parts)
        if root != path.text.rstrip("/"):
            return _path_dataset(DynStr(root, path.reason) if "{?" in root else root)
    return _path_dataset(path)


def _schema_names(schema: Any) -> list[tuple[str, str]]:
    """``(column, type)`` of a reader schema: a ``StructType`` (types not kept) or a DDL
    string (``"id string, items array<struct<sku:string>>"``: top-level columns only)."""
    if isinstance(schema, Obj) and schema.kind == "schema":
        return [(n, "") for n in schema.data.get("names", [])]
    if isinstance(schema, str):
        try:
            from sqlglot import exp, parse_one

            node = parse_one(f"CREATE TABLE t ({schema})", read="spark")
            body = node.this if isinstance(node.this, exp.Schema) else None
            if body is None:
                return []
            return [(c.name, c.args["kind"].sql("spark").lower().replace(": ", ":")
                     .replace(", ", ",") if c.args.get("kind") is not None else "")
                    for c in body.expressions if isinstance(c, exp.ColumnDef)]
        except Exception:  # noqa: BLE001 - an unparsable schema leaves the columns unknown
            return []
    return []
