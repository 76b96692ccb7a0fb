"""Column lineage of Spark SQL statements that write (INSERT, CREATE TABLE AS SELECT, CREATE
VIEW, MERGE INTO, UPDATE, DELETE): each becomes a :class:`SqlWrite` for the caller to record as
a sink, its frame traced by :mod:`._sql`'s query lineage. Nothing is executed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlglot import exp

from ._sql import SqlError, _parse, _query_frame, _table_key
from ._values import Col, Frame, merge_frames

__all__ = ["SqlWrite", "statement_lineage"]


@dataclass(frozen=True)
class SqlWrite:
    """A SQL statement that writes (INSERT, CREATE TABLE AS SELECT, MERGE INTO): the target
    table as written (``db.t``, maybe with a catalog), its ``LOCATION`` when the statement
    gives one, and the frame written into it (columns named after the target's)."""

    table: str
    location: str | None
    frame: Frame
    kind: str


def statement_lineage(text: str, resolve: Callable[[str], Frame | None],
                      target_columns: Callable[[str], Sequence[str]], line: int,
                      warn: Callable[[str, int], None]) -> Frame | SqlWrite:
    """A ``spark.sql`` statement: the frame of a query, or the write of an INSERT / CTAS /
    MERGE. ``target_columns`` gives a target table's columns in order (``[]``: unknown);
    ``resolve`` is as in :func:`query_lineage`."""
    tree = _parse(text)
    if isinstance(tree, exp.Query):
        return _query_frame(tree, resolve, line, warn)
    if isinstance(tree, exp.Insert):
        return _insert(tree, resolve, target_columns, line, warn)
    if isinstance(tree, exp.Create) and tree.args.get("kind") == "TABLE" and \
            isinstance(tree.expression, exp.Query):
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        location = None
        for prop in tree.find_all(exp.LocationProperty):
            value = prop.this
            location = value.name if isinstance(value, exp.Literal) else None
        frame = _query_frame(_with_ctes(tree, tree.expression), resolve, line, warn)
        return SqlWrite(_table_name(table), location, frame, "CREATE TABLE AS SELECT")
    if isinstance(tree, exp.Create) and tree.args.get("kind") == "TABLE" and \
            isinstance(tree.this, exp.Schema) and tree.expression is None:
        # CREATE TABLE t (a INT, …): no data, but the columns later statements write
        defs = [c for c in tree.this.expressions if isinstance(c, exp.ColumnDef)]
        for parts in tree.find_all(exp.PartitionedByProperty):  # Hive: partition columns last
            if isinstance(parts.this, exp.Schema):
                defs.extend(c for c in parts.this.expressions if isinstance(c, exp.ColumnDef))
        cols = {c.name: Col((), c.args["kind"].sql("spark").lower()
                            if c.args.get("kind") is not None else None) for c in defs}
        location = None
        for prop in tree.find_all(exp.LocationProperty):
            location = prop.this.name if isinstance(prop.this, exp.Literal) else None
        return SqlWrite(_table_name(tree.this.this), location, Frame(cols, dynamic=False),
                        "CREATE TABLE")
    if isinstance(tree, exp.Create) and tree.args.get("kind") == "VIEW" and \
            isinstance(tree.expression, exp.Query):
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        frame = _query_frame(_with_ctes(tree, tree.expression), resolve, line, warn)
        return SqlWrite(_table_name(table), None, frame, "VIEW")
    if isinstance(tree, exp.Cache) and isinstance(tree.expression, exp.Query):
        # CACHE [LAZY] TABLE c AS SELECT …: Spark makes a (cached) temp view c of the query
        frame = _query_frame(_with_ctes(tree, tree.expression), resolve, line, warn)
        return SqlWrite(_table_name(tree.this), None, frame, "VIEW")
    if isinstance(tree, exp.Merge):
        return _merge(tree, resolve, target_columns, line, warn)
    if isinstance(tree, exp.Update):
        return _update(tree, resolve, line, warn)
    if isinstance(tree, (exp.Delete, exp.TruncateTable)):
        target = tree.this if isinstance(tree, exp.Delete) else \
            (tree.expressions[0] if tree.expressions else None)
        if target is not None:
            return SqlWrite(_table_name(target), None, Frame(dynamic=False),
                            type(tree).__name__.upper())
    if isinstance(tree, _NO_DATA):
        return Frame(dynamic=False)  # DDL and session commands: no data flows
    raise SqlError(f"not a query: {type(tree).__name__} statement")


_NO_DATA = (exp.Drop, exp.Create, exp.Alter, exp.Use, exp.Set, exp.Cache, exp.Uncache,
            exp.Describe, exp.Command, exp.Refresh)


def _by_name(frame: Frame, columns: Sequence[str], table: str, line: int,
             warn: Callable[[str, int], None]) -> Frame:
    """``UPDATE SET *`` / ``INSERT *``: the source's columns written into the target's
    same-named ones (all of them, as they are, when the target's columns are not known).
    A source whose columns are not known gives each target column from its same-named one
    (Spark refuses the MERGE when the source lacks one)."""
    if not columns:
        warn(f"MERGE INTO {table} with * and target columns that are not known: the "
             "source's columns are taken as the target's", line)
        return frame
    if frame.unknown:
        return frame
    out: dict[str, Col] = {}
    missing: list[str] = []
    for column in columns:
        key = frame.find(column)
        if key is not None:
            out[column] = frame.cols[key]
        elif frame.open:  # the source's columns are not known: * names the target's
            out[column] = Col(frame.lookup(column) or ())
        else:
            missing.append(column)
    if missing:
        warn(f"MERGE INTO {table} with *: the source has no column {', '.join(missing)}",
             line)
    return frame.with_cols(out)


def _update(tree: exp.Update, resolve: Callable[[str], Frame | None], line: int,
            warn: Callable[[str, int], None]) -> SqlWrite:
    """``UPDATE t SET a = expr WHERE …``: each set column from its expression over ``t``."""
    target = tree.this
    name = _table_name(target)
    projections = [exp.alias_(eq.expression.copy(), eq.this.name) for eq in tree.expressions
                   if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column)]
    if not projections:
        return SqlWrite(name, None, Frame(dynamic=False), "UPDATE")
    select = exp.select(*projections).from_(target.copy())
    where = tree.args.get("where")
    if where is not None:
        select = select.where(where.this.copy())
    return SqlWrite(name, None, _query_frame(select, resolve, line, warn), "UPDATE")


