"""Column lineage of Spark SQL text (``spark.sql``, Glue Studio's ``sparkSqlQuery``,
``selectExpr``, ``F.expr``, string filters), parsed with sqlglot's Spark dialect.

The query is qualified against the columns of the frames it reads (temp views the script
registered, or catalog tables) — sqlglot expands ``*`` there, and the spelling of the names is
restored afterwards — then each output column is traced through CTEs, sub-queries, set
operations and ``LATERAL VIEW`` down to those frames. WHERE / JOIN / GROUP BY / ORDER BY
columns become dataset-level INDIRECT edges. Statements that write (INSERT, CTAS, MERGE,
UPDATE, DELETE) are in :mod:`._sql_write`. Nothing is executed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
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
    WINDOW,
    ColumnEdge,
)
from ._frame_util import _split_type
from ._values import ELEMENT, UNCERTAIN, Col, ColExpr, Frame, combine, derive

__all__ = ["SqlError", "expression_lineage", "path_table", "query_lineage", "select_expr_lineage"]


class SqlError(Exception):
    """The SQL text could not be parsed or traced (the message says why)."""


def _kind(node: exp.Expr) -> str:
    inner = node.this if isinstance(node, exp.Alias) else node
    while isinstance(inner, exp.Dot):  # s.a.b: a field of a struct column
        inner = inner.this
    if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
        return IDENTITY
    if any(isinstance(n, (exp.AggFunc, exp.Window)) for n in inner.walk()):
        return AGGREGATION  # an aggregate, or a window function (as Spark's plan says)
    return TRANSFORMATION


def expression_lineage(text: str) -> ColExpr:
    """A SQL expression (``"amount * 2 as doubled"``) as a column expression."""
    try:
        node = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise SqlError(f"cannot parse SQL expression {text!r}: {_first_line(exc)}") from None
    if node is None:
        raise SqlError(f"empty SQL expression {text!r}")
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Star) and node.table:
        # "customer.*" / "t.*": the fields of a struct column or the columns of an alias
        qualifier = ".".join(p.name for p in node.parts[:-1])
        return ColExpr(((None, f"{qualifier}.*"),), IDENTITY, f"{qualifier}.*")
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
    inner = node.unalias()
    # explode(items) AS item: a column of the array's elements (item.sku is items.sku)
    element = ELEMENT if type(inner) in (exp.Explode, exp.ExplodeOuter) and \
        isinstance(inner.this, exp.Column) and len(refs) == 1 else None
    return ColExpr(tuple(refs), _kind(node), name, "" if _kind(node) == IDENTITY
                   else node.sql("spark"), star, element)


def select_expr_lineage(text: str) -> list[ColExpr]:
    """One ``selectExpr`` item as the columns it makes: one, or one per name of a
    multi-name alias (``stack(2, 'a', a, 'b', b) AS (k, v)``: column i of a ``stack`` reads
    its i-th value of each row; ``explode(m) AS (k, v)``: each reads the exploded column)."""
    try:
        node = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise SqlError(f"cannot parse SQL expression {text!r}: {_first_line(exc)}") from None
    if not isinstance(node, exp.Aliases):
        return [expression_lineage(text)]
    names = [e.name for e in node.expressions]
    inner = node.this
    values = list(inner.expressions) if isinstance(inner, exp.Stack) else []
    out: list[ColExpr] = []
    for i, name in enumerate(names):
        parts = values[i::len(names)] if values else [inner]
        refs = tuple((None, ".".join(p for p in (c.table, c.name) if p))
                     for part in parts for c in part.find_all(exp.Column))
        # posexplode(items) AS (pos, item): the last column holds the array's elements
        element = ELEMENT if isinstance(inner, exp.Explode) and i == len(names) - 1 and \
            len(refs) == 1 and isinstance(inner.this, exp.Column) else None
        out.append(ColExpr(refs, TRANSFORMATION, name, inner.sql("spark"), False, element))
    return out


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _set_parts(scope: Scope) -> list[Scope]:
    """The two branches of a UNION / INTERSECT / EXCEPT scope (``[]`` otherwise)."""
    return list(getattr(scope, "set_operation_scopes", None) or ())


def _case_map(tree: exp.Expr, frames: Mapping[str, Frame]) -> dict[str, str]:
    """Lowercase name → the spelling to show. sqlglot lowercases Spark identifiers while it
    qualifies a query (Spark compares them ignoring case), but Spark keeps the spelling of the
    query or of the table: names a SELECT list writes (aliases, columns) win, then the input
    frames' columns, then names written elsewhere (``WHERE``, ``ON``: they spell a column of
    an input whose columns are not known, never one a ``*`` brings from a known table)."""
    out: dict[str, str] = {}
    for node in tree.find_all(exp.Alias, exp.Column):
        name = node.alias_or_name
        if name and name != "*":
            out.setdefault(name.lower(), name)
    for frame in frames.values():
        for name in frame.cols:
            out[name.lower()] = name
    selected: dict[str, str] = {}
    for select in tree.find_all(exp.Select):
        for node in select.expressions:
            name = node.alias_or_name if isinstance(node, (exp.Alias, exp.Column)) else ""
            if name and name != "*":
                selected.setdefault(name.lower(), name)
    out.update(selected)
    return out


def _spark_name(node: exp.Expr) -> str:
    """The name Spark gives an unaliased expression: its text, without table qualifiers,
    function names in lowercase (``upper(name)``)."""
    copy = node.copy()
    for col in copy.find_all(exp.Column):
        col.set("table", None)
        col.set("db", None)
    return copy.sql(dialect="spark", normalize_functions="lower")


def _dot_path(col: exp.Column) -> str:
    """The struct fields read from a column (``s.a.b`` qualified as ``Dot(t.s, a).b``)."""
    fields: list[str] = []
    node: exp.Expr = col
    while isinstance(node.parent, exp.Dot) and node.parent.this is node:
        node = node.parent
        fields.append(node.expression.name)
    return ".".join(fields)


def _in_window_spec(col: exp.Column, top: exp.Expr) -> bool:
    """Whether ``col`` (inside ``top``) is a key of a window (``PARTITION BY`` / ``ORDER
    BY``) rather than an argument of the window's function: keys shape which rows a value is
    computed over, as a ``GROUP BY`` does, and are INDIRECT inputs."""
    child: exp.Expr = col
    parent = col.parent
    while parent is not None and child is not top:
        if isinstance(parent, exp.Window) and child is not parent.this:
            return True
        child, parent = parent, parent.parent
    return False


def _is_star(node: exp.Expr) -> bool:
    return isinstance(node, exp.Star) or (isinstance(node, exp.Column)
                                          and isinstance(node.this, exp.Star))


#: ``format.`path``` names a table by its files (``delta.`s3://b/t```, ``parquet.`…```)
PATH_FORMATS = frozenset({"delta", "parquet", "json", "csv", "orc", "avro", "text", "iceberg",
                          "hudi", "binaryfile"})


def path_table(name: str) -> str | None:
    """The path of a ``format.`path``` table name (``delta.s3a://b/t/``), else None."""
    fmt, dot, rest = name.partition(".")
    if dot and fmt.lower() in PATH_FORMATS and ("/" in rest or ":" in rest):
        return rest
    return None


def _table_key(table: exp.Table) -> str:
    key = ".".join(p for p in (table.db, table.name) if p)
    path = path_table(key)
    return f"{table.db.lower()}.{path}" if path is not None else key.lower()  # paths keep case


def query_lineage(query: str, resolve: Callable[[str], Frame | None], line: int,
                  warn: Callable[[str, int], None]) -> Frame:
    """The frame a SQL query returns; ``resolve`` maps a table name (``view`` or ``db.t``,
    lowercase) to the frame it stands for (None: unknown — reported, read as an open frame
    without inputs)."""
    tree = _parse(query)
    if not isinstance(tree, exp.Query):
        raise SqlError(f"not a query: {type(tree).__name__} statement")
    return _query_frame(tree, resolve, line, warn)


_WRITES = ("INSERT", "MERGE", "UPDATE", "DELETE", "CREATE", "REPLACE", "COPY", "UPSERT")


def _parse(text: str) -> exp.Expr:
    quiet = logging.getLogger("sqlglot")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "falling back to a Command" is reported below instead
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise SqlError(f"cannot parse SQL: {_first_line(exc)}") from None
    finally:
        quiet.setLevel(level)
    if tree is None:
        raise SqlError("empty SQL statement")
    if isinstance(tree, exp.Command) and str(tree.this).upper() in _WRITES:
        raise SqlError(f"cannot parse this {str(tree.this).upper()} statement; what it "
                       "writes is not traced")
    return tree


def _query_frame(tree: exp.Query, resolve: Callable[[str], Frame | None], line: int,
                 warn: Callable[[str, int], None]) -> Frame:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    frames: dict[str, Frame] = {}
    for table in tree.find_all(exp.Table):
        key = _table_key(table)
        if not key or key in ctes or key in frames or table.find_ancestor(exp.Hint):
            continue
        found = resolve(key)
        if found is None:
            warn(f"SQL reads {key!r}, which is neither a temp view of the script nor a known "
                 "catalog table; its columns are unknown", line)
            found = Frame(unknown=f"unknown table {key}")
        frames[key] = found
    # two levels everywhere (sqlglot wants one nesting depth): temp views and bare names
    # are in database "default", as Spark resolves them; catalogs (glue_catalog.) dropped
    schema: dict[str, Any] = {}
    for key, frame in frames.items():
        if frame.cols and not frame.open and path_table(key) is None:
            db, _, name = key.rpartition(".")
            schema.setdefault(db or "default", {})[name] = {c: "string" for c in frame.cols}
    for table in tree.find_all(exp.Table):
        if table.args.get("catalog") is not None:
            table.set("catalog", None)
    aliased = dict(frames)
    aliased.update({f"default.{k}": f for k, f in frames.items() if "." not in k})
    spelling = _case_map(tree, frames)
    try:
        qualified = qualify(tree, schema=schema or None, db="default", dialect="spark",
                            validate_qualify_columns=False, quote_identifiers=False,
                            identify=False)
        root = build_scope(qualified)
    except Exception as exc:  # noqa: BLE001 - sqlglot may fail in odd ways on odd SQL
        raise SqlError(f"cannot resolve SQL query columns: {_first_line(exc)}") from None
    if root is None:
        raise SqlError("cannot build the query's scopes")
    tracer = _Tracer(aliased, line, spelling, warn)
    cols, opened = tracer.outputs(root)
    indirect = tracer.indirect(qualified)
    inputs = list(frames.values())
    base_indirect = frozenset().union(*(f.indirect for f in inputs)) if inputs else frozenset()
    unknown = "; ".join(f.unknown for f in inputs if f.unknown)
    through = "; ".join(dict.fromkeys(f.through for f in inputs if f.through))
    pivot = next(iter(tree.find_all(exp.Pivot)), None)
    if pivot is not None:
        # PIVOT / UNPIVOT makes columns from data values: not traced (its columns were
        # silently missing) — said, and the frame is marked as partly unknown
        what = "UNPIVOT" if pivot.args.get("unpivot") else "PIVOT"
        warn(f"SQL {what}: the columns it makes are not traced; the query's columns may be "
             "missing", line)
        unknown = "; ".join(u for u in (unknown, f"SQL {what} at line {line}") if u)
    return Frame(cols, base_indirect | frozenset(indirect), tuple(dict.fromkeys(opened)), {},
                 False, unknown, 0, through)


class _Tracer:
    def __init__(self, frames: Mapping[str, Frame], line: int,
                 spelling: Mapping[str, str] | None = None,
                 warn: Callable[[str, int], None] | None = None) -> None:
        self.frames = frames
        # sqlglot lowercases names while qualifying; a path table keeps its case in the keys
        self.lowered = {k.lower(): f for k, f in frames.items()}
        self.line = line
        self.spelling = dict(spelling or {})
        self.warn = warn or (lambda message, line: None)

    def frame_of(self, table: exp.Table) -> Frame | None:
        key = _table_key(table)
        return self.frames.get(key) or self.lowered.get(key.lower())

    def spell(self, name: str) -> str:
        return self.spelling.get(name.lower(), name)

    def _source_frame(self, scope: Scope, table: str) -> tuple[Frame | None, Scope | None]:
        source = scope.sources.get(table)
        if source is None and not table:
            # an unqualified column with a single source
            if len(scope.sources) == 1:
                source = next(iter(scope.sources.values()))
        if isinstance(source, exp.Table):
            return self.frame_of(source), None
        if isinstance(source, Scope):
            return None, source
        return None, None

    def lateral(self, scope: Scope, col: exp.Column) -> tuple[list[Any], str] | None:
        """A column of a ``LATERAL VIEW explode(items) t AS item`` (``item``, ``item.sku``,
        ``t.item.sku``): the exploded expression's columns, with the field path."""
        laterals = scope.expression.args.get("laterals") if isinstance(
            scope.expression, exp.Select) else None
        names = [p.name for p in col.parts]
        for lat in laterals or ():
            alias = lat.args.get("alias")
            outs = [c.name for c in alias.columns] if alias is not None else []
            hit = next((i for i, n in enumerate(names) if n.lower() in
                        {o.lower() for o in outs}), None)
            if hit is None:
                continue
            path = ".".join(names[hit + 1:] + ([_dot_path(col)] if _dot_path(col) else []))
            edges: list[Any] = []
            for inner in lat.this.find_all(exp.Column):
                found, _ = self.column(scope, inner)
                edges.extend(replace(e, field=f"{e.field}.{path}") if path else e
                             for e in found)
            return edges, IDENTITY if path else TRANSFORMATION
        return None

    def lateral_star(self, scope: Scope, node: exp.Expr) -> dict[str, Col] | None:
        """``item.*`` of a ``LATERAL VIEW explode(items) t AS item``: a column per field of the
        array's element type (``items.sku``, …), as ``F.explode(...).alias("item")`` then
        ``item.*`` gives; None when ``node`` is not such a star. When the element's fields are
        not known, none are listed, with a warning (never a column named ``*``)."""
        laterals = scope.expression.args.get("laterals") if isinstance(
            scope.expression, exp.Select) else None
        if isinstance(node, exp.Dot) and isinstance(node.this, exp.Column):
            names = [p.name for p in node.this.parts]  # `x`.`item`.* once qualified
        elif isinstance(node, exp.Column) and node.table:
            names = [node.table]  # item.*
        else:
            return None
        for lat in laterals or ():
            alias = lat.args.get("alias")
            outs = {c.name.lower() for c in alias.columns} if alias is not None else set()
            qualifier = next((n for n in names if n.lower() in outs), "")
            if not qualifier:
                continue
            inner = list(lat.this.find_all(exp.Column))
            element = ""
            if len(inner) == 1:
                frame, _ = self._source_frame(scope, inner[0].table)
                key = frame.find(self.spell(inner[0].name)) if frame is not None else None
                kind, parts = _split_type(frame.cols[key].type if frame is not None and
                                          key is not None else None)
                element = parts[0][1] if kind == "array" else ""
            kind, fields = _split_type(element)
            if kind != "struct":
                self.warn(f"SELECT {node.sql('spark')}: the fields of the exploded "
                          f"{lat.this.sql('spark')} are not known; they pass through unlisted",
                          self.line)
                return {}
            out: dict[str, Col] = {}
            for name, ftype in fields:
                found = self.lateral(scope, exp.column(name, table=qualifier))
                edges, sub = found if found is not None else ([], IDENTITY)
                out[name] = Col(derive(edges, sub, self.line, ""), ftype)
            return out
        return None

    def column(self, scope: Scope, col: exp.Column) -> tuple[list[Any], str]:
        """Edges of a column read in ``scope`` and the subtype accumulated below it."""
        exploded = self.lateral(scope, col)
        if exploded is not None:
            return exploded
        frame, sub = self._source_frame(scope, col.table)
        if frame is not None:
            path = _dot_path(col)
            name = self.spell(col.name)  # as written: an open input's column keeps it
            edges = frame.lookup(f"{name}.{path}" if path else name)
            return list(edges or ()), IDENTITY
        if sub is not None:
            path = _dot_path(col)
            picked = self.struct_field(sub, col.name, path.split(".")[0]) if path else None
            return picked if picked is not None else self.named(sub, col.name)
        # unknown source: try every source frame of the scope
        found: list[Any] = []
        sources = 0
        for source in scope.sources.values():
            if isinstance(source, exp.Table):
                f = self.frame_of(source)
                edges = f.lookup(self.spell(col.name)) if f is not None else None
                if edges:
                    found.extend(edges)
                    sources += 1
        if sources > 1:  # an unqualified column of one of several schema-less tables
            either = ", ".join(sorted({e.dataset.key for e in found}))
            found = [replace(e, description=f"{UNCERTAIN} in one of {either}, not all "
                                            "(their columns are not known)")
                     if not e.description.startswith(UNCERTAIN) else e for e in found]
        return found, IDENTITY

    def struct_field(self, scope: Scope, name: str, field: str,
                     ) -> tuple[list[Any], str] | None:
        """``s.a`` of a sub-query's ``STRUCT(x AS a, y AS b) AS s`` (or ``named_struct('a',
        x, …)``): the edges of the field's own expression, not of the whole struct (None:
        ``s`` is not a struct made there)."""
        expression = scope.expression
        if _set_parts(scope) or not isinstance(expression, exp.Select):
            return None
        target = next((x for x in expression.selects
                       if x.alias_or_name.lower() == name.lower()), None)
        made = target.this if isinstance(target, exp.Alias) else None
        if not isinstance(made, exp.Struct):
            return None
        for item in made.expressions:
            if isinstance(item, exp.PropertyEQ):
                label, value = item.this.name, item.expression
            elif isinstance(item, exp.Alias):
                label, value = item.alias, item.this
            else:  # STRUCT(a, b): fields named after the columns
                label, value = item.alias_or_name, item
            if label.lower() == field.lower():
                return self.projection(scope, value)
        return None

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
            if isinstance(col.this, exp.Star) or _in_window_spec(col, node):
                continue  # a window's PARTITION BY / ORDER BY key: INDIRECT (WINDOW)
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
            if _is_star(node) or isinstance(node, exp.Dot) and \
                    isinstance(node.expression, exp.Star):
                element = self.lateral_star(first, node)
                if element is not None:
                    cols.update(element)
                else:
                    self.star(first, node, cols, opened)
                continue
            if isinstance(node, exp.Aliases) and not _set_parts(root):
                cols.update(self.multi_alias(first, node))
                continue
            name = self.spell(node.alias_or_name)
            if isinstance(node, exp.Alias) and node.alias.startswith("_col_"):
                name = _spark_name(node.this)  # sqlglot named it; Spark shows the text
            edges, sub = self.named(root, name, i) if _set_parts(root) \
                else self.projection(first, node)
            desc = "" if sub == IDENTITY else (node.this if isinstance(node, exp.Alias)
                                               else node).sql("spark")
            out = derive(edges, sub, self.line, desc)
            if sub == IDENTITY and isinstance(node, exp.Alias) and \
                    isinstance(node.this, exp.Column) and node.this.name.lower() != name.lower():
                out = tuple(replace(e, line=self.line) for e in out)  # a rename (AS)
            cols[name] = Col(out)
        return cols, opened

    def multi_alias(self, scope: Scope, node: exp.Aliases) -> dict[str, Col]:
        """``stack(n, …) AS (a, b)`` / ``posexplode(x) AS (pos, v)``: a column per name (of a
        ``stack``, column i from the i-th value of each row; else from the whole call)."""
        names = [self.spell(e.name) for e in node.expressions]
        inner = node.this
        values = list(inner.expressions) if isinstance(inner, exp.Stack) else []
        out: dict[str, Col] = {}
        for i, name in enumerate(names):
            edges: list[Any] = []
            for part in (values[i::len(names)] if values else [inner]):
                for col in part.find_all(exp.Column):
                    edges.extend(self.column(scope, col)[0])
            out[name] = Col(derive(edges, TRANSFORMATION, self.line, inner.sql("spark")))
        return out

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
            for window in expression.find_all(exp.Window):
                if window.find_ancestor(exp.Select) is expression:
                    parts.extend((WINDOW, key) for key in window.args.get("partition_by") or ())
                    parts.append((WINDOW, window.args.get("order")))
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
