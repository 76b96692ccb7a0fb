"""``resolveChoice``: Glue's choice types (``_choicetype``) made ordinary columns.

A choice field (``choice(long, string)``: a long in some records, a string in others) comes from
reading CSV (``_textchoice``) and from joining frames whose shared field has different types.
What each action does to a choice field ``c``:

* ``cast:T`` — every value converted to ``T``; values that do not convert become null.
* ``project:T`` — only the values that are of type ``T`` are kept; the others become null.
* ``make_cols`` — one column per member type, ``c_<type>``: the first takes ``c``'s place, the
  others are appended to ``c``'s struct (the frame, for a top-level field), as Glue's example
  shows (``provider id_long`` in place, ``provider id_string`` last). No value is lost.
* ``make_struct`` — a struct with one field per member type (``{long, string}``).
* ``match_catalog`` (``choice=`` only) — every column that the catalog table names
  (``database``/``table_name``, matched case-insensitively) is cast to the catalog's type;
  other columns are kept. The table's schema comes from the glue context's catalog
  (``glue_ctx.catalog().get_table(database, table_name)``); without one it is a ConfigError.

On a field that is not a choice (it has one type), a spec still acts: ``cast:T`` and
``project:T`` convert (non-convertible values become null), ``make_cols`` renames ``c`` to
``c_<type>`` and ``make_struct`` wraps ``c`` as ``{<type>: c}`` — the one column or member Glue
would produce for a single type. ``choice=`` (frame-wide) acts on choice fields only.

``specs`` paths use Glue's syntax (``a.b``, ```a.b`.c``, ``list[].price``, and ``codes[]`` for
the elements of an array that are themselves a choice: ``cast``, ``project`` and
``make_struct`` act on each element; ``make_cols`` is refused there, as an element has no
columns to spread into). A spec naming a field
that does not exist is skipped with a warning (Glue ignores it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError
from ._choicetype import PREFIX, choice_paths, is_choice, members
from ._df_types import cast_to, glue_type_name, parse_glue_type
from ._fieldpaths import ELEM, Path, parse_path, resolve, rewrite

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

__all__ = ["resolve_choice", "catalog_schema"]

log = logging.getLogger("lakemark.glue")

_ACTIONS = ("cast", "project", "make_cols", "make_struct")


def _split_action(action: Any) -> tuple[str, str | None]:
    if not isinstance(action, str) or not action.strip():
        raise ConfigError(f"a resolveChoice action must be a string such as 'cast:int', "
                          f"got {action!r}")
    kind, _, arg = action.strip().partition(":")
    kind = kind.strip().lower()
    if kind in ("cast", "project"):
        if not arg.strip():
            raise ConfigError(f"resolveChoice action {action!r} needs a type, e.g. '{kind}:int'")
        return kind, arg.strip()
    if kind in ("make_cols", "make_struct", "match_catalog"):
        if arg:
            raise ConfigError(f"resolveChoice action {action!r} takes no argument")
        return kind, None
    raise UnsupportedError(f"resolveChoice action {action!r} is not supported "
                           f"(supported: cast:<type>, project:<type>, make_cols, make_struct, "
                           "match_catalog)")


def _apply_spec(df: DataFrame, path: str, action: str) -> DataFrame:
    kind, arg = _split_action(action)
    if kind == "match_catalog":
        raise UnsupportedError("resolveChoice action 'match_catalog' applies to the whole frame: "
                               "pass it as choice='match_catalog' with database and table_name")
    segs = parse_path(path, arrays=True)
    found = resolve(df.schema, segs)
    if found is None:
        log.warning("resolveChoice: field %r does not exist; spec (%r, %r) skipped",
                    path, path, action)
        return df
    actual, dtype = found
    if actual[-1] == ELEM and kind == "make_cols":
        raise ConfigError(f"resolveChoice path {path!r}: make_cols needs a field (an array's "
                          "elements have no columns to spread into); use make_struct, "
                          "project:<type> or cast:<type> on array elements")
    if is_choice(dtype):
        return _resolve_one(df, actual, dtype, kind, arg)
    if kind in ("cast", "project"):
        target = parse_glue_type(arg or "")

        def convert(col: Column, dtype: DataType) -> Column:
            return cast_to(col, dtype, target)

        return rewrite(df, actual, convert)
    if kind == "make_cols":
        return rewrite(df, actual, lambda col, _t: col,
                       new_name=f"{actual[-1]}_{glue_type_name(dtype)}")
    from pyspark.sql import functions as F

    def wrap(col: Column, dtype: DataType) -> Column:
        return F.struct(col.alias(glue_type_name(dtype)))

    return rewrite(df, actual, wrap)


def _resolve_one(df: DataFrame, segs: Path, dtype: DataType, kind: str,
                 arg: str | None) -> DataFrame:
    """``df`` with the choice field at ``segs`` resolved by ``kind`` (module docstring)."""
    from pyspark.sql import functions as F

    mems = members(dtype)
    if kind == "cast":
        target = parse_glue_type(arg or "")
        return rewrite(df, segs, lambda col, t: cast_to(col, t, target))
    if kind == "project":
        target = parse_glue_type(arg or "")
        want = glue_type_name(target) if target is not None else None

        def project(col: Column, _t: DataType) -> Column:
            for name, t in mems:
                if name == want:
                    return cast_to(col.getField(PREFIX + name), t, target)
            return F.lit(None).cast(target) if target is not None else F.lit(None)

        return rewrite(df, segs, project)
    if kind == "make_struct":
        def as_struct(col: Column, _t: DataType) -> Column:
            parts = [col.getField(PREFIX + n).alias(n) for n, _ in mems]
            return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))

        return rewrite(df, segs, as_struct)
    assert kind == "make_cols"
    return _make_cols(df, segs, [n for n, _ in mems])


def _make_cols(df: DataFrame, segs: Path, names: list[str]) -> DataFrame:
    """One column ``<field>_<type>`` per member: the first in the field's place, the others
    appended to the enclosing struct."""
    from pyspark.sql import functions as F

    from ._fieldpaths import quote

    field = segs[-1]

    def columns(get: Any, fields: list[str]) -> list[Column]:
        cols = []
        for name in fields:
            if name == field:
                cols.append(get(field).getField(PREFIX + names[0]).alias(f"{field}_{names[0]}"))
            else:
                cols.append(get(name).alias(name))
        cols.extend(get(field).getField(PREFIX + n).alias(f"{field}_{n}") for n in names[1:])
        return cols

    if len(segs) == 1:
        return df.select(*columns(lambda n: F.col(quote(n)), df.columns))

    def rebuild(col: Column, parent: DataType) -> Column:
        fields = [f.name for f in parent.fields]  # type: ignore[attr-defined]
        return F.when(col.isNull(), F.lit(None)).otherwise(
            F.struct(*columns(col.getField, fields)))

    return rewrite(df, segs[:-1], rebuild)


def catalog_schema(glue_ctx: Any, database: str | None, table_name: str | None,
                   catalog_id: str | None = None) -> StructType:
    """The schema of a catalog table, from the glue context's catalog."""
    from pyspark.sql.types import DataType, StructType

    if not database or not table_name:
        raise ConfigError("match_catalog needs database= and table_name= (the catalog table "
                          "whose types the frame should take)")
    getter = getattr(glue_ctx, "catalog", None)
    if not callable(getter):
        raise ConfigError(f"match_catalog needs a data catalog to look up {database}.{table_name}, "
                          "and this frame's glue context has none")
    try:
        table = getter().get_table(database, table_name)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"match_catalog: catalog table {database}.{table_name} could not be "
                          f"read: {exc}") from exc
    ddl = table.spark_ddl(include_partition_keys=True)
    schema = DataType.fromDDL(ddl) if isinstance(ddl, str) else ddl
    if not isinstance(schema, StructType):
        raise ConfigError(f"match_catalog: catalog table {database}.{table_name} has no columns")
    if catalog_id:
        log.info("match_catalog: catalog_id %r is not used; the context's catalog answers",
                 catalog_id)
    return schema