def _table_name(table: exp.Expr) -> str:
    if not isinstance(table, exp.Table):
        raise SqlError(f"cannot tell the target table of {table.sql('spark')!r}")
    return ".".join(p for p in (table.catalog, table.db, table.name) if p)


def _with_ctes(statement: exp.Expr, query: exp.Expr) -> exp.Query:
    """The statement's query, with a ``WITH`` written before INSERT/CREATE moved onto it."""
    if not isinstance(query, exp.Query):
        raise SqlError(f"{type(statement).__name__} without a query")
    for key in ("with", "with_"):
        ctes = statement.args.get(key)
        if ctes is not None and not query.args.get(key):
            query = query.copy()
            query.set(key, ctes.copy())
    return query


def _renamed(frame: Frame, names: Sequence[str], table: str, line: int,
             warn: Callable[[str, int], None]) -> Frame:
    """A query's columns written by position into ``names`` (INSERT without BY NAME)."""
    if not names or frame.open or frame.unknown:
        return frame
    if len(names) != len(frame.cols):
        warn(f"INSERT into {table}: the query gives {len(frame.cols)} columns for "
             f"{len(names)} target columns; the query's names are kept", line)
        return frame
    return frame.with_cols(dict(zip(names, frame.cols.values())))


def _insert(tree: exp.Insert, resolve: Callable[[str], Frame | None],
            target_columns: Callable[[str], Sequence[str]], line: int,
            warn: Callable[[str, int], None]) -> SqlWrite:
    target = tree.this
    listed: list[str] = []
    if isinstance(target, exp.Directory):  # INSERT OVERWRITE DIRECTORY 's3://…'
        path = target.this.name if isinstance(target.this, exp.Literal) else None
        query = tree.expression
        if path is None or not isinstance(query, exp.Query):
            raise SqlError("INSERT OVERWRITE DIRECTORY without a known path and query")
        frame = _query_frame(_with_ctes(tree, query), resolve, line, warn)
        return SqlWrite("", path, frame, "INSERT OVERWRITE DIRECTORY")
    if isinstance(target, exp.Schema):
        listed = [c.name for c in target.expressions]
        target = target.this
    name = _table_name(target)
    query = tree.expression
    if isinstance(query, exp.Values) or query is None:
        return SqlWrite(name, None, Frame(dynamic=False), "INSERT")
    frame = _query_frame(_with_ctes(tree, query), resolve, line, warn)
    names = listed
    if not names:
        static = {eq.this.name.lower() for eq in target.find_all(exp.EQ)
                  if isinstance(eq.this, exp.Column) and eq.find_ancestor(exp.Partition)}
        names = [c for c in target_columns(name) if c.lower() not in static]
    kind = "INSERT OVERWRITE" if tree.args.get("overwrite") else "INSERT"
    return SqlWrite(name, None, _renamed(frame, names, name, line, warn), kind)


