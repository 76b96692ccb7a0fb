"""Glue's ``Map.apply(frame, f)`` (and ``dyf.map(f)``): the record function's body, read.

A Map function takes a record (a dict) and returns it changed. When its body only does what
can be followed statically, the output columns are traced instead of all becoming UNKNOWN:

* ``rec["k"] = <expr>`` (also nested ``rec["s"]["k"]``, ``+=``, through local variables):
  column ``k`` comes from the fields ``<expr>`` reads — IDENTITY when it is one field as is
  (``rec["new"] = rec["old"]``), else TRANSFORMATION; an assignment under an ``if``/loop/``try``
  keeps the column's old edges too;
* ``del rec["k"]``, ``rec.pop("k")`` drop a column; ``rec["k"]``, ``rec.get("k")`` and
  ``rec.k`` read one;
* ``return rec`` keeps the record; ``return {"a": rec["x"], **rec}`` makes a new one.

Anything else done with the record (passing it to a function, a key computed at run time, a
``return`` of something else, an unknown shape of function) makes the function opaque: the
caller falls back to UNKNOWN edges with a warning, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ._graph import IDENTITY, TRANSFORMATION
from ._objects import Lambda, UserFunc
from ._values import Col, Frame, derive

__all__ = ["MapEffects", "apply_map", "map_effects", "row_tuple"]


@dataclass
class MapEffects:
    """What a Map function does to a record's columns."""

    #: column → (fields read, identity copy?, line, conditional?)
    assigned: dict[str, tuple[tuple[str, ...], bool, int, bool]] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    #: True when the function returns a new dict without ``**rec``: only ``assigned`` remain
    fresh: bool = False

    def subtype(self, column: str) -> str:
        return IDENTITY if self.assigned[column][1] else TRANSFORMATION


class _Opaque(Exception):
    """The function does something with the record that is not followed."""


def _key(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise _Opaque


class _Reader:
    """Fields of ``row`` an expression reads (through locals too)."""

    def __init__(self, row: str) -> None:
        self.row = row
        self.locals: dict[str, tuple[tuple[str, ...], bool]] = {}

    def field_of(self, node: ast.AST) -> str | None:
        """``row["k"]``, ``row.get("k"…)``, ``row.k`` → ``k`` (nested subscripts: the top key)."""
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id == self.row:
                return _key(node.slice)
            return self.field_of(node.value)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == self.row and node.attr not in ("get", "pop"):
            return node.attr
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == self.row and \
                node.func.attr == "get" and node.args:
            return _key(node.args[0])
        return None

    def reads(self, node: ast.AST | None) -> tuple[tuple[str, ...], bool]:
        """(fields read, is it one field as is)."""
        if node is None:
            return (), False
        if isinstance(node, ast.Name) and node.id in self.locals:
            return self.locals[node.id]
        one = self.field_of(node)
        if one is not None:
            part = isinstance(node, ast.Subscript) and not isinstance(node.value, ast.Name)
            return (one,), not part
        found: dict[str, None] = {}
        self._walk(node, found)
        return tuple(found), False

    def _walk(self, node: ast.AST, found: dict[str, None]) -> None:
        one = self.field_of(node)
        if one is not None:
            found[one] = None
            return
        if isinstance(node, ast.Name):
            if node.id == self.row:
                raise _Opaque  # the record used whole (passed on, iterated, …)
            for f in self.locals.get(node.id, ((), False))[0]:
                found[f] = None
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            raise _Opaque
        for child in ast.iter_child_nodes(node):
            self._walk(child, found)


def _target(node: ast.AST, row: str) -> str | None:
    """The top column an assignment target writes (``row["k"]`` / ``row["s"]["k"]``)."""
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, ast.Name) and node.value.id == row:
            return _key(node.slice)
        return _target(node.value, row)
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == row):
        raise _Opaque
    return None


def _assign(fx: MapEffects, r: _Reader, target: ast.AST, value: ast.AST | None, line: int,
            cond: bool, augment: bool = False) -> None:
    col = _target(target, r.row)
    reads, ident = r.reads(value)
    if col is None:
        if isinstance(target, ast.Name):
            r.locals[target.id] = (reads, ident) if not augment else (
                tuple(dict.fromkeys(r.locals.get(target.id, ((), False))[0] + reads)), False)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                _assign(fx, r, t, value, line, cond)
            return
        raise _Opaque
    nested = not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name))
    if augment or nested:
        reads, ident = tuple(dict.fromkeys((col, *reads))), False
    if col in fx.assigned and cond:
        old = fx.assigned[col]
        reads, ident = tuple(dict.fromkeys(old[0] + reads)), False
    fx.assigned[col] = (reads, ident, line, cond)
    fx.dropped.discard(col)


