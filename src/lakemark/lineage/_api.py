"""Models of the Glue and Spark APIs for the analyser: datasets, GlueContext readers and
writers, sinks, SparkSession, ``spark.read`` / ``df.write``, attributes and method dispatch.

Frame-level operations (transforms, DataFrame methods, column functions) are in
:mod:`._frames`; :mod:`._analyze` is the half of the interpreter that knows Python.
"""


from __future__ import annotations

import re
import string
from dataclasses import replace
from collections.abc import Mapping

import sqlglot
from typing import Any

from ._datasets import DatasetResolver, frame_of, jdbc_dataset
from ._datasets import path_dataset as _path_dataset
from ._frames import _FRAME_METHODS, FrameOps, _bind, _names, _text
from ._graph import (
    IDENTITY,
    TRANSFORMATION,
    UNKNOWN,
    DatasetRef,
    InputDataset,
    LineageWarning,
    OutputLineage,
    Symlink,
)
from ._objects import Lambda, Method, Obj, UserFunc, import_value
from ._sql import SqlError, SqlWrite, expression_lineage, query_lineage, statement_lineage
from ._values import (
    UNCERTAIN,
    Col,
    ColExpr,
    DynStr,
    Frame,
    Unknown,
    combine_exprs,
    merge_frames,
)

__all__ = ["ApiModel"]

_JDBC = {"postgresql", "mysql", "sqlserver", "oracle", "redshift", "jdbc", "mariadb", "db2"}