def _merge(tree: exp.Merge, resolve: Callable[[str], Frame | None],
           target_columns: Callable[[str], Sequence[str]], line: int,
           warn: Callable[[str, int], None]) -> SqlWrite:
    """MERGE INTO: every target column set by a WHEN clause comes from that clause's
    expression over the source (and the target's old row); ``UPDATE SET *`` / ``INSERT *``
    take the source's same-named columns. Each clause is traced as a SELECT over the source
    joined with the target on the ON condition (JOIN edges), its condition as a filter."""
    target = tree.this
    name = _table_name(target)
    using = tree.args.get("using")
    on = tree.args.get("on")
    whens = tree.args.get("whens")
    if not isinstance(target, exp.Table) or using is None or whens is None:
        raise SqlError("MERGE without a target, a source or WHEN clauses")
    using = using.copy()
    if not using.alias_or_name or (isinstance(using, exp.Subquery) and not using.alias):
        # USING (SELECT … FROM src) without a name: Spark users write src.col for it
        inner = next(iter(using.find_all(exp.Table)), None)
        using = exp.alias_(using, inner.name if inner is not None else "merge_source",
                           table=True)
    s_alias = using.alias_or_name
    joined_target: exp.Table | None = target.copy()
    assert joined_target is not None
    joined_target.set("catalog", None)
    if resolve(_table_key(joined_target)) is None:
        joined_target = None  # a target of unknown columns adds nothing but noise
    columns = list(target_columns(name))
    frames: list[Frame] = []
    for when in whens.expressions:
        then = when.args.get("then")
        pairs: list[tuple[str, exp.Expr]] = []
        star = False
        if isinstance(then, exp.Update):
            for eq in then.expressions:
                if isinstance(eq, exp.Star):
                    star = True
                elif isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column):
                    pairs.append((eq.this.name, eq.expression))
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star):
                star = True
            else:
                cols = then.this.expressions if isinstance(then.this, exp.Tuple) else []
                values = then.expression.expressions \
                    if isinstance(then.expression, exp.Tuple) else []
                pairs.extend((c.name, v) for c, v in zip(cols, values))
        else:
            continue  # DELETE: writes no column
        projections: list[exp.Expr] = [exp.alias_(v.copy(), c) for c, v in pairs]
        if star:
            projections.append(exp.Column(this=exp.Star(), table=exp.to_identifier(s_alias)))
        if not projections:
            continue
        select = exp.select(*projections).from_(using.copy())
        if joined_target is not None:
            select = select.join(joined_target.copy(),
                                 on=on.copy() if on is not None else None)
        condition = when.args.get("condition")
        if condition is not None:
            select = select.where(condition.copy())
        frame = _query_frame(select, resolve, line, warn)
        if star:
            frame = _by_name(frame, columns, name, line, warn)
        frames.append(frame)
    frame = merge_frames(frames) if frames else Frame(dynamic=False)
    return SqlWrite(name, None, frame, "MERGE")
