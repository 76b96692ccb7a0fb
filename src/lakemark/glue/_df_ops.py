"""The DataFrame work behind DynamicFrame's field transforms (mapping, selecting, dropping,
renaming, joining, splitting, unboxing …). Each takes and returns a Spark DataFrame."""

from __future__ import annotations

import json
import logging
import operator
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError
from ._df_types import cast_to, glue_type_name, parse_glue_type
from ._fieldpaths import (
    ELEM,
    Path,
    build_tree,
    format_path,
    parse_path,
    path_column,
    quote,
    resolve,
    rewrite,
    select_paths,
    tree_columns,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

__all__ = [
    "apply_mapping", "select_fields", "drop_fields", "rename_field", "join", "union",
    "split_rows", "unbox", "drop_null_fields", "spigot", "as_paths",
]

log = logging.getLogger("lakemark.glue")


def as_paths(paths: Any, what: str) -> list[str]:
    """A path list (a single string is one path)."""
    if isinstance(paths, str):
        return [paths]
    if not isinstance(paths, Sequence) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"{what} must be a list of field paths (strings), got {paths!r}")
    return list(paths)


def _columns_hint(schema: StructType) -> str:
    names = [format_path([n]) for n in schema.fieldNames()]
    shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
    return shown or "(none)"


# ---------------------------------------------------------------------------- apply_mapping

def _mapping_parts(mapping: Any) -> tuple[str, str | None, str, str | None]:
    if not isinstance(mapping, (tuple, list)) or not all(isinstance(x, str) for x in mapping):
        raise ConfigError(f"a mapping must be a tuple of strings, got {mapping!r}")
    if len(mapping) == 4:
        return mapping[0], mapping[1], mapping[2], mapping[3]
    if len(mapping) == 2:
        return mapping[0], None, mapping[1], None
    raise UnsupportedError(f"mapping {tuple(mapping)!r} has {len(mapping)} parts; lakemark takes "
                           "(source, source_type, target, target_type) or (source, target)")


def apply_mapping(df: DataFrame, mappings: Sequence[Any], case_sensitive: bool) -> DataFrame:
    """Glue's ApplyMapping: only mapped fields are kept, cast when the type changes; dotted
    targets build nested structs. A mapping whose source does not exist is dropped with a
    warning (Glue yields no field for it)."""
    if isinstance(mappings, (str, bytes)) or not isinstance(mappings, Sequence):
        raise ConfigError("mappings must be a list of (source, source_type, target, target_type)")
    schema = df.schema
    entries: list[tuple[Path, Column]] = []
    for mapping in mappings:
        source, _source_type, target, target_type = _mapping_parts(mapping)
        src = parse_path(source)
        tgt = parse_path(target)
        found = resolve(schema, src, case_sensitive=case_sensitive)
        if found is None:
            log.warning("apply_mapping: source field %r does not exist (columns: %s); the "
                        "mapping to %r yields no field", source, _columns_hint(schema), target)
            continue
        actual, dtype = found
        want = parse_glue_type(target_type) if target_type is not None else None
        entries.append((tgt, cast_to(path_column(actual), dtype, want)))
    return df.select(*tree_columns(build_tree(entries)))


# ------------------------------------------------------------------- select / drop / rename

def _resolve_all(df: DataFrame, paths: Sequence[str], what: str,
                 arrays: bool = False) -> list[Path]:
    out = []
    for p in paths:
        found = resolve(df.schema, parse_path(p, arrays=arrays))
        if found is None:
            log.warning("%s: field %r does not exist; ignored", what, p)
            continue
        out.append(found[0])
    return out


def select_fields(df: DataFrame, paths: Sequence[str]) -> DataFrame:
    """Only the given fields (nested paths keep their parents' structure)."""
    return select_paths(df, _resolve_all(df, paths, "select_fields"))


def drop_fields(df: DataFrame, paths: Sequence[str]) -> DataFrame:
    """Without the given fields (a nested one is removed from its struct; ``a[].b`` from the
    structs in array ``a``)."""
    for segs in _resolve_all(df, paths, "drop_fields", arrays=True):
        if segs[-1] == ELEM:
            raise ConfigError(f"drop_fields path {format_path(segs)!r} must end with a field name")
        df = rewrite(df, segs, lambda _c, _t: None)
    return df


