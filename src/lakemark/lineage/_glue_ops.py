"""Glue transforms (``ApplyMapping``, ``Join``, ``Relationalize``, Glue Studio nodes …) as
frame operations: the part of :class:`._frames.FrameOps` that models AWS Glue's own API.

The interpreter in :mod:`._analyze` provides ``warn``, ``call``, ``unknown_call`` and
``collection_get``; :class:`._frames.FrameOps` provides ``with_columns``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._datasets import DatasetResolver
from ._frame_util import _bind, _names, _referenced_fields, _renamed_at, _same_type, _split_type
from ._graph import FILTER, IDENTITY, INDIRECT, JOIN, TRANSFORMATION, UNKNOWN, ColumnEdge
from ._map_fn import apply_map
from ._objects import Obj
from ._sql import SqlError, expression_lineage
from ._values import (
    UNCERTAIN,
    Col,
    ColExpr,
    Frame,
    Unknown,
    combine_exprs,
    derive,
    merge_frames,
)

__all__ = ["GlueOps"]


class GlueOps:
    """Glue transforms and the interface the rest of the analyser provides."""

    resolver: DatasetResolver
    views: dict[str, Frame]

    # provided by the interpreter
    def warn(self, message: str, line: int) -> None:
        raise NotImplementedError

    def call(self, func: Any, args: list[Any], kwargs: dict[str, Any], line: int,
             label: str) -> Any:
        raise NotImplementedError

    def chosen_at_run_time(self, frame: Frame, what: str, line: int) -> Frame:
        raise NotImplementedError

    def unknown_call(self, label: str, args: list[Any], kwargs: dict[str, Any],
                     line: int) -> Any:
        raise NotImplementedError

    def collection_get(self, coll: Obj, key: Any, line: int) -> Any:
        raise NotImplementedError

    def write_sample(self, frame: Any, path: Any, line: int) -> None:
        """Spigot's sample of ``frame`` written to S3 ``path`` (an output dataset)."""
        raise NotImplementedError

    def schema_of(self, frame: Frame, line: int) -> Any:
        raise NotImplementedError

    def with_columns(self, frame: Frame, mapping: dict[Any, Any], line: int) -> Frame:
        raise NotImplementedError

    # -- Glue transforms ------------------------------------------------------------------------
    def transform(self, name: str, args: list[Any], kwargs: dict[str, Any], line: int) -> Any:
        if name == "ApplyMapping":
            kw = _bind(["frame", "mappings"], args, kwargs)
            return self.apply_mapping(kw.get("frame"), kw.get("mappings"), line)
        if name == "SelectFields":
            kw = _bind(["frame", "paths"], args, kwargs)
            return self.select_fields(kw.get("frame"), kw.get("paths"), line)
        if name == "DropFields":
            kw = _bind(["frame", "paths"], args, kwargs)
            return self.drop_fields(kw.get("frame"), kw.get("paths"), line)
        if name == "RenameField":
            kw = _bind(["frame", "old_name", "new_name"], args, kwargs)
            return self.rename(kw.get("frame"), kw.get("old_name"), kw.get("new_name"), line)
        if name == "Join":
            kw = _bind(["frame1", "frame2", "keys1", "keys2"], args, kwargs)
            return self.glue_join(kw.get("frame1"), kw.get("frame2"), kw.get("keys1"),
                                  kw.get("keys2"), line)
        if name == "Filter":
            kw = _bind(["frame", "f"], args, kwargs)
            return self.glue_filter(kw.get("frame"), kw.get("f"), line)
        if name == "Relationalize":
            kw = _bind(["frame", "staging_path", "name"], args, kwargs)
            return self.relationalize(kw.get("frame"), kw.get("name") or "roottable", line)
        if name == "SplitFields":
            kw = _bind(["frame", "paths", "name1", "name2"], args, kwargs)
            return self.split_fields(kw.get("frame"), kw.get("paths"), kw.get("name1") or
                                     "frame1", kw.get("name2") or "frame2", line)
        if name == "SplitRows":
            kw = _bind(["frame", "comparison_dict", "name1", "name2"], args, kwargs)
            frame = kw.get("frame")
            return Obj("collection", data={"frames": {kw.get("name1") or "frame1": frame,
                                                      kw.get("name2") or "frame2": frame}})
        if name == "Union":
            kw = _bind(["frame1", "frame2"], args, kwargs)
            frames = [f for f in (kw.get("frame1"), kw.get("frame2")) if isinstance(f, Frame)]
            return merge_frames(frames) if frames else Unknown("Union of unknown frames", line)
        if name == "SelectFromCollection":
            kw = _bind(["dfc", "key"], args, kwargs)
            coll = kw.get("dfc")
            if isinstance(coll, Obj) and coll.kind == "collection":
                return self.collection_get(coll, kw.get("key"), line)
            return Unknown("SelectFromCollection of an unknown collection", line)
        if name in ("ResolveChoice", "DropNullFields", "Spigot", "Unbox", "UnnestFrame",
                    "ErrorsAsDynamicFrame", "DropDuplicates", "FillMissingValues"):
            kw = _bind(["frame"], args, kwargs)
            frame = kw.get("frame")
            if name == "Spigot":  # writes a sample of the records to S3, passes the frame
                spigot = _bind(["frame", "path", "options"], args, kwargs)
                self.write_sample(frame, spigot.get("path"), line)
            if name == "UnnestFrame" and isinstance(frame, Frame):
                return self.unnest(frame, line)
            if name == "ResolveChoice" and isinstance(frame, Frame):
                return self.resolve_choice(frame, kw.get("specs"), line, kw.get("choice"))
            return frame
        if name in ("Map", "FlatMap"):
            kw = _bind(["frame", "f"], args, kwargs)
            if name == "Map":
                return apply_map(self, kw.get("frame"), kw.get("f"), line, "Map function")
            return self.opaque(kw.get("frame"), f"{name} function", line)
        if name == "EvaluateDataQuality":
            kw = _bind(["frame"], args, kwargs)
            return kw.get("frame")
        frames = [v for v in list(args) + list(kwargs.values()) if isinstance(v, Frame)]
        return self.unknown_call(name, frames, {}, line)

    def opaque(self, frame: Any, what: str, line: int) -> Any:
        """A frame through code the analyser does not read (a Map function): every column
        gets an UNKNOWN edge, with a warning."""
        if not isinstance(frame, Frame):
            return frame
        self.warn(f"{what}: the function is not analysed; every column may be changed by it",
                  line)
        cols = {k: Col(tuple(ColumnEdge(e.dataset, e.field, e.type, UNKNOWN, what, line)
                             for e in c.edges), c.type) for k, c in frame.cols.items()}
        return replace(frame.with_cols(cols), through=what)

    def _edges(self, frame: Frame, path: Any, line: int, what: str = "") -> tuple[ColumnEdge, ...]:
        if not isinstance(path, str):
            self.warn(f"{what or 'column'} name is not known statically", line)
            return ()
        found = frame.lookup(path)
        if found is None:
            if not frame.unknown:
                self.warn(f"column {path!r} is not in the frame (it has: "
                          f"{', '.join(frame.cols) or 'no known columns'})", line)
            return ()
        return found

    def apply_mapping(self, frame: Any, mappings: Any, line: int) -> Any:
        if not isinstance(frame, Frame):
            return frame
        if not isinstance(mappings, (list, tuple)):
            self.warn("ApplyMapping with mappings the analyser cannot know; columns pass "
                      "through unmapped, marked uncertain (each may be renamed, cast or "
                      "dropped)", line)
            note = (f"{UNCERTAIN} ApplyMapping with mappings only known at run time may "
                    "rename, cast or drop this column")
            passed = {k: Col(tuple(replace(e, subtype=UNKNOWN, description=note, line=line)
                                   for e in c.edges), c.type) for k, c in frame.cols.items()}
            return frame.with_cols(passed, keep_aliases=True)
        cols: dict[str, Col] = {}
        for m in mappings:
            if not isinstance(m, (list, tuple)) or len(m) not in (3, 4):
                self.warn(f"ApplyMapping entry {m!r} is not (source, type, target, type)", line)
                continue
            if len(m) == 4:
                src, src_type, dst, dst_type = m
            else:
                src, dst, dst_type = m
                src_type = dst_type
            if not isinstance(dst, str):
                self.warn("ApplyMapping target name is not known statically", line)
                continue
            edges = self._edges(frame, src if isinstance(src, str) else None, line,
                                "ApplyMapping source")
            same = isinstance(src_type, str) and isinstance(dst_type, str) and \
                _same_type(src_type, dst_type)
            desc = "" if same else f"cast {src_type} to {dst_type}"
            out = derive(edges, IDENTITY if same else TRANSFORMATION, line, desc)
            if same and isinstance(src, str) and src.replace("`", "") != dst.replace("`", ""):
                out = _renamed_at(out, line, src)
            cols[dst.replace("`", "")] = Col(out, dst_type if isinstance(dst_type, str) else None)
        return frame.with_cols(cols, open=())

    def select_fields(self, frame: Any, paths: Any, line: int) -> Any:
        if not isinstance(frame, Frame):
            return frame
        if not all(isinstance(p, str) for p in _names(paths)) or \
                not isinstance(paths, (list, tuple, str)):
            return self.chosen_at_run_time(frame, "SelectFields", line)
        cols = {p: Col(self._edges(frame, p, line), None) for p in _names(paths)
                if isinstance(p, str)}
        for p in _names(paths):
            key = frame.find(p) if isinstance(p, str) else None
            if key is not None:
                cols[p] = frame.cols[key]
        return frame.with_cols(cols, open=())

    def drop_fields(self, frame: Any, paths: Any, line: int) -> Any:
        if not isinstance(frame, Frame):
            return frame
        if not all(isinstance(p, str) for p in _names(paths)) or \
                not isinstance(paths, (list, tuple, str)):
            return self.chosen_at_run_time(frame, "DropFields / drop", line)
        drop = {p.replace("`", "").lower() for p in _names(paths) if isinstance(p, str)}
        kept = frame.with_cols({k: v for k, v in frame.cols.items() if k.lower() not in drop})
        if frame.open:  # columns not all known: remember what is gone, never re-read it
            kept = replace(kept, dropped=kept.dropped | frozenset(drop))
        return kept

    def rename(self, frame: Any, old: Any, new: Any, line: int) -> Any:
        if isinstance(frame, Frame) and isinstance(old, str) and not isinstance(new, str) \
                and frame.lookup(old) is not None:
            # the new name is only known at run time: never keep the old one as if unchanged
            new = "{?" + old.replace("`", "") + "}"
            self.warn(f"rename of {old!r} to a name the analyser cannot know: the column is "
                      f"shown as {new}", line)
        if not isinstance(frame, Frame) or not isinstance(old, str) or not isinstance(new, str):
            if isinstance(frame, Frame):
                self.warn("rename with a column name the analyser cannot know", line)
            return frame
        cols: dict[str, Col] = {}
        key = frame.find(old)
        if key is None:
            edges = frame.lookup(old)
            if edges is None:
                self.warn(f"rename of column {old!r}, which is not in the frame", line)
            cols = dict(frame.cols)
            cols[new] = Col(edges or ())
            return frame.with_cols(cols, keep_aliases=True)
        for k, v in frame.cols.items():
            cols[new if k == key else k] = Col(_renamed_at(v.edges, line, k), v.type) \
                if k == key and new != k else v
        return frame.with_cols(cols, keep_aliases=True)

    def glue_join(self, left: Any, right: Any, keys1: Any, keys2: Any, line: int) -> Any:
        if not isinstance(left, Frame) or not isinstance(right, Frame):
            return self.unknown_call("Join", [left, right], {}, line)
        indirect = [ColumnEdge(e.dataset, e.field, INDIRECT, JOIN, "", line)
                    for frame, keys in ((left, keys1), (right, keys2))
                    for k in _names(keys) for e in self._edges(frame, k, line, "join key")]
        # Glue keeps both copies of a field the two frames share: frame2's is renamed
        # ``.name`` (Glue Studio scripts drop `` `.key` `` right after such a join)
        # keys of the same name are in both frames even when their columns are not known
        same = [(k1, k2) for k1, k2 in zip(_names(keys1), _names(keys2))
                if isinstance(k1, str) and isinstance(k2, str) and k1.lower() == k2.lower()]
        for k1, k2 in same:
            if left.find(k1) is None and left.open:
                left = left.with_cols({**left.cols, k1: Col(left.lookup(k1) or ())},
                                      keep_aliases=True)
            if right.find(k2) is None and right.open:
                right = right.with_cols({**right.cols, k2: Col(right.lookup(k2) or ())},
                                        keep_aliases=True)
        shared = {k.lower() for k in left.cols} & {k.lower() for k in right.cols}
        if shared:
            right = right.with_cols({f".{k}" if k.lower() in shared else k: c
                                     for k, c in right.cols.items()}, keep_aliases=True)
        merged = merge_frames([left, right])
        return merged.add_indirect(indirect)

    def glue_filter(self, frame: Any, func: Any, line: int) -> Any:
        if not isinstance(frame, Frame):
            return frame
        names = _referenced_fields(func)
        if names is None:
            self.warn("Filter function is not analysed; the columns it reads are unknown", line)
            return frame
        edges = [ColumnEdge(e.dataset, e.field, INDIRECT, FILTER, "", line)
                 for n in names for e in self._edges(frame, n, line)]
        return frame.add_indirect(edges)

    def relationalize(self, frame: Any, root: Any, line: int = 0) -> Any:
        """Glue's Relationalize: the root table with structs flattened (``a.b``) and each
        array replaced by a key, plus one table per array, ``<root>_<path>``, with ``id``
        (the key), ``index`` and the element's columns (``path.val`` or ``path.val.f``)."""
        if not isinstance(frame, Frame):
            return frame
        name = root if isinstance(root, str) else "roottable"
        frames: dict[str, Frame] = {}
        root_cols: dict[str, Col] = {}
        for column, col in frame.cols.items():
            self._flatten(frame, name, column, column, col, root_cols, frames, line)
        frames = {name: frame.with_cols(root_cols), **frames}
        return Obj("collection", data={"frames": frames, "root": name})

    def _flatten(self, frame: Frame, root: str, path: str, out: str, col: Col,
                 into: dict[str, Col], tables: dict[str, Frame], line: int) -> None:
        kind, inner = _split_type(col.type)
        if kind == "struct":
            for field, ftype in inner:
                edges = frame.lookup(f"{path}.{field}") or ()
                self._flatten(frame, root, f"{path}.{field}", f"{out}.{field}",
                              Col(edges, ftype), into, tables, line)
            return
        if kind != "array":
            into[out] = col
            return
        key = Col(derive(col.edges, TRANSFORMATION, line, f"Relationalize key of {out}"),
                  "bigint")
        into[out] = key
        child: dict[str, Col] = {"id": key, "index": Col((), "int")}
        element = inner[0][1] if inner else None
        self._flatten(frame, root, path, f"{out}.val", Col(col.edges, element), child, tables,
                      line)
        tables[f"{root}_{out}"] = frame.with_cols(child, open=())

    def studio_node(self, frame: Frame, name: str, kw: dict[str, Any], line: int) -> Any:
        """Glue Studio's visual transforms (``dyf.gs_derived(colName=…, expr=…)`` and the
        others its generated scripts call)."""
        col = kw.get("colName")
        col = col.replace("`", "") if isinstance(col, str) else col
        new = kw.get("newColName")
        target = new if isinstance(new, str) else col
        if name == "gs_derived":
            expr = kw.get("expr")
            if isinstance(expr, str):
                try:
                    return self.with_columns(frame, {col: expression_lineage(expr)}, line)
                except SqlError as exc:
                    self.warn(f"gs_derived: {exc}", line)
            return self.unknown_call(name, [frame], {}, line)
        if name == "gs_concat":
            parts = [ColExpr(((None, c),), IDENTITY, c) for c in _names(kw.get("colList"))
                     if isinstance(c, str)]
            return self.with_columns(frame, {col: combine_exprs(parts, TRANSFORMATION, col,
                                                                "concat")}, line)
        if name in ("gs_to_timestamp", "gs_format_timestamp", "gs_split", "gs_format_number",
                    "gs_hash", "gs_encrypt", "gs_decrypt"):
            source = ColExpr(((None, col),), IDENTITY, col) if isinstance(col, str) else None
            if source is None or not isinstance(target, str):
                return self.unknown_call(name, [frame], {}, line)
            return self.with_columns(frame, {target: source.then(TRANSFORMATION, target,
                                                                 name[3:])}, line)
        if name == "gs_explode":
            new_col = kw.get("newCol")
            out = new_col if isinstance(new_col, str) else col
            if not isinstance(col, str) or not isinstance(out, str):
                return self.unknown_call(name, [frame], {}, line)
            return self.with_columns(frame, {out: ColExpr(((None, col),), TRANSFORMATION, out,
                                                          "explode")}, line)
        if name == "gs_regex_extract":
            news = kw.get("newCols")
            outs = [c.strip() for c in news.split(",") if c.strip()] if isinstance(news, str) \
                else [c for c in _names(news) if isinstance(c, str)]
            if not isinstance(col, str) or not outs:
                return self.unknown_call(name, [frame], {}, line)
            return self.with_columns(frame, {c: ColExpr(((None, col),), TRANSFORMATION, c,
                                                        "regex extract") for c in outs}, line)
        if name == "gs_array_to_cols":
            source = ColExpr(((None, col),), IDENTITY, col) if isinstance(col, str) else None
            outs = [c for c in _names(kw.get("colList")) if isinstance(c, str)]
            if source is None or not outs:
                return self.unknown_call(name, [frame], {}, line)
            return self.with_columns(frame, {c: source.then(TRANSFORMATION, c, "array item")
                                             for c in outs}, line)
        if name in ("gs_now", "gs_uuid", "gs_identifier"):
            if not isinstance(col, str):
                return self.unknown_call(name, [frame], {}, line)
            return self.with_columns(frame, {col: ColExpr((), TRANSFORMATION, col, name[3:])},
                                     line)
        if name == "gs_flatten":
            sep = kw.get("separator")
            flat = self.unnest(frame, line)
            if isinstance(sep, str) and sep != ".":
                flat = flat.with_cols({k.replace(".", sep) if k not in frame.cols else k: v
                                       for k, v in flat.cols.items()}, keep_aliases=True)
            return flat
        return self.unknown_call(name, [frame], {}, line)

    def unnest(self, frame: Frame, line: int) -> Frame:
        """DynamicFrame ``unnest()``: struct columns (of known type) become ``a.b`` columns;
        arrays stay as they are."""
        cols: dict[str, Col] = {}

        def flatten(path: str, col: Col) -> None:
            kind, fields = _split_type(col.type)
            if kind != "struct":
                cols[path] = col
                return
            for field, ftype in fields:
                flatten(f"{path}.{field}", Col(frame.lookup(f"{path}.{field}") or (), ftype))

        for name, col in frame.cols.items():
            flatten(name, col)
        return frame.with_cols(cols, keep_aliases=True)

    def split_fields(self, frame: Any, paths: Any, name1: Any, name2: Any, line: int) -> Any:
        if not isinstance(frame, Frame):
            return frame
        return Obj("collection", data={"frames": {
            str(name1): self.select_fields(frame, paths, line),
            str(name2): self.drop_fields(frame, paths, line)}})

    def resolve_choice(self, frame: Frame, specs: Any, line: int, choice: Any = None) -> Frame:
        """``cast:``/``project:`` are casts; ``make_cols`` splits a choice column into
        ``<column>_<type>`` columns (``price_int``, ``price_string``) whose types only the
        data tells: the column keeps its name here (reported), and a later reference to
        ``<column>_<type>`` is traced to it."""
        cols = dict(frame.cols)
        made: list[str] = []
        if isinstance(choice, str) and choice.startswith("make_cols"):
            self.warn("ResolveChoice make_cols splits each choice column into <column>_<type> "
                      "columns whose types are only known at run time; the columns keep "
                      "their names here, and <column>_<type> names used later are traced to "
                      "them", line)
            made.append("*")
        for spec in _names(specs) if not isinstance(specs, list) else specs:
            if isinstance(spec, (list, tuple)) and len(spec) == 2 and isinstance(spec[0], str):
                key = frame.find(spec[0])
                action = spec[1] if isinstance(spec[1], str) else ""
                if key is None and frame.open and action.startswith(("cast:", "project:")):
                    key = spec[0].replace("`", "")  # a column of an input of unknown columns
                    cols[key] = Col(frame.lookup(key) or ())
                if key is not None and action.startswith(("cast:", "project:")):
                    to = action.split(":", 1)[1]
                    cols[key] = Col(derive(cols[key].edges, TRANSFORMATION, line, action), to)
                elif action == "make_cols":
                    self.warn(f"ResolveChoice make_cols on {spec[0]!r} makes "
                              f"{spec[0]}_<type> columns whose types are only known at run "
                              "time; the column keeps its name here, and "
                              f"{spec[0]}_<type> names used later are traced to it", line)
                    made.append(spec[0].replace("`", ""))
        out = frame.with_cols(cols, keep_aliases=True)
        return replace(out, made_cols=tuple(dict.fromkeys(out.made_cols + tuple(made))))
