"""GlueContext: ``create_dynamic_frame`` / ``create_data_frame`` sources, ``write_dynamic_frame``
sinks, ``getSink``/``getSource`` (:class:`GlueIO`, part of :class:`._api.ApiModel`).
"""

from __future__ import annotations

from typing import Any

import sqlglot

from ._api_datasets import DatasetIO, option_columns
from ._frames import _bind, _names
from ._graph import (
    DatasetRef,
    Symlink,
)
from ._objects import Lambda, Obj, UserFunc
from ._values import (
    Frame,
)

__all__ = ["GlueIO"]


class GlueIO(DatasetIO):
    """GlueContext readers and writers, ``getSink``/``getSource`` and staged Redshift writes."""

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
            frame = kw.get("frame", kw.get("dataframe", kw.get("frame_or_dfc")))
            self.write_catalog(frame, kw, line)
        elif name == "options":
            kw = _bind(["frame", "connection_type", "connection_options", "format"], args,
                       kwargs)
            ds = self.options_dataset(kw.get("connection_type"), kw.get("connection_options"),
                                      line)
            if ds is not None:
                opts = kw.get("connection_options")
                ds = self.staged(kw.get("connection_type"), opts, ds, line)
                named = [*_names(opts.get("partitionKeys", ())), *option_columns(opts)] \
                    if isinstance(opts, dict) else []
                self.write(ds, kw.get("frame", kw.get("dataframe", kw.get("frame_or_dfc"))), line,
                           named)
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
            self.write(ds, frame, line, data.get("partitionKeys", ()))
        elif catalog:
            self.write_catalog(frame, {"database": catalog[0], "table_name": catalog[1]}, line)
        else:
            self.warn("getSink without a path or catalog table; this write is not traced", line)