def rename_field(df: DataFrame, old_name: str, new_name: str) -> DataFrame:
    """The field at ``old_name`` renamed to the full path ``new_name``: in place when only the
    last segment changes (order kept), otherwise moved to the new path."""
    old = parse_path(old_name, arrays=True)
    new = parse_path(new_name, arrays=True)
    found = resolve(df.schema, old)
    if found is None:
        log.warning("rename_field: field %r does not exist (columns: %s); nothing renamed",
                    old_name, _columns_hint(df.schema))
        return df
    actual, _ = found
    if actual[-1] == ELEM or new[-1] == ELEM:
        raise ConfigError("rename_field paths must end with a field name")
    parent, new_parent = actual[:-1], new[:-1]
    same_parent = len(parent) == len(new_parent) and all(
        a == b or (a != ELEM and a.lower() == b.lower()) for a, b in zip(parent, new_parent)
    )
    if same_parent:
        from pyspark.sql.types import StructType

        holder = resolve(df.schema, parent) if parent else (parent, df.schema)
        siblings = holder[1].fieldNames() if holder and isinstance(holder[1], StructType) else []
        if any(n.lower() == new[-1].lower() and n != actual[-1] for n in siblings):
            raise ConfigError(f"rename_field: field {new_name!r} already exists")
        return rewrite(df, actual, lambda c, _t: c, new_name=new[-1])
    if ELEM in actual or ELEM in new:
        raise UnsupportedError("rename_field cannot move a field into or out of an array "
                               f"({old_name!r} → {new_name!r})")
    value = path_column(actual)
    df = df.withColumn("__lakemark_moved", value)
    df = rewrite(df, actual, lambda _c, _t: None)
    return _put(df, new, "__lakemark_moved")


