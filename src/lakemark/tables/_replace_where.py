"""Delta's ``replaceWhere`` on partition columns, as deltalake partition filters (pure Python).

``replaceWhere`` with ``mode("overwrite")`` replaces only the rows the predicate selects. lakemark
supports predicates over the table's partition columns - a conjunction (``AND``) of
``col = lit``, ``col != lit`` / ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``col IN (lit, ...)`` and
``col NOT IN (...)`` - so that the overwrite removes whole files, which deltalake's
``partition_filters`` select exactly. Anything else (a data column, ``OR``, a function) is
refused naming the part it cannot take, never approximated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, UnsupportedError

__all__ = ["partition_filters"]

_IDENT = r"`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*"
_LIT = r"'(?:[^'\\]|\\.|'')*'|-?\d+(?:\.\d+)?|true|false"
_COMPARE = re.compile(rf"^\s*({_IDENT})\s*(=|==|!=|<>|<=|>=|<|>)\s*({_LIT})\s*$", re.I)
_IN = re.compile(rf"^\s*({_IDENT})\s+(not\s+in|in)\s*\((.*)\)\s*$", re.I | re.S)
_ITEM = re.compile(rf"\s*({_LIT})\s*(?:,|$)", re.I)
_AND = re.compile(r"\s+and\s+", re.I)
_OPS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _name(text: str) -> str:
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def _literal(text: str) -> str:
    if text.startswith("'"):
        return re.sub(r"''|\\(.)", lambda m: m.group(1) or "'", text[1:-1])
    return text.lower() if text.lower() in ("true", "false") else text


def _split_and(expr: str) -> list[str]:
    """Top-level ``AND`` parts (an ``and`` inside quotes does not split)."""
    parts, quoted, start = [], False, 0
    i = 0
    while i < len(expr):
        if expr[i] == "'":
            quoted = not quoted
        elif not quoted:
            match = _AND.match(expr, i)
            if match and i > 0 and expr[i].isspace():
                parts.append(expr[start:i])
                start = i = match.end()
                continue
        i += 1
    parts.append(expr[start:])
    return [p.strip() for p in parts if p.strip()]


def partition_filters(expr: str, partition_columns: Sequence[str], *,
                      table: str) -> list[tuple[str, str, Any]]:
    """The deltalake partition filters of a ``replaceWhere`` predicate over ``table``'s
    partition columns; UnsupportedError naming the part that is not one."""
    if not expr or not expr.strip():
        raise ConfigError(f"option replaceWhere for Delta table {table} is empty")
    columns = {c.lower(): c for c in partition_columns}
    out: list[tuple[str, str, Any]] = []
    text = expr.strip()
    if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1]
    for part in _split_and(text):
        compare, within = _COMPARE.match(part), _IN.match(part)
        if compare:
            name, op, value = _name(compare.group(1)), _OPS[compare.group(2)], \
                _literal(compare.group(3))
        elif within:
            name = _name(within.group(1))
            op = "not in" if within.group(2).lower().startswith("not") else "in"
            items = within.group(3)
            values = [_literal(m.group(1)) for m in _ITEM.finditer(items)]
            if not values or _ITEM.sub("", items).strip():
                raise UnsupportedError(f"replaceWhere for Delta table {table}: cannot read the "
                                       f"list in {part!r}")
            value = values  # type: ignore[assignment]
        else:
            raise UnsupportedError(
                f"replaceWhere for Delta table {table}: {part!r} is not a comparison of a "
                "partition column with a literal (lakemark supports =, !=, <, <=, >, >=, IN, "
                "NOT IN on partition columns, joined by AND)")
        if name.lower() not in columns:
            raise UnsupportedError(
                f"replaceWhere for Delta table {table}: column {name!r} is not a partition "
                f"column ({', '.join(partition_columns) or 'the table has none'}); lakemark "
                "replaces whole partitions only")
        out.append((columns[name.lower()], op, value))
    return out
