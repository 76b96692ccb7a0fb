"""Which ``spark.sql`` statements name Delta or Iceberg tables lakemark serves without jars, and
what each asks for (pure: parsing only, with sqlglot; no Spark, no I/O).

Delta on Spark and Iceberg's Spark runtime add SQL forms that a jar-less session cannot parse
or resolve: ``delta.`path``` as a table, ``VERSION AS OF`` / ``TIMESTAMP AS OF`` (also spelt
``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS OF``), ``DESCRIBE HISTORY``, and
``CREATE [OR REPLACE] TABLE … USING delta AS SELECT`` / ``REPLACE TABLE … AS SELECT``.
:func:`plan_sql` classifies a statement as

* :class:`Query` — a query whose Delta/Iceberg table references (:class:`TableRef`) are to be
  read by lakemark and put in place of the references as temporary views (the SQL text keeps
  only identifiers lakemark generates: no value is pasted into it);
* :class:`History` — ``DESCRIBE HISTORY <table> [LIMIT n]``;
* :class:`CreateAs` — CTAS / RTAS into a Delta table;
* :class:`DeltaDml` — ``DELETE FROM`` / ``UPDATE … SET … WHERE`` on a Delta table;
* :class:`DeltaInsert` — ``INSERT INTO`` / ``INSERT OVERWRITE`` (and ``REPLACE WHERE``);
* ``None`` — anything else: Spark's own, untouched.

Forms lakemark cannot give with the engine's semantics raise one-line errors naming the form
and what to use instead.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from ..errors import ConfigError, UnsupportedError

__all__ = ["CreateAs", "DeltaDml", "DeltaInsert", "History", "Query", "TableRef", "plan_sql"]

_GATE = re.compile(r"delta\s*\.\s*`|\bAS\s+OF\b|\bHISTORY\b|\bUSING\s+delta\b", re.I)
_DML = {"Delete": "DELETE", "Update": "UPDATE"}
_HISTORY = re.compile(r"^\s*DESC(?:RIBE)?\s+HISTORY\s+(?P<table>.+?)"
                      r"(?:\s+LIMIT\s+(?P<limit>[^\s;]+))?\s*;?\s*$", re.I | re.S)
_REPLACE = re.compile(r"^\s*REPLACE\s+TABLE\b", re.I)
_SYNONYMS = {"SYSTEM_VERSION": "VERSION", "SYSTEM_TIME": "TIMESTAMP"}
#: Iceberg's metadata tables (``<table>.<name>``) served, by their Spark runtime's names.
ICEBERG_METADATA_TABLES = ("snapshots", "history", "refs", "manifests", "all_manifests", "files",
                           "data_files", "delete_files", "partitions", "entries",
                           "metadata_log_entries")
_USE_INSTEAD = ("use DeltaTable.forPath(spark, path) (merge/update/delete) or "
                "df.write.format('delta') for writes")


@dataclass(frozen=True)
class TableRef:
    """A table reference lakemark reads: ``kind`` ``delta`` (``name`` a path when
    ``by_path``, else a table name) or ``iceberg`` (a catalog-qualified name); at most one of
    ``version`` (an integer), ``timestamp`` (a string literal) or ``timestamp_sql`` (a SQL
    expression Spark evaluates) selects the table's past state; ``view`` is the temporary
    view standing for it in :attr:`Query.sql`; ``metadata`` names an Iceberg metadata table
    of the table (``snapshots``, ``history`` …)."""

    kind: str
    name: str
    by_path: bool
    view: str
    version: int | None = None
    timestamp: str | None = None
    timestamp_sql: str | None = None
    metadata: str | None = None


@dataclass(frozen=True)
class Query:
    """A query to run as ``sql`` once each of ``refs`` is a temporary view."""

    sql: str
    refs: tuple[TableRef, ...]


@dataclass(frozen=True)
class History:
    """``DESCRIBE HISTORY``: ``name`` is a path when ``by_path``."""

    name: str
    by_path: bool
    limit: int | None


@dataclass(frozen=True)
class DeltaDml:
    """``DELETE FROM`` / ``UPDATE … SET`` on a Delta table: ``kind`` ``delete`` or ``update``;
    ``condition`` the ``WHERE`` clause's SQL (None: every row); ``assignments`` the ``SET``
    column -> SQL expression pairs (``update``)."""

    kind: str
    name: str
    by_path: bool
    condition: str | None
    assignments: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DeltaInsert:
    """``INSERT INTO|OVERWRITE <delta table> [(cols)] [BY NAME] [REPLACE WHERE cond] <query>``:
    ``columns`` the column list (None: by position, or by name when ``by_name``);
    ``replace_where`` Delta's ``REPLACE WHERE`` predicate; ``query`` the rows' SQL."""

    name: str
    by_path: bool
    overwrite: bool
    columns: tuple[str, ...] | None
    by_name: bool
    replace_where: str | None
    query: str


@dataclass(frozen=True)
class CreateAs:
    """CTAS/RTAS into a Delta table: ``how`` is ``create``, ``replace`` or
    ``create_or_replace``; ``name`` is a path when ``by_path``; ``location`` the ``LOCATION``
    clause; ``query`` the ``AS`` query's SQL (itself run through :func:`plan_sql`)."""

    name: str
    by_path: bool
    how: str
    if_not_exists: bool
    location: str | None
    query: str
    partition_by: tuple[str, ...] = field(default_factory=tuple)

    @property
    def operation(self) -> str:
        """The ``operation`` Delta on Spark records in history for this statement."""
        return {"create": "CREATE TABLE AS SELECT", "replace": "REPLACE TABLE AS SELECT",
                "create_or_replace": "CREATE OR REPLACE TABLE AS SELECT"}[self.how]


