"""Expressions of the lineage analyser: what a Python expression in a script evaluates to —
constants, strings with unknown parts, frames, columns, functions — without running it.

The statement side (assignments, branches, calls of script functions, imports) is
``_analyze._Interpreter``, which extends :class:`ExpressionEvaluator`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ._api import ApiModel
from ._graph import TRANSFORMATION
from ._objects import (
    Instance,
    Lambda,
    Obj,
    UserClass,
)
from ._values import ColExpr, DynStr, Frame, Unknown, combine_exprs, merge_frames

if TYPE_CHECKING:
    from ._objects import Instance as _Instance
    from ._objects import UserClass as _UserClass

__all__ = ["ExpressionEvaluator"]

#: how many items of a loop or comprehension over a known list are followed one by one
_MAX_UNROLL = 64


class _Scope(dict[str, Any]):
    """Local variables that fall back to an enclosing scope (read-only)."""

    def __init__(self, local: dict[str, Any], outer: dict[str, Any]) -> None:
        super().__init__(local)
        self.outer = outer

    def __missing__(self, key: str) -> Any:
        return self.outer[key]

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or key in self.outer

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key] if key in self else default


#: how Spark names ``col + 1``: ``(col + 1)``


#: how Spark names ``col + 1``: ``(col + 1)``
_OPERATORS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
                               ast.Mod: "%"}


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _stringish(value: Any) -> bool:
    return isinstance(value, (str, DynStr)) or (isinstance(value, Unknown))


def _as_text(value: Any) -> tuple[str, str]:
    """``(text, reason)``: the text of a value, with ``{?…}`` and a reason when unknown."""
    if isinstance(value, str):
        return value, ""
    if isinstance(value, DynStr):
        return value.text, value.reason
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value), ""
    if isinstance(value, Unknown):
        return "{?}", f"{value.reason} (line {value.line})" if value.line else value.reason
    return "{?}", "a value the analyser cannot know"


class ExpressionEvaluator(ApiModel):
    """Evaluation of expressions; the statement-level methods it calls are the
    interpreter's."""

    if TYPE_CHECKING:
        def assign(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None: ...
        def call_node(self, node: ast.Call, env: dict[str, Any]) -> Any: ...
        def iterate(self, value: Any) -> list[Any] | None: ...
        def lookup(self, name: str, env: dict[str, Any], line: int) -> Any: ...
        def member(self, owner: _Instance | _UserClass, attr: str, line: int) -> Any: ...
        def super_member(self, proxy: Obj, attr: str, line: int) -> Any: ...

    def eval(self, node: ast.expr | None, env: dict[str, Any]) -> Any:
        if node is None:
            return None
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id, env, line)
        if isinstance(node, ast.Attribute):
            owner = self.eval(node.value, env)
            if isinstance(owner, (Instance, UserClass)):
                return self.member(owner, node.attr, line)
            if isinstance(owner, Obj) and owner.kind == "super":
                return self.super_member(owner, node.attr, line)
            return self.attribute(owner, node.attr, line)
        if isinstance(node, ast.Call):
            return self.call_node(node, env)
        if isinstance(node, ast.Subscript):
            return self.subscript(self.eval(node.value, env), self.eval(node.slice, env), line)
        if isinstance(node, ast.Slice):  # cols[1:], name[:-3]: of known bounds only
            bounds = [None if b is None else self.eval(b, env)
                      for b in (node.lower, node.upper, node.step)]
            if all(b is None or (isinstance(b, int) and not isinstance(b, bool))
                   for b in bounds) and bounds[2] != 0:
                return slice(*bounds)
            return Unknown("slice", line)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[Any] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.iterate(self.eval(elt.value, env))
                    items.extend(inner or [])
                else:
                    items.append(self.eval(elt, env))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for k, v in zip(node.keys, node.values):
                value = self.eval(v, env)
                if k is None:
                    if isinstance(value, dict):
                        out.update(value)
                    continue
                key = self.eval(k, env)
                if _hashable(key):
                    out[key] = value
            return out
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, env)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.eval(node.left, env), self.eval(node.right, env),
                              line)
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v, env) for v in node.values]
            exprs = [v for v in values if isinstance(v, ColExpr)]
            if exprs:
                return combine_exprs(exprs, TRANSFORMATION, None)
            if all(isinstance(v, (bool, int, str)) and not isinstance(v, DynStr)
                   for v in values):
                result: Any = values[0]
                for v in values[1:]:
                    result = (result and v) if isinstance(node.op, ast.And) else (result or v)
                return result
            return Unknown("boolean expression", line)
        if isinstance(node, ast.Compare):
            values = [self.eval(node.left, env)] + [self.eval(c, env) for c in node.comparators]
            exprs = [v for v in values if isinstance(v, ColExpr)]
            if exprs:
                return combine_exprs(exprs, TRANSFORMATION, None)
            if len(values) == 2 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) and all(
                    isinstance(v, (str, int, float, bool)) for v in values):
                equal = values[0] == values[1]
                return equal if isinstance(node.ops[0], ast.Eq) else not equal
            if len(values) == 2 and isinstance(node.ops[0], (ast.In, ast.NotIn)) and \
                    isinstance(values[0], (str, int, float)) and \
                    isinstance(values[1], (list, tuple, dict, str)) and \
                    not any(isinstance(v, (Unknown, DynStr)) for v in (
                        values[1] if isinstance(values[1], (list, tuple)) else [])) and \
                    id(values[1]) not in self.uncertain:
                found = values[0] in values[1]
                return found if isinstance(node.ops[0], ast.In) else not found
            if len(values) == 2 and all(isinstance(v, (int, float)) for v in values):
                left, right = values
                op = node.ops[0]
                if isinstance(op, ast.Lt):
                    return left < right
                if isinstance(op, ast.LtE):
                    return left <= right
                if isinstance(op, ast.Gt):
                    return left > right
                if isinstance(op, ast.GtE):
                    return left >= right
            return Unknown("comparison", line)
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand, env)
            if isinstance(operand, ColExpr):
                return operand.then(TRANSFORMATION)
            if isinstance(node.op, ast.Not) and isinstance(operand, bool):
                return not operand
            if isinstance(node.op, ast.USub) and isinstance(operand, (int, float)) and \
                    not isinstance(operand, bool):
                return -operand  # cols[-2:]
            return Unknown("unary expression", line)
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, env)
            if isinstance(test, (bool, int, str)) and not isinstance(test, DynStr):
                return self.eval(node.body if test else node.orelse, env)
            a, b = self.eval(node.body, env), self.eval(node.orelse, env)
            return self.either(a, b, line)
        if isinstance(node, ast.Lambda):
            return Lambda(node, env)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return self.comprehension(node, env)
        if isinstance(node, ast.Starred):
            return self.eval(node.value, env)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value, env)
            self.assign(node.target, value, env)
            return value
        if isinstance(node, ast.Await):
            return self.eval(node.value, env)
        return Unknown(type(node).__name__, line)

    def either(self, a: Any, b: Any, line: int) -> Any:
        """One value standing for ``a`` or ``b`` (chosen at run time): frames merged, column
        expressions combined, different strings a dynamic string (reported where used)."""
        if isinstance(a, Frame) and isinstance(b, Frame):
            return merge_frames([a, b])
        if isinstance(a, ColExpr) and isinstance(b, ColExpr):
            return combine_exprs([a, b], TRANSFORMATION, a.name)
        if isinstance(a, (str, DynStr)) and isinstance(b, (str, DynStr)) and a != b:
            shown = [v if isinstance(v, str) else v.text for v in (a, b)]
            return DynStr("{?}", f"{shown[0]!r} or {shown[1]!r}, decided at run time "
                                 f"(line {line})")
        if a is None or isinstance(a, Unknown):
            return b
        return a

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp |
                      ast.DictComp, env: dict[str, Any]) -> Any:
        """A comprehension over a known sequence, item by item (``{k: v for …}`` too); over
        an unknown one, the element is evaluated once so calls in it (a pool's ``submit``)
        are still followed."""
        if len(node.generators) != 1:
            return Unknown("nested comprehension", node.lineno)
        gen = node.generators[0]
        items = self.iterate(self.eval(gen.iter, env))
        local = _Scope({}, env)
        if items is None:
            self.assign(gen.target, Unknown("comprehension variable", node.lineno), local)
            if isinstance(node, ast.DictComp):
                self.eval(node.key, local)
                self.eval(node.value, local)
            else:
                self.eval(node.elt, local)
            return Unknown("comprehension over an unknown sequence", node.lineno)
        out: list[Any] = []
        pairs: dict[Any, Any] = {}
        for item in items[:_MAX_UNROLL * 16]:
            self.assign(gen.target, item, local)
            keep = True
            for cond in gen.ifs:
                test = self.eval(cond, local)
                if test is False:
                    keep = False
            if not keep:
                continue
            if isinstance(node, ast.DictComp):
                key = self.eval(node.key, local)
                if _hashable(key):
                    pairs[key] = self.eval(node.value, local)
            else:
                out.append(self.eval(node.elt, local))
        return pairs if isinstance(node, ast.DictComp) else out

    def fstring(self, node: ast.JoinedStr, env: dict[str, Any]) -> Any:
        parts: list[str] = []
        reasons: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            inner = self.eval(value.value, env) if isinstance(value, ast.FormattedValue) \
                else Unknown("f-string part", node.lineno)
            text, reason = _as_text(inner)
            parts.append(text)
            if reason:
                reasons.append(reason)
        joined = "".join(parts)
        return DynStr(joined, "; ".join(reasons)) if reasons else joined

    def binop(self, op: ast.operator, left: Any, right: Any, line: int) -> Any:
        if isinstance(left, ColExpr) or isinstance(right, ColExpr):
            exprs = [v for v in (left, right) if isinstance(v, ColExpr)]
            symbol = _OPERATORS.get(type(op))
            parts = [v.name if isinstance(v, ColExpr) else
                     (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                      else None) for v in (left, right)]
            shown = f"({parts[0]} {symbol} {parts[1]})" if symbol and all(parts) else None
            return combine_exprs(exprs, TRANSFORMATION, shown, shown or "")
        if isinstance(op, ast.Add) and _stringish(left) and _stringish(right):
            (lt, lr), (rt, rr) = _as_text(left), _as_text(right)
            reasons = "; ".join(r for r in (lr, rr) if r)
            return DynStr(lt + rt, reasons) if reasons else lt + rt
        if isinstance(op, ast.Mod) and _stringish(left):
            values = right if isinstance(right, tuple) else (right,)
            texts = [_as_text(v) for v in values]
            reasons = "; ".join(r for _, r in texts if r)
            try:
                text = _as_text(left)[0] % tuple(t for t, _ in texts)
            except (TypeError, ValueError):
                return Unknown("string formatting", line)
            return DynStr(text, reasons) if reasons or isinstance(left, DynStr) else text
        if isinstance(left, (int, float)) and isinstance(right, (int, float)) and \
                isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
            if isinstance(op, ast.Add):
                return left + right
            return left - right if isinstance(op, ast.Sub) else left * right
        if isinstance(op, ast.Add) and isinstance(left, list) and isinstance(right, list):
            return left + right
        return Unknown("arithmetic", line)
