"""Column lineage of a DataFrame that ran, read from Spark's analyzed logical plan.

Used by runtime lineage (:mod:`lakemark.lineage.runtime`): when a job writes a DataFrame, each
output column is traced back through the plan (projections, aggregates, joins, unions,
generators, windows) to the columns of the frames the job read, with the OpenLineage type and
subtype of the step (DIRECT IDENTITY / TRANSFORMATION / AGGREGATION); conditions of filters,
join keys, grouping, sort and window keys become dataset-level INDIRECT inputs.

Spark names every column instance by an expression id. A frame the job read is recognised by
those ids; when Spark re-instantiates a relation (a self-join, a union of two frames over the
same files), the copy has new ids, so leaves are also matched by what they read (their files
or their RDD), column by column. Anything else (a literal, a relation the job did not read
through lakemark, a Python UDF node that makes new columns) simply contributes no input; a
column with no input at all is reported by the caller.

The plan is walked over Py4J: a handful of calls per node, milliseconds for the plans of ETL
jobs. Nothing here runs a Spark job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ColumnTrace", "SourceColumn", "frame_sources", "trace_columns"]

IDENTITY, TRANSFORMATION, AGGREGATION = "IDENTITY", "TRANSFORMATION", "AGGREGATION"
_RANK = {IDENTITY: 0, TRANSFORMATION: 1, AGGREGATION: 2}

#: (origin, column): origin is ``"ctx:<ctx>"`` for a frame the job read, else a leaf signature.
LeafKey = tuple[str, str]
Deps = dict[LeafKey, str]


@dataclass(frozen=True)
class SourceColumn:
    """A column of a frame the job read: the read's ``ctx`` and the column's name."""

    ctx: str
    column: str


@dataclass
class ColumnTrace:
    """What a written frame's columns came from."""

    columns: dict[str, dict[SourceColumn, str]] = field(default_factory=dict)  # name → subtype
    indirect: dict[SourceColumn, set[str]] = field(default_factory=dict)  # → FILTER, JOIN …


@dataclass
class _Sources:
    by_expr_id: dict[int, SourceColumn]
    by_leaf: dict[LeafKey, SourceColumn]
    roots: dict[tuple[int, ...], set[str]]  # output ids of a read frame → its plan's keys


def _items(seq: Any) -> list[Any]:
    """A Scala ``Seq`` as a Python list."""
    return [seq.apply(i) for i in range(seq.size())]


def _name(obj: Any) -> str:
    return str(obj.getClass().getSimpleName())


def _leaf_signature(node: Any) -> str | None:
    """What a leaf reads, stable across re-instantiation: its files, or its RDD."""
    kind = _name(node)
    try:
        if kind == "LogicalRelation":
            location = node.relation().location()
            paths = sorted(str(p) for p in _items(location.rootPaths()))
            digest = hashlib.sha256("\n".join(paths).encode()).hexdigest()[:16]
            return f"files:{digest}"
        if kind == "LogicalRDD":
            return f"rdd:{node.rdd().id()}"
    except Exception:  # noqa: BLE001 - a leaf we cannot identify contributes nothing
        return None
    return None


def _combine(deps: Deps, step: str) -> Deps:
    """The dependencies of a value computed by ``step`` from columns with ``deps``."""
    out: Deps = {}
    for key, kind in deps.items():
        out[key] = kind if step == IDENTITY else max(kind, step, key=_RANK.__getitem__)
    return out


def _merge(into: Deps, more: Mapping[LeafKey, str]) -> None:
    for key, kind in more.items():
        old = into.get(key)
        into[key] = kind if old is None else max(old, kind, key=_RANK.__getitem__)


def _is_aggregate(expr: Any) -> bool:
    return "AggregateExpression" in str(expr.toJSON()) or "WindowExpression" in str(expr.toJSON())


def _root_key(plan: Any) -> str:
    """Identifies one plan node with its expression ids (a filter over a frame differs)."""
    return hashlib.sha256(str(plan.treeString()).encode()).hexdigest()