def _normalise(sql: str) -> str:
    """``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS OF`` (Spark's synonyms, which
    sqlglot does not parse) as ``VERSION AS OF`` / ``TIMESTAMP AS OF``, by token position (so
    string literals are never touched)."""
    from sqlglot.dialects.spark import Spark

    tokens = Spark().tokenize(sql)
    out, last = [], 0
    for i, token in enumerate(tokens):
        word = token.text.upper()
        if word in _SYNONYMS and i + 2 < len(tokens) and tokens[i + 1].text.upper() == "AS" \
                and tokens[i + 2].text.upper() == "OF":
            start = token.start
            if i and tokens[i - 1].text.upper() == "FOR":
                start = tokens[i - 1].start
            out.append(sql[last:start])
            out.append(_SYNONYMS[word])
            last = token.end + 1
    out.append(sql[last:])
    return "".join(out)


def plan_sql(sql: str, *, iceberg_catalogs: Collection[str] = (),
             delta_names: Collection[str] = (), view_prefix: str = "__lakemark"
             ) -> Query | History | CreateAs | DeltaDml | DeltaInsert | None:
    """What lakemark does with ``sql`` (module docstring). ``iceberg_catalogs``: the Spark
    catalog names whose plugin is Iceberg's and which lakemark serves; ``delta_names``:
    ``db.table`` names (lower case) of Delta tables created by name in this process;
    ``view_prefix``: how the temporary views standing for table references begin."""
    if not isinstance(sql, str):
        return None
    catalogs = {c.lower() for c in iceberg_catalogs}
    words = [rf"\b{re.escape(c)}\s*\." for c in catalogs]
    words += [rf"\b{re.escape(n.split('.')[-1])}\b" for n in delta_names]
    if not _GATE.search(sql) and not any(re.search(w, sql, re.I) for w in words):
        return None
    history = _HISTORY.match(sql)
    if history:
        return _history(history.group("table"), history.group("limit"), sql)
    import sqlglot
    from sqlglot import exp

    replace_only = bool(_REPLACE.match(sql))
    text = _REPLACE.sub("CREATE OR REPLACE TABLE", sql, count=1) if replace_only else sql
    try:
        statements = sqlglot.parse(_normalise(text), read="spark")
    except Exception:  # noqa: BLE001 - sqlglot cannot parse it: Spark's own parser decides
        return None
    if len(statements) != 1 or statements[0] is None:
        return None
    tree = statements[0]
    if isinstance(tree, exp.Create):
        return _create(tree, replace_only)
    if isinstance(tree, exp.Insert):
        insert = _insert(tree, {n.lower() for n in delta_names})
        if insert is not None:
            return insert
    if type(tree).__name__ in _DML and isinstance(tree.this, exp.Table):
        dml = _dml(tree, {n.lower() for n in delta_names})
        if dml is not None:
            return dml
    refs = _rewrite(tree, catalogs, {n.lower() for n in delta_names}, view_prefix)
    if not refs:
        return None
    if not isinstance(tree, exp.Query):
        raise UnsupportedError(
            f"spark.sql: {type(tree).__name__.upper()} on "
            f"{_shown(refs[0])} is not served by lakemark without Delta/Iceberg jars (only "
            f"queries, DESCRIBE HISTORY, INSERT, DELETE, UPDATE and CREATE/REPLACE TABLE … AS "
            f"SELECT are); "
            + (_USE_INSTEAD if refs[0].kind == "delta" else
               "use df.writeTo(name).append() or df.write.format('iceberg')"))
    return Query(tree.sql(dialect="spark"), tuple(refs))


