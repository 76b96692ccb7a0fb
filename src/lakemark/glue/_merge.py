"""Glue's ``mergeDynamicFrame``: a source frame with a staging frame's records put in place of
the source records they match on the primary keys.

As Glue documents it:

* a source record whose keys no staging record has is kept as it is, duplicates included
  (nothing is de-duplicated);
* a source record whose keys a staging record has is replaced: every source record with those
  keys goes, every staging record with them comes (all of them, if the staging frame has
  several);
* a staging record whose keys no source record has is **not** in the result (the result holds
  a record only when the source has its keys; Glue's merge updates, it does not insert).

Keys are field paths (``a.b`` for a nested field), resolved in each frame as the other
transforms resolve them; a null key matches nothing (as Spark's equality). The two frames need
not have the same schema: the result's fields are those of both, matched by name, as ``union``
makes them (a field one frame lacks is null in its records; a field of two kinds of type is a
choice). DataFrame operations only (two joins on the keys and a union), so it runs over Spark
Connect as in classic mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ._df_ops import as_paths, union
from ._fieldpaths import parse_path, path_column, quote, resolve

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["merge_frames"]

_KEY = "__lakemark_merge_key_{}"


def merge_frames(source: DataFrame, staging: DataFrame, primary_keys: Any) -> DataFrame:
    """The merged records (module docstring); ConfigError naming a key neither frame has."""
    if isinstance(primary_keys, Sequence) and not isinstance(primary_keys, str) \
            and not primary_keys:
        raise ConfigError("mergeDynamicFrame needs at least one primary key (primary_keys is "
                          "empty)")
    keys = as_paths(primary_keys, "mergeDynamicFrame primary_keys")
    names = [_KEY.format(i) for i in range(len(keys))]
    source_keyed = _with_keys(source, keys, names, "source frame")
    staging_keyed = _with_keys(staging, keys, names, "staging frame")
    staging_keys = staging_keyed.select(*names).distinct()
    source_keys = source_keyed.select(*names).distinct()
    kept = source_keyed.join(staging_keys, on=names, how="left_anti")
    replacing = staging_keyed.join(source_keys, on=names, how="left_semi")
    return union(kept.select(*[quote(c) for c in source.columns]),
                 replacing.select(*[quote(c) for c in staging.columns]))


def _with_keys(df: DataFrame, keys: Sequence[str], names: Sequence[str],
               which: str) -> DataFrame:
    """``df`` with each key's value as a top-level column ``names[i]``."""
    cols = []
    for key, name in zip(keys, names):
        found = resolve(df.schema, parse_path(key))
        if found is None:
            fields = ", ".join(df.columns) or "none"
            raise ConfigError(f"mergeDynamicFrame primary key {key!r} is not a field of the "
                              f"{which} (fields: {fields})")
        cols.append(path_column(found[0]).alias(name))
    return df.select("*", *cols)
