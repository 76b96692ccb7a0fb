"""Small helpers of the frame models: argument binding, names, type spellings and the fields
a Glue record function reads."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from ._graph import IDENTITY, ColumnEdge
from ._objects import Lambda, UserFunc
from ._values import DynStr, Unknown

__all__ = ["_bind", "_names", "_referenced_fields", "_renamed_at", "_same_type",
           "_split_type", "_text"]

def _names(value: Any) -> list[Any]:
    """A single value or a list of values (``paths=["a", "b"]`` or ``"a"``) as a list."""
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            out.extend(_names(v) if isinstance(v, (list, tuple)) else [v])
        return out
    return [] if value is None else [value]


def _bind(params: list[str], args: list[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    bound = dict(zip(params, args))
    for k, v in kwargs.items():
        bound.setdefault(k, v)
    return bound


def _text(value: Any) -> str | DynStr | None:
    if isinstance(value, (str, DynStr)):
        return value
    if isinstance(value, Unknown):
        return DynStr("{?}", value.reason)
    return None


#: Glue/Hive/Spark spellings of one type (``long`` in a DynamicFrame is ``bigint`` in SQL)
_TYPE_ALIASES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint",
                 "real": "float", "varchar": "string", "text": "string", "bool": "boolean",
                 "dec": "decimal", "numeric": "decimal"}


def _same_type(a: str, b: str) -> bool:
    """Whether two type names are the same type (so a mapping between them is no cast)."""
    def norm(t: str) -> str:
        t = t.lower().replace(" ", "")
        head, paren, rest = t.partition("(")
        return _TYPE_ALIASES.get(head, head) + paren + rest
    return norm(a) == norm(b)


def _renamed_at(edges: Iterable[ColumnEdge], line: int, old: str) -> tuple[ColumnEdge, ...]:
    """IDENTITY edges of a renamed column carry the line of the rename."""
    return tuple(ColumnEdge(e.dataset, e.field, e.type, e.subtype,
                            e.description or f"renamed from {old}", line)
                 if e.subtype == IDENTITY else e for e in edges)


def _split_type(text: str | None) -> tuple[str, list[tuple[str, str]]]:
    """A Hive/Glue type string: ``("struct", [(field, type)…])``, ``("array", [("", element
    type)])`` or ``("", [])`` for anything else."""
    if not text:
        return "", []
    t = text.strip()
    low = t.lower()
    if low.startswith("array<") and t.endswith(">"):
        return "array", [("", t[6:-1])]
    if low.startswith("struct<") and t.endswith(">"):
        fields: list[tuple[str, str]] = []
        for part in _top_level(t[7:-1]):
            name, _, ftype = part.partition(":")
            if name.strip():
                fields.append((name.strip().strip("`"), ftype.strip()))
        return "struct", fields
    return "", []


def _top_level(text: str) -> list[str]:
    """``a:int,b:struct<c:int,d:int>`` split at the commas outside ``<…>``."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _referenced_fields(func: Any) -> list[str] | None:
    """Field names a Glue Filter function reads: ``row["a"]``, ``row.a`` (None: unknown)."""
    if isinstance(func, Lambda):
        node: ast.AST = func.node.body
        params = [a.arg for a in func.node.args.args]
    elif isinstance(func, UserFunc):
        node = func.node
        params = [a.arg for a in func.node.args.args]
    else:
        return None
    if not params:
        return []
    row = params[0]
    names: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and \
                sub.value.id == row and isinstance(sub.slice, ast.Constant) and \
                isinstance(sub.slice.value, str):
            names.append(sub.slice.value)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and \
                sub.value.id == row:
            names.append(sub.attr)
    return names