def _block(fx: MapEffects, r: _Reader, body: Iterable[ast.stmt], cond: bool) -> None:
    for st in body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                _assign(fx, r, t, st.value, st.lineno, cond)
        elif isinstance(st, ast.AnnAssign):
            _assign(fx, r, st.target, st.value, st.lineno, cond)
        elif isinstance(st, ast.AugAssign):
            _assign(fx, r, st.target, st.value, st.lineno, cond, augment=True)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                col = _target(t, r.row)
                if col is None:
                    raise _Opaque
                fx.dropped.add(col)
                fx.assigned.pop(col, None)
        elif isinstance(st, ast.Expr):
            v = st.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                    isinstance(v.func.value, ast.Name) and v.func.value.id == r.row:
                if v.func.attr == "pop" and v.args:
                    col = _key(v.args[0])
                    fx.dropped.add(col)
                    fx.assigned.pop(col, None)
                    continue
                raise _Opaque  # rec.update(...), rec.clear(), …
            r.reads(v)  # a call that may read fields (print(rec["x"])): no effect
        elif isinstance(st, ast.Return):
            _return(fx, r, st, cond)
        elif isinstance(st, ast.If):
            r.reads(st.test)
            _block(fx, r, st.body, True)
            _block(fx, r, st.orelse, True)
        elif isinstance(st, (ast.For, ast.While)):
            if isinstance(st, ast.For):
                r.reads(st.iter)
            _block(fx, r, st.body, True)
            _block(fx, r, st.orelse, True)
        elif isinstance(st, ast.Try):
            for part in (st.body, *(h.body for h in st.handlers), st.orelse, st.finalbody):
                _block(fx, r, part, True)
        elif isinstance(st, ast.With):
            _block(fx, r, st.body, cond)
        elif isinstance(st, (ast.Pass, ast.Import, ast.ImportFrom, ast.Raise, ast.Continue,
                             ast.Break, ast.Assert)):
            continue
        else:
            raise _Opaque


def _return(fx: MapEffects, r: _Reader, st: ast.Return, cond: bool) -> None:
    v = st.value
    if isinstance(v, ast.Name) and v.id == r.row:
        return
    if isinstance(v, ast.Dict) and not cond:
        spread = any(k is None and isinstance(val, ast.Name) and val.id == r.row
                     for k, val in zip(v.keys, v.values))
        new: dict[str, tuple[tuple[str, ...], bool, int, bool]] = {}
        for k, val in zip(v.keys, v.values):
            if k is None:
                if not (isinstance(val, ast.Name) and val.id == r.row):
                    raise _Opaque
                continue
            reads, ident = r.reads(val)
            new[_key(k)] = (reads, ident, st.lineno, False)
        if spread:
            fx.assigned.update(new)
        else:
            fx.assigned, fx.fresh = new, True
        return
    raise _Opaque


def map_effects(func: Any) -> MapEffects | None:
    """What ``func`` (a script function or lambda given to Map) does to a record, or None when
    it cannot be followed."""
    try:
        if isinstance(func, Lambda):
            params = [a.arg for a in func.node.args.args]
            if len(params) != 1:
                return None
            fx, r = MapEffects(), _Reader(params[0])
            _return(fx, r, ast.Return(value=func.node.body, lineno=func.node.lineno), False)
            return fx
        if isinstance(func, UserFunc):
            params = [a.arg for a in func.node.args.args]
            if not params:
                return None
            fx, r = MapEffects(), _Reader(params[0])
            _block(fx, r, func.node.body, False)
            return fx
    except (_Opaque, RecursionError):
        return None
    return None


def apply_map(ops: Any, frame: Any, func: Any, line: int, what: str) -> Any:
    """``frame`` after Map with ``func``: traced columns when its body can be followed
    (:func:`map_effects`), else every column UNKNOWN with a warning (``ops.opaque``)."""
    if not isinstance(frame, Frame):
        return frame
    fx = map_effects(func)
    if fx is None:
        return ops.opaque(frame, what, line)
    name = getattr(getattr(func, "node", None), "name", "lambda")
    # lines inside a function of an extra py file are not lines of the script
    here = getattr(ops, "current_file", None) or getattr(ops, "file", None)
    same_file = not isinstance(func, UserFunc) or here is None or func.file == here
    cols = {} if fx.fresh else {k: c for k, c in frame.cols.items() if k not in fx.dropped}
    for col, (reads, ident, at, cond) in fx.assigned.items():
        where = at if same_file else line
        found = [e for f in reads for e in ops._edges(frame, f, line)]
        desc = f"{what} {name}"
        if ident:
            edges = tuple(replace(e, description=desc, line=where)
                          for e in derive(found, IDENTITY, where))
        else:
            edges = derive(found, TRANSFORMATION, where, desc)
        if cond and not fx.fresh and col in frame.cols:
            # assigned only on some paths: the old value is kept on the others (one edge per
            # input column, the assignment's when both)
            merged = {(e.dataset, e.field, e.type): e for e in frame.cols[col].edges}
            merged.update({(e.dataset, e.field, e.type): e for e in edges})
            edges = tuple(merged.values())
        cols[col] = Col(edges, None)
    if fx.fresh:
        return frame.with_cols(cols, open=())
    return frame.with_cols(cols)


def row_tuple(func: Any) -> list[tuple[tuple[str, ...], bool]] | None:
    """``lambda r: (r.a, r["b"] * 2)`` given to ``rdd.map``: per element of the tuple it
    returns, the fields of the row it reads and whether it is one field as is; None when the
    function is not such a lambda (or uses the row whole)."""
    if not isinstance(func, Lambda) or len(func.node.args.args) != 1:
        return None
    body = func.node.body
    if not isinstance(body, (ast.Tuple, ast.List)):
        return None
    reader = _Reader(func.node.args.args[0].arg)
    try:
        return [reader.reads(elt) for elt in body.elts]
    except _Opaque:
        return None
