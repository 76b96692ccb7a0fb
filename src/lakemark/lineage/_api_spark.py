"""Spark I/O: ``spark.table``, ``spark.sql`` (queries and statements that write),
``spark.read`` readers and ``df.write`` / ``writeTo`` writers (:class:`SparkIO`, part of
:class:`._api.ApiModel`).
"""

from __future__ import annotations

from typing import Any

from ._api_datasets import option_columns
from ._api_glue import GlueIO
from ._api_util import _schema_names, path_dataset
from ._frames import _bind, _names, _text
from ._graph import (
    DatasetRef,
    Symlink,
)
from ._objects import Lambda, Obj, UserFunc
from ._sql import SqlError, path_table
from ._sql_write import SqlWrite, statement_lineage
from ._values import (
    DynStr,
    Frame,
    merge_frames,
)

__all__ = ["SparkIO"]


class SparkIO(GlueIO):
    """``spark.table``/``spark.sql`` (reads and SQL writes), ``spark.read`` and ``df.write``."""

    def script_table(self, name: Any, line: int,
                     ) -> tuple[DatasetRef, tuple[tuple[str, str], ...]] | None:
        """A table named by its files (``delta.`s3://b/t```: the path) or created by the
        script's own ``CREATE TABLE t (cols…)`` and not in the catalog: its dataset and
        columns (None: neither)."""
        if not isinstance(name, str):
            return None
        text = name.replace("`", "")
        path = path_table(text)
        if path is not None:
            return path_dataset(path), ()
        db, _, table = text.rpartition(".")
        db = db.rpartition(".")[2].lower() or "default"
        key = f"{db}.{table.lower()}"
        if key not in self.created or self._in_catalog(db, table):
            return None
        fields, location = self.created[key]
        link = Symlink(self.resolver.glue_namespace, f"table/{db}/{table}")
        if location is None:
            return self.resolver.new_table(db, table), fields
        found = path_dataset(location)
        return DatasetRef(found.namespace, found.name, (link,), found.dynamic), fields

    def by_position(self, frame: Any, fields: tuple[tuple[str, str], ...], table: str,
                    line: int) -> Any:
        """``insertInto``: the frame's columns written by position into the table's."""
        if not isinstance(frame, Frame) or frame.open or not fields:
            return frame
        if frame.through:  # columns chosen or changed at run time: their order is not known
            self.warn(f"insertInto {table} is by position, and the order of the frame's "
                      "columns is not known; the frame's names are kept", line)
            return frame
        if len(fields) != len(frame.cols):
            self.warn(f"insertInto {table}: the frame has {len(frame.cols)} columns for "
                      f"{len(fields)} table columns (insertInto is by position); the frame's "
                      "names are kept", line)
            return frame
        return frame.with_cols(dict(zip((n for n, _ in fields), frame.cols.values())))

    def qualified_table(self, name: Any, line: int,
                        ) -> tuple[DatasetRef, tuple[tuple[str, str], ...]]:
        """A table name as Spark resolves it: the script's own tables, then the catalog."""
        return self.script_table(name, line) or self.resolver.qualified(name, line)

    def read_table(self, name: Any, line: int) -> Frame:
        text = _text(name)
        if text is None:
            self.warn("spark.table() with a name the analyser cannot know", line)
            return Frame(unknown=f"table at line {line}", dynamic=False)
        raw = text.text if isinstance(text, DynStr) else text
        if not isinstance(text, DynStr) and raw.lower() in self.views:
            return self.views[raw.lower()]
        ds, fields = self.qualified_table(text, line)
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
            own = self.script_table(key, line)
            if own is not None:
                return self.read(own[0], own[1], line, False)
            catalog = self.resolver.catalog
            db, _, table = key.rpartition(".")
            if catalog is None or not db and not self._in_catalog("default", table):
                return None
            return self.read_table(key if db else f"default.{table}", line)

        def target_columns(name: str) -> list[str]:
            own = self.script_table(name, line)
            if own is not None:
                return [n for n, _ in own[1]]
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
        if result.kind == "CREATE TABLE":  # no data: the columns later statements use
            db, _, table = result.table.rpartition(".")
            key = f"{db.rpartition('.')[2].lower() or 'default'}.{table.lower()}"
            self.created[key] = (tuple((n, c.type or "") for n, c in result.frame.cols.items()),
                                 result.location)
            return Frame(dynamic=False)
        self.sql_write(result, line)
        return Frame(dynamic=False)

    def sql_write(self, written: SqlWrite, line: int) -> None:
        """The sink of an INSERT / CREATE TABLE AS SELECT / MERGE INTO statement: the
        catalog table (its storage, or the ``LOCATION`` given), else the Glue table name."""
        if not written.table and written.location is not None:
            self.write(path_dataset(written.location), written.frame, line)
            return
        own = self.script_table(written.table, line)
        if own is not None and written.location is None:
            self.write(own[0], written.frame, line)
            return
        db, _, table = written.table.rpartition(".")
        db = db.rpartition(".")[2] or "default"
        link = Symlink(self.resolver.glue_namespace, f"table/{db}/{table}")
        if written.location is not None:
            found = path_dataset(written.location)
            ds = DatasetRef(found.namespace, found.name, (link,), found.dynamic)
        elif self._in_catalog(db, table) or written.kind != "CREATE TABLE AS SELECT":
            ds, _ = self.resolver.qualified(f"{db}.{table}", line)
        else:  # a table the statement creates: where Spark puts it
            ds = self.resolver.new_table(db, table)
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
            ds, fields = self.qualified_table(data["table"], line)
            self.write(ds, frame_written, line,
                       table_fields=fields if name in ("append", "overwritePartitions") else ())
            return None
        if name in ("using", "tableProperty", "partitionedBy"):
            return Obj("df_writer", data=data)
        if name in ("mode", "format", "partitionBy", "bucketBy", "sortBy", "outputMode",
                    "trigger", "queryName", "clusterBy"):
            if name == "format":
                data["format"] = args[0] if args else kwargs.get("source")
            if name == "mode":
                data["mode"] = args[0] if args else kwargs.get("saveMode")
            if name in ("partitionBy", "bucketBy", "sortBy", "clusterBy"):
                data["named"] = [*data.get("named", ()), *_names(list(args))]
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
        named = [*data.get("named", ()), *option_columns(opts)]  # partitionBy, Hudi keys
        if name in ("saveAsTable", "insertInto", "toTable"):
            target = _text(args[0] if args else kwargs.get("tableName"))
            if target is None:
                self.warn(f"{name}() with a table name the analyser cannot know", line)
                return None
            where = _text(kwargs.get("path", opts.get("path")))
            at = None
            if name != "insertInto" and where is not None and isinstance(target, str) \
                    and self.script_table(target, line) is None:
                self.dynamic(where, line)
                at = self.resolver.table_at(target, where)  # an external table made here
            ds, fields = (at, ()) if at is not None else self.qualified_table(target, line)
            mode = kwargs.get("mode", args[2] if len(args) > 2 else data.get("mode"))
            by_name = name != "insertInto" and str(mode).lower() == "append"
            if name == "insertInto":
                frame = self.by_position(frame, fields, str(target), line)
            self.write(ds, frame, line, named,
                       table_fields=fields if by_name else ())
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
                self.write(ds, frame, line, named)
                return None
            self.write(path_dataset(path), frame, line, named)
            return None
        return self.unknown_call(f"write.{name}", args, kwargs, line)