class _Walk:
    def __init__(self, seeds: Mapping[int, LeafKey] | None = None,
                 roots: Mapping[tuple[int, ...], set[str]] | None = None) -> None:
        self.seeds = seeds or {}
        self.roots = roots or {}
        self.env: dict[int, Deps] = {}
        self.indirect: dict[LeafKey, set[str]] = {}

    def refs(self, expr: Any) -> Deps:
        deps: Deps = {}
        for attr in _items(expr.references().toSeq()):
            _merge(deps, self.env.get(int(attr.exprId().id()), {}))
        return deps

    def mark(self, exprs: Sequence[Any], subtype: str) -> None:
        for expr in exprs:
            for key in self.refs(expr):
                self.indirect.setdefault(key, set()).add(subtype)

    def visit(self, node: Any) -> list[Any]:
        output = _items(node.output())
        ids = [int(a.exprId().id()) for a in output]
        if tuple(ids) in self.roots and _root_key(node) in self.roots[tuple(ids)]:
            for i in ids:
                self.env[i] = {self.seeds[i]: IDENTITY}
            return output  # a frame the job read: its own plan does not matter here
        children = _items(node.children())
        child_outputs = [self.visit(c) for c in children]
        kind = _name(node)
        if not children:
            sig = _leaf_signature(node)
            for a, i in zip(output, ids):
                self.env.setdefault(i, {(sig, str(a.name())): IDENTITY} if sig else {})
            return output
        if kind == "Union":
            for outs in child_outputs:
                for target, attr in zip(ids, outs):
                    _merge(self.env.setdefault(target, {}),
                           self.env.get(int(attr.exprId().id()), {}))
            return output
        for expr in _items(node.expressions()):
            if _name(expr) == "Alias":
                child = expr.child()
                step = (IDENTITY if _name(child) == "AttributeReference"
                        else AGGREGATION if _is_aggregate(child) else TRANSFORMATION)
                self.env[int(expr.exprId().id())] = _combine(self.refs(child), step)
        if kind == "Filter":
            self.mark([node.condition()], "FILTER")
        elif kind == "Join":
            condition = node.condition()
            if condition.isDefined():
                self.mark([condition.get()], "JOIN")
        elif kind == "Aggregate":
            self.mark(_items(node.groupingExpressions()), "GROUP_BY")
        elif kind == "Sort":
            self.mark(_items(node.order()), "SORT")
        elif kind == "Window":
            self.mark(_items(node.partitionSpec()) + _items(node.orderSpec()), "WINDOW")
        elif kind == "Generate":
            deps = _combine(self.refs(node.generator()), TRANSFORMATION)
            for attr in _items(node.generatorOutput()):
                self.env[int(attr.exprId().id())] = dict(deps)
        return output


def frame_sources(frames: Sequence[tuple[Any, str]]) -> _Sources:
    """Index the frames a job read (``(DataFrame, ctx)``) for :func:`trace_columns`."""
    by_expr_id: dict[int, SourceColumn] = {}
    by_leaf: dict[LeafKey, SourceColumn] = {}
    roots: dict[tuple[int, ...], set[str]] = {}
    for df, ctx in frames:
        plan = df._jdf.queryExecution().analyzed()
        output = _items(plan.output())
        roots.setdefault(tuple(int(a.exprId().id()) for a in output), set()).add(_root_key(plan))
        walk = _Walk()
        walk.visit(plan)
        for attr in output:
            column = SourceColumn(ctx, str(attr.name()))
            expr_id = int(attr.exprId().id())
            by_expr_id[expr_id] = column
            deps = walk.env.get(expr_id, {})
            if len(deps) == 1 and next(iter(deps.values())) == IDENTITY:
                by_leaf.setdefault(next(iter(deps)), column)
    return _Sources(by_expr_id, by_leaf, roots)


def trace_columns(df: Any, sources: _Sources) -> ColumnTrace:
    """Each column of ``df`` → the read columns it came from, with the step's subtype."""
    seeds = {i: (f"ctx:{c.ctx}", c.column) for i, c in sources.by_expr_id.items()}
    walk = _Walk(seeds, sources.roots)
    plan = df._jdf.queryExecution().analyzed()
    output = walk.visit(plan)

    def resolve(key: LeafKey) -> SourceColumn | None:
        if key[0].startswith("ctx:"):
            return SourceColumn(key[0][4:], key[1])
        return sources.by_leaf.get(key)

    trace = ColumnTrace()
    for attr in output:
        found: dict[SourceColumn, str] = {}
        for key, kind in walk.env.get(int(attr.exprId().id()), {}).items():
            column = resolve(key)
            if column is not None:
                old = found.get(column)
                found[column] = kind if old is None else max(old, kind, key=_RANK.__getitem__)
        trace.columns[str(attr.name())] = found
    for key, subtypes in walk.indirect.items():
        column = resolve(key)
        if column is not None:
            trace.indirect.setdefault(column, set()).update(subtypes)
    return trace
