"""Models of the Glue and Spark APIs for the analyser: attributes, subscripts, method
dispatch, SparkSession, Delta tables, pandas and thread pools. :class:`ApiModel` builds on
:class:`._api_spark.SparkIO` (``spark.sql``/``spark.read``/``df.write``), which builds on
:class:`._api_glue.GlueIO` (GlueContext sources and sinks) and
:class:`._api_datasets.DatasetIO` (what the job reads and writes).

Frame-level operations (transforms, DataFrame methods, column functions) are in
:mod:`._frames`; :mod:`._analyze` is the half of the interpreter that knows Python.
"""


from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._api_spark import SparkIO
from ._api_util import _Placeholders, _schema_names, path_dataset
from ._frame_names import _FRAME_METHODS
from ._frames import _bind, _names, _text
from ._graph import (
    IDENTITY,
    TRANSFORMATION,
    UNKNOWN,
    DatasetRef,
    OutputLineage,
)
from ._objects import Method, Obj, import_value
from ._sql import SqlError, expression_lineage
from ._values import (
    Col,
    ColExpr,
    DynStr,
    Frame,
    Unknown,
    combine_exprs,
    leaf_name,
    merge_frames,
)

__all__ = ["ApiModel"]



class ApiModel(SparkIO):
    """State and API semantics shared with the interpreter (see module docstring)."""

    # -- attributes and subscripts ------------------------------------------------------------
    def attribute(self, value: Any, attr: str, line: int) -> Any:
        if isinstance(value, Obj):
            kind = value.kind
            if kind == "glue":
                if attr == "create_dynamic_frame":
                    return Obj("creator", data={"dynamic": True})
                if attr == "create_data_frame":
                    return Obj("creator", data={"dynamic": False})
                if attr in ("write_dynamic_frame", "write_data_frame"):
                    return Obj("glue_writer")
                if attr in ("spark_session", "sparkSession"):
                    return Obj("spark")
                if attr == "_sc":
                    return Obj("sc")
            elif kind == "spark":
                if attr == "read":
                    return Obj("reader", data={"opts": {}})
                if attr == "readStream":
                    return Obj("reader", data={"opts": {}, "stream": True})
                if attr == "sparkContext":
                    return Obj("sc")
                if attr == "udf":
                    return Obj("udfreg")
            elif kind == "class" and value.name == "SparkSession" and attr == "builder":
                return Obj("builder")
            elif kind == "module":
                if value.name == "sys" and attr == "argv":
                    return Obj("argv")
                if value.name == "os" and attr == "environ":
                    return Obj("environ")
                return import_value(f"{value.name}.{attr}")
            elif kind == "usermodule":
                env = value.data.get("env", {})
                if attr in env:
                    return env[attr]
                return Unknown(f"{value.name}.{attr}", line)
            elif kind == "collection" and attr in value.data.get("frames", {}):
                return value.data["frames"][attr]
            elif kind == "schema" and "types" in value.data:
                types: dict[str, Any] = value.data["types"]
                if attr == "fields":
                    return [Obj("field", n, {"type": t}) for n, t in types.items()]
                if attr == "names":
                    return list(types)
            elif kind == "argns":
                # argparse in a Glue script reads the job arguments (--X value)
                if attr in value.data.get("set", {}):
                    return value.data["set"][attr]
                if attr in self.arguments:
                    return self.arguments[attr]
                default = value.data.get("defaults", {}).get(attr)
                if isinstance(default, (str, int, float)) and not isinstance(default, bool):
                    return default
                return self.arg_value(attr, line)
            elif kind == "field":
                if attr == "name":
                    return value.name
                if attr == "dataType":
                    return Obj("type", str(value.data.get("type") or ""))
                if attr == "nullable":
                    return Unknown("nullable", line)
            return Method(value, attr)
        if isinstance(value, Frame):
            if attr == "write":
                return Obj("df_writer", data={"frame": value, "opts": {}})
            if attr == "writeStream":
                return Obj("df_writer", data={"frame": value, "opts": {}, "stream": True})
            if attr == "columns":
                if value.open or value.unknown:
                    return Unknown("the columns of a frame whose schema is not known", line)
                return list(value.cols)
            if attr == "na":
                return Obj("na", data={"frame": value})
            if attr == "rdd":
                return Obj("rdd", data={"frame": value})
            if attr == "schema" and value.dynamic:
                return Method(value, attr)  # DynamicFrame.schema() is a method
            if attr == "schema":
                return self.schema_of(value, line)
            if attr == "sparkSession":
                return Obj("spark")
            if attr == "dtypes" and not (value.open or value.unknown):
                return [(k, c.type or "string") for k, c in value.cols.items()]
            if attr in ("schema", "dtypes", "storageLevel", "isStreaming"):
                return Unknown(f"DataFrame.{attr}", line)
            if attr in _FRAME_METHODS or attr.startswith("_"):
                return Method(value, attr)
            return ColExpr(((value, attr),), IDENTITY, attr)
        if isinstance(value, (ColExpr, dict, str, DynStr, list)):
            return Method(value, attr)
        if isinstance(value, Unknown):
            if attr in ("write", "writeStream", "writeTo"):  # a write of what is not known
                return Obj("df_writer", data={"frame": value, "opts": {}})
            return Unknown(f"{value.reason}.{attr}", line)
        return Unknown(f".{attr}", line)

    def subscript(self, value: Any, key: Any, line: int) -> Any:
        if isinstance(value, ColExpr):  # F.split(c, ",")[0], F.col("m")["k"]
            return self.col_method(value, "__getitem__", [key], {}, line)
        if isinstance(value, dict):
            try:
                return value.get(key, Unknown(f"key {key!r}", line))
            except TypeError:
                return Unknown("subscript", line)
        if isinstance(value, (list, tuple)) and isinstance(key, int):
            return value[key] if -len(value) <= key < len(value) else Unknown("index", line)
        if isinstance(value, (list, tuple, str)) and isinstance(key, slice):
            return value[key]
        if isinstance(value, Obj):
            if value.kind == "args":
                assigned = value.data.get("set", {})
                if isinstance(key, str) and key in assigned:
                    return assigned[key]
                return self.arg_value(key, line)
            if value.kind == "collection":
                return self.collection_get(value, key, line)
            if value.kind == "environ":
                return Unknown(f"environment variable {key}", line)
        if isinstance(value, Frame):
            if isinstance(key, str):
                return ColExpr(((value, key),), IDENTITY, leaf_name(key), star=key == "*")
            if isinstance(key, ColExpr):
                return self.df_filter(value, key, line)
            if isinstance(key, list):
                return self.df_select(value, key, line)
        return Unknown("subscript", line)

    def collection_get(self, coll: Obj, key: Any, line: int) -> Any:
        frames: dict[str, Frame] = coll.data.get("frames", {})
        if isinstance(key, str) and key in frames:
            return frames[key]
        root = coll.data.get("root")
        if isinstance(key, str) and isinstance(root, str) and key.startswith(root) and \
                root in frames:
            self.warn(f"{key!r}: a table Relationalize pivots out of an array; its columns are "
                      f"approximated by those of {root!r}", line)
            return frames[root]
        self.warn(f"frame collection has no key {key!r} the analyser knows", line)
        return Frame(unknown=f"collection key {key!r}")

    # -- calls on objects -------------------------------------------------------------------
    def call_object(self, obj: Obj, args: list[Any], kwargs: dict[str, Any], line: int,
                    label: str) -> Any:
        kind, name = obj.kind, obj.name
        if kind == "class":
            if name == "GlueContext":
                return Obj("glue")
            if name == "SparkContext":
                return Obj("sc")
            if name in ("SparkSession", "SQLContext", "HiveContext"):
                return Obj("spark")  # the legacy contexts have the same read/sql/table
            if name == "ArgumentParser":
                return Obj("argparser", data={"defaults": {}})
            if name in ("ThreadPoolExecutor", "ProcessPoolExecutor"):
                return Obj("executor")
            if name == "Thread":
                kw = _bind(["group", "target", "name", "args", "kwargs"], args, kwargs)
                return Obj("thread", data=kw)
            if name == "Job":
                return Obj("job")
            if name == "getResolvedOptions":
                return Obj("args")
            if name == "DynamicFrameCollection":
                frames = args[0] if args and isinstance(args[0], dict) else \
                    kwargs.get("dynamic_frames", {})
                return Obj("collection", data={"frames": dict(frames)})
            if name == "StructType":
                fields = _names(args[0] if args else kwargs.get("fields"))
                return Obj("schema", data={"names": [f.name for f in fields
                                                     if isinstance(f, Obj) and f.name]})
            if name == "StructField":
                return Obj("field", args[0] if args and isinstance(args[0], str) else "")
        if kind == "transform":
            frame_args = [v for v in list(args) + list(kwargs.values())
                          if isinstance(v, (Frame, Obj)) and (isinstance(v, Frame) or
                                                               v.kind == "collection")]
            if not frame_args:
                return obj  # an instance: EvaluateDataQuality(), ApplyMapping()
            return self.transform(name, args, kwargs, line)
        if kind == "func":
            return self.function(name, args, kwargs, line)
        if kind == "udf":
            exprs = [self.as_expr(a) for a in args]
            self.warn(f"UDF {name}: its body is not analysed; the output column depends on "
                      "its arguments in an unknown way", line)
            return ColExpr(combine_exprs([e for e in exprs if e is not None],
                                         TRANSFORMATION, None).refs, UNKNOWN, name,
                           f"UDF {name}")
        if kind in ("type", "schema", "field", "window", "df_writer", "reader"):
            return obj  # df.write() called as a method is the writer all the same
        return self.unknown_call(label or name, args, kwargs, line)

    def call_method(self, target: Any, name: str, args: list[Any], kwargs: dict[str, Any],
                    line: int, label: str) -> Any:
        if isinstance(target, Frame):
            return self.frame_method(target, name, args, kwargs, line, label)
        if isinstance(target, ColExpr):
            return self.col_method(target, name, args, kwargs, line)
        if isinstance(target, dict):
            if name == "get":
                key = args[0] if args else None
                default = args[1] if len(args) > 1 else None
                try:
                    return target.get(key, default)
                except TypeError:
                    return default
            if name == "items":
                return Obj("items", data={"of": target})
            if name == "keys":
                return list(target)
            if name == "values":
                return list(target.values())
            return None
        if isinstance(target, (str, DynStr)):
            return self.str_method(target, name, args, kwargs, line)
        if isinstance(target, list):
            if name in ("append", "extend", "insert") and self.unknown_loops:
                self.uncertain.add(id(target))
            if name in ("append", "extend"):
                target.extend(args if name == "append" else _names(args[0] if args else []))
            return None
        if isinstance(target, Obj):
            return self.obj_method(target, name, args, kwargs, line, label)
        return self.unknown_call(label, args, kwargs, line)

    def str_method(self, target: str | DynStr, name: str, args: list[Any],
                   kwargs: dict[str, Any], line: int) -> Any:
        text = target.text if isinstance(target, DynStr) else target
        reason = target.reason if isinstance(target, DynStr) else ""
        if name == "format":
            values: list[str] = []
            reasons = [reason] if reason else []
            for a in list(args):
                if isinstance(a, (str, int, float)):
                    values.append(str(a))
                else:
                    t = _text(a)
                    values.append(t.text if isinstance(t, DynStr) else "{?}")
                    reasons.append(t.reason if isinstance(t, DynStr) else "unknown value")
            named = {k: (str(v) if isinstance(v, (str, int, float)) else
                         getattr(_text(v), "text", "{?}")) for k, v in kwargs.items()}
            reasons += [f"{k} unknown" for k, v in kwargs.items()
                        if not isinstance(v, (str, int, float))]
            try:
                out = _Placeholders(reasons).vformat(text, values, named)
            except (IndexError, KeyError, ValueError, AttributeError):
                return Unknown("str.format", line)
            return DynStr(out, "; ".join(reasons)) if reasons else out
        if name in ("lower", "upper", "strip", "lstrip", "rstrip"):
            out = getattr(text, name)()
            return DynStr(out, reason) if reason else out
        if name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
            out = text.replace(args[0], args[1])
            return DynStr(out, reason) if reason else out
        if name == "join" and args and isinstance(args[0], (list, tuple)):
            parts = [p if isinstance(p, str) else getattr(_text(p), "text", "{?}")
                     for p in args[0]]
            out = text.join(parts)
            bad = [p for p in args[0] if not isinstance(p, str)]
            return DynStr(out, "unknown parts") if bad or reason else out
        if name in ("startswith", "endswith") and not reason and args and (
                isinstance(args[0], str) or isinstance(args[0], tuple) and
                all(isinstance(a, str) for a in args[0])):
            return getattr(text, name)(args[0])
        if name in ("isdigit", "isalpha", "isalnum", "islower", "isupper", "isspace") and \
                not reason:
            return getattr(text, name)()
        if name == "split" and not reason:
            seps = [a for a in args if isinstance(a, str)]
            return text.split(seps[0]) if seps else text.split()
        return Unknown(f"str.{name}", line)

    def obj_method(self, obj: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                   line: int, label: str) -> Any:
        kind = obj.kind
        if kind == "glue":
            return self.glue_method(name, args, kwargs, line, label)
        if kind == "creator":
            dynamic = bool(obj.data.get("dynamic", True))
            if name == "from_catalog":
                return self.read_catalog(_bind(["database", "table_name"], args, kwargs), line,
                                         dynamic)
            if name == "from_options":
                kw = _bind(["connection_type", "connection_options", "format"], args, kwargs)
                return self.read_options(kw.get("connection_type"),
                                         kw.get("connection_options"), line, dynamic)
            return self.unknown_call(f"create_dynamic_frame.{name}", args, kwargs, line)
        if kind == "glue_writer":
            return self.glue_write(name, args, kwargs, line)
        if kind == "sink":
            if name == "setCatalogInfo":
                kw = _bind(["catalogDatabase", "catalogTableName"], args, kwargs)
                obj.data["catalog"] = (kw.get("catalogDatabase"), kw.get("catalogTableName"))
            elif name in ("writeFrame", "writeDataFrame"):
                frame = args[0] if args else kwargs.get("dynamic_frame", kwargs.get("frame"))
                self.sink_write(obj, frame, line)
            return None
        if kind == "gsource":
            if name == "getFrame":
                data = obj.data
                return self.read_options(data.get("connection_type"), data, line, True)
            return None
        if kind == "spark":
            return self.spark_method(name, args, kwargs, line, label)
        if kind in ("builder", "conf"):
            return Obj("spark") if name == "getOrCreate" else obj
        if kind == "sc":
            return obj
        if kind == "class":
            if name == "getOrCreate":
                return Obj("sc") if obj.name == "SparkContext" else Obj("spark")
            if obj.name == "DynamicFrame" and name in ("fromDF", "from_df"):
                df = args[0] if args else kwargs.get("dataframe")
                return df.as_kind(True) if isinstance(df, Frame) else df
            if obj.name == "Window":  # Window.partitionBy(k).orderBy(o): keep the keys
                return Obj("window", data={"keys": _window_keys(name, args, ())})
            if obj.name == "DeltaTable" and name in ("forPath", "forName", "convertToDelta"):
                target = _text(args[1] if len(args) > 1 else kwargs.get(
                    "path", kwargs.get("tableOrViewName")))
                if target is None:
                    self.warn(f"DeltaTable.{name}() with a name the analyser cannot know", line)
                    return Unknown("a Delta table", line)
                self.dynamic(target, line)
                ds, fields = (path_dataset(target), ()) if name != "forName" else \
                    self.resolver.qualified(target, line)
                return Obj("delta", data={"ds": ds, "fields": fields})
            return self.unknown_call(label, args, kwargs, line)
        if kind == "window":
            return Obj("window", data={"keys": _window_keys(name, args,
                                                             obj.data.get("keys", ()))})
        if kind == "type" and name in ("typeName", "simpleString", "jsonValue"):
            return obj.name if obj.name and obj.name[0].islower() else Unknown(
                f"{obj.name}.{name}()", line)
        if kind == "schema" and name == "fieldNames" and "names" in obj.data:
            return list(obj.data["names"])
        if kind == "reader":
            return self.reader_method(obj, name, args, kwargs, line)
        if kind == "df_writer":
            return self.writer_method(obj, name, args, kwargs, line)
        if kind in ("delta", "delta_merge"):
            return self.delta_method(obj, name, args, kwargs, line)
        if kind == "argparser":
            if name == "add_argument":
                flags = [a for a in args if isinstance(a, str)]
                dest = kwargs.get("dest")
                if not isinstance(dest, str):
                    longs = [f for f in flags if f.startswith("--")] or flags
                    dest = longs[0].lstrip("-").replace("-", "_") if longs else None
                if isinstance(dest, str):
                    obj.data["defaults"][dest] = kwargs.get("default")
                return None
            if name in ("parse_args", "parse_known_args"):
                ns = Obj("argns", data={"defaults": dict(obj.data["defaults"])})
                return ns if name == "parse_args" else (ns, [])
            return None
        if kind == "rdd":
            if name.startswith("saveAs"):
                path = _text(args[0] if args else kwargs.get("path"))
                self.dynamic(path, line)
                if path is None:
                    self.warn(f"rdd.{name}() without a path the analyser can know", line)
                else:
                    self.write(path_dataset(path), self.rdd_frame(obj, None, line), line)
                return None
            return self.rdd_method(obj, name, args, kwargs, line)
        if kind == "pandas":
            return self.pandas_method(obj, name, args, kwargs, line)
        if kind in ("executor", "thread", "future"):
            return self.concurrency_method(obj, name, args, kwargs, line)
        if kind == "args":
            if name == "get":
                key = args[0] if args else None
                if isinstance(key, str) and key in self.arguments:
                    return self.arguments[key]
                return args[1] if len(args) > 1 else self.arg_value(key, line)
            return None
        if kind == "grouped":
            return self.grouped_method(obj, name, args, kwargs, line)
        if kind == "collection":
            if name in ("select", "__getitem__"):
                return self.collection_get(obj, args[0] if args else kwargs.get("key"), line)
            if name == "keys":
                return list(obj.data.get("frames", {}))
            if name == "values":
                return list(obj.data.get("frames", {}).values())
            return None
        if kind == "transform":
            if obj.name == "EvaluateDataQuality" and name == "process_rows":
                frame = _bind(["frame"], args, kwargs).get("frame")
                if not isinstance(frame, Frame):
                    return self.unknown_call("EvaluateDataQuality().process_rows", args,
                                             kwargs, line)
                # the rows with their rule results, and one row per rule (no inputs)
                checked = frame.with_cols({**frame.cols, **{
                    c: Col((), None) for c in ("DataQualityRulesPass", "DataQualityRulesFail",
                                               "DataQualityRulesSkip",
                                               "DataQualityEvaluationResult")}},
                    keep_aliases=True)
                outcomes = Frame({c: Col((), None) for c in (
                    "Rule", "Outcome", "FailureReason", "EvaluatedMetrics")}, dynamic=True)
                return Obj("collection", data={"frames": {
                    "originalData": frame, "rowLevelOutcomes": checked,
                    "ruleOutcomes": outcomes}})
            if name in ("apply", "__call__", "process_rows"):
                return self.transform(obj.name, args, kwargs, line)
            return None
        if kind == "udfreg":
            if name == "register":
                fname = args[0] if args and isinstance(args[0], str) else "udf"
                return Obj("udf", fname)
            return None
        if kind == "na":
            frame = obj.data["frame"]
            return frame
        if kind == "environ":
            return Unknown(f"environment variable {args[0] if args else '?'}", line)
        if kind == "usermodule":
            func = obj.data.get("env", {}).get(name)
            if func is not None:
                return self.call(func, args, kwargs, line, f"{obj.name}.{name}")
        if kind in ("job", "logger", "argv"):
            return None
        if kind == "module":
            return self.call(import_value(f"{obj.name}.{name}"), args, kwargs, line,
                             f"{obj.name}.{name}")
        if kind == "func":  # F.col("a").alias(...) never lands here; F.udf.register etc.
            return self.unknown_call(label, args, kwargs, line)
        return self.unknown_call(label, args, kwargs, line)

    # -- SparkSession -------------------------------------------------------------------------
    def spark_method(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int,
                     label: str) -> Any:
        if name == "sql":
            query = args[0] if args else kwargs.get("sqlQuery")
            return self.sql(query, line)
        if name == "table":
            return self.read_table(args[0] if args else kwargs.get("tableName"), line)
        if name == "createDataFrame" and args and isinstance(args[0], Obj) and \
                args[0].kind in ("rdd", "pandas"):
            schema = args[1] if len(args) > 1 else kwargs.get("schema")
            source = args[0]
            if source.kind == "pandas":
                source = self.from_pandas(source, line)
            return self.rdd_frame(source, schema, line)
        if name == "createDataFrame":
            data = args[0] if args else kwargs.get("data")
            schema = args[1] if len(args) > 1 else kwargs.get("schema")
            names = [n for n in _names(schema) if isinstance(n, str)] if isinstance(
                schema, (list, tuple)) else [n for n, _ in _schema_names(schema)]
            cols = {n: Col((), None) for n in names}
            if isinstance(data, Obj) and data.kind == "rows":
                return self.rdd_frame(Obj("rdd", data={
                    "frame": data.data["frame"], "opaque": "rows collected to the driver"}),
                    schema, line)
            if isinstance(data, (list, tuple)) and not any(
                    isinstance(v, Unknown) for v in data):
                return Frame(cols, dynamic=False)  # literal rows: no inputs
            self.warn("spark.createDataFrame() of data the analyser cannot follow (rows "
                      "collected or built at run time): its columns' inputs are unknown", line)
            return Frame(cols, dynamic=False, unknown=f"createDataFrame at line {line}")
        if name in ("range", "emptyDataFrame"):
            return Frame(dynamic=False)
        if name in ("newSession", "getOrCreate"):
            return Obj("spark")
        if name in ("stop", "conf", "setLogLevel", "sparkContext", "version", "catalog"):
            return None
        return self.unknown_call(label or f"spark.{name}", args, kwargs, line)

    # -- pandas, thread pools ----------------------------------------------------------------
    def delta_method(self, obj: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                     line: int) -> Any:
        """delta-spark's DeltaTable: ``toDF()`` reads it; ``merge(source, cond)`` with its
        ``whenMatched…``/``whenNotMatched…`` clauses and ``execute()``, ``update(cond,
        set)`` and ``delete(cond)`` write it (each set column from its expression)."""
        data = dict(obj.data)
        ds: DatasetRef = data["ds"]
        if obj.kind == "delta":
            if name == "alias":
                alias = args[0] if args else kwargs.get("aliasName")
                return Obj("delta", data={**data, "alias": alias})
            if name == "toDF":
                return self.read(ds, data.get("fields", ()), line, False)
            if name == "merge":
                kw = _bind(["source", "condition"], args, kwargs)
                source = kw.get("source")
                if not isinstance(source, Frame):
                    self.warn("DeltaTable.merge() of a frame the analyser could not follow",
                              line)
                    source = Frame(unknown=f"merge source at line {line}")
                alias = data.get("alias")
                if isinstance(alias, str):  # t.col in the clauses: the target's old value
                    target = self.read(ds, data.get("fields", ()), line, False)
                    source = replace(source, aliases={**source.aliases, alias: target})
                return Obj("delta_merge", data={**data, "source": source, "clauses": []})
            if name in ("update", "updateExpr"):
                kw = _bind(["condition", "set"], args, kwargs)
                target = self.read(ds, data.get("fields", ()), line, False)
                self.write(ds, self.assigned(target, kw.get("set"), line), line)
                return None
            if name == "delete":
                self.outputs.append(OutputLineage(ds, (), (), line))
                return None
            if name in ("history", "detail", "vacuum", "optimize", "generate",
                        "restoreToVersion", "restoreToTimestamp", "upgradeTableProtocol"):
                return None
            return self.unknown_call(f"DeltaTable.{name}", args, kwargs, line)
        merged_source: Frame = data["source"]
        clauses: list[Frame] = list(data["clauses"])
        if name in ("whenMatchedUpdateAll", "whenNotMatchedInsertAll"):
            clauses.append(_all_columns(merged_source, data.get("fields", ())))
        elif name in ("whenMatchedUpdate", "whenNotMatchedInsert", "whenNotMatchedBySourceUpdate"):
            kw = _bind(["condition", "set" if "Update" in name else "values"], args, kwargs)
            clauses.append(self.assigned(merged_source, kw.get("set", kw.get("values")), line))
        elif name == "execute":
            frame = merge_frames(clauses) if clauses else Frame(dynamic=False)
            self.write(ds, frame, line)
            return None
        elif not name.startswith("when"):
            return self.unknown_call(f"DeltaTable.merge().{name}", args, kwargs, line)
        return Obj("delta_merge", data={**data, "clauses": clauses})

    def assigned(self, frame: Frame, mapping: Any, line: int) -> Frame:
        """The columns of a ``set``/``values`` dict: target column → SQL text or column."""
        if not isinstance(mapping, dict):
            self.warn("a Delta update/insert whose columns the analyser cannot know", line)
            return Frame(unknown=f"Delta clause at line {line}")
        exprs: list[Any] = []
        for column, value in mapping.items():
            if not isinstance(column, str):
                continue
            expr = value
            if isinstance(value, str):
                try:
                    expr = expression_lineage(value)
                except SqlError as exc:
                    self.warn(f"Delta clause: {exc}", line)
                    continue
            if isinstance(expr, ColExpr):
                # drop "s." / "t." qualifiers the frame does not know as aliases
                refs = tuple((f, r.split(".", 1)[1] if "." in r and frame.lookup(r) is None
                              else r) for f, r in expr.refs)
                exprs.append(ColExpr(refs, expr.subtype, leaf_name(column),
                                     expr.description, False, expr.type))
        return self.df_select(frame, exprs, line)

    def schema_of(self, frame: Frame, line: int) -> Any:
        """``df.schema`` / ``dyf.schema()``: the known columns as a schema object, so code
        that builds mappings from it (``[f.name for f in df.schema.fields]``) is followed."""
        if frame.open or frame.unknown or not frame.cols:
            return Unknown("the schema of a frame whose columns are not known", line)
        return Obj("schema", data={"names": list(frame.cols),
                                   "types": {k: c.type for k, c in frame.cols.items()}})

    def from_pandas(self, pdf: Obj, line: int) -> Obj:
        """A pandas frame from ``toPandas()`` as an RDD-like object: its columns are the
        frame's, UNKNOWN once pandas code the analyser does not read changed it."""
        opaque = pdf.data.get("opaque", "")
        if opaque:
            self.warn(f"a pandas frame changed by {opaque}: pandas code is not analysed; its "
                      "columns are UNKNOWN edges of the frame it came from", line)
        return Obj("rdd", data={"frame": pdf.data["frame"], "opaque": opaque})

    def pandas_method(self, pdf: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                      line: int) -> Any:
        if name in ("to_csv", "to_parquet", "to_json", "to_excel", "to_orc", "to_feather"):
            path = _text(args[0] if args else kwargs.get("path", kwargs.get("path_or_buf")))
            if path is None:
                self.warn(f"pandas {name}() without a path the analyser can know", line)
                return None
            self.dynamic(path, line)
            self.write(path_dataset(path), self.rdd_frame(self.from_pandas(pdf, line), None,
                                                          line), line)
            return None
        if name in ("head", "tail", "copy", "reset_index", "info", "describe", "to_string",
                    "to_dict", "iterrows", "itertuples"):
            return pdf if name in ("copy", "reset_index") else Unknown(f"pandas {name}()", line)
        ops = pdf.data.get("opaque", "")
        return Obj("pandas", data={"frame": pdf.data["frame"],
                                   "opaque": f"{ops}, {name}()" if ops else f"{name}()"})

    def concurrency_method(self, obj: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                           line: int) -> Any:
        """Thread/process pools and threads: the submitted function is analysed as if called
        right there with its arguments (the order of the work does not change lineage)."""
        if obj.kind == "executor" and name == "submit" and args:
            result = self.call(args[0], list(args[1:]), kwargs, line, "submitted function")
            return Obj("future", data={"result": result})
        if obj.kind == "executor" and name == "map" and args:
            columns = [self.iterate(a) for a in args[1:]]
            if any(c is None for c in columns) or not columns:
                self.warn("executor.map() over values the analyser cannot know; the function "
                          "is analysed once with unknown arguments", line)
                return [self.call(args[0], [Unknown("mapped value", line)] * max(1, len(
                    args) - 1), {}, line, "mapped function")]
            return [self.call(args[0], list(items), {}, line, "mapped function")
                    for items in zip(*[c for c in columns if c is not None])]
        if obj.kind == "thread" and name in ("start", "run"):
            target = obj.data.get("target")
            call_args = obj.data.get("args") or ()
            call_kwargs = obj.data.get("kwargs") or {}
            if target is not None:
                self.call(target, list(call_args) if isinstance(call_args, (list, tuple))
                          else [], dict(call_kwargs) if isinstance(call_kwargs, dict) else {},
                          line, "thread target")
            return None
        if obj.kind == "future" and name == "result":
            return obj.data.get("result")
        if name in ("__enter__",):
            return obj
        return None

    def iterate(self, value: Any) -> list[Any] | None:
        raise NotImplementedError

    unknown_loops: int = 0
    uncertain: set[int]


def _all_columns(source: Frame, fields: Any) -> Frame:
    """The frame an ``UpdateAll``/``InsertAll`` writes: the source's columns; when they are
    not known, the target's columns (from the catalog) each from the source's same-named one,
    as Delta requires of the source."""
    if not source.open or not fields:
        return source
    cols = dict(source.cols)
    for name, _ in fields:
        if source.find(name) is None:
            cols[name] = Col(source.lookup(name) or ())
    return source.with_cols(cols, keep_aliases=True)


def _window_keys(method: str, args: list[Any], keys: tuple[Any, ...]) -> tuple[Any, ...]:
    """The keys of a window spec after ``Window.<method>(*args)``: ``partitionBy`` and
    ``orderBy`` add columns (names or expressions); the frame bounds add none."""
    if method not in ("partitionBy", "orderBy"):
        return keys
    added: list[Any] = []
    for a in args:
        added.extend(a if isinstance(a, (list, tuple)) else [a])
    return keys + tuple(added)
