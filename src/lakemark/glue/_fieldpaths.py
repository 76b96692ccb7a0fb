"""Glue field paths: parsing ``a.b.c`` / ```a.b`.c`` / ``list[].x`` and rewriting nested columns.

A path is a tuple of segments. A back-quoted segment may hold dots, spaces or brackets (a back
quote inside one is doubled); ``[]`` after a segment steps into the elements of an array (the
``ELEM`` marker segment). Lookups prefer an exact name and fall back to a case-insensitive match,
as Spark itself resolves names; two case-insensitive matches and no exact one is an error.

Nested rewrites rebuild the enclosing structs field by field (order kept, a null struct stays
null) and map over arrays with ``transform``; the DataFrame's own columns are the root struct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Union

from ..errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructField, StructType

__all__ = [
    "ELEM",
    "Path",
    "parse_path",
    "format_path",
    "quote",
    "find_field",
    "resolve",
    "path_column",
    "top_column",
    "rewrite",
    "select_paths",
    "build_tree",
    "tree_columns",
    "flatten_columns",
]

#: Marker segment for ``[]`` (the elements of an array).
ELEM = "\x00[]"

Path = tuple[str, ...]

# A rewrite returns the new value of the node, or None to remove it.
Rewriter = Callable[["Column", "DataType"], "Column | None"]
Tree = dict[str, Union["Tree", "Column"]]


def parse_path(path: str, *, arrays: bool = False) -> Path:
    """Segments of a Glue field path; ConfigError if it is malformed (or uses ``[]`` where
    ``arrays`` is False)."""
    if not isinstance(path, str) or not path:
        raise ConfigError(f"a field path must be a non-empty string, got {path!r}")
    segs: list[str] = []
    i, n = 0, len(path)
    while True:
        if i < n and path[i] == "`":
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise ConfigError(f"unclosed back quote in field path {path!r}")
                if path[j] == "`":
                    if j + 1 < n and path[j + 1] == "`":
                        buf.append("`")
                        j += 2
                        continue
                    break
                buf.append(path[j])
                j += 1
            name, i = "".join(buf), j + 1
        else:
            j = i
            while j < n and path[j] not in ".[`":
                j += 1
            name, i = path[i:j], j
        if not name:
            raise ConfigError(f"empty segment in field path {path!r}")
        segs.append(name)
        while path.startswith("[]", i):
            if not arrays:
                raise ConfigError(f"field path {path!r}: '[]' (array elements) is not allowed here")
            segs.append(ELEM)
            i += 2
        if i == n:
            return tuple(segs)
        if path[i] != ".":
            raise ConfigError(f"malformed field path {path!r} at position {i}")
        i += 1
        if i == n:
            raise ConfigError(f"field path {path!r} ends with '.'")


def quote(name: str) -> str:
    """``name`` as one back-quoted identifier (for Spark's column-name parser)."""
    return "`" + name.replace("`", "``") + "`"


def _needs_quotes(name: str) -> bool:
    return any(c in name for c in ".`[] ") or not name


def format_path(segs: Sequence[str]) -> str:
    """A path as Glue writes it (segments quoted only when they must be)."""
    out = ""
    for s in segs:
        if s == ELEM:
            out += "[]"
            continue
        part = quote(s) if _needs_quotes(s) else s
        out = f"{out}.{part}" if out else part
    return out


def find_field(struct: StructType, name: str, case_sensitive: bool = False) -> StructField | None:
    """The field called ``name``: exact match first, else (unless ``case_sensitive``) the one
    case-insensitive match."""
    for f in struct.fields:
        if f.name == name:
            return f
    if case_sensitive:
        return None
    low = name.lower()
    hits = [f for f in struct.fields if f.name.lower() == low]
    if len(hits) > 1:
        names = ", ".join(repr(f.name) for f in hits)
        raise ConfigError(f"field {name!r} is ambiguous: {names} differ only by case")
    return hits[0] if hits else None


def resolve(schema: StructType, segs: Sequence[str],
            case_sensitive: bool = False) -> tuple[Path, DataType] | None:
    """The actual names along ``segs`` and the type at its end; None if a step is missing."""
    from pyspark.sql.types import ArrayType, StructType

    actual: list[str] = []
    dtype: DataType = schema
    for s in segs:
        if s == ELEM:
            if not isinstance(dtype, ArrayType):
                return None
            dtype = dtype.elementType
            actual.append(ELEM)
            continue
        if not isinstance(dtype, StructType):
            return None
        f = find_field(dtype, s, case_sensitive)
        if f is None:
            return None
        actual.append(f.name)
        dtype = f.dataType
    return tuple(actual), dtype


def top_column(name: str, df: DataFrame | None = None) -> Column:
    """The top-level column ``name`` (bound to ``df`` when given)."""
    from pyspark.sql import functions as F

    return df[quote(name)] if df is not None else F.col(quote(name))


def path_column(segs: Sequence[str], df: DataFrame | None = None) -> Column:
    """The column at a resolved path without array steps."""
    if ELEM in segs:
        raise ConfigError(f"field path {format_path(segs)!r}: '[]' is not allowed here")
    col = top_column(segs[0], df)
    for s in segs[1:]:
        col = col.getField(s)
    return col


def _rebuild(col: Column, struct: StructType, changes: dict[str, Column | None],
             renames: dict[str, str]) -> Column | None:
    """``col`` (of type ``struct``) with fields replaced/removed/renamed, order kept."""
    from pyspark.sql import functions as F

    parts = []
    for f in struct.fields:
        value = changes[f.name] if f.name in changes else col.getField(f.name)
        if value is None:
            continue
        parts.append(value.alias(renames.get(f.name, f.name)))
    if not parts:
        return None
    return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))