def _put(df: DataFrame, segs: Path, temp: str) -> DataFrame:
    """Move column ``temp`` to the (possibly nested) path ``segs``, creating structs."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    moved = F.col(quote(temp))
    others = [c for c in df.columns if c != temp]
    rest_schema = StructType([f for f in df.schema.fields if f.name != temp])
    found = resolve(rest_schema, segs[:1])
    if len(segs) == 1 or found is None:
        if found is not None:
            raise ConfigError(f"rename_field: field {format_path(segs)!r} already exists")
        value = moved
        for s in reversed(segs[1:]):
            value = F.struct(value.alias(s))
        return df.select(*[F.col(quote(c)) for c in others], value.alias(segs[0]))
    actual_top, top_type = found
    if not isinstance(top_type, StructType):
        raise ConfigError(f"rename_field: {format_path(segs[:1])!r} is not a struct")
    expr = _with_nested(F.col(quote(actual_top[0])), top_type, segs[1:], moved)
    return df.select(*[expr.alias(c) if c == actual_top[0] else F.col(quote(c)) for c in others])


def _with_nested(col: Column, dtype: DataType, segs: Path, value: Column) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from ._fieldpaths import find_field

    assert isinstance(dtype, StructType)
    field = find_field(dtype, segs[0])
    if len(segs) == 1:
        if field is not None:
            raise ConfigError(f"rename_field: field {segs[0]!r} already exists")
        parts = [col.getField(f.name).alias(f.name) for f in dtype.fields]
        return F.struct(*parts, value.alias(segs[0]))
    parts = []
    for f in dtype.fields:
        c = col.getField(f.name)
        if field is not None and f.name == field.name:
            if not isinstance(f.dataType, StructType):
                raise ConfigError(f"rename_field: {f.name!r} is not a struct")
            c = _with_nested(c, f.dataType, segs[1:], value)
        parts.append(c.alias(f.name))
    if field is None:
        nested = value
        for s in reversed(segs[1:]):
            nested = F.struct(nested.alias(s))
        parts.append(nested.alias(segs[0]))
    return F.struct(*parts)


# ------------------------------------------------------------------------------ join / union

def join(df1: DataFrame, df2: DataFrame, keys1: Sequence[str], keys2: Sequence[str]) -> DataFrame:
    """Glue's equality (inner) join: each pair of matching records becomes one record with the
    fields of both.

    * A key field of the second frame whose name the first frame also has is kept under a
      leading ``.`` (``id`` → ``.id``), as Glue names it.
    * Any other field both frames have appears once (Glue merges the two records): the second
      frame's value where it is not null, else the first frame's. If the two types differ the
      field is a choice of both (``_choicetype``), for ``resolveChoice`` to settle.
    """
    from pyspark.sql import functions as F

    if len(keys1) != len(keys2) or not keys1:
        raise ConfigError(f"join needs as many keys for each frame (got {list(keys1)!r} and "
                          f"{list(keys2)!r})")
    found1 = [_join_key(df1, k) for k in keys1]
    found2 = [_join_key(df2, k) for k in keys2]
    top_keys2 = {segs[0] for segs, _t in found2}
    left_names = {c.lower(): c for c in df1.columns}
    renames = {c: "." + c for c in df2.columns if c in top_keys2 and c.lower() in left_names}
    shared = {c: left_names[c.lower()] for c in df2.columns
              if c not in renames and c.lower() in left_names}
    right_alias = {c: renames.get(c, c if c not in shared else f"__lakemark_right__:{c}")
                   for c in df2.columns}
    right = df2.select(*[path_column((c,)).alias(right_alias[c]) for c in df2.columns])
    conds = []
    for (segs1, _t1), (segs2, _t2) in zip(found1, found2):
        segs = (right_alias[segs2[0]],) + segs2[1:]
        conds.append(path_column(segs1) == path_column(segs))  # every name is unique now
    joined = df1.join(right, reduce(operator.and_, conds), "inner")
    types1 = {f.name: f.dataType for f in df1.schema.fields}
    types2 = {f.name: f.dataType for f in df2.schema.fields}
    merged_of = {left: right_name for right_name, left in shared.items()}
    cols = []
    for c in df1.columns:
        if c in merged_of:
            other = merged_of[c]
            cols.append(_merge_field(F.col(quote(c)), types1[c],
                                     F.col(quote(right_alias[other])), types2[other]).alias(c))
        else:
            cols.append(F.col(quote(c)))
    cols.extend(F.col(quote(right_alias[c])) for c in df2.columns if c not in shared)
    return joined.select(*cols)


def _join_key(df: DataFrame, key: str) -> tuple[Path, DataType]:
    found = resolve(df.schema, parse_path(key))
    if found is None:
        raise ConfigError(f"join key {key!r} does not exist (columns: "
                          f"{_columns_hint(df.schema)})")
    return found


def _merge_field(left: Column, ltype: DataType, right: Column, rtype: DataType) -> Column:
    """One field from both records of a join: the right value unless it is null."""
    from pyspark.sql import functions as F

    from ._choicetype import choice_type, is_choice

    if ltype == rtype:
        return F.coalesce(right, left)
    if (not (is_choice(ltype) or is_choice(rtype))
            and glue_type_name(ltype) == glue_type_name(rtype)):
        return F.coalesce(right, cast_to(left, ltype, rtype))  # e.g. two decimals: right's type
    target = choice_type([ltype, rtype])
    return F.when(right.isNotNull(), _as_member(right, rtype, target)).otherwise(
        _as_member(left, ltype, target))


def _as_member(col: Column, dtype: DataType, target: StructType) -> Column:
    """``col`` as a value of the choice ``target`` (``dtype`` is one member, or a choice whose
    members ``target`` has)."""
    from pyspark.sql import functions as F

    from ._choicetype import PREFIX, is_choice, member_name, members

    have = ({PREFIX + n: col.getField(PREFIX + n) for n, _t in members(dtype)}
            if is_choice(dtype) else {member_name(dtype): col})
    parts = [(have[f.name] if f.name in have else F.lit(None).cast(f.dataType)).alias(f.name)
             for f in target.fields]
    return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))


def union(df1: DataFrame, df2: DataFrame) -> DataFrame:
    """All rows of both, fields matched by name (a field one frame lacks is null in its rows).
    A field whose types are of different kinds (numeric, date/time, string, boolean, struct …)
    in the two frames becomes a choice of both (``_choicetype``), as Glue's schema of the
    merged records would; types of one kind combine as Spark widens them."""
    from pyspark.sql import functions as F

    from ._choicetype import choice_type, is_choice

    t1 = {f.name.lower(): f.dataType for f in df1.schema.fields}
    t2 = {f.name.lower(): f.dataType for f in df2.schema.fields}
    choices = {name: choice_type([t1[name], t2[name]]) for name in t1.keys() & t2.keys()
               if _kind(t1[name]) != _kind(t2[name]) or is_choice(t1[name]) != is_choice(t2[name])}

    def fix(df: DataFrame) -> DataFrame:
        if not choices:
            return df
        types = {f.name: f.dataType for f in df.schema.fields}
        return df.select(*[
            (_as_member(F.col(quote(c)), types[c], choices[c.lower()])
             if c.lower() in choices else F.col(quote(c))).alias(c)
            for c in df.columns
        ])

    try:
        return fix(df1).unionByName(fix(df2), allowMissingColumns=True)
    except Exception as exc:
        if type(exc).__name__ != "AnalysisException":
            raise
        raise ConfigError(f"union: the frames' schemas do not combine: "
                          f"{str(exc).splitlines()[0]}") from None


def _kind(dtype: DataType) -> str:
    """Types of one kind combine in Spark's union; different kinds are made strings."""
    from pyspark.sql.types import DateType, NumericType, TimestampNTZType, TimestampType

    if isinstance(dtype, NumericType):
        return "numeric"
    if isinstance(dtype, (DateType, TimestampType, TimestampNTZType)):
        return "datetime"
    return type(dtype).__name__