class ApiModel(FrameOps):
    """State and API semantics shared with the interpreter (see module docstring)."""

    def __init__(self, resolver: DatasetResolver, arguments: dict[str, str]) -> None:
        self.resolver = resolver
        self.arguments = arguments
        self.inputs: dict[str, InputDataset] = {}
        self.outputs: list[OutputLineage] = []
        self.warnings: list[LineageWarning] = []
        self.views: dict[str, Frame] = {}

    # -- datasets -----------------------------------------------------------------------------
    def dynamic(self, value: Any, line: int) -> None:
        """Report a name built at run time (a path from a job argument without a value)."""
        if isinstance(value, DynStr):
            self.warn(f"dynamic name {value.text!r}: {value.reason}", line)

    def read(self, ds: DatasetRef, fields: tuple[tuple[str, str], ...], line: int,
             dynamic: bool) -> Frame:
        old = self.inputs.get(ds.key)
        if old is None or (fields and not old.fields):
            self.inputs[ds.key] = InputDataset(ds, fields, old.line if old else line)
        return frame_of(ds, fields, line).as_kind(dynamic)

    def write(self, ds: DatasetRef, frame: Any, line: int) -> None:
        if not isinstance(frame, Frame):
            reason = frame.reason if isinstance(frame, Unknown) else type(frame).__name__
            self.warn(f"writes to {ds.key} a frame the analyser could not follow ({reason}); "
                      "its inputs are unknown", line)
            self.outputs.append(OutputLineage(ds, (), (), line))
            return
        if frame.unknown:
            self.warn(f"the frame written to {ds.key} comes partly from something the analyser "
                      f"could not follow: {frame.unknown}", line)
        uncertain = sorted({n for n, c in frame.cols.items()
                            if any(e.description.startswith(UNCERTAIN) for e in c.edges)})
        if len(frame.open) > 1 or uncertain:
            which = f" ({', '.join(uncertain)})" if uncertain else ""
            self.warn(f"{ds.key} is written from several inputs whose columns are not known: a "
                      f"column they give{which} is in one of them, not all; its edges are "
                      "marked 'uncertain'", line)
        if frame.open:
            names = ", ".join(d.key for d in frame.open)
            self.warn(f"columns of {names} are not known (no schema in the catalog or code); "
                      f"the ones not named in the script pass to {ds.key} unlisted", line)
        columns = tuple((name, col.edges) for name, col in frame.cols.items())
        indirect = tuple(sorted(frame.indirect))
        self.outputs.append(OutputLineage(ds, columns, indirect, line, frame.open))

    def arg_value(self, name: Any, line: int) -> Any:
        if isinstance(name, str) and name in self.arguments:
            return self.arguments[name]
        label = name if isinstance(name, str) else "?"
        return DynStr("{?" + label + "}", f"job argument --{label} has no value (give one with "
                      f"--arg {label}=VALUE or in run-arguments.json)")

    def connection_url(self, name: Any, line: int, fallback: Any = None) -> Any:
        """The JDBC URL of a catalog connection (else ``fallback``, the ``url`` option given
        with it, else a dynamic ``glue-connection://<name>``, reported)."""
        catalog = self.resolver.catalog
        if isinstance(name, str) and catalog is not None:
            try:
                url = catalog.get_connection(name).jdbc_url
            except Exception:  # noqa: BLE001 - a missing connection is reported below
                url = None
            if url:
                return url
        if isinstance(fallback, (str, DynStr)):
            return fallback
        self.warn(f"Glue connection {name!r} is not in the catalog; its JDBC URL is unknown",
                  line)
        label = name if isinstance(name, str) and re.fullmatch(r"[\w.-]+", name) else "unknown"
        return DynStr(f"jdbc:glue-connection://{label}", f"connection {name} is not in the "
                      "catalog")

    def options_dataset(self, ctype: Any, opts: Any, line: int) -> DatasetRef | None:
        """The dataset of a ``from_options`` read or write (None: reported as unknown)."""
        opts = opts if isinstance(opts, dict) else {}
        kind = ctype.lower() if isinstance(ctype, str) else ""
        if kind in ("s3", "file", "") and ("path" in opts or "paths" in opts):
            paths = _names(opts.get("paths", opts.get("path")))
            texts = [t for t in (_text(p) for p in paths) if t is not None]
            for t in texts:
                self.dynamic(t, line)
            if not texts:
                self.warn("S3 path is not a string the analyser can know", line)
                return None
            first = texts[0]
            if kind == "s3" and isinstance(first, DynStr) and first.text.startswith("{?"):
                first = DynStr(f"s3://{first.text}", first.reason)  # a whole path from args
            return path_dataset(first)
        if kind in _JDBC:
            url: Any = opts.get("url")
            if opts.get("connectionName"):
                url = self.connection_url(opts["connectionName"], line, fallback=url)
            table = opts.get("dbtable") or opts.get("dbTable")
            if table is None and opts.get("query") is not None:
                self.warn("a JDBC query read is named after its query; its tables are not "
                          "analysed", line)
                table = "query"
            url_t, table_t = _text(url), _text(table)
            self.dynamic(url_t, line)
            self.dynamic(table_t, line)
            if url_t is None or table_t is None:
                self.warn(f"{kind} connection options without a known url/dbtable", line)
                return None
            database = opts.get("database") if isinstance(opts.get("database"), str) else None
            url_text = url_t.text if isinstance(url_t, DynStr) else url_t
            if kind == "redshift" and not url_text.startswith("jdbc"):
                url_t = DynStr(f"jdbc:redshift:{url_text}", url_t.reason) \
                    if isinstance(url_t, DynStr) else f"jdbc:redshift:{url_text}"
            return jdbc_dataset(url_t, table_t, database)
        if kind == "dynamodb":
            table = _text(opts.get("dynamodb.input.tableName") or
                          opts.get("dynamodb.output.tableName"))
            if table is not None:
                name = table.text if isinstance(table, DynStr) else table
                return DatasetRef(f"arn:aws:dynamodb:{self.resolver.region}:"
                                  f"{self.resolver.account}", f"table/{name}",
                                  dynamic=isinstance(table, DynStr))
        if kind == "kafka":
            topic = _text(opts.get("topicName") or opts.get("subscribe"))
            servers = opts.get("bootstrap.servers") or opts.get("kafka.bootstrap.servers") or \
                opts.get("connectionName") or "unknown"
            if topic is not None:
                return DatasetRef(f"kafka://{servers}", str(getattr(topic, "text", topic)))
        if kind in ("mongodb", "documentdb"):
            uri = _text(opts.get("connection.uri") or opts.get("uri") or
                        opts.get("connectionName"))
            coll = _text(opts.get("collection"))
            if uri is not None and coll is not None:
                uri_text = uri.text if isinstance(uri, DynStr) else uri
                host = re.sub(r"^[a-z+]+://(?:[^@/]*@)?", "", uri_text).split("/")[0] or "unknown"
                db = opts.get("database") if isinstance(opts.get("database"), str) else ""
                name = ".".join(p for p in (db, str(getattr(coll, "text", coll))) if p)
                return DatasetRef(f"mongodb://{host}", name,
                                  dynamic=isinstance(uri, DynStr) or isinstance(coll, DynStr))
        if kind in ("opensearch", "elasticsearch"):
            index = _text(opts.get("opensearch.resource") or opts.get("es.resource"))
            nodes = opts.get("opensearch.nodes") or opts.get("es.nodes") or \
                opts.get("connectionName") or "unknown"
            if index is not None:
                return DatasetRef(f"opensearch://{nodes}", str(getattr(index, "text", index)))
        if kind == "kinesis":
            stream = _text(opts.get("streamName") or opts.get("streamARN"))
            if stream is not None:
                text = str(getattr(stream, "text", stream))
                region = self.resolver.region
                arn = re.match(r"^arn:aws[\w-]*:kinesis:([\w-]+):\d+:stream/(.+)$", text)
                if arn:  # streamARN: the region and the stream's name
                    region, text = arn.group(1), arn.group(2)
                return DatasetRef(f"kinesis://{region}", text,
                                  dynamic=isinstance(stream, DynStr))
        self.warn(f"connection type {ctype!r} is not modelled; this read or write is not "
                  "traced", line)
        return None

    def snowflake_dataset(self, opts: Mapping[str, Any], line: int) -> DatasetRef | None:
        """``snowflake://<account url>`` / ``<database>.<schema>.<table>`` of the Snowflake
        Spark connector's options (``sfURL``, ``sfDatabase``, ``sfSchema``, ``dbtable``)."""
        low = {str(k).lower(): v for k, v in opts.items()}
        url, table = _text(low.get("sfurl")), _text(low.get("dbtable"))
        if url is None or table is None:
            self.warn("Snowflake options without a known sfURL and dbtable (a query read is "
                      "not analysed)", line)
            return None
        parts = [getattr(_text(low.get(k)), "text", low.get(k)) for k in ("sfdatabase",
                                                                            "sfschema")]
        table_text = table.text if isinstance(table, DynStr) else table
        name = ".".join([str(p) for p in parts if isinstance(p, str) and p] + [table_text])
        host = (url.text if isinstance(url, DynStr) else url).split("://")[-1].rstrip("/")
        return DatasetRef(f"snowflake://{host}", name,
                          dynamic=isinstance(url, DynStr) or isinstance(table, DynStr))

    def read_options(self, ctype: Any, opts: Any, line: int, dynamic: bool) -> Any:
        opts = opts if isinstance(opts, dict) else {}
        kind = ctype.lower() if isinstance(ctype, str) else ""
        if kind in ("s3", "file", "") and len(_names(opts.get("paths"))) > 1:
            frames = [self.read(path_dataset(t), (), line, dynamic)
                      for t in (_text(p) for p in _names(opts["paths"])) if t is not None]
            if frames:
                return merge_frames(frames)
        if kind in _JDBC:
            return self.jdbc_read(kind, opts, line, dynamic)
        ds = self.options_dataset(ctype, opts, line)
        if ds is None:
            return Frame(unknown=f"read of connection type {ctype!r} at line {line}",
                         dynamic=dynamic)
        return self.read(ds, (), line, dynamic)

    def jdbc_read(self, kind: str, opts: dict[str, Any], line: int, dynamic: bool) -> Frame:
        """A JDBC read: of ``dbtable``, or of the tables a ``query`` (or a ``dbtable`` that is
        a sub-query, ``(select …) t``) reads — its columns traced to theirs."""
        table = opts.get("dbtable") or opts.get("dbTable")
        query = opts.get("query")
        if isinstance(table, str) and table.strip().startswith("("):
            query = table.strip()[1:].rsplit(")", 1)[0]
        if not isinstance(query, str) or (isinstance(table, str) and
                                          not table.strip().startswith("(")):
            ds = self.options_dataset(kind, opts, line)
            return self.read(ds, (), line, dynamic) if ds else \
                Frame(unknown=f"{kind} read at line {line}", dynamic=dynamic)

        def resolve(key: str) -> Frame | None:
            ds = self.options_dataset(kind, {**opts, "dbtable": key, "query": None}, line)
            return self.read(ds, (), line, dynamic) if ds is not None else None

        try:
            return query_lineage(query, resolve, line, self.warn).as_kind(dynamic)
        except SqlError as exc:
            self.warn(f"JDBC query: {exc}; the read is named after the query", line)
            ds = self.options_dataset(kind, {**opts, "dbtable": "query", "query": None}, line)
            return self.read(ds, (), line, dynamic) if ds else \
                Frame(unknown=f"{kind} read at line {line}", dynamic=dynamic)

    def read_catalog(self, kw: Mapping[str, Any], line: int, dynamic: bool) -> Frame:
        db = _text(kw.get("database"))
        table = _text(kw.get("table_name", kw.get("tableName")))
        if db is None or table is None:
            self.warn("from_catalog without a known database and table_name", line)
            return Frame(unknown=f"catalog read at line {line}", dynamic=dynamic)
        ds, fields, _ = self.resolver.table(db, table, line)
        return self.read(ds, fields, line, dynamic)

    def write_catalog(self, frame: Any, kw: Mapping[str, Any], line: int) -> None:
        db = _text(kw.get("database"))
        table = _text(kw.get("table_name", kw.get("tableName")))
        if db is None or table is None:
            self.warn("write to the catalog without a known database and table_name", line)
            return
        ds, _, _ = self.resolver.table(db, table, line)
        self.write(ds, frame, line)

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
                return ColExpr(((value, key),), IDENTITY, key.split(".")[-1], star=key == "*")
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
            if obj.name == "Window":
                return Obj("window")
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
            return obj
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

    # -- GlueContext ----------------------------------------------------------------------------
    def glue_method(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int,
                    label: str) -> Any:
        if name in ("create_dynamic_frame_from_catalog", "create_data_frame_from_catalog"):
            return self.read_catalog(_bind(["database", "table_name"], args, kwargs), line,
                                     "dynamic" in name)
        if name in ("create_dynamic_frame_from_options", "create_data_frame_from_options"):
            kw = _bind(["connection_type", "connection_options", "format"], args, kwargs)
            return self.read_options(kw.get("connection_type"), kw.get("connection_options"),
                                     line, "dynamic" in name)
        if name.startswith("write_dynamic_frame_from_") or \
                name.startswith("write_data_frame_from_") or name in ("write_from_options",
                                                                      "write_from_catalog"):
            return self.glue_write(name.rsplit("from_", 1)[-1] if "from_" in name else name,
                                   args, kwargs, line, prefixed=True)
        if name == "getSink":
            kw = _bind(["connection_type"], args, kwargs)
            return Obj("sink", data=dict(kw))
        if name == "getSource":
            kw = _bind(["connection_type"], args, kwargs)
            return Obj("gsource", data=dict(kw))
        if name in ("getLogger", "get_logger"):
            return Obj("logger")
        if name in ("purge_s3_path", "purge_table", "transition_s3_path", "transition_table",
                    "commit_transaction", "begin_transaction", "cancel_transaction",
                    "extract_jdbc_conf", "get_catalog_schema_as_spark_schema",
                    "add_ingestion_time_columns"):
            if name == "add_ingestion_time_columns" and args and isinstance(args[0], Frame):
                return args[0]
            return None
        if name == "forEachBatch":
            self.warn("forEachBatch: the batch function is analysed once with the stream's "
                      "frame", line)
            kw = _bind(["frame", "batch_function", "options"], args, kwargs)
            func = kw.get("batch_function")
            if isinstance(func, (UserFunc, Lambda)):
                self.call(func, [kw.get("frame"), 0], {}, line, "batch_function")
            return None
        return self.unknown_call(label or f"glueContext.{name}", args, kwargs, line)

    def glue_write(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int,
                   prefixed: bool = False) -> None:
        if name.startswith("from_"):
            name = name[len("from_"):]
        if name == "catalog":
            kw = _bind(["frame", "database", "table_name"], args, kwargs)
            self.write_catalog(kw.get("frame", kw.get("dataframe", kw.get("frame_or_dfc"))), kw, line)
        elif name == "options":
            kw = _bind(["frame", "connection_type", "connection_options", "format"], args,
                       kwargs)
            ds = self.options_dataset(kw.get("connection_type"), kw.get("connection_options"),
                                      line)
            if ds is not None:
                ds = self.staged(kw.get("connection_type"), kw.get("connection_options"), ds,
                                 line)
                self.write(ds, kw.get("frame", kw.get("dataframe", kw.get("frame_or_dfc"))), line)
        elif name == "jdbc_conf":
            kw = _bind(["frame", "catalog_connection", "connection_options"], args, kwargs)
            opts = dict(kw.get("connection_options") or {})
            opts["connectionName"] = kw.get("catalog_connection")
            ctype = "jdbc"
            url = self.connection_url(kw.get("catalog_connection"), line)
            opts.pop("connectionName")
            opts["url"] = url
            ds = self.options_dataset(ctype, opts, line)
            if ds is not None:
                self.write(self.staged(ctype, opts, ds, line), kw.get("frame"), line)
        else:
            self.warn(f"write_dynamic_frame.{name} is not modelled; this write is not traced",
                      line)

    def staged(self, ctype: Any, opts: Any, ds: DatasetRef, line: int) -> DatasetRef:
        """A write to a staging table that ``postactions`` merge (or insert) into the real
        table and then drop — what Glue Studio generates for a Redshift MERGE target: the
        real table is the dataset written."""
        if not isinstance(opts, dict):
            return ds
        post, staging = opts.get("postactions"), opts.get("dbtable") or opts.get("dbTable")
        if not isinstance(post, str) or not isinstance(staging, str):
            return ds
        try:
            statements = sqlglot.parse(post, read="redshift")
        except Exception:  # noqa: BLE001 - unreadable post-actions leave the write as it is
            self.warn("the postactions SQL cannot be parsed; the staging table is reported as "
                      "the target", line)
            return ds
        last = staging.replace('"', "").split(".")[-1].lower()
        target: str | None = None
        dropped = False
        for st in statements:
            if st is None:
                continue
            if isinstance(st, sqlglot.exp.Merge):
                using = st.args.get("using")
                if isinstance(using, sqlglot.exp.Table) and using.name.lower() == last and \
                        isinstance(st.this, sqlglot.exp.Table):
                    target = ".".join(p for p in (st.this.db, st.this.name) if p)
            elif isinstance(st, sqlglot.exp.Insert) and st.expression is not None and any(
                    t.name.lower() == last for t in st.expression.find_all(sqlglot.exp.Table)):
                table = st.this.this if isinstance(st.this, sqlglot.exp.Schema) else st.this
                if isinstance(table, sqlglot.exp.Table):
                    target = ".".join(p for p in (table.db, table.name) if p)
            elif isinstance(st, sqlglot.exp.Drop) and any(
                    t.name.lower() == last for t in st.find_all(sqlglot.exp.Table)):
                dropped = True
        if target is None or not dropped:
            return ds
        final = self.options_dataset(ctype, {**opts, "dbtable": target}, line)
        return final if final is not None else ds

    def sink_write(self, sink: Obj, frame: Any, line: int) -> None:
        data = sink.data
        catalog = data.get("catalog")
        link: Symlink | None = None
        if catalog and all(isinstance(c, str) for c in catalog):
            link = Symlink(self.resolver.glue_namespace, f"table/{catalog[0]}/{catalog[1]}")
        ctype = data.get("connection_type", "s3")
        if data.get("path") is not None or ctype not in ("s3", None):
            ds = self.options_dataset(ctype, data, line)
            if ds is None:
                return
            if link is not None:
                ds = DatasetRef(ds.namespace, ds.name, (link,), ds.dynamic)
            self.write(ds, frame, line)
        elif catalog:
            self.write_catalog(frame, {"database": catalog[0], "table_name": catalog[1]}, line)
        else:
            self.warn("getSink without a path or catalog table; this write is not traced", line)

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
            clauses.append(merged_source)
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
                exprs.append(ColExpr(refs, expr.subtype, column.split(".")[-1],
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

    def read_table(self, name: Any, line: int) -> Frame:
        text = _text(name)
        if text is None:
            self.warn("spark.table() with a name the analyser cannot know", line)
            return Frame(unknown=f"table at line {line}", dynamic=False)
        raw = text.text if isinstance(text, DynStr) else text
        if not isinstance(text, DynStr) and raw.lower() in self.views:
            return self.views[raw.lower()]
        ds, fields = self.resolver.qualified(text, line)
        return self.read(ds, fields, line, False)

    def sql(self, query: Any, line: int) -> Frame:
        if isinstance(query, DynStr):
            self.warn(f"SQL text built at run time ({query.reason}); analysed with the unknown "
                      "parts as placeholders", line)
            query = query.text.replace("{?", "unknown_").replace("}", "")
        if not isinstance(query, str):
            self.warn("spark.sql() with a query the analyser cannot know", line)
            return Frame(unknown=f"SQL at line {line}", dynamic=False)

        def resolve(key: str) -> Frame | None:
            if key in self.views:
                return self.views[key]
            catalog = self.resolver.catalog
            db, _, table = key.rpartition(".")
            if catalog is None or not db and not self._in_catalog("default", table):
                return None
            return self.read_table(key if db else f"default.{table}", line)

        def target_columns(name: str) -> list[str]:
            db, _, table = name.rpartition(".")
            db = db.rpartition(".")[2] or "default"
            if not self._in_catalog(db, table):
                return []
            return [n for n, _ in self.resolver.qualified(f"{db}.{table}", line)[1]]

        try:
            result = statement_lineage(query, resolve, target_columns, line, self.warn)
        except SqlError as exc:
            self.warn(f"spark.sql: {exc}", line)
            return Frame(unknown=f"SQL at line {line}", dynamic=False)
        if isinstance(result, Frame):
            return result
        if result.kind == "VIEW":
            self.views[result.table.lower()] = result.frame
            return Frame(dynamic=False)
        self.sql_write(result, line)
        return Frame(dynamic=False)

    def sql_write(self, written: SqlWrite, line: int) -> None:
        """The sink of an INSERT / CREATE TABLE AS SELECT / MERGE INTO statement: the
        catalog table (its storage, or the ``LOCATION`` given), else the Glue table name."""
        if not written.table and written.location is not None:
            self.write(path_dataset(written.location), written.frame, line)
            return
        db, _, table = written.table.rpartition(".")
        db = db.rpartition(".")[2] or "default"
        link = Symlink(self.resolver.glue_namespace, f"table/{db}/{table}")
        if written.location is not None:
            found = path_dataset(written.location)
            ds = DatasetRef(found.namespace, found.name, (link,), found.dynamic)
        elif self._in_catalog(db, table) or written.kind != "CREATE TABLE AS SELECT":
            ds, _ = self.resolver.qualified(f"{db}.{table}", line)
        else:  # a table the statement creates
            ds = DatasetRef(link.namespace, link.name)
        self.write(ds, written.frame, line)

    def _in_catalog(self, db: str, table: str) -> bool:
        return self.resolver.in_catalog(db, table)

    # -- readers and writers ----------------------------------------------------------------
    def reader_method(self, reader: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                      line: int) -> Any:
        opts = dict(reader.data.get("opts", {}))
        data = dict(reader.data)
        if name == "format":
            data["format"] = args[0] if args else kwargs.get("source")
            return Obj("reader", data=data)
        if name == "option" and len(args) >= 2:
            opts[str(args[0])] = args[1]
            data["opts"] = opts
            return Obj("reader", data=data)
        if name == "options":
            opts.update({str(k): v for k, v in kwargs.items()})
            if args and isinstance(args[0], dict):
                opts.update(args[0])
            data["opts"] = opts
            return Obj("reader", data=data)
        if name == "schema":
            schema = args[0] if args else kwargs.get("schema")
            data["schema"] = _schema_names(schema)
            return Obj("reader", data=data)
        if name == "table":
            return self.read_table(args[0] if args else kwargs.get("tableName"), line)
        if name == "jdbc":
            kw = _bind(["url", "table"], args, kwargs)
            return self.jdbc_read("jdbc", {**opts, "url": kw.get("url"),
                                           "dbtable": kw.get("table")}, line, False)
        fmt = data.get("format")
        path: Any = None
        if name == "load":
            kw = _bind(["path", "format"], args, kwargs)
            path = kw.get("path", opts.get("path"))
            fmt = kw.get("format") or fmt
        elif name in ("json", "csv", "parquet", "orc", "text", "avro", "xml", "textFile"):
            kw = _bind(["path"], args, kwargs)
            path = args if len(args) > 1 else kw.get("path")
            fmt = name
        else:
            return self.unknown_call(f"spark.read.{name}", args, kwargs, line)
        if isinstance(fmt, str) and (fmt.lower() in ("jdbc", "postgresql", "mysql") or
                                     "redshift" in fmt.lower()):
            return self.jdbc_read("jdbc", opts, line, False)
        if isinstance(fmt, str) and "snowflake" in fmt.lower():
            sf = self.snowflake_dataset(opts, line)
            return self.read(sf, (), line, False) if sf else \
                Frame(unknown=f"snowflake read at line {line}", dynamic=False)
        if isinstance(fmt, str) and fmt.lower() in ("kafka", "kinesis") and path is None:
            stream_ds = self.options_dataset(fmt, {**opts, "topicName": opts.get(
                "topicName", opts.get("subscribe"))}, line)
            return self.read(stream_ds, (), line, False) if stream_ds else \
                Frame(unknown=f"{fmt} read at line {line}", dynamic=False)
        if isinstance(fmt, str) and fmt.lower() == "delta" and path is None:
            path = opts.get("path")
        if isinstance(fmt, str) and fmt.lower() in ("iceberg", "hudi", "delta") and \
                isinstance(path, str) and "/" not in path and "." in path:
            return self.read_table(path, line)  # format("iceberg").load("catalog.db.t")
        paths = [t for t in (_text(p) for p in _names(path)) if t is not None]
        for p in paths:
            self.dynamic(p, line)
        if not paths:
            self.warn(f"spark.read.{name}() without a path the analyser can know", line)
            return Frame(unknown=f"read at line {line}", dynamic=False)
        fields = tuple(data.get("schema") or ())
        frames = [self.read(path_dataset(p), fields, line, False) for p in paths]
        return frames[0] if len(frames) == 1 else merge_frames(frames)

    def writer_method(self, writer: Obj, name: str, args: list[Any], kwargs: dict[str, Any],
                      line: int) -> Any:
        data = dict(writer.data)
        opts = dict(data.get("opts", {}))
        frame_written = data.get("frame")
        if name in ("foreachBatch", "foreach") and args and \
                isinstance(args[0], (UserFunc, Lambda)):
            # writeStream.foreachBatch(fn): fn runs on each micro-batch (analysed once)
            self.call(args[0], [frame_written, 0], {}, line, "batch function")
            return Obj("df_writer", data={**data, "handled": True})
        if name in ("start", "awaitTermination") and data.get("handled"):
            return None
        if "table" in data and name in ("append", "overwrite", "overwritePartitions", "create",
                                        "createOrReplace", "replace"):
            # df.writeTo("catalog.db.t").append(): the DataFrameWriterV2
            ds, _ = self.resolver.qualified(data["table"], line)
            self.write(ds, frame_written, line)
            return None
        if name in ("using", "tableProperty", "partitionedBy"):
            return Obj("df_writer", data=data)
        if name in ("mode", "format", "partitionBy", "bucketBy", "sortBy", "outputMode",
                    "trigger", "queryName", "clusterBy"):
            if name == "format":
                data["format"] = args[0] if args else kwargs.get("source")
            return Obj("df_writer", data=data)
        if name in ("option", "options"):
            if name == "option" and len(args) >= 2:
                opts[str(args[0])] = args[1]
            opts.update({str(k): v for k, v in kwargs.items()})
            if args and isinstance(args[0], dict):
                opts.update(args[0])
            data["opts"] = opts
            return Obj("df_writer", data=data)
        frame = data.get("frame")
        fmt = data.get("format")
        if name in ("saveAsTable", "insertInto", "toTable"):
            target = _text(args[0] if args else kwargs.get("tableName"))
            if target is None:
                self.warn(f"{name}() with a table name the analyser cannot know", line)
                return None
            ds, _ = self.resolver.qualified(target, line)
            self.write(ds, frame, line)
            return None
        if name == "jdbc":
            kw = _bind(["url", "table"], args, kwargs)
            sink_ds = self.options_dataset("jdbc", {"url": kw.get("url"),
                                                   "dbtable": kw.get("table")}, line)
            if sink_ds is not None:
                self.write(sink_ds, frame, line)
            return None
        if name in ("save", "start", "json", "csv", "parquet", "orc", "text", "avro", "xml"):
            kw = _bind(["path"], args, kwargs)
            if isinstance(fmt, str) and (fmt.lower() == "jdbc" or "redshift" in fmt.lower()):
                sink_ds = self.options_dataset("jdbc", opts, line)
                if sink_ds is not None:
                    self.write(sink_ds, frame, line)
                return None
            if isinstance(fmt, str) and "snowflake" in fmt.lower():
                sink_ds = self.snowflake_dataset(opts, line)
                if sink_ds is not None:
                    self.write(sink_ds, frame, line)
                return None
            path = _text(kw.get("path", opts.get("path")))
            self.dynamic(path, line)
            if path is None:
                self.warn(f"write .{name}() without a path the analyser can know", line)
                return None
            if isinstance(fmt, str) and fmt.lower() in ("iceberg", "hudi", "delta") and \
                    isinstance(path, str) and "/" not in path and "." in path:
                ds, _ = self.resolver.qualified(path, line)  # save("catalog.db.t")
                self.write(ds, frame, line)
                return None
            self.write(path_dataset(path), frame, line)
            return None
        return self.unknown_call(f"write.{name}", args, kwargs, line)


class _Placeholders(string.Formatter):
    """``str.format`` that shows a field it has no value for as ``{?name}`` (e.g.
    ``sql.format(**args)`` where ``args`` are job arguments) and notes why."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__()
        self.reasons = reasons

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        try:
            return super().get_value(key, args, kwargs)
        except (IndexError, KeyError):
            self.reasons.append(f"format field {key} has no value")
            return "{?" + str(key) + "}"

    def format_field(self, value: Any, format_spec: str) -> Any:
        if isinstance(value, str) and value.startswith("{?"):
            return value
        return super().format_field(value, format_spec)


_PARTITION = re.compile(r"^[^/=]+=[^/]*\{\?[^/]*$")


def path_dataset(path: str | DynStr) -> DatasetRef:
    """The dataset of a path; a Hive-style partition directory built at run time
    (``…/orders/ingest_year={?}/ingest_month={?}/``) is part of the table at its root, so
    the dataset is the root (``…/orders``), no longer dynamic when the rest is known."""
    if isinstance(path, DynStr):
        parts = path.text.rstrip("/").split("/")
        while len(parts) > 3 and _PARTITION.match(parts[-1]):
            parts.pop()
        root = "/".join(parts)
        if root != path.text.rstrip("/"):
            return _path_dataset(DynStr(root, path.reason) if "{?" in root else root)
    return _path_dataset(path)


def _schema_names(schema: Any) -> list[tuple[str, str]]:
    """``(column, type)`` of a reader schema: a ``StructType`` (types not kept) or a DDL
    string (``"id string, items array<struct<sku:string>>"``: top-level columns only)."""
    if isinstance(schema, Obj) and schema.kind == "schema":
        return [(n, "") for n in schema.data.get("names", [])]
    if isinstance(schema, str):
        try:
            from sqlglot import exp, parse_one

            node = parse_one(f"CREATE TABLE t ({schema})", read="spark")
            body = node.this if isinstance(node.this, exp.Schema) else None
            if body is None:
                return []
            return [(c.name, c.args["kind"].sql("spark").lower().replace(": ", ":")
                     .replace(", ", ",") if c.args.get("kind") is not None else "")
                    for c in body.expressions if isinstance(c, exp.ColumnDef)]
        except Exception:  # noqa: BLE001 - an unparsable schema leaves the columns unknown
            return []
    return []