def _match_catalog(df: DataFrame, target: StructType) -> DataFrame:
    from pyspark.sql import functions as F

    from ._fieldpaths import quote

    types = {f.name.lower(): f.dataType for f in target.fields}
    cols = []
    for f in df.schema.fields:
        col = F.col(quote(f.name))
        want = types.get(f.name.lower())
        cols.append(cast_to(col, f.dataType, want).alias(f.name))
    return df.select(*cols)


def resolve_choice(df: DataFrame, specs: Sequence[Any] | None, choice: str,
                   database: str | None, table_name: str | None, glue_ctx: Any,
                   catalog_id: str | None = None) -> DataFrame:
    """``df`` with the specs (or the frame-wide ``choice``) applied; see the module docstring."""
    if specs is not None and choice:
        raise ConfigError("resolveChoice takes specs or choice, not both")
    if specs is not None:
        if isinstance(specs, (str, bytes)) or not isinstance(specs, Sequence):
            raise ConfigError("resolveChoice specs must be a list of (path, action) tuples")
        for spec in specs:
            if not isinstance(spec, (tuple, list)) or len(spec) != 2:
                raise ConfigError(f"resolveChoice spec {spec!r} must be a (path, action) tuple")
            path, action = spec
            df = _apply_spec(df, path, action)
        return df
    if not choice:
        return df  # Glue would resolve from the schema; lakemark leaves choices as they are
    kind, arg = _split_action(choice)
    if kind == "match_catalog":
        return _match_catalog(df, catalog_schema(glue_ctx, database, table_name, catalog_id))
    if kind in ("cast", "project"):
        parse_glue_type(arg or "")  # an unknown type is still an error
    paths = choice_paths(df.schema)
    if not paths:
        log.debug("resolveChoice(choice=%r): no choice-typed field to resolve", choice)
    for segs in paths:
        found = resolve(df.schema, segs)
        if found is not None:
            if found[0][-1] == ELEM and kind == "make_cols":
                from ._fieldpaths import format_path

                raise ConfigError(f"resolveChoice(choice='make_cols'): {format_path(segs)!r} "
                                  "is a choice inside an array, whose elements have no columns "
                                  "to spread into; resolve it first with a spec such as "
                                  f"({format_path(segs)!r}, 'make_struct')")
            df = _resolve_one(df, found[0], found[1], kind, arg)
    return df
