"""Models of frame-level operations for the analyser: DynamicFrame and DataFrame methods,
grouped aggregations, ``pyspark.sql.functions`` and column methods (Glue transforms are in
:mod:`._glue_ops`, which :class:`FrameOps` extends).

:class:`FrameOps` is mixed into :class:`._api.ApiModel` (which adds datasets, GlueContext,
SparkSession, readers and writers); the interpreter in :mod:`._analyze` provides ``warn``,
``call`` and ``unknown_call``.
"""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Iterable
from typing import Any

from ._api_util import _schema_names as _schema_fields
from ._frame_util import _bind, _names, _renamed_at, _split_type, _text, _top_level
from ._glue_ops import GlueOps
from ._map_fn import apply_map, row_tuple
from ._graph import (
    AGGREGATION,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    JOIN,
    SORT,
    TRANSFORMATION,
    UNKNOWN,
    WINDOW,
    ColumnEdge,
)
from ._objects import Lambda, Method, Obj, UserFunc
from ._sql import SqlError, expression_lineage, select_expr_lineage
from ._values import (
    ELEMENT,
    UNCERTAIN,
    Col,
    ColExpr,
    DynStr,
    Frame,
    Unknown,
    combine_exprs,
    derive,
    leaf_name,
    merge_frames,
)

from ._frame_names import (_AGGREGATES, _COLUMNS_AFTER_FIRST, _MULTI_COLUMN, _NO_VALUE,
                           _PASSTHROUGH_FRAME, _SEMI_JOINS, _SPARK_NAMES, _STUDIO)

__all__ = ["FrameOps", "_bind", "_names", "_text"]

def _element_type(frame: Frame, expr: ColExpr) -> str | None:
    """An expression's type; of ``explode(arr)``, the element type of ``arr`` when known."""
    if expr.type != ELEMENT:
        return expr.type
    bound, ref = expr.refs[0]
    source = bound if bound is not None else frame
    key = source.find(ref)
    kind = source.cols[key].type if key is not None else None
    if isinstance(kind, str) and kind.lower().startswith("array<") and kind.endswith(">"):
        return kind[len("array<"):-1]
    return None

def _schema_names(schema: Any) -> list[str]:
    """The column names of a declared schema: a DDL string (``"id long, score double"``) or a
    ``StructType`` the analyser followed; ``[]`` when not known."""
    if isinstance(schema, str):
        parts = [p.strip().split(None, 1)[0].strip("`") for p in _top_level(schema) if p.strip()]
        return [p.rstrip(":") for p in parts if p]
    if isinstance(schema, Obj):
        return [n for n in schema.data.get("names", []) if isinstance(n, str)]
    return []


