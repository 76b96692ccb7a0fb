"""Column lineage of Spark SQL text (``spark.sql``, Glue Studio's ``sparkSqlQuery``,
``selectExpr``, ``F.expr``, string filters), parsed with sqlglot's Spark dialect.

The query is qualified against the columns of the frames it reads (temp views the script
registered, or catalog tables), then each output column is traced through CTEs, sub-queries
and set operations down to those frames. WHERE / JOIN / GROUP BY / ORDER BY columns become
dataset-level INDIRECT edges. Nothing is executed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope, traverse_scope

from ._graph import (
    AGGREGATION,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    JOIN,
    SORT,
    TRANSFORMATION,
    ColumnEdge,
)
from ._values import Col, ColExpr, Frame, combine, derive, merge_frames

__all__ = ["SqlError", "expression_lineage", "query_lineage"]


class SqlError(Exception):
    """The SQL text could not be parsed or traced (the message says why)."""


def _kind(node: exp.Expr) -> str:
    inner = node.this if isinstance(node, exp.Alias) else node
    if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
        return IDENTITY
    if any(isinstance(n, exp.AggFunc) for n in inner.walk()) and not \
            any(isinstance(n, exp.Window) for n in inner.walk()):
        return AGGREGATION
    return TRANSFORMATION


def expression_lineage(text: str) -> ColExpr:
    """A SQL expression (``"amount * 2 as doubled"``) as a column expression."""
    try:
        node = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise SqlError(f"cannot parse SQL expression {text!r}: {_first_line(exc)}") from None
    if node is None:
        raise SqlError(f"empty SQL expression {text!r}")
    refs: list[tuple[Frame | None, str]] = []
    star = False
    for col in node.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            star = True
            continue
        name = ".".join(p for p in (col.table, col.name) if p)
        refs.append((None, name))
    if isinstance(node, exp.Star):
        star = True
    name = node.alias_or_name if isinstance(node, (exp.Alias, exp.Column)) else node.sql("spark")
    return ColExpr(tuple(refs), _kind(node), name, "" if _kind(node) == IDENTITY
                   else node.sql("spark"), star)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _set_parts(scope: Scope) -> list[Scope]:
    """The two branches of a UNION / INTERSECT / EXCEPT scope (``[]`` otherwise)."""
    return list(getattr(scope, "set_operation_scopes", None) or ())


def _case_map(tree: exp.Expr, frames: Mapping[str, Frame]) -> dict[str, str]:
    """Lowercase name → the spelling to show. sqlglot lowercases Spark identifiers while it
    qualifies a query (Spark compares them ignoring case), but Spark keeps the spelling of the
    query or of the table: names written in the query win, then the input frames' columns."""
    out: dict[str, str] = {}
    for frame in frames.values():
        for name in frame.cols:
            out.setdefault(name.lower(), name)
    written: dict[str, str] = {}
    for node in tree.find_all(exp.Alias, exp.Column):
        name = node.alias_or_name
        if name and name != "*":
            written.setdefault(name.lower(), name)
    out.update(written)
    return out


def _is_star(node: exp.Expr) -> bool:
    return isinstance(node, exp.Star) or (isinstance(node, exp.Column)
                                          and isinstance(node.this, exp.Star))


def _table_key(table: exp.Table) -> str:
    return ".".join(p for p in (table.db, table.name) if p).lower()