# ---------------------------------------------------------------------------------- split_rows

_COMPARATORS = {
    "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
    "=": operator.eq, "==": operator.eq, "!=": operator.ne, "<>": operator.ne,
}


def split_rows(df: DataFrame, comparison_dict: Mapping[str, Any]) -> tuple[DataFrame, DataFrame]:
    """(rows meeting every comparison, all other rows — those with nulls included)."""
    from pyspark.sql import functions as F

    if not isinstance(comparison_dict, Mapping) or not comparison_dict:
        raise ConfigError("split_rows needs comparison_dict, e.g. {'age': {'>': 10, '<': 20}}")
    conds = []
    for path, comparisons in comparison_dict.items():
        found = resolve(df.schema, parse_path(path))
        if found is None:
            raise ConfigError(f"split_rows: field {path!r} does not exist (columns: "
                              f"{_columns_hint(df.schema)})")
        if not isinstance(comparisons, Mapping) or not comparisons:
            raise ConfigError(f"split_rows: {path!r} needs a dict of comparisons, e.g. {{'>': 10}}")
        col = path_column(found[0])
        for op, value in comparisons.items():
            fn = _COMPARATORS.get(op)
            if fn is None:
                raise UnsupportedError(f"split_rows comparator {op!r} is not supported "
                                       f"(supported: {', '.join(_COMPARATORS)})")
            conds.append(fn(col, F.lit(value)))
    cond = reduce(operator.and_, conds)
    return df.filter(cond), df.filter(~F.coalesce(cond, F.lit(False)))


# -------------------------------------------------------------------------------------- unbox

_UNBOX_OPTIONS = {
    "json": {"withSchema"},
    "csv": {"separator", "escaper", "skipFirst", "withHeader", "withSchema", "quoteChar"},
}