class FrameOps(GlueOps):
    """Frame-level API semantics (see the module docstring)."""

    # -- DataFrame / DynamicFrame methods -------------------------------------------------------
    def frame_method(self, frame: Frame, name: str, args: list[Any], kwargs: dict[str, Any],
                     line: int, label: str) -> Any:
        if name == "toDF":
            names = [a for a in args if isinstance(a, str)]
            out = frame.as_kind(False)
            if args and len(names) < len(args) and not frame.dynamic:
                # df.toDF(*names) with names only known at run time: never the old names
                given = list(args) if len(args) == len(frame.cols) else [None] * len(frame.cols)
                names = [a if isinstance(a, str) else "{?" + old + "}"
                         for a, old in zip(given, frame.cols)]
                self.warn("toDF() with column names the analyser cannot know: the columns are "
                          f"shown as {', '.join(n for n in names if n.startswith('{?'))}"
                          if names else "toDF() with column names the analyser cannot know",
                          line)
            if names and not frame.open and len(names) == len(frame.cols):
                out = out.with_cols(dict(zip(names, frame.cols.values())))
            return out
        if name == "apply_mapping":
            return self.apply_mapping(frame, args[0] if args else kwargs.get("mappings"), line)
        if name == "select_fields":
            return self.select_fields(frame, args[0] if args else kwargs.get("paths"), line)
        if name == "drop_fields":
            return self.drop_fields(frame, args[0] if args else kwargs.get("paths"), line)
        if name == "rename_field":
            kw = _bind(["oldName", "newName"], args, kwargs)
            return self.rename(frame, kw.get("oldName"), kw.get("newName"), line)
        if name == "join" and frame.dynamic:
            kw = _bind(["paths1", "paths2", "frame2"], args, kwargs)
            return self.glue_join(frame, kw.get("frame2"), kw.get("paths1"), kw.get("paths2"),
                                  line)
        if name == "join":
            kw = _bind(["other", "on", "how"], args, kwargs)
            return self.df_join(frame, kw.get("other"), kw.get("on"), kw.get("how"), line)
        if name == "crossJoin":
            other = args[0] if args else kwargs.get("other")
            return merge_frames([frame, other]) if isinstance(other, Frame) else frame
        if name == "filter" and frame.dynamic:
            return self.glue_filter(frame, args[0] if args else kwargs.get("f"), line)
        if name in ("filter", "where"):
            return self.df_filter(frame, args[0] if args else kwargs.get("condition"), line)
        if name == "relationalize":
            kw = _bind(["root_table_name", "staging_path"], args, kwargs)
            return self.relationalize(frame, kw.get("root_table_name"), line)
        if name == "split_fields":
            kw = _bind(["paths", "name1", "name2"], args, kwargs)
            return self.split_fields(frame, kw.get("paths"), kw.get("name1") or "frame1",
                                     kw.get("name2") or "frame2", line)
        if name in ("map", "mapPartitions", "transform"):
            if name == "transform" and args and isinstance(args[0], (UserFunc, Lambda)):
                return self.call(args[0], [frame, *args[1:]], kwargs, line, "transform")
            if name == "map" and frame.dynamic:
                return apply_map(self, frame, args[0] if args else kwargs.get("f"), line,
                                 "map function")
            return self.opaque(frame, f"{name} function", line)
        if name == "mergeDynamicFrame":
            other = args[0] if args else kwargs.get("stage_dynamic_frame")
            return merge_frames([frame, other]) if isinstance(other, Frame) else frame
        if name in ("union", "unionAll"):
            other = args[0] if args else kwargs.get("other")
            return self.df_union(frame, other, by_name=frame.dynamic, line=line)
        if name == "unionByName":
            other = args[0] if args else kwargs.get("other")
            return self.df_union(frame, other, by_name=True, line=line)
        if name in ("intersect", "intersectAll", "subtract", "exceptAll"):
            other = args[0] if args else None
            if isinstance(other, Frame):
                edges = [ColumnEdge(e.dataset, e.field, INDIRECT, FILTER, "", line)
                         for c in other.cols.values() for e in c.edges]
                return frame.add_indirect(edges)
            return frame
        if name == "select":
            return self.df_select(frame, list(args), line)
        if name in ("mapInPandas", "mapInArrow"):
            kw = _bind(["func", "schema"], list(args), kwargs)
            return self.pandas_frame(frame, kw.get("schema"), f"{name} function", line)
        if name == "selectExpr":
            exprs: list[Any] = []
            for a in _names(list(args)):
                if isinstance(a, str):
                    try:
                        exprs.extend(select_expr_lineage(a))
                    except SqlError as exc:
                        self.warn(f"selectExpr: {exc}", line)
                else:
                    self.warn("selectExpr with an expression the analyser cannot know", line)
            return self.df_select(frame, exprs, line)
        if name == "withColumn":
            kw = _bind(["colName", "col"], args, kwargs)
            return self.with_columns(frame, {kw.get("colName"): kw.get("col")}, line)
        if name == "withColumns":
            mapping = args[0] if args and isinstance(args[0], dict) else kwargs
            return self.with_columns(frame, dict(mapping), line)
        if name == "withColumnRenamed":
            kw = _bind(["existing", "new"], args, kwargs)
            return self.rename(frame, kw.get("existing"), kw.get("new"), line)
        if name == "withColumnsRenamed":
            out = frame
            mapping = args[0] if args and isinstance(args[0], dict) else {}
            for old, new in mapping.items():
                out = self.rename(out, old, new, line)
            return out
        if name == "drop":
            dropped: list[Any] = []
            if frame.shadowed and any(self._one_side(frame, a) for a in args):
                rest = [a for a in args if not self._one_side(frame, a)]
                frame, args = self._drop_one_side(frame, args), rest
            for a in args:
                if isinstance(a, ColExpr) and a.name:
                    dropped.append(a.name)
                else:
                    dropped.append(a)  # a name, or one the analyser cannot know (reported)
            return self.drop_fields(frame, dropped, line)
        if name in ("groupBy", "groupby", "rollup", "cube"):
            keys = self.resolve_all(frame, _names(list(args)), line)
            edges = [ColumnEdge(e.dataset, e.field, INDIRECT, GROUP_BY, "", line)
                     for _, col in keys for e in col.edges]
            return Obj("grouped", data={"frame": frame, "keys": keys, "indirect": edges})
        if name == "agg":
            grouped = Obj("grouped", data={"frame": frame, "keys": [], "indirect": []})
            return self.grouped_method(grouped, "agg", args, kwargs, line)
        if name in ("orderBy", "sort"):
            refs = self.resolve_all(frame, _names(list(args)), line)
            return frame.add_indirect(ColumnEdge(e.dataset, e.field, INDIRECT, SORT, "", line)
                                      for _, col in refs for e in col.edges)
        if name == "alias":
            alias = args[0] if args else kwargs.get("alias")
            if isinstance(alias, str):
                return replace(frame, aliases={**frame.aliases, alias: frame})
            return frame
        if name in ("createOrReplaceTempView", "createTempView", "createGlobalTempView",
                    "createOrReplaceGlobalTempView", "registerTempTable"):
            view = args[0] if args else kwargs.get("name")
            if isinstance(view, str):
                self.views[view.lower()] = frame
                self.views[f"global_temp.{view.lower()}"] = frame
            else:
                self.warn("temp view with a name the analyser cannot know", line)
            return None
        if name in ("resolveChoice", "resolve_choice"):
            return self.resolve_choice(frame, args[0] if args else kwargs.get("specs"), line,
                                       args[1] if len(args) > 1 else kwargs.get("choice"))
        if name == "unnest" and frame.dynamic:
            return self.unnest(frame, line)
        if name.startswith("gs_") and name in _STUDIO:
            return self.studio_node(frame, name, _bind(_STUDIO[name], args, kwargs), line)
        if name == "spigot" and frame.dynamic:  # dyf.spigot(path, options): a sample sink
            self.write_sample(frame, _bind(["path", "options"], args, kwargs).get("path"), line)
            return frame
        if name in _PASSTHROUGH_FRAME:
            return frame
        if name == "schema":
            return self.schema_of(frame, line)
        if name in ("describe", "summary"):
            return self.statistics(frame, name, args, line)
        if name == "toPandas":
            return Obj("pandas", data={"frame": frame})
        if name == "toJSON":
            return Obj("rdd", data={"frame": frame, "opaque": "toJSON"})
        if name in ("collect", "take", "tail", "toLocalIterator"):
            return Obj("rows", data={"frame": frame})  # rows on the driver
        if name in ("foreach", "foreachPartition"):
            self.warn(f"{name}(): each row is handed to a function; what it writes (a database, "
                      "an API) is not analysed", line)
            return None
        if name in _NO_VALUE:
            return Unknown(f"the data of a frame ({name})", line)
        if name == "writeTo":
            target = _text(args[0] if args else None)
            if target is not None:
                return Obj("df_writer", data={"frame": frame, "opts": {}, "table": target})
        return self.unknown_call(label or name, [frame, *args], kwargs, line)

    def statistics(self, frame: Frame, name: str, args: list[Any], line: int) -> Frame:
        """``describe(*cols)`` / ``summary(*stats)``: a ``summary`` column (the statistic's
        name) and one aggregated column per input column (``describe``: those named, else
        all)."""
        names = [a for a in _names(list(args)) if isinstance(a, str)] \
            if name == "describe" else []
        chosen = [(n, frame.lookup(n) or ()) for n in names] or \
            [(k, c.edges) for k, c in frame.cols.items()]
        cols = {"summary": Col((), "string")}
        for column, edges in chosen:
            cols[column] = Col(derive(edges, AGGREGATION, line, f"{name}() statistics"),
                               "string")
        open_inputs = frame.open if not names else ()
        return Frame(cols, frame.indirect, open_inputs, {}, False, frame.unknown, frame.line)

    def rdd_frame(self, rdd: Obj, schema: Any, line: int) -> Frame:
        """A DataFrame made back from an RDD (``rdd.toDF(names)``, ``createDataFrame(rdd,
        schema)``): columns by position from the frame the RDD came from, UNKNOWN when a
        function the analyser does not read (``rdd.map``) ran in between."""
        frame: Frame = rdd.data["frame"]
        opaque = rdd.data.get("opaque", "")
        names = [n for n in _names(schema) if isinstance(n, str)] if isinstance(
            schema, (list, tuple)) else (list(schema.data.get("names", []))
                                         if isinstance(schema, Obj) else [])

        def through(col: Col) -> Col:
            if not opaque:
                return col
            return Col(tuple(ColumnEdge(e.dataset, e.field, e.type, UNKNOWN, opaque, line)
                             for e in col.edges), col.type)

        fields = rdd.data.get("tuple")
        if fields is not None and len(names) == len(fields):
            made = {}
            for n, (read, as_is) in zip(names, fields):
                edges = [e for f in read for e in (frame.lookup(f) or ())]
                made[n] = Col(tuple(edges), None) if as_is and len(read) == 1 else \
                    Col(derive(edges, TRANSFORMATION, rdd.data.get("line", line),
                               "rdd.map function"))
            return frame.with_cols(made, open=()).as_kind(False)
        if not names:
            out = frame.with_cols({k: through(c) for k, c in frame.cols.items()}).as_kind(False)
            return replace(out, through=opaque) if opaque else out
        if len(names) == len(frame.cols) and not frame.open:
            return frame.with_cols({n: through(c) for n, c in zip(names, frame.cols.values())}
                                   ).as_kind(False)
        self.warn(f"the RDD made into a frame with columns {', '.join(names)} does not match "
                  "the frame it came from column for column; same-named columns are assumed",
                  line)
        cols = {n: through(Col(frame.lookup(n) or ())) for n in names}
        return frame.with_cols(cols, open=()).as_kind(False)

    def rdd_method(self, rdd: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                   line: int) -> Any:
        """An RDD taken from a frame (``df.rdd``): functions applied to its rows are not
        analysed (reported once per call); ``toDF`` makes it a frame again."""
        if name == "toDF":
            return self.rdd_frame(rdd, args[0] if args else kwargs.get("schema"), line)
        if name == "map" and "opaque" not in rdd.data and "tuple" not in rdd.data:
            fields = row_tuple(args[0] if args else kwargs.get("f"))
            if fields is not None:  # lambda r: (r.a, r.b * 2): columns by position
                return Obj("rdd", data={**rdd.data, "tuple": fields, "line": line})
        if name in ("map", "flatMap", "mapPartitions", "mapValues", "flatMapValues",
                    "mapPartitionsWithIndex", "reduceByKey", "groupByKey", "aggregateByKey",
                    "combineByKey", "foldByKey", "zipWithIndex", "zipWithUniqueId",
                    "keyBy", "glom", "pipe"):
            self.warn(f"rdd.{name}(): the function applied to the rows is not analysed; the "
                      "columns made from its result are UNKNOWN edges of the frame it came "
                      "from", line)
            return Obj("rdd", data={"frame": rdd.data["frame"],
                                    "opaque": f"rdd.{name} function"})
        if name in ("filter", "distinct", "repartition", "coalesce", "cache", "persist",
                    "sample", "sortBy", "union", "unpersist", "setName"):
            return rdd
        if name in ("saveAsTextFile", "saveAsPickleFile", "saveAsSequenceFile",
                    "saveAsHadoopFile", "saveAsNewAPIHadoopFile"):
            return Obj("rdd_save", data={"rdd": rdd})
        return Unknown(f"rdd.{name}()", line)

    def as_expr(self, value: Any) -> ColExpr | None:
        if isinstance(value, ColExpr):
            return value
        if isinstance(value, str):
            if value == "*":
                return ColExpr((), IDENTITY, "*", star=True)
            return ColExpr(((None, value),), IDENTITY, leaf_name(value))
        if isinstance(value, Method) and isinstance(value.target, ColExpr):
            inner = value.target  # df.payload.field: a struct field, not a method
            if len(inner.refs) == 1 and (inner.subtype == IDENTITY or inner.type == ELEMENT):
                bound, ref = inner.refs[0]  # (df.items[0].qty: a field of a picked element)
                return ColExpr(((bound, f"{ref}.{value.name}"),), inner.subtype, value.name)
        return None

    def resolve(self, frame: Frame, value: Any, line: int) -> list[tuple[str, Col]]:
        """A select item → output columns (several for a star)."""
        expr = self.as_expr(value)
        if expr is None:
            if isinstance(value, (int, float, bool)) or value is None:
                return []
            self.warn("a column expression the analyser cannot know; the frame's columns pass "
                      "through", line)
            return [("?", Col((), None))]
        if expr.star or (expr.subtype == IDENTITY and len(expr.refs) == 1 and (
                expr.refs[0][1] == "*" or expr.refs[0][1].endswith(".*"))):
            return self.resolve_star(frame, expr, line)
        edges: list[ColumnEdge] = []
        for bound, ref in expr.refs:
            source = bound if bound is not None else frame
            if ref == "*" or ref.endswith(".*"):  # F.struct("*"), F.hash("t.*"): every column
                for _, col in self.resolve_star(frame, ColExpr(((bound, ref),)), line):
                    edges.extend(col.edges)
                continue
            found = source.lookup(ref)
            if found is None and bound is not None:
                found = frame.lookup(ref)
            if found is None:
                gone = ref.replace("`", "").lower()
                if gone in source.dropped or gone.partition(".")[0] in source.dropped:
                    self.warn(f"column {ref!r} was dropped from the frame earlier (DropFields /"
                              " drop): it has no inputs here", line)
                elif not source.unknown:
                    self.warn(f"column {ref!r} is not in the frame (it has: "
                              f"{', '.join(source.cols) or 'no known columns'})", line)
                continue
            edges.extend(found)
        name = expr.name or expr.description or "col"
        if expr.names:  # a generator's columns; the last holds the elements (posexplode)
            last = len(expr.names) - 1
            return [(n, Col(derive(edges, expr.subtype, line, expr.description),
                            _element_type(frame, expr) if i == last else None,
                            tuple(edges) if i == last and expr.type == ELEMENT else ()))
                    for i, n in enumerate(expr.names)]
        if expr.subtype == IDENTITY and len(expr.refs) == 1:
            key = frame.find(expr.refs[0][1]) if expr.refs[0][0] is None else None
            if key is not None and expr.name == leaf_name(expr.refs[0][1]):
                col = frame.cols[key]
                return [(key if expr.name.lower() == key.lower() else expr.name, col)]
            ref = leaf_name(expr.refs[0][1])
            if name.lower() != ref.lower():  # F.col("a").alias("b"): a rename, on this line
                return [(name, Col(_renamed_at(edges, line, ref), expr.type))]
            return [(name, Col(tuple(edges), expr.type))]
        fields = tuple((n, tuple(derive(
            [e for _, c in self.resolve(frame, f, line) for e in c.edges], IDENTITY,
            line))) for n, f in expr.fields)  # a field is its own expression, unchanged
        return [(name, Col(derive(edges, expr.subtype, line, expr.description),
                           _element_type(frame, expr),
                           tuple(edges) if expr.type == ELEMENT else (), fields))]

    def resolve_star(self, frame: Frame, expr: ColExpr, line: int) -> list[tuple[str, Col]]:
        """``*``, ``df["*"]``, ``F.col("alias.*")``: every column of the frame, of the frame
        ``df`` stands for, or of an alias; ``struct.*`` of a struct column when its type is
        known."""
        bound, ref = expr.refs[0] if expr.refs else (None, "*")
        if bound is not None:
            return list(bound.cols.items())
        head = ref[:-2] if ref.endswith(".*") else ""
        if not head:
            return list(frame.cols.items())
        alias = next((a for a in frame.aliases if a.lower() == head.lower()), None)
        if alias is not None:
            return list(frame.aliases[alias].cols.items())
        key = frame.find(head)
        if key is not None:
            kind, fields = _split_type(frame.cols[key].type)
            if kind == "struct":
                return [(f, Col(frame.lookup(f"{key}.{f}") or (), t)) for f, t in fields]
        self.warn(f"{ref}: the fields of {head!r} are not known; they pass through unlisted",
                  line)
        return []

    def resolve_all(self, frame: Frame, values: Iterable[Any], line: int,
                    ) -> list[tuple[str, Col]]:
        out: list[tuple[str, Col]] = []
        for v in values:
            out.extend(self.resolve(frame, v, line))
        return out

    def pandas_frame(self, frame: Any, schema: Any, what: str, line: int) -> Any:
        """A frame made by a pandas function the analyser does not read (``applyInPandas``,
        ``mapInPandas``): its columns are the declared ``schema``'s, each marked uncertain —
        from the same-named input column when there is one, else from any input column."""
        names = _schema_names(schema)
        if not names or not isinstance(frame, Frame):
            return self.opaque(frame, what, line)
        self.warn(f"{what}: the function is not analysed; its columns ({', '.join(names)}) "
                  "are marked uncertain", line)
        note = f"{UNCERTAIN} made by {what}, which is not analysed"
        cols: dict[str, Col] = {}
        for n in names:
            key = frame.find(n)
            sources = [frame.cols[key]] if key is not None else list(frame.cols.values())
            cols[n] = Col(tuple(ColumnEdge(e.dataset, e.field, e.type, UNKNOWN, note, line)
                                for c in sources for e in c.edges))
        return replace(frame.with_cols(cols), through=note)

    def chosen_at_run_time(self, frame: Frame, what: str, line: int) -> Frame:
        """A frame some of whose columns are chosen by names only known at run time (a
        ``select_fields``/``drop`` of such names): every column passes, its edges UNKNOWN
        (it may be gone), with a warning."""
        self.warn(f"{what} with column names the analyser cannot know; the frame's columns "
                  "pass through as UNKNOWN edges", line)
        passed = {k: Col(tuple(ColumnEdge(e.dataset, e.field, e.type, UNKNOWN,
                                          "column chosen at run time", line)
                               for e in c.edges), c.type) for k, c in frame.cols.items()}
        return replace(frame.with_cols(passed, keep_aliases=True),
                       through=frame.through or "columns chosen at run time")

    def window_edges(self, frame: Frame, values: Iterable[Any], line: int) -> list[ColumnEdge]:
        """The INDIRECT (WINDOW) inputs of the window keys of ``values``' ``over(w)``."""
        out: list[ColumnEdge] = []
        for v in values:
            for key in v.window if isinstance(v, ColExpr) else ():
                for _, col in self.resolve(frame, key, line):
                    out.extend(ColumnEdge(e.dataset, e.field, INDIRECT, WINDOW, "", line)
                               for e in col.edges)
        return out

    def df_select(self, frame: Frame, items: list[Any], line: int) -> Frame:
        values = _names(items)
        windows = self.window_edges(frame, values, line)
        if windows:
            return self.df_select(frame.add_indirect(windows),
                                  [replace(v, window=()) if isinstance(v, ColExpr) else v
                                   for v in values], line)
        cols = dict(self.resolve_all(frame, values, line))
        star = any((isinstance(v, str) and v == "*") or (isinstance(v, ColExpr) and v.star)
                   for v in values)
        if "?" in cols:
            # columns chosen at run time ([f(c) for c in df.columns] of unknown columns): the
            # frame goes on as "columns unknown, passed through" (reported by resolve)
            del cols["?"]
            passed = {k: Col(tuple(ColumnEdge(e.dataset, e.field, e.type, UNKNOWN,
                                              "column chosen at run time", line)
                                   for e in c.edges), c.type)
                      for k, c in frame.cols.items() if k not in cols}
            return replace(frame.with_cols({**cols, **passed}, keep_aliases=True),
                           through=frame.through or "columns chosen at run time")
        return frame.with_cols(cols, open=frame.open if star else (), keep_aliases=True)

    def with_columns(self, frame: Frame, mapping: dict[Any, Any], line: int) -> Frame:
        frame = frame.add_indirect(self.window_edges(frame, mapping.values(), line))
        cols = dict(frame.cols)
        for name, value in mapping.items():
            if not isinstance(name, str):
                self.warn("withColumn with a name the analyser cannot know", line)
                continue
            resolved = self.resolve(frame, value, line)
            col = resolved[0][1] if resolved else Col((), None)
            key = frame.find(name) or name
            cols[key] = col
        return frame.with_cols(cols, keep_aliases=True)

    @staticmethod
    def _one_side(frame: Frame, value: Any) -> str | None:
        """The name of a joined frame's column that ``value`` (``df.c``: a column bound to
        one side of the join) names when both sides have a column of that name."""
        if not isinstance(value, ColExpr) or len(value.refs) != 1 or \
                not isinstance(value.refs[0][0], Frame):
            return None
        key = frame.find(value.refs[0][1])
        shadow = next((n for n in frame.shadowed if key and n.lower() == key.lower()), None)
        return key if shadow is not None else None

    def _drop_one_side(self, frame: Frame, args: list[Any]) -> Frame:
        """``joined.drop(df.c)`` when both sides of the join have ``c``: Spark removes the
        side of ``df`` and keeps the other (a name would remove both)."""
        cols = dict(frame.cols)
        shadowed = dict(frame.shadowed)
        for a in args:
            key = self._one_side(frame, a)
            if key is None:
                continue
            bound, ref = a.refs[0]
            shadow = next(n for n in shadowed if n.lower() == key.lower())
            if bound.lookup(ref) == cols[key].edges:  # the left one: the right one remains
                cols[key] = shadowed[shadow]
            del shadowed[shadow]
        return replace(frame, cols=cols, shadowed=shadowed)

    def df_filter(self, frame: Frame, cond: Any, line: int) -> Frame:
        if isinstance(cond, str):
            try:
                cond = expression_lineage(cond)
            except SqlError as exc:
                self.warn(f"filter: {exc}", line)
                return frame
        if not isinstance(cond, ColExpr):
            self.warn("filter condition the analyser cannot know", line)
            return frame
        resolved = self.resolve(frame, cond.then(TRANSFORMATION), line)
        edges = [ColumnEdge(e.dataset, e.field, INDIRECT, FILTER, "", line)
                 for _, col in resolved for e in col.edges]
        return frame.add_indirect(edges)

    def df_join(self, left: Frame, right: Any, on: Any, how: Any, line: int) -> Any:
        if not isinstance(right, Frame):
            return self.unknown_call("join", [left, right], {}, line)
        how_text = how.lower() if isinstance(how, str) else "inner"
        aliases = {**left.aliases, **right.aliases}
        indirect: list[ColumnEdge] = []
        cols: dict[str, Col] = {}
        keys = [k for k in _names(on) if isinstance(k, str)]
        if keys:
            for k in keys:
                le = left.lookup(k) or ()
                re = right.lookup(k) or ()
                indirect.extend(ColumnEdge(e.dataset, e.field, INDIRECT, JOIN, "", line)
                                for e in le + re)
                both = how_text in ("full", "outer", "fullouter", "full_outer")
                edges = le + re if both else (re if how_text in ("right", "right_outer",
                                                                 "rightouter") else le)
                cols[k] = Col(edges)
            lower = {k.lower() for k in keys}
            for src in (left, right):
                for name, col in src.cols.items():
                    if name.lower() not in lower:
                        cols.setdefault(name, col)
        else:
            exprs = [e for e in _names(on) if isinstance(e, ColExpr)]
            if on is not None and not exprs:
                self.warn("join condition the analyser cannot know", line)
            merged = Frame({**right.cols, **left.cols}, frozenset(),
                           tuple(dict.fromkeys(left.open + right.open)), aliases)
            for e in exprs:
                for _, col in self.resolve(merged, e.then(TRANSFORMATION), line):
                    indirect.extend(ColumnEdge(x.dataset, x.field, INDIRECT, JOIN, "", line)
                                    for x in col.edges)
            for src in (left, right):
                for name, col in src.cols.items():
                    cols.setdefault(name, col)
        # a condition join keeps both sides' same-named columns (keys too): the right one
        # is reached only by dropping the left one through its frame (drop(left_df.c))
        shadowed = {} if keys else {n: c for n, c in right.cols.items()
                                    if left.find(n) is not None}
        if how_text.replace("_", "") in _SEMI_JOINS:
            # a semi / anti join keeps the left frame's rows and columns only: the right
            # frame is read for its keys (JOIN edges), never written
            kept = {k: left.cols[k] for k in left.cols}
            for k in keys:
                key = left.find(k)
                if key is None and left.open:
                    kept[k] = Col(left.lookup(k) or ())
            return Frame(kept, left.indirect | right.indirect | frozenset(indirect),
                         left.open, dict(left.aliases), False,
                         "; ".join(u for u in (left.unknown, right.unknown) if u),
                         left.line, left.through)
        return Frame(cols, left.indirect | right.indirect | frozenset(indirect),
                     tuple(dict.fromkeys(left.open + right.open)), aliases, False,
                     "; ".join(u for u in (left.unknown, right.unknown) if u),
                     max(left.line, right.line),
                     "; ".join(t for t in (left.through, right.through) if t),
                     shadowed=shadowed)

    def df_union(self, frame: Frame, other: Any, *, by_name: bool, line: int) -> Any:
        if not isinstance(other, Frame):
            return self.unknown_call("union", [frame, other], {}, line)
        if by_name or frame.open or other.open or len(frame.cols) != len(other.cols):
            return merge_frames([frame, other]).as_kind(frame.dynamic)
        renamed = other.with_cols(dict(zip(frame.cols, other.cols.values())))
        return merge_frames([frame, renamed]).as_kind(frame.dynamic)

    def grouped_method(self, grouped: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                       line: int) -> Any:
        frame: Frame = grouped.data["frame"]
        keys: list[tuple[str, Col]] = grouped.data["keys"]
        indirect: list[ColumnEdge] = grouped.data["indirect"]
        if name == "pivot":
            refs = self.resolve_all(frame, args[:1], line)
            edges = [ColumnEdge(e.dataset, e.field, INDIRECT, GROUP_BY, "", line)
                     for _, col in refs for e in col.edges]
            values = args[1] if len(args) > 1 else kwargs.get("values")
            known = [str(v) for v in values] if isinstance(values, (list, tuple)) and all(
                isinstance(v, (str, int, float, bool)) for v in values) else None
            return Obj("grouped", data={"frame": frame, "keys": keys,
                                        "indirect": indirect + edges, "pivot": known,
                                        "pivoted": True})
        exprs: list[Any] = []
        if name == "agg":
            for a in args:
                if isinstance(a, dict):
                    exprs.extend(ColExpr(((None, c),), AGGREGATION, f"{fn}({c})")
                                 for c, fn in a.items() if isinstance(c, str))
                else:
                    exprs.extend(_names(a) if isinstance(a, list) else [a])
        elif name in ("count",):
            exprs.append(ColExpr((), AGGREGATION, "count"))
        elif name in ("sum", "avg", "mean", "max", "min"):
            exprs.extend(ColExpr(((None, c),), AGGREGATION, f"{name}({c})")
                         for c in args if isinstance(c, str))
        elif name == "applyInPandas":
            kw = _bind(["func", "schema"], list(args), kwargs)
            return self.pandas_frame(frame, kw.get("schema"), "applyInPandas function", line)
        else:
            return self.unknown_call(f"groupBy().{name}", [frame], {}, line)
        cols = dict(keys)
        aggregated: list[tuple[str, Col]] = []
        for e in exprs:
            if isinstance(e, ColExpr) and e.subtype == IDENTITY:
                e = e.then(AGGREGATION)
            aggregated.extend(self.resolve(frame, e, line))
        if not grouped.data.get("pivoted"):
            cols.update(aggregated)
            return Frame(cols, frame.indirect | frozenset(indirect), (), {}, False,
                         frame.unknown)
        return self.pivoted(frame, cols, aggregated, grouped.data.get("pivot"), indirect, line)

    def pivoted(self, frame: Frame, cols: dict[str, Col], aggregated: list[tuple[str, Col]],
                values: list[str] | None, indirect: list[ColumnEdge], line: int) -> Frame:
        """``groupBy(k).pivot(p, values).agg(…)``: a column per pivot value (``v``, or
        ``v_<aggregate>`` for several aggregates), as Spark names them. Without the values
        the columns are named after the data: not listed (reported), their inputs known."""
        if values is not None:
            for value in values:
                for agg_name, col in aggregated:
                    cols[value if len(aggregated) == 1 else f"{value}_{agg_name}"] = col
            return Frame(cols, frame.indirect | frozenset(indirect), (), {}, False,
                         frame.unknown)
        inputs = sorted({f"{e.dataset.key}.{e.field}" for _, col in aggregated
                         for e in col.edges})
        self.warn("pivot() without its list of values makes one column per value found in "
                  f"the data, from {', '.join(inputs) or 'no known column'}: those columns "
                  "are not listed (give the values to list them)", line)
        return Frame(cols, frame.indirect | frozenset(indirect), (), {}, False, frame.unknown)

    # -- column expressions ---------------------------------------------------------------------
    def function(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if name in ("col", "column"):
            ref = args[0] if args else kwargs.get("col")
            if isinstance(ref, str):
                return ColExpr(((None, ref),), IDENTITY, leaf_name(ref))
            self.warn("col() with a name the analyser cannot know", line)
            return ColExpr((), UNKNOWN, "?")
        if name in ("lit", "typedLit", "current_date", "current_timestamp", "now",
                    "monotonically_increasing_id", "rand", "randn", "uuid",
                    "spark_partition_id", "input_file_name"):
            value = args[0] if args else name
            return ColExpr((), TRANSFORMATION, str(value) if not isinstance(value, ColExpr)
                           else name, name)
        if name == "expr":
            text = args[0] if args else kwargs.get("str")
            if isinstance(text, str):
                try:
                    return expression_lineage(text)
                except SqlError as exc:
                    self.warn(f"expr: {exc}", line)
            self.warn("expr() with SQL the analyser cannot know", line)
            return ColExpr((), UNKNOWN, "expr")
        if name in ("udf", "pandas_udf"):
            func = args[0] if args else kwargs.get("f")
            label = func.node.name if isinstance(func, UserFunc) else \
                ("lambda" if isinstance(func, Lambda) else "udf")
            if func is None or isinstance(func, Obj):
                return Obj("func", name)  # used as @udf(returnType=...)
            return Obj("udf", label, {"line": line})
        if name in ("broadcast",):
            return args[0] if args else None
        if name in ("asc", "desc"):
            return self.as_expr(args[0]) if args else None
        columns: list[ColExpr] = []
        if name == "count" and args and (args[0] == "*" or isinstance(args[0], ColExpr) and
                                         args[0].star):
            return ColExpr((), AGGREGATION, "count(1)", "count(1)")  # count("*"): rows
        for i, a in enumerate(args):
            if isinstance(a, ColExpr):
                columns.append(a)
            elif isinstance(a, str) and (i == 0 and name not in _COLUMNS_AFTER_FIRST or
                                         name in _MULTI_COLUMN or
                                         name in _COLUMNS_AFTER_FIRST and i > 0):
                columns.append(ColExpr(((None, a),), IDENTITY, a))
        for v in kwargs.values():
            if isinstance(v, ColExpr):
                columns.append(v)
        subtype = AGGREGATION if name in _AGGREGATES else TRANSFORMATION
        inner = ", ".join(c.name or "?" for c in columns)
        shown = _SPARK_NAMES.get(name, name + "({})").format(inner)
        combined = combine_exprs(columns, subtype, shown, shown)
        if name == "struct" and columns and all(c.name and not c.star for c in columns):
            return replace(combined, fields=tuple((c.name or "", c) for c in columns))
        if name in ("from_json", "from_csv") and columns:
            # a parse with a declared schema: a struct of its fields (``select("data.*")``)
            fields = _schema_fields(args[1] if len(args) > 1 else kwargs.get("schema"))
            if fields:
                return replace(combined, type="struct<" + ",".join(
                    f"{n}:{t}" for n, t in fields) + ">")
        if name in ("explode", "explode_outer", "posexplode", "posexplode_outer") and \
                len(columns) == 1 and \
                len(combined.refs) == 1 and columns[0].subtype == IDENTITY:
            return replace(combined, type=ELEMENT)  # its fields: those of the array's element
        return combined

    def col_method(self, expr: ColExpr, name: str, args: list[Any], kwargs: dict[str, Any],
                   line: int) -> Any:
        if name in ("alias", "name", "as_") and len(args) > 1 and \
                all(isinstance(a, str) for a in args):
            # posexplode(a).alias("pos", "item"): one column per name
            return replace(expr, name=args[0], names=tuple(args))
        if name in ("alias", "name", "as_"):
            alias = args[0] if args else kwargs.get("alias")
            if isinstance(alias, DynStr):
                alias = alias.text
            if not isinstance(alias, str):  # re.sub(…, c), a name from a lookup at run time
                shown = "{?" + (expr.name or "column") + "}"
                self.warn(f"alias() with a name the analyser cannot know: the column is "
                          f"shown as {shown}", line)
                alias = shown
            return expr.renamed(alias)
        if name in ("asc", "desc", "asc_nulls_first", "asc_nulls_last", "desc_nulls_first",
                    "desc_nulls_last"):
            return expr
        if name == "over":  # F.sum("x").over(w): its window's keys are INDIRECT (WINDOW)
            spec = args[0] if args else kwargs.get("window")
            keys = tuple(spec.data.get("keys", ())) if isinstance(spec, Obj) and \
                spec.kind == "window" else ()
            return replace(combine_exprs([expr], TRANSFORMATION, expr.name, expr.description),
                           window=keys)
        if name in ("cast", "astype"):
            to = args[0] if args else kwargs.get("dataType")
            to_text = to if isinstance(to, str) else getattr(to, "name", "type")
            out = expr.then(TRANSFORMATION, description=f"cast to {to_text}")
            return out
        others = [self.as_expr(a) if not isinstance(a, str) or name in ("otherwise", "when")
                  and False else (a if isinstance(a, ColExpr) else None) for a in args]
        exprs = [expr] + [o for o in others if isinstance(o, ColExpr)]
        if name in ("getField", "getItem", "__getitem__") and args and isinstance(args[0], str) \
                and len(expr.refs) == 1 and (expr.subtype == IDENTITY or expr.type == ELEMENT):
            frame, ref = expr.refs[0]  # a struct field; of an element picked by position (a[0])
            return ColExpr(((frame, f"{ref}.{args[0]}"),), expr.subtype, args[0])
        if name in ("getItem", "__getitem__") and args and isinstance(args[0], int) and \
                not isinstance(args[0], bool) and len(expr.refs) == 1 and \
                expr.subtype == IDENTITY:
            # items[0]: one element of the array, picked by position; its fields are the
            # array's fields (items[0]["sku"] reads items.sku)
            return ColExpr(expr.refs, TRANSFORMATION, f"{expr.name}[{args[0]}]",
                           f"{expr.name}[{args[0]}]", False, ELEMENT)
        return combine_exprs(exprs, TRANSFORMATION, expr.name, expr.description)