def query_lineage(query: str, resolve: Callable[[str], Frame | None], line: int,
                  warn: Callable[[str, int], None]) -> Frame:
    """The frame a SQL query returns; ``resolve`` maps a table name (``view`` or ``db.t``,
    lowercase) to the frame it stands for (None: unknown — reported, read as an open frame
    without inputs)."""
    try:
        tree = sqlglot.parse_one(query, read="spark")
    except SqlglotError as exc:
        raise SqlError(f"cannot parse SQL query: {_first_line(exc)}") from None
    if not isinstance(tree, exp.Query):
        raise SqlError(f"not a query: {type(tree).__name__} statement")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    frames: dict[str, Frame] = {}
    for table in tree.find_all(exp.Table):
        key = _table_key(table)
        if not key or key in ctes or key in frames:
            continue
        found = resolve(key)
        if found is None:
            warn(f"SQL reads {key!r}, which is neither a temp view of the script nor a known "
                 "catalog table; its columns are unknown", line)
            found = Frame(unknown=f"unknown table {key}")
        frames[key] = found
    schema: dict[str, Any] = {}
    for key, frame in frames.items():  # noqa: B007
        if frame.cols and not frame.open:
            db, _, name = key.rpartition(".")
            types = {c: "string" for c in frame.cols}
            if db:
                schema.setdefault(db, {})[name] = types
            else:
                schema[name] = types
    spelling = _case_map(tree, frames)
    try:
        qualified = qualify(tree, schema=schema or None, dialect="spark",
                            validate_qualify_columns=False, quote_identifiers=False,
                            identify=False)
        root = build_scope(qualified)
    except SqlglotError as exc:
        raise SqlError(f"cannot resolve SQL query columns: {_first_line(exc)}") from None
    if root is None:
        raise SqlError("cannot build the query's scopes")
    tracer = _Tracer(frames, line, spelling, warn)
    cols, opened = tracer.outputs(root)
    indirect = tracer.indirect(qualified)
    inputs = list(frames.values())
    base_indirect = frozenset().union(*(f.indirect for f in inputs)) if inputs else frozenset()
    unknown = "; ".join(f.unknown for f in inputs if f.unknown)
    return Frame(cols, base_indirect | frozenset(indirect), tuple(dict.fromkeys(opened)), {},
                 False, unknown)