def _rewrite_in(col: Column, dtype: DataType, segs: Path, fn: Rewriter,
                new_name: str | None) -> Column | None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StructType

    if not segs:
        return fn(col, dtype)
    head, rest = segs[0], segs[1:]
    if head == ELEM:
        assert isinstance(dtype, ArrayType)
        elem_type = dtype.elementType

        def per_element(e: Column) -> Column:
            out = _rewrite_in(e, elem_type, rest, fn, new_name)
            if out is None:
                raise ConfigError("cannot remove every field of an array's elements")
            return out

        return F.transform(col, per_element)
    assert isinstance(dtype, StructType)
    field = dtype[head]
    if not rest:
        value = fn(col.getField(head), field.dataType)
        renames = {head: new_name} if new_name else {}
        return _rebuild(col, dtype, {head: value}, renames)
    inner = _rewrite_in(col.getField(head), field.dataType, rest, fn, new_name)
    return _rebuild(col, dtype, {head: inner}, {})


def rewrite(df: DataFrame, segs: Path, fn: Rewriter, new_name: str | None = None) -> DataFrame:
    """``df`` with the node at the resolved path ``segs`` replaced by ``fn(column, type)``
    (removed when it returns None; renamed to ``new_name`` when given). A struct left with no
    fields is removed too."""
    from pyspark.sql import functions as F

    schema = df.schema
    head, rest = segs[0], segs[1:]
    cols = []
    for f in schema.fields:
        col = F.col(quote(f.name))
        if f.name != head:
            cols.append(col)
            continue
        if rest:
            value = _rewrite_in(col, f.dataType, rest, fn, new_name)
            name = f.name
        else:
            value = fn(col, f.dataType)
            name = new_name or f.name
        if value is not None:
            cols.append(value.alias(name))
    return df.select(*cols)


def build_tree(entries: Iterable[tuple[Path, Column]], what: str = "target") -> Tree:
    """A nested dict from (path, column) pairs, in first-seen order; a path both a leaf and a
    parent, or given twice, is a ConfigError."""
    tree: Tree = {}
    for segs, col in entries:
        node = tree
        for i, s in enumerate(segs):
            last = i == len(segs) - 1
            existing = node.get(s)
            if last:
                if existing is not None:
                    raise ConfigError(f"{what} field {format_path(segs)!r} is given twice")
                node[s] = col
            else:
                if existing is None:
                    child: Tree = {}
                    node[s] = child
                    node = child
                elif isinstance(existing, dict):
                    node = existing
                else:
                    raise ConfigError(f"{what} field {format_path(segs[:i + 1])!r} is both a "
                                      "value and a struct")
    return tree


def tree_columns(tree: Tree) -> list[Column]:
    """Columns (aliased) for a tree built by :func:`build_tree`; inner nodes become structs."""
    from pyspark.sql import functions as F

    out = []
    for name, node in tree.items():
        col = F.struct(*tree_columns(node)) if isinstance(node, dict) else node
        out.append(col.alias(name))
    return out


def select_paths(df: DataFrame, paths: Sequence[Path]) -> DataFrame:
    """Only the resolved ``paths`` (nested ones keep their enclosing structs, null stays null)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    wanted: dict[str, object] = {}
    for segs in paths:
        node = wanted
        for i, s in enumerate(segs):
            if i == len(segs) - 1:
                node[s] = True
            else:
                sub = node.setdefault(s, {})
                if sub is True:
                    break  # the whole parent is already selected
                node = sub  # type: ignore[assignment]

    def pick(col: Column, dtype: StructType, want: dict[str, object]) -> Column:
        parts = []
        for f in dtype.fields:
            if f.name not in want:
                continue
            sub, c = want[f.name], col.getField(f.name)
            if sub is not True and isinstance(f.dataType, StructType):
                c = pick(c, f.dataType, sub)  # type: ignore[arg-type]
            parts.append(c.alias(f.name))
        return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))

    cols = []
    for f in df.schema.fields:
        if f.name not in wanted:
            continue
        sub, c = wanted[f.name], F.col(quote(f.name))
        if sub is not True and isinstance(f.dataType, StructType):
            c = pick(c, f.dataType, sub)  # type: ignore[arg-type]
        cols.append(c.alias(f.name))
    return df.select(*cols)


def flatten_columns(schema: StructType, prefix: str = "",
                    base: Column | None = None) -> list[Column]:
    """Every struct field as a top-level column named by its dotted path (arrays and maps are
    kept as they are) — Glue's ``unnest``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    out = []
    for f in schema.fields:
        col = F.col(quote(f.name)) if base is None else base.getField(f.name)
        name = f"{prefix}.{f.name}" if prefix else f.name
        if isinstance(f.dataType, StructType) and f.dataType.fields:
            out.extend(flatten_columns(f.dataType, name, col))
        else:
            out.append(col.alias(name))
    return out