def _qualified(name: str) -> str:
    """``db.table`` in lower case (``default`` when no database is given)."""
    parts = name.lower().split(".")
    return name.lower() if len(parts) > 1 else f"default.{parts[0]}"


def _shown(ref: TableRef) -> str:
    return f"delta.`{ref.name}`" if ref.by_path else ref.name


def _table_name(table: object) -> tuple[str, bool] | None:
    """``(path, True)`` for ``delta.`path```, ``(db.table or table, False)`` for a name."""
    from sqlglot import exp

    assert isinstance(table, exp.Table)
    if not isinstance(table.this, exp.Identifier):
        return None
    if table.db.lower() == "delta" and not table.catalog and table.this.quoted:
        return table.name, True
    parts = [p for p in (table.catalog, table.db, table.name) if p]
    return ".".join(parts), False


def _rewrite(tree: object, catalogs: set[str], delta_names: set[str], prefix: str
             ) -> list[TableRef]:
    """Replace every Delta/Iceberg table reference of ``tree`` by a temporary view name."""
    from sqlglot import exp

    assert isinstance(tree, exp.Expression)
    refs: list[TableRef] = []
    for table in list(tree.find_all(exp.Table)):
        version = table.args.get("version")
        if table.catalog.lower() in catalogs and isinstance(table.this, exp.Dot):
            refs.append(_metadata_ref(table, version, f"{prefix}_iceberg_{len(refs)}"))
            new = exp.Table(this=exp.to_identifier(refs[-1].view, quoted=True))
            if table.args.get("alias") is not None:
                new.set("alias", table.args["alias"])
            table.replace(new)
            continue
        named = _table_name(table)
        if named is None:
            continue
        name, by_path = named
        if by_path:
            kind = "delta"
        elif table.catalog and table.catalog.lower() in catalogs:
            kind = "iceberg"
        elif not table.catalog and (_qualified(name) in delta_names or version is not None):
            kind = "delta"  # a name created here, or time travel (only Delta's in this session)
        else:
            continue
        view = f"{prefix}_{kind}_{len(refs)}"
        refs.append(_ref(kind, name, by_path, view, version))
        alias = table.args.get("alias")
        new = exp.Table(this=exp.to_identifier(view, quoted=True))
        if alias is not None:
            new.set("alias", alias)
        table.replace(new)
    return refs


def _metadata_ref(table: object, version: object, view: str) -> TableRef:
    """``catalog.db.table.<metadata table>`` (Iceberg's metadata tables)."""
    from sqlglot import exp

    assert isinstance(table, exp.Table) and isinstance(table.this, exp.Dot)
    shown = table.sql(dialect="spark").split(" ")[0]
    parts = [table.catalog, table.db, *[p.name for p in table.this.flatten()]]
    meta = parts[-1].lower()
    if meta not in ICEBERG_METADATA_TABLES or len(parts) != 4:
        raise UnsupportedError(
            f"spark.sql: {shown} is not an Iceberg metadata table lakemark serves without "
            f"Iceberg's runtime (it serves {', '.join(ICEBERG_METADATA_TABLES)})")
    if version is not None:
        raise UnsupportedError(f"spark.sql: {shown} with VERSION/TIMESTAMP AS OF is not served; "
                               "query the metadata table as of now")
    return TableRef("iceberg", ".".join(parts[:3]), False, view, metadata=meta)