class _Tracer:
    def __init__(self, frames: Mapping[str, Frame], line: int,
                 spelling: Mapping[str, str] | None = None,
                 warn: Callable[[str, int], None] | None = None) -> None:
        self.frames = frames
        self.line = line
        self.spelling = dict(spelling or {})
        self.warn = warn or (lambda message, line: None)

    def spell(self, name: str) -> str:
        return self.spelling.get(name.lower(), name)

    def _source_frame(self, scope: Scope, table: str) -> tuple[Frame | None, Scope | None]:
        source = scope.sources.get(table)
        if source is None and not table:
            # an unqualified column with a single source
            if len(scope.sources) == 1:
                source = next(iter(scope.sources.values()))
        if isinstance(source, exp.Table):
            return self.frames.get(_table_key(source)), None
        if isinstance(source, Scope):
            return None, source
        return None, None

    def column(self, scope: Scope, col: exp.Column) -> tuple[list[Any], str]:
        """Edges of a column read in ``scope`` and the subtype accumulated below it."""
        frame, sub = self._source_frame(scope, col.table)
        if frame is not None:
            edges = frame.lookup(col.name)
            return list(edges or ()), IDENTITY
        if sub is not None:
            return self.named(sub, col.name)
        # unknown source: try every source frame of the scope
        found: list[Any] = []
        for source in scope.sources.values():
            if isinstance(source, exp.Table):
                f = self.frames.get(_table_key(source))
                if f is not None:
                    found.extend(f.lookup(col.name) or ())
        return found, IDENTITY

    def named(self, scope: Scope, name: str, index: int | None = None,
              ) -> tuple[list[Any], str]:
        """Edges of output column ``name`` (or position ``index``) of a sub-scope."""
        union = _set_parts(scope)
        if union:
            left = union[0]
            selects = left.expression.selects if isinstance(left.expression, exp.Query) else []
            if index is None:
                index = next((i for i, s in enumerate(selects)
                              if s.alias_or_name.lower() == name.lower()), None)
            edges: list[Any] = []
            for part in union:  # each branch keeps its own subtype
                e, s = self.named(part, name, index)
                edges.extend(derive(e, s, self.line))
            return edges, IDENTITY
        expression = scope.expression
        if not isinstance(expression, exp.Select):
            return [], TRANSFORMATION
        selects = expression.selects
        target = None
        if index is not None and index < len(selects):
            target = selects[index]
        else:
            target = next((s for s in selects if s.alias_or_name.lower() == name.lower()), None)
        if target is None:
            # a star over an open source
            for star in selects:
                if isinstance(star, exp.Star) or (isinstance(star, exp.Column)
                                                   and isinstance(star.this, exp.Star)):
                    qualifier = star.table if isinstance(star, exp.Column) else None
                    return self.column(scope, exp.column(name, qualifier or None))
            return [], TRANSFORMATION
        return self.projection(scope, target)

    def projection(self, scope: Scope, node: exp.Expr) -> tuple[list[Any], str]:
        kind = _kind(node)
        edges: list[Any] = []
        sub = kind
        for col in node.find_all(exp.Column):
            if isinstance(col.this, exp.Star):
                continue
            e, s = self.column(scope, col)
            edges.extend(e)
            sub = combine(sub, s)
        return edges, sub

    def outputs(self, root: Scope) -> tuple[dict[str, Col], list[Any]]:
        """The columns of the query's result (stars already expanded by sqlglot where the
        inputs' columns are known), and the open inputs of a star that could not be."""
        union = _set_parts(root)
        first = root
        while union:
            first = union[0]
            union = _set_parts(first)
        expression = first.expression
        selects = expression.selects if isinstance(expression, exp.Select) else []
        cols: dict[str, Col] = {}
        opened: list[Any] = []
        for i, node in enumerate(selects):
            if _is_star(node):
                self.star(first, node, cols, opened)
                continue
            name = self.spell(node.alias_or_name)
            edges, sub = self.named(root, name, i) if _set_parts(root) \
                else self.projection(first, node)
            desc = "" if sub == IDENTITY else (node.this if isinstance(node, exp.Alias)
                                               else node).sql("spark")
            cols[name] = Col(derive(edges, sub, self.line, desc))
        return cols, opened

    def star(self, scope: Scope, node: exp.Expr, cols: dict[str, Col],
             opened: list[Any]) -> None:
        """A ``*`` / ``t.*`` sqlglot could not expand: an input whose columns are not (all)
        known. Its known columns are listed, the rest pass through unlisted — with a
        warning, never as a column named ``*``."""
        table = node.table if isinstance(node, exp.Column) else ""
        for name in list(scope.sources):
            if table and name != table:
                continue
            frame, sub = self._source_frame(scope, name)
            label = name
            if frame is not None:
                cols.update(frame.cols)
                opened.extend(frame.open)
                source = scope.sources.get(name)
                if isinstance(source, exp.Table):
                    label = _table_key(source)
            elif sub is not None:
                inner, inner_open = self.outputs(sub)
                cols.update(inner)
                opened.extend(inner_open)
                continue
            self.warn(f"SELECT {node.sql('spark')} over {label}, whose columns are not known: "
                      "the query's columns pass through from its inputs unlisted", self.line)

    def indirect(self, tree: exp.Expr) -> list[ColumnEdge]:
        out: list[ColumnEdge] = []
        for scope in traverse_scope(tree):
            expression = scope.expression
            if not isinstance(expression, exp.Select):
                continue
            parts: list[tuple[str, exp.Expr | None]] = [
                (FILTER, expression.args.get("where")),
                (FILTER, expression.args.get("having")),
                (GROUP_BY, expression.args.get("group")),
                (SORT, expression.args.get("order")),
            ]
            for join in expression.args.get("joins") or ():
                parts.append((JOIN, join.args.get("on")))
                for using in join.args.get("using") or ():
                    parts.append((JOIN, exp.column(using.name)))
            for subtype, node in parts:
                if node is None:
                    continue
                cols = [node] if isinstance(node, exp.Column) else list(node.find_all(exp.Column))
                for col in cols:
                    edges, _ = self.column(scope, col)
                    for e in edges:
                        out.append(ColumnEdge(e.dataset, e.field, INDIRECT, subtype,
                                              "", self.line))
        return out


def union_frames(frames: list[Frame]) -> Frame:
    """Positional union of frames (columns named after the first)."""
    return merge_frames(frames)
