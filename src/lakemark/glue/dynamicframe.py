"""Glue's ``DynamicFrame`` as a thin skin over a Spark DataFrame, and ``DynamicFrameCollection``.

A lakemark DynamicFrame wraps one pyspark DataFrame (``toDF()`` hands it back, ``fromDF`` wraps
one); every transform is a DataFrame transform, so nothing here is a second engine. Behaviour a
Glue user should know:

* **Schema and choice types.** A field whose records hold values of different types is a
  Glue *choice* (``choice(long, string)``): CSV sources type every value as Glue's reader does
  (``_textchoice``), JSON sources keep each value's JSON type (``_jsonchoice``), and a join of
  frames whose shared field has two types makes one.
  ``resolveChoice`` settles choices (``_choice``: ``cast:T``, ``project:T``, ``make_cols``,
  ``make_struct``, ``match_catalog``); ``printSchema`` prints Glue's tree (``provider id:
  choice`` with ``long`` and ``string`` beneath); ``toDF()`` and every sink turn a choice left
  unresolved into a struct with one field per type (``struct<long:bigint,string:string>``);
  record functions (map, filter) see the value itself. ``schema()`` returns the Spark
  ``StructType`` lakemark holds, where a choice is a struct of ``__choice__:<type>`` fields.
* **Field paths** are Glue's: ``a.b.c``, back-quoted segments for names with dots or spaces
  (```a.b`.c``), ``list[].x`` where an array's elements are meant (resolveChoice, drop_fields,
  rename_field, unbox). Names match exactly first, then case-insensitively (as Spark does).
* **apply_mapping** keeps only the mapped fields, casts when the target type differs (a value
  that does not convert becomes null, as in Glue), and builds nested structs from dotted target
  paths (``addr.city`` and ``addr.zip`` make one struct ``addr``). Mappings are
  ``(source, source_type, target, target_type)`` or ``(source, target)``; ``array``, ``struct``
  and ``map`` as a type keep the source's own type. A mapping whose source field does not exist
  yields no field and logs a warning naming it (Glue drops it silently). ``case_sensitive=False``
  (the default) matches sources case-insensitively.
* **select_fields / drop_fields / rename_field** ignore paths that do not exist (with a
  warning), like Glue. ``rename_field``'s new name is a full path: changing only the last
  segment renames in place, a different parent moves the field.
* **map / filter** run the Python function on every record as a dict; a record on which it
  raises is dropped and counted as an error record: ``errorsCount()`` (this frame and the frames
  it came from), ``stageErrorsCount()`` (this transform only), ``errorsAsDynamicFrame()`` (the
  failed records: ``transformation``, ``error``, ``record`` as JSON). Counting re-runs the
  function over the input (a Spark job) and is then remembered. Map infers its output schema
  from every returned record when it is called (see ``_records``).
* **join** is Glue's inner equality join of records: a key field of the second frame named
  like a field of the first is kept as ``.name``; any other field both frames have appears once
  (the second frame's value unless null; a choice if the types differ) — see ``_df_ops.join``.
* **union** matches fields by name; a field missing on one side is null there; a field whose
  types are of different kinds on the two sides (a number here, a string there) is a choice of
  both, to settle with ``resolveChoice``.
* **mergeDynamicFrame** puts the staging frame's records in place of the records whose
  primary keys they share; unmatched source records stay (duplicates too); staging records
  whose keys the source lacks are not added (see ``_merge``).
* **relationalize** returns the root table and one table per array (see ``_relationalize``);
  ``staging_path`` is accepted and not used.
* **spigot** writes its sample (``topk`` records, default 100; ``prob`` samples first) as JSON
  lines when called, and returns the frame unchanged. **drop_null_fields** and **unbox**
  (without ``withSchema``) run one Spark job when called to look at the data.
* **show** prints records as JSON lines (as Glue does); **printSchema** prints Spark's tree.
* **Error thresholds** (``stageThreshold``, ``totalThreshold``, as Glue documents them): a
  positive ``stageThreshold`` N fails the transform when it made more than N error records; a
  positive ``totalThreshold`` N when this frame and the frames it came from hold more than N
  in all. 0 (the default) sets no limit. lakemark checks when the transform is called (one
  Spark job, only when a threshold is set); Glue at its next action: either way the run fails
  and the bookmark is unchanged (``assertErrorThreshold()`` checks again). ``info`` is
  accepted and ignored; ``transformation_ctx`` is kept on the result (attribute
  ``transformation_ctx``).
* Glue APIs lakemark does not provide raise UnsupportedError naming them; other unknown
  attributes are an AttributeError (DataFrame methods are *not* proxied — use ``toDF()``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UnsupportedError
from . import _df_ops as ops
from ._choice import resolve_choice
from ._choicetype import glue_tree, has_choice, plain_column
from ._fieldpaths import flatten_columns, quote
from ._records import (ERROR_SCHEMA, RecordErrors, check_thresholds, filter_frame, map_frame,
                       to_record)
from ._merge import merge_frames
from ._relationalize import relationalize as _relationalize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["DynamicFrame", "DynamicFrameCollection", "ResolveOption"]

log = logging.getLogger("lakemark.glue")


class ResolveOption:
    """Glue's option for ``toDF``: resolve the choice at ``path`` by ``action`` (``Project``,
    ``Cast`` — both need ``target``, a Spark ``DataType`` — or ``KeepAsStruct``)."""

    def __init__(self, path: str, action: str, target: Any = None) -> None:
        self.path = path
        self.action = action
        self.target = target


def _resolve_option_spec(option: Any) -> tuple[str, str] | None:
    """A ``ResolveOption`` as a resolveChoice spec; None for ``KeepAsStruct``."""
    from ._df_types import glue_type_name

    action = str(getattr(option, "action", "")).lower()
    path = getattr(option, "path", None)
    if not isinstance(path, str) or not path:
        raise ConfigError(f"toDF option {option!r} needs a path (ResolveOption(path, action))")
    if action == "keepasstruct":
        return None
    if action not in ("project", "cast"):
        raise ConfigError(f"toDF option for {path!r}: action {option.action!r} is not one of "
                          "Project, Cast, KeepAsStruct")
    target = getattr(option, "target", None)
    if target is None:
        raise ConfigError(f"Missing target type for resolve action {option.action} ({path!r})")
    name = target if isinstance(target, str) else glue_type_name(target)
    return (path, f"{action}:{name}")


class DynamicFrame:
    """A Glue DynamicFrame over one Spark DataFrame (module docstring: how it behaves)."""

    def __init__(self, jdf_or_df: Any, glue_ctx: Any, name: str = "") -> None:
        from pyspark.sql import DataFrame

        if isinstance(jdf_or_df, DynamicFrame):
            jdf_or_df = jdf_or_df._df
        if not isinstance(jdf_or_df, DataFrame):
            raise UnsupportedError(
                "DynamicFrame(...) takes a pyspark DataFrame in lakemark (Glue passes a Java "
                f"frame); got {type(jdf_or_df).__name__}. Use DynamicFrame.fromDF(df, glue_ctx, "
                "name)."
            )
        self._df: DataFrame = jdf_or_df
        self.glue_ctx = glue_ctx
        self.name = name or ""
        self.transformation_ctx = ""
        self._errors: tuple[RecordErrors, ...] = ()
        self._stage_errors: tuple[RecordErrors, ...] = ()
        self._thresholds: tuple[tuple[Any, Any], str] = ((0, 0), "")

    # ------------------------------------------------------------------ construction / access

    @staticmethod
    def fromDF(dataframe: DataFrame, glue_ctx: Any, name: str) -> DynamicFrame:
        """Wrap a Spark DataFrame."""
        return DynamicFrame(dataframe, glue_ctx, name)

    def toDF(self, options: Sequence[ResolveOption] | None = None) -> DataFrame:
        """The Spark DataFrame; a choice field left unresolved becomes a struct with one field
        per type (``struct<long:bigint,string:string>``). ``options`` (a list of
        :class:`ResolveOption`) resolve choices on the way, as Glue's ``toDF`` does:
        ``Project`` / ``Cast`` to the option's Spark type, ``KeepAsStruct`` the struct."""
        df = self._df
        for option in options or []:
            spec = _resolve_option_spec(option)
            if spec is not None:
                df = resolve_choice(df, [spec], "", None, None, self.glue_ctx)
        return _plain(df)

    def _derive(self, df: DataFrame, transformation_ctx: str = "", *,
                errors: tuple[RecordErrors, ...] | None = None,
                stage: tuple[RecordErrors, ...] = (),
                thresholds: tuple[Any, Any] = (0, 0), what: str = "") -> DynamicFrame:
        out = DynamicFrame(df, self.glue_ctx, self.name)
        out.transformation_ctx = transformation_ctx or ""
        out._errors = (self._errors if errors is None else errors) + stage
        out._stage_errors = stage
        out._thresholds = (thresholds, what)
        check_thresholds(out, thresholds, what)
        return out

    @property
    def _spark(self) -> SparkSession:
        return self._df.sparkSession

    def count(self) -> int:
        """Number of records (a Spark job)."""
        return self._df.count()

    def schema(self) -> StructType:
        """The frame's schema, as a Spark ``StructType`` (Glue returns its own schema type)."""
        return self._df.schema

    def printSchema(self) -> None:
        """Print the schema tree as Glue does (``|-- name: type``; a choice lists its types)."""
        print(glue_tree(self._df.schema))

    def show(self, num_rows: int = 20) -> None:
        """Print the first ``num_rows`` records as JSON lines, as Glue does."""
        from pyspark.sql import functions as F

        if has_choice(self._df.schema):  # a choice shows the value the record holds
            for r in self._df.limit(int(num_rows)).collect():
                print(json.dumps(_drop_nulls(to_record(r)), default=str))
            return
        df = self._df
        record = F.to_json(F.struct(*[F.col(quote(c)) for c in df.columns]))
        for row in df.limit(int(num_rows)).select(record.alias("r")).collect():
            print(row["r"])

    def getNumPartitions(self) -> int:
        from ..connect_compat import not_over_connect

        not_over_connect(self._df.sparkSession, "DynamicFrame.getNumPartitions")
        return self._df.rdd.getNumPartitions()

    def repartition(self, num_partitions: int, transformation_ctx: str = "", info: str = "",
                    stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        return self._derive(self._df.repartition(int(num_partitions)), transformation_ctx)

    def coalesce(self, num_partitions: int, shuffle: bool = False, transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        n = int(num_partitions)
        df = self._df.repartition(n) if shuffle else self._df.coalesce(n)
        return self._derive(df, transformation_ctx)

    def __repr__(self) -> str:
        return f"DynamicFrame(name={self.name!r}, schema={self._df.schema.simpleString()})"

    # ------------------------------------------------------------------------- field transforms

    def apply_mapping(self, mappings: Sequence[Any], case_sensitive: bool = False,
                      transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                      totalThreshold: int = 0) -> DynamicFrame:
        """Keep, rename, retype and nest fields (module docstring)."""
        return self._derive(ops.apply_mapping(self._df, mappings, case_sensitive),
                            transformation_ctx, thresholds=(stageThreshold, totalThreshold),
                            what="ApplyMapping")

    def select_fields(self, paths: Sequence[str], transformation_ctx: str = "", info: str = "",
                      stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        paths = ops.as_paths(paths, "select_fields paths")
        return self._derive(ops.select_fields(self._df, paths), transformation_ctx,
                            thresholds=(stageThreshold, totalThreshold), what="SelectFields")

    def drop_fields(self, paths: Sequence[str], transformation_ctx: str = "", info: str = "",
                    stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        paths = ops.as_paths(paths, "drop_fields paths")
        return self._derive(ops.drop_fields(self._df, paths), transformation_ctx,
                            thresholds=(stageThreshold, totalThreshold), what="DropFields")

    def rename_field(self, oldName: str, newName: str, transformation_ctx: str = "",
                     info: str = "", stageThreshold: int = 0,
                     totalThreshold: int = 0) -> DynamicFrame:
        return self._derive(ops.rename_field(self._df, oldName, newName), transformation_ctx,
                            thresholds=(stageThreshold, totalThreshold), what="RenameField")

    def unnest(self, transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
               totalThreshold: int = 0) -> DynamicFrame:
        """Nested struct fields as top-level columns named by their dotted paths."""
        df = self._df.select(*flatten_columns(self._df.schema))
        return self._derive(df, transformation_ctx)

    def drop_null_fields(self, transformation_ctx: str = "", info: str = "",
                         stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        """Without the fields that are null in every record (one Spark job)."""
        return self._derive(ops.drop_null_fields(self._df), transformation_ctx)

    def resolveChoice(self, specs: Sequence[Any] | None = None, choice: str = "",
                      database: str | None = None, table_name: str | None = None,
                      transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                      totalThreshold: int = 0, catalog_id: str | None = None) -> DynamicFrame:
        """See the ``_choice`` module for what each action does to single-typed columns."""
        df = resolve_choice(self._df, specs, choice, database, table_name, self.glue_ctx,
                            catalog_id)
        return self._derive(df, transformation_ctx, thresholds=(stageThreshold, totalThreshold),
                            what="ResolveChoice")

    def unbox(self, path: str, format: str, transformation_ctx: str = "", info: str = "",
              stageThreshold: int = 0, totalThreshold: int = 0, **options: Any) -> DynamicFrame:
        """Parse the JSON or CSV string at ``path`` into a struct."""
        return self._derive(ops.unbox(self._df, path, format, options), transformation_ctx)

    # --------------------------------------------------------------------------- record functions

    def filter(self, f: Callable[[dict[str, Any]], Any], transformation_ctx: str = "",
               info: str = "", stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        """Records for which ``f(record)`` is true; records ``f`` fails on are error records."""
        df = filter_frame(self._df, f)
        return self._derive(df, transformation_ctx, stage=(RecordErrors("Filter", self._df, f),),
                            thresholds=(stageThreshold, totalThreshold), what="Filter")

    def map(self, f: Callable[[dict[str, Any]], Any], preservesPartitioning: bool = False,
            transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
            totalThreshold: int = 0) -> DynamicFrame:
        """``f(record)`` for every record (a dict, possibly changed); failures are error
        records. The output schema is inferred from all results now (one Spark job)."""
        df = map_frame(self._df, f)
        return self._derive(df, transformation_ctx, stage=(RecordErrors("Map", self._df, f),),
                            thresholds=(stageThreshold, totalThreshold), what="Map")

    def errorsCount(self) -> int:
        """Error records of this frame and the frames it was made from."""
        return sum(e.count() for e in self._errors)

    def stageErrorsCount(self) -> int:
        """Error records of the transform that made this frame."""
        return sum(e.count() for e in self._stage_errors)

    def assertErrorThreshold(self) -> None:
        """Fail (ReadError) if the transform that made this frame has more error records than
        its ``stageThreshold`` / ``totalThreshold``; counts only when one is set. lakemark
        already checks when the transform is called, so this passes for any frame it made."""
        thresholds, what = self._thresholds
        check_thresholds(self, thresholds, what or "assertErrorThreshold")

    def errorsAsDynamicFrame(self) -> DynamicFrame:
        """The error records (``transformation``, ``error``, ``record`` as JSON); empty when
        there are none."""
        frames = [e.frame(self._spark) for e in self._errors]
        df = frames[0] if frames else self._spark.createDataFrame([], ERROR_SCHEMA)
        for other in frames[1:]:
            df = df.unionByName(other)
        return DynamicFrame(df, self.glue_ctx, f"{self.name}_errors" if self.name else "errors")

    # ------------------------------------------------------------------------ frames and splits

    def join(self, paths1: Sequence[str] | str, paths2: Sequence[str] | str,
             frame2: DynamicFrame, transformation_ctx: str = "", info: str = "",
             stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        """Inner equality join on ``paths1`` (this frame) = ``paths2`` (``frame2``)."""
        other = _frame(frame2, "join frame2")
        df = ops.join(self._df, other._df, ops.as_paths(paths1, "join paths1"),
                      ops.as_paths(paths2, "join paths2"))
        return self._derive(df, transformation_ctx, errors=self._errors + other._errors,
                            thresholds=(stageThreshold, totalThreshold), what="Join")

    def union(self, other_frame: DynamicFrame, transformation_ctx: str = "", info: str = "",
              stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        """All records of both frames, fields matched by name."""
        other = _frame(other_frame, "union other_frame")
        df = ops.union(self._df, other._df)
        return self._derive(df, transformation_ctx, errors=self._errors + other._errors,
                            thresholds=(stageThreshold, totalThreshold), what="Union")

    def mergeDynamicFrame(self, stage_dynamic_frame: DynamicFrame, primary_keys: Sequence[str],
                          transformation_ctx: str = "", options: Mapping[str, Any] | None = None,
                          info: str = "", stageThreshold: int = 0,
                          totalThreshold: int = 0) -> DynamicFrame:
        """This frame with the records of ``stage_dynamic_frame`` whose ``primary_keys`` match
        in place of the matched ones (see ``_merge``: staging records without a match are not
        added). ``options`` is accepted and not used (Glue uses none)."""
        stage = _frame(stage_dynamic_frame, "mergeDynamicFrame stage_dynamic_frame")
        if options is not None and not isinstance(options, Mapping):
            raise ConfigError(f"mergeDynamicFrame options must be a dict, got {options!r}")
        df = merge_frames(self._df, stage._df, primary_keys)
        return self._derive(df, transformation_ctx, errors=self._errors + stage._errors,
                            thresholds=(stageThreshold, totalThreshold),
                            what="MergeDynamicFrame")

    def relationalize(self, root_table_name: str, staging_path: str | None = None,
                      options: Mapping[str, Any] | None = None, transformation_ctx: str = "",
                      info: str = "", stageThreshold: int = 0,
                      totalThreshold: int = 0) -> DynamicFrameCollection:
        """The root table and one table per array (see ``_relationalize``)."""
        if options:
            raise UnsupportedError(f"relationalize option(s) {', '.join(map(str, options))} "
                                   "not supported (Glue documents none)")
        if not root_table_name or not isinstance(root_table_name, str):
            raise ConfigError("relationalize needs root_table_name")
        tables = _relationalize(self._df, root_table_name)
        frames = {name: self._derive(df, transformation_ctx) for name, df in tables.items()}
        for name, frame in frames.items():
            frame.name = name
        return DynamicFrameCollection(frames, self.glue_ctx)

    def split_fields(self, paths: Sequence[str], name1: str, name2: str,
                     transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                     totalThreshold: int = 0) -> DynamicFrameCollection:
        """``name1``: only ``paths``; ``name2``: every other field."""
        paths = ops.as_paths(paths, "split_fields paths")
        first = self._derive(ops.select_fields(self._df, paths), transformation_ctx)
        second = self._derive(ops.drop_fields(self._df, paths), transformation_ctx)
        return _pair(self.glue_ctx, name1, first, name2, second)

    def split_rows(self, comparison_dict: Mapping[str, Any], name1: str, name2: str,
                   transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                   totalThreshold: int = 0) -> DynamicFrameCollection:
        """``name1``: records meeting every comparison; ``name2``: the others."""
        matched, rest = ops.split_rows(self._df, comparison_dict)
        return _pair(self.glue_ctx, name1, self._derive(matched, transformation_ctx),
                     name2, self._derive(rest, transformation_ctx))

    def spigot(self, path: str, options: Mapping[str, Any] | None = None,
               transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
               totalThreshold: int = 0) -> DynamicFrame:
        """Write a sample of the records as JSON lines under ``path``; returns this frame."""
        ops.spigot(self._df, path, dict(options or {}))
        return self

    # ---------------------------------------------------------------- writing and unsupported

    def write(self, connection_type: str, connection_options: Mapping[str, Any] | None = None,
              format: str | None = None, format_options: Mapping[str, Any] | None = None,
              accumulator_size: int = 0) -> DynamicFrame:
        """Write through the glue context (``write_dynamic_frame_from_options``)."""
        writer = getattr(self.glue_ctx, "write_dynamic_frame_from_options", None)
        if not callable(writer):
            raise UnsupportedError("DynamicFrame.write needs a lakemark GlueContext; this frame "
                                   "has none")
        result: DynamicFrame = writer(frame=self, connection_type=connection_type,
                                      connection_options=dict(connection_options or {}),
                                      format=format, format_options=dict(format_options or {}))
        return result

    def _unsupported(name: str) -> Any:  # type: ignore[misc]
        def method(self: DynamicFrame, *args: Any, **kwargs: Any) -> Any:
            raise UnsupportedError(f"DynamicFrame.{name} is not supported by lakemark")
        method.__name__ = name
        method.__doc__ = f"Glue's ``{name}``: not supported (raises UnsupportedError)."
        return method

    unnest_ddb_json = _unsupported("unnest_ddb_json")
    simplify_ddb_json = _unsupported("simplify_ddb_json")
    getSink = _unsupported("getSink")
    del _unsupported


def _drop_nulls(value: Any) -> Any:
    """A record without its null fields (as ``to_json`` prints one)."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _plain(df: DataFrame) -> DataFrame:
    """``df`` with choice fields as plain structs (``_choicetype``); ``df`` when it has none."""
    if not has_choice(df.schema):
        return df
    return df.select(*[plain_column(df[quote(f.name)], f.dataType).alias(f.name)
                       for f in df.schema.fields])


def _frame(value: Any, what: str) -> DynamicFrame:
    if not isinstance(value, DynamicFrame):
        raise ConfigError(f"{what} must be a DynamicFrame, got {type(value).__name__}")
    return value


def _pair(glue_ctx: Any, name1: str, first: DynamicFrame, name2: str,
          second: DynamicFrame) -> DynamicFrameCollection:
    if not name1 or not name2 or name1 == name2:
        raise ConfigError(f"the two frames need two different names (got {name1!r}, {name2!r})")
    first.name, second.name = name1, name2
    return DynamicFrameCollection({name1: first, name2: second}, glue_ctx)


class DynamicFrameCollection:
    """Named DynamicFrames (what relationalize, split_fields and split_rows return)."""

    def __init__(self, dynamic_frames: Mapping[str, DynamicFrame], glue_ctx: Any) -> None:
        if not isinstance(dynamic_frames, Mapping):
            raise ConfigError("DynamicFrameCollection takes a dict of name -> DynamicFrame")
        for key, frame in dynamic_frames.items():
            _frame(frame, f"collection entry {key!r}")
        self._df_dict: dict[str, DynamicFrame] = dict(dynamic_frames)
        self.glue_ctx = glue_ctx

    def keys(self) -> list[str]:
        return list(self._df_dict)

    def values(self) -> list[DynamicFrame]:
        return list(self._df_dict.values())

    def select(self, key: str, transformation_ctx: str = "") -> DynamicFrame:
        """The frame called ``key`` (ConfigError, listing the names, if there is none)."""
        if key not in self._df_dict:
            raise ConfigError(f"no frame {key!r} in this collection (frames: "
                              f"{', '.join(self._df_dict) or 'none'})")
        return self._df_dict[key]

    def __getitem__(self, key: str) -> DynamicFrame:
        return self.select(key)

    def __contains__(self, key: object) -> bool:
        return key in self._df_dict

    def __iter__(self) -> Iterator[str]:
        return iter(self._df_dict)

    def __len__(self) -> int:
        return len(self._df_dict)

    def __repr__(self) -> str:
        return f"DynamicFrameCollection({', '.join(self._df_dict)})"

    def map(self, callable: Callable[[DynamicFrame, str], DynamicFrame],
            transformation_ctx: str = "") -> DynamicFrameCollection:
        """A collection of ``callable(frame, transformation_ctx)`` for every frame, same names."""
        out = {}
        for key, frame in self._df_dict.items():
            ctx = f"{transformation_ctx}:{key}" if transformation_ctx else ""
            out[key] = _frame(callable(frame, ctx), f"map result for {key!r}")
        return DynamicFrameCollection(out, self.glue_ctx)

    def flatMap(self, f: Callable[[DynamicFrame, str], Any],
                transformation_ctx: str = "") -> DynamicFrameCollection:
        """``f(frame, transformation_ctx)`` for every frame; a returned collection's frames are
        added under their own names, a returned frame under the original name."""
        out: dict[str, DynamicFrame] = {}
        for key, frame in self._df_dict.items():
            ctx = f"{transformation_ctx}:{key}" if transformation_ctx else ""
            result = f(frame, ctx)
            items = (result._df_dict.items() if isinstance(result, DynamicFrameCollection)
                     else [(key, _frame(result, f"flatMap result for {key!r}"))])
            for name, value in items:
                if name in out:
                    raise ConfigError(f"flatMap made two frames named {name!r}")
                out[name] = value
        return DynamicFrameCollection(out, self.glue_ctx)
