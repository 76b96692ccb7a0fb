"""The analyser's record of datasets: what a job reads and writes, from reader options,
JDBC connections (catalog or URL) and catalog tables (:class:`DatasetIO`, the base of
:class:`._api.ApiModel`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ._api_util import path_dataset
from ._datasets import DatasetResolver, frame_of, jdbc_dataset
from ._frames import FrameOps, _names, _text
from ._graph import (
    DatasetRef,
    InputDataset,
    LineageWarning,
    OutputLineage,
)
from ._sql import SqlError, query_lineage
from ._values import (
    ASSUMED,
    UNCERTAIN,
    Col,
    DynStr,
    Frame,
    Unknown,
    merge_frames,
)

__all__ = ["DatasetIO"]

_JDBC = {"postgresql", "mysql", "sqlserver", "oracle", "redshift", "jdbc", "mariadb", "db2"}



class DatasetIO(FrameOps):
    """Datasets the job reads and writes: options, connections, catalog tables."""

    def __init__(self, resolver: DatasetResolver, arguments: dict[str, str]) -> None:
        self.resolver = resolver
        self.arguments = arguments
        self.inputs: dict[str, InputDataset] = {}
        self.outputs: list[OutputLineage] = []
        self.warnings: list[LineageWarning] = []
        self.views: dict[str, Frame] = {}
        #: tables the script creates with ``CREATE TABLE t (cols…)``: ``db.t`` → the columns
        #: (name, type) and the ``LOCATION`` given
        self.created: dict[str, tuple[tuple[tuple[str, str], ...], str | None]] = {}


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

    def write_sample(self, frame: Any, path: Any, line: int) -> None:
        """Spigot writes a sample of ``frame``'s records as JSON to ``path``: an output."""
        if isinstance(path, (str, DynStr)):
            self.dynamic(path, line)
            self.write(path_dataset(path), frame, line)
        elif path is not None:
            self.warn("Spigot to a path the analyser cannot know: its sample is not listed",
                      line)

    def write(self, ds: DatasetRef, frame: Any, line: int, named: Any = (),
              table_fields: tuple[tuple[str, str], ...] = ()) -> None:
        """Record a write of ``frame`` to ``ds``; ``named`` are columns the write names
        (``partitionBy``, ``partitionKeys``): of a frame whose columns are not known, they
        are listed, from its inputs. ``table_fields`` are the declared columns (catalog or the
        script's ``CREATE TABLE``) of a table written by name: of such a frame, they are
        listed too, from the inputs' same-named columns, marked uncertain (the table says
        what it holds, not what this frame gives)."""
        if isinstance(frame, Frame) and frame.open:
            frame = _with_named(frame, named)
            frame = _with_assumed(frame, table_fields, ds)
        if not isinstance(frame, Frame):
            reason = frame.reason if isinstance(frame, Unknown) else type(frame).__name__
            self.warn(f"writes to {ds.key} a frame the analyser could not follow ({reason}); "
                      "its inputs are unknown", line)
            self.outputs.append(OutputLineage(ds, (), (), line))
            return
        if frame.unknown:
            self.warn(f"the frame written to {ds.key} comes partly from something the analyser "
                      f"could not follow: {frame.unknown}", line)
        # (other uncertain edges — an unknown ApplyMapping, a pandas function — were reported
        # where they were made)
        uncertain = sorted({n for n, c in frame.cols.items()
                            if any(e.description.startswith(f"{UNCERTAIN} in one of")
                                   for e in c.edges)})
        assumed = [n for n, c in frame.cols.items()
                   if any(e.description.startswith(ASSUMED) for e in c.edges)]
        if assumed:
            self.warn(f"the columns of the frame written to {ds.key} are not known: the "
                      f"table's declared columns ({', '.join(assumed)}) are taken from "
                      "the inputs' same-named columns; their edges are marked 'uncertain'",
                      line)
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
        given = opts
        opts = opts if isinstance(opts, dict) else {}
        kind = ctype.lower() if isinstance(ctype, str) else ""
        if kind in ("s3", "file") and "path" not in opts and "paths" not in opts:
            # the connection type is modelled: say what is missing from its options
            why = "are not a dict the analyser can know" if not isinstance(given, dict) \
                else "have no 'path' or 'paths'"
            self.warn(f"the {kind} connection options {why}; this read or write is not "
                      "traced", line)
            return None
        if kind in ("marketplace.spark", "custom.spark") and "://" in str(opts.get("path")):
            kind = "s3"  # a Hudi / Delta / Iceberg connector writing or reading a path
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
        if kind == "dynamodb":
            # a DynamoDB table (scanned, or its export with "dynamodb.export"): named as a
            # catalog table over DynamoDB is, arn:aws:dynamodb:<region>:<account> /
            # table/<name>
            table = _text(opts.get("dynamodb.tableArn") or opts.get("dynamodb.input.tableName")
                          or opts.get("dynamodb.output.tableName"))
            if table is not None:
                text = str(getattr(table, "text", table))
                if not text.startswith("arn:"):
                    text = (f"arn:aws:dynamodb:{self.resolver.region}:{self.resolver.account}"
                            f":table/{text}")
                found = path_dataset(text)
                return DatasetRef(found.namespace, found.name,
                                  dynamic=isinstance(table, DynStr))
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
        ds, fields, _ = self.resolver.table(db, table, line)
        extra = kw.get("additional_options")
        named = extra.get("partitionKeys", ()) if isinstance(extra, dict) else ()
        self.write(ds, frame, line, named, table_fields=fields)


#: options of table formats that name columns of the written frame (Hudi's keys)
_KEY_OPTIONS = ("hoodie.datasource.write.recordkey.field",
                "hoodie.datasource.write.partitionpath.field",
                "hoodie.datasource.write.precombine.field")


def option_columns(opts: Any) -> list[str]:
    """Columns a writer's options name: Hudi's record key, partition path and precombine
    fields (comma-separated; ``col:SIMPLE`` of the custom key generator is ``col``)."""
    if not isinstance(opts, dict):
        return []
    out: list[str] = []
    for key in _KEY_OPTIONS:
        value = opts.get(key)
        if isinstance(value, str):
            out.extend(p.split(":")[0].strip() for p in value.split(",") if p.strip())
    return out


def _with_named(frame: Frame, named: Any) -> Frame:
    """``frame`` with the known column names of ``named`` (a name or a list) listed."""
    names = [n for n in (named if isinstance(named, (list, tuple)) else [named])
             if isinstance(n, str) and n]
    cols = dict(frame.cols)
    for name in names:
        if frame.find(name) is None:
            edges = frame.lookup(name)
            if edges:
                cols[name] = Col(edges)
    return frame.with_cols(cols, keep_aliases=True) if len(cols) != len(frame.cols) else frame


def _with_assumed(frame: Frame, fields: tuple[tuple[str, str], ...],
                  ds: DatasetRef) -> Frame:
    """``frame`` (columns not known) with the target table's declared columns listed, each
    from the inputs' same-named column, its edges marked uncertain (:data:`ASSUMED`)."""
    cols = dict(frame.cols)
    for name, typ in fields:
        if frame.find(name) is not None:
            continue
        edges = frame.lookup(name) or ()
        cols[name] = Col(tuple(e if e.description.startswith(UNCERTAIN) else
                               replace(e, description="; ".join(
                                   d for d in (ASSUMED, e.description) if d))
                               for e in edges), typ)
    return frame.with_cols(cols, keep_aliases=True) if len(cols) != len(frame.cols) else frame