def unbox(df: DataFrame, path: str, format: str, options: Mapping[str, Any]) -> DataFrame:
    """The string field at ``path`` parsed (JSON or one CSV line) into a struct. Without
    ``withSchema`` the schema is inferred from the field's values (one Spark job)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructType

    fmt = (format or "").lower()
    if fmt not in _UNBOX_OPTIONS:
        raise UnsupportedError(f"unbox format {format!r} is not supported (supported: json, csv)")
    unknown = sorted(set(options) - _UNBOX_OPTIONS[fmt])
    if unknown:
        raise UnsupportedError(f"unbox option(s) {', '.join(unknown)} not supported for {fmt} "
                               f"(supported: {', '.join(sorted(_UNBOX_OPTIONS[fmt]))})")
    found = resolve(df.schema, parse_path(path, arrays=True))
    if found is None:
        raise ConfigError(f"unbox: field {path!r} does not exist (columns: "
                          f"{_columns_hint(df.schema)})")
    segs, dtype = found
    if not isinstance(dtype, StringType):
        raise ConfigError(f"unbox: field {path!r} is {dtype.simpleString()}, not a string")
    schema: StructType
    if options.get("withSchema"):
        raw = options["withSchema"]
        try:
            schema = StructType.fromJson(json.loads(raw) if isinstance(raw, str) else raw)
        except Exception as exc:
            raise ConfigError(f"unbox withSchema is not a StructType JSON: {exc}") from None
    else:
        schema = _infer_unbox_schema(df, segs, fmt, options)
    if fmt == "json":
        def parse(col: Column, _t: DataType) -> Column:
            return F.from_json(col, schema)
    else:
        csv_opts = _csv_options(options)

        def parse(col: Column, _t: DataType) -> Column:
            ddl = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in schema.fields)
            return F.from_csv(col, F.lit(ddl), csv_opts)
    return rewrite(df, segs, parse)


def _csv_options(options: Mapping[str, Any]) -> dict[str, str]:
    out = {"sep": str(options.get("separator", ","))}
    if options.get("escaper"):
        out["escape"] = str(options["escaper"])
    if options.get("quoteChar"):
        out["quote"] = str(options["quoteChar"])
    return out


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _infer_unbox_schema(df: DataFrame, segs: Path, fmt: str,
                        options: Mapping[str, Any]) -> StructType:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    col = F.col("v")
    values = df.select(_values_column(segs).alias("v"))
    if ELEM in segs:
        values = values.select(F.explode(col).alias("v"))
    strings = values.where(col.isNotNull())
    reader = df.sparkSession.read
    if fmt == "json":
        inferred = reader.json(strings).schema
        corrupt = [f for f in inferred.fields if f.name == "_corrupt_record"]
        fields = [f for f in inferred.fields if f not in corrupt]
        return StructType(fields)
    opts = _csv_options(options)
    if _truthy(options.get("withHeader")):
        raise UnsupportedError("unbox csv withHeader: each value is one line, so there is no "
                               "header; pass withSchema to name the fields")
    inferred = reader.csv(strings, inferSchema=True, **opts).schema
    return StructType([
        f.__class__("col" + f.name[2:] if f.name.startswith("_c") else f.name, f.dataType, True)
        for f in inferred.fields
    ])


def _values_column(segs: Path) -> Column:
    """The values at a path that may step through one array (``list[].field``)."""
    from pyspark.sql import functions as F

    if ELEM not in segs:
        return path_column(segs)
    i = segs.index(ELEM)
    if ELEM in segs[i + 1:]:
        raise UnsupportedError("unbox supports at most one '[]' in a path")
    rest = segs[i + 1:]

    def inner(e: Column) -> Column:
        for s in rest:
            e = e.getField(s)
        return e

    return F.transform(path_column(segs[:i]), inner)


# ---------------------------------------------------------------------------- drop_null_fields

def drop_null_fields(df: DataFrame) -> DataFrame:
    """Without the fields that are null in every record (top-level or inside structs; one Spark
    job) and without NullType fields."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import NullType, StructType

    leaves: list[Path] = []
    always_null: list[Path] = []

    def walk(dtype: StructType, prefix: Path) -> None:
        for f in dtype.fields:
            segs = prefix + (f.name,)
            if isinstance(f.dataType, NullType):
                always_null.append(segs)
            elif isinstance(f.dataType, StructType) and f.dataType.fields:
                walk(f.dataType, segs)
            else:
                leaves.append(segs)

    walk(df.schema, ())
    if leaves:
        aggs = [F.max(path_column(s).isNotNull().cast("int")).alias(f"c{i}")
                for i, s in enumerate(leaves)]
        row = df.agg(*aggs).collect()[0]
        always_null += [s for i, s in enumerate(leaves) if not row[f"c{i}"]]
    for segs in always_null:
        df = rewrite(df, segs, lambda _c, _t: None)
    return df


# ------------------------------------------------------------------------------------- spigot

def spigot(df: DataFrame, path: str, options: Mapping[str, Any]) -> None:
    """Write a sample of the records (the first ``topk``, default 100; with ``prob`` each record
    is kept with that probability first) as JSON lines under ``path`` (replaced)."""
    unknown = sorted(set(options) - {"topk", "prob"})
    if unknown:
        raise UnsupportedError(f"spigot option(s) {', '.join(unknown)} not supported "
                               "(supported: topk, prob)")
    if not path or not isinstance(path, str):
        raise ConfigError("spigot needs a path to write the sample to")
    try:
        topk = int(options.get("topk", 100))
        prob = float(options["prob"]) if "prob" in options else None
    except (TypeError, ValueError):
        raise ConfigError(f"spigot options must be numbers: {dict(options)!r}") from None
    if topk < 0 or (prob is not None and not 0.0 <= prob <= 1.0):
        raise ConfigError("spigot topk must be >= 0 and prob between 0 and 1")
    sample = df if prob is None else df.sample(withReplacement=False, fraction=prob)
    sample.limit(topk).coalesce(1).write.mode("overwrite").json(path)