def _ref(kind: str, name: str, by_path: bool, view: str, version: object) -> TableRef:
    """The :class:`TableRef` of a reference with its ``VERSION``/``TIMESTAMP AS OF`` clause."""
    from sqlglot import exp

    shown = f"delta.`{name}`" if by_path else name
    if version is None:
        return TableRef(kind, name, by_path, view)
    assert isinstance(version, exp.Version)
    what, value = str(version.this).upper(), version.expression
    if what == "VERSION":
        if isinstance(value, exp.Literal) and not value.is_string and value.is_int:
            return TableRef(kind, name, by_path, view, version=int(value.this))
        if kind == "iceberg" and isinstance(value, exp.Literal) and value.is_string:
            raise UnsupportedError(
                f"spark.sql: {shown} VERSION AS OF {value.sql(dialect='spark')} names a branch "
                "or tag, which lakemark's Iceberg reader does not read; use a snapshot id "
                "(VERSION AS OF <number>) or TIMESTAMP AS OF")
        raise ConfigError(f"spark.sql: {shown} VERSION AS OF needs an integer version, got "
                          f"{value.sql(dialect='spark')}")
    if isinstance(value, exp.Literal) and value.is_string:
        return TableRef(kind, name, by_path, view, timestamp=str(value.this))
    return TableRef(kind, name, by_path, view, timestamp_sql=value.sql(dialect="spark"))


def _insert(tree: object, delta_names: set[str]) -> DeltaInsert | None:
    """``INSERT`` whose target is ``delta.`path``` or a Delta table created here."""
    from sqlglot import exp

    assert isinstance(tree, exp.Insert)
    target, columns = tree.this, None
    if isinstance(target, exp.Schema):
        columns = tuple(c.name for c in target.expressions)
        target = target.this
    if not isinstance(target, exp.Table):
        return None
    named = _table_name(target)
    if named is None or not (named[1] or (not target.catalog and
                                          _qualified(named[0]) in delta_names)):
        return None
    shown = f"delta.`{named[0]}`" if named[1] else named[0]
    if target.args.get("partition") is not None:
        raise UnsupportedError(f"spark.sql: INSERT into {shown} with a PARTITION clause is not "
                               "served; put the partition values in the query's columns")
    if tree.expression is None:
        raise ConfigError(f"spark.sql: INSERT into {shown} has no rows (SELECT or VALUES)")
    where = tree.args.get("where")
    if where is not None and tree.args.get("overwrite"):
        raise ConfigError(f"spark.sql: INSERT OVERWRITE {shown} cannot take REPLACE WHERE; "
                          "use INSERT INTO … REPLACE WHERE")
    return DeltaInsert(named[0], named[1], bool(tree.args.get("overwrite")), columns,
                       bool(tree.args.get("by_name")),
                       where.sql(dialect="spark") if where is not None else None,
                       tree.expression.sql(dialect="spark"))


def _dml(tree: object, delta_names: set[str]) -> DeltaDml | None:
    """``DELETE``/``UPDATE`` whose target is ``delta.`path``` or a Delta table created here."""
    from sqlglot import exp

    assert isinstance(tree, (exp.Delete, exp.Update)) and isinstance(tree.this, exp.Table)
    target = tree.this
    named = _table_name(target)
    if named is None or not (named[1] or (not target.catalog and
                                          _qualified(named[0]) in delta_names)):
        return None
    alias = target.alias
    statement = _DML[type(tree).__name__]
    shown = f"delta.`{named[0]}`" if named[1] else named[0]
    for part in ("from", "from_", "joins", "with", "order", "limit", "returning"):
        if tree.args.get(part):
            raise UnsupportedError(f"spark.sql: {statement} on {shown} with "
                                   f"{part.strip('_').upper()} is not served; use "
                                   "DeltaTable.forPath(spark, path).merge(...)")

    def unqualified(node: exp.Expression) -> str:
        copy = node.copy()
        for col in copy.find_all(exp.Column):
            if alias and col.table == alias:
                col.set("table", None)
        return copy.sql(dialect="spark")

    where = tree.args.get("where")
    condition = unqualified(where.this) if where is not None else None
    pairs: list[tuple[str, str]] = []
    if isinstance(tree, exp.Update):
        for item in tree.expressions:
            if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
                raise ConfigError(f"spark.sql: UPDATE {shown} SET {item.sql(dialect='spark')}: "
                                  "expected column = value")
            pairs.append((item.this.name, unqualified(item.expression)))
    return DeltaDml(statement.lower(), named[0], named[1], condition, tuple(pairs))


def _history(table: str, limit: str | None, sql: str) -> History:
    """``DESCRIBE HISTORY <table> [LIMIT n]``."""
    import sqlglot
    from sqlglot import exp

    try:
        parsed = sqlglot.parse_one(table, read="spark", into=exp.Table)
    except Exception:  # noqa: BLE001 - not a table name
        raise ConfigError(f"spark.sql: DESCRIBE HISTORY: {table.strip()!r} is not a table name "
                          "or delta.`path`") from None
    named = _table_name(parsed)
    if named is None or parsed.args.get("version") is not None:
        raise ConfigError(f"spark.sql: DESCRIBE HISTORY: {table.strip()!r} is not a table name "
                          "or delta.`path`")
    count: int | None = None
    if limit is not None:
        if not limit.isdigit():
            raise ConfigError(f"spark.sql: DESCRIBE HISTORY … LIMIT needs a whole number, got "
                              f"{limit!r}")
        count = int(limit)
    return History(named[0], named[1], count)


def _create(tree: object, replace_only: bool) -> CreateAs | None:
    """CTAS/RTAS into Delta (``USING delta``), else None (Spark's own)."""
    from sqlglot import exp

    assert isinstance(tree, exp.Create)
    props = tree.args.get("properties")
    items = list(props.expressions) if props is not None else []
    using = next((p for p in items if isinstance(p, exp.FileFormatProperty)), None)
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table) or str(tree.args.get("kind", "")).upper() != "TABLE":
        return None
    named = _table_name(target)
    delta_path = named is not None and named[1]
    fmt = using.this.name.lower() if using is not None and isinstance(using.this, exp.Expression) \
        else (str(using.this).lower() if using is not None else None)
    if fmt != "delta" and not (delta_path and fmt is None):
        return None  # another format's CREATE TABLE: Spark's own
    shown = target.sql(dialect="spark")
    if named is None:
        return None
    if tree.expression is None:
        raise UnsupportedError(
            f"spark.sql: CREATE TABLE {shown} USING delta with a column list is not served "
            "without Delta's jars; use DeltaTable.create(spark).location(path).addColumn(…)"
            ".execute(), or CREATE TABLE … USING delta AS SELECT")
    location: str | None = None
    parts: tuple[str, ...] = ()
    for prop in items:
        if isinstance(prop, exp.FileFormatProperty):
            continue
        if isinstance(prop, exp.LocationProperty):
            location = str(prop.this.this) if isinstance(prop.this, exp.Literal) else None
            continue
        if isinstance(prop, exp.PartitionedByProperty):
            cols = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
            if not all(isinstance(c, (exp.Column, exp.Identifier)) for c in cols):
                raise UnsupportedError(f"spark.sql: CREATE TABLE {shown}: PARTITIONED BY takes "
                                       "column names here (transforms are Iceberg's)")
            parts = tuple(c.name for c in cols)
            continue
        label = type(prop).__name__.replace("Property", "").upper() or "PROPERTY"
        if isinstance(prop, exp.Property):
            label = "TBLPROPERTIES"
        raise UnsupportedError(
            f"spark.sql: CREATE TABLE {shown} … AS SELECT with {label} is not served by "
            "lakemark's Delta (no jars); create the table with DeltaTable.create(spark)"
            "….property()/comment(), then write with df.write.format('delta')")
    if delta_path and location is not None:
        raise ConfigError(f"spark.sql: CREATE TABLE {shown} gives both a path and LOCATION; "
                          "give one")
    how = "replace" if replace_only else ("create_or_replace" if tree.args.get("replace")
                                         else "create")
    return CreateAs(named[0], named[1], how, bool(tree.args.get("exists")), location,
                    tree.expression.sql(dialect="spark"), parts)
