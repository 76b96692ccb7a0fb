"""The abstract values the analyser tracks while it walks a script.

A :class:`Frame` stands for a DynamicFrame or DataFrame: for each column, the input columns
it comes from (as :class:`ColumnEdge` objects), plus the dataset-level (indirect) inputs
gathered so far (filters, join keys, group keys). A frame whose schema is not fully known
(``spark.read.json(path)`` without a schema) is *open*: a column it does not list is taken to
come, unchanged, from the same-named column of its open inputs.

Everything here is immutable; each transformation builds a new frame.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ._graph import (
    AGGREGATION,
    DIRECT,
    IDENTITY,
    TRANSFORMATION,
    UNKNOWN,
    ColumnEdge,
    DatasetRef,
)

#: the start of the description of an edge the analyser is not sure of (a column of one of
#: several inputs whose columns are not known)
UNCERTAIN = "uncertain:"
#: the start of the description of an uncertain edge assumed from the catalog's columns of
#: the table a frame of unknown columns is written into
ASSUMED = f"{UNCERTAIN} assumed from the declared columns of the table written"

__all__ = [
    "ASSUMED",
    "leaf_name",
    "UNCERTAIN",
    "Col",
    "ColExpr",
    "Frame",
    "Unknown",
    "combine",
    "derive",
]


def combine(first: str, then: str) -> str:
    """The subtype of an edge after a transformation of subtype ``then`` follows ``first``."""
    if UNKNOWN in (first, then):
        return UNKNOWN
    if AGGREGATION in (first, then):
        return AGGREGATION
    if first == IDENTITY and then == IDENTITY:
        return IDENTITY
    return TRANSFORMATION


def derive(edges: Iterable[ColumnEdge], subtype: str, line: int, description: str = "",
           ) -> tuple[ColumnEdge, ...]:
    """``edges`` carried through one more direct transformation of kind ``subtype``."""
    out: dict[tuple[DatasetRef, str], ColumnEdge] = {}
    for e in edges:
        if e.type != DIRECT:
            continue
        sub = combine(e.subtype, subtype)
        desc = description or e.description
        if e.description.startswith(UNCERTAIN) and not desc.startswith(UNCERTAIN):
            desc = f"{e.description}; {desc}"
        new = e if sub == e.subtype and subtype == IDENTITY else ColumnEdge(
            e.dataset, e.field, DIRECT, sub, desc, line)
        key = (new.dataset, new.field)
        old = out.get(key)
        if old is None or _rank(new.subtype) > _rank(old.subtype):
            out[key] = new
    return tuple(out.values())


def _rank(subtype: str) -> int:
    return {IDENTITY: 0, TRANSFORMATION: 1, AGGREGATION: 2, UNKNOWN: 3}.get(subtype, 1)


@dataclass(frozen=True)
class Unknown:
    """A value the analyser cannot know (an unknown function's result, an env variable…)."""

    reason: str
    line: int = 0


@dataclass(frozen=True)
class DynStr:
    """A string with parts only known at run time, shown as ``{?name}`` in ``text``."""

    text: str
    reason: str


#: the type of ``explode(x)``: the element type of array ``x`` (resolved against the frame)
ELEMENT = "@element"


@dataclass(frozen=True)
class Col:
    """One column of a frame: where it comes from, and its type when known.

    ``element``: for a column holding the elements of an array column (``explode(items)``), the
    edges of that array column, so that a field of the element (``item.sku``) is traced to the
    array's field (``items.sku``) as the SQL ``LATERAL VIEW`` form of the same thing is.
    """

    edges: tuple[ColumnEdge, ...]
    type: str | None = None
    element: tuple[ColumnEdge, ...] = ()
    #: for a struct the script makes (``F.struct(x.alias("a"), y)``): each field's edges, so
    #: that ``s.a`` is traced to ``x`` alone, not to every field of the struct
    fields: tuple[tuple[str, tuple[ColumnEdge, ...]], ...] = ()


def leaf_name(ref: str) -> str:
    """The name Spark gives a column reference: its last dotted part (``o.id`` → ``id``);
    a backquoted part is one name (`` `.id` `` → ``.id``, the copy a Glue ``Join`` makes)."""
    parts = re.findall(r"`([^`]*)`|([^.`]+)", ref)
    return (parts[-1][0] or parts[-1][1]) if parts else ref


#: ``<column>_<type>`` as ResolveChoice ``make_cols`` names the columns it makes
_MADE_COL = re.compile(r"^(.+)_(int|long|bigint|short|byte|string|double|float|boolean|"
                       r"decimal|date|timestamp|binary|struct|array|map|null)$", re.IGNORECASE)


@dataclass(frozen=True)
class Frame:
    """A DynamicFrame or DataFrame (see the module docstring)."""

    cols: Mapping[str, Col] = field(default_factory=dict)
    indirect: frozenset[ColumnEdge] = frozenset()
    open: tuple[DatasetRef, ...] = ()
    aliases: Mapping[str, Frame] = field(default_factory=dict)
    dynamic: bool = True
    #: the frame could not be traced at all (its origin is reported as a warning)
    unknown: str = ""
    #: the line reading the open inputs (for the edges of columns taken from them)
    line: int = 0
    #: what the frame went through that the analyser does not read (an unknown function, a
    #: Map): columns taken from its open inputs get UNKNOWN edges saying so
    through: str = ""
    #: columns ResolveChoice ``make_cols`` split into ``<name>_<type>`` columns (``*``: all);
    #: the types are only known at run time, so ``price_int`` is looked up as ``price``
    made_cols: tuple[str, ...] = ()
    #: names (lowercase) dropped (DropFields, drop) from a frame whose columns are not all
    #: known: a later reference to one is not taken from the open inputs — it is gone
    dropped: frozenset[str] = frozenset()
    #: columns of a join's right frame whose names the left frame has too: Spark keeps both,
    #: a name gives the left one, ``drop(right_df.c)`` removes the right one and
    #: ``drop(left_df.c)`` leaves it (only the join's own result has them)
    shadowed: Mapping[str, Col] = field(default_factory=dict)

    # -- lookups ----------------------------------------------------------------------------
    def find(self, name: str) -> str | None:
        """The listed column called ``name`` (Spark compares names ignoring case; a
        backquoted name, `` `.id` ``, is the name inside)."""
        name = name.replace("`", "")
        if name in self.cols:
            return name
        lowered = name.lower()
        for key in self.cols:
            if key.lower() == lowered:
                return key
        return None

    def lookup(self, path: str) -> tuple[ColumnEdge, ...] | None:
        """The edges of column ``path`` (``a``, ``a.b`` for a nested field, ``alias.a``);
        None when the frame has no such column and is not open."""
        path = path.replace("`", "")
        key = self.find(path)
        if key is not None:
            return self.cols[key].edges
        head, dot, rest = path.partition(".")
        if dot:
            alias = next((a for a in self.aliases if a.lower() == head.lower()), None)
            if alias is not None:
                return self.aliases[alias].lookup(rest)
            key = self.find(head)
            if key is not None:
                col = self.cols[key]
                first, _, deeper = rest.partition(".")
                made = next((e for n, e in col.fields if n.lower() == first.lower()), None)
                if made is not None:  # a field of a struct the script made: its own inputs
                    return tuple(replace(e, field=f"{e.field}.{deeper}")
                                 if deeper and e.subtype == IDENTITY else e for e in made)
                if col.element:  # a field of an exploded element: the array's field
                    return tuple(replace(e, field=f"{e.field}.{rest}") if e.subtype == IDENTITY
                                 else e for e in col.element)
                return tuple(replace(e, field=f"{e.field}.{rest}") if e.subtype == IDENTITY
                             else e for e in col.edges)
        made = self._made_col(path)
        if made is not None:
            return made
        if head.lower() in self.dropped or path.lower() in self.dropped:
            return None  # dropped: never taken from the open inputs again
        subtype = UNKNOWN if self.through else IDENTITY
        if len(self.open) > 1:
            either = ", ".join(ds.key for ds in self.open)
            note = f"{UNCERTAIN} in one of {either}, not all (their columns are not known)"
            return tuple(ColumnEdge(ds, path, DIRECT, subtype, "; ".join(
                d for d in (note, self.through) if d), line=self.line) for ds in self.open)
        if self.open:
            return tuple(ColumnEdge(ds, path, DIRECT, subtype, self.through, line=self.line)
                         for ds in self.open)
        return None

    def _made_col(self, path: str) -> tuple[ColumnEdge, ...] | None:
        """``price_int`` of a frame whose ``price`` went through ``make_cols``: its edges."""
        if not self.made_cols:
            return None
        match = _MADE_COL.match(path)
        if match is None:
            return None
        base = match.group(1)
        if "*" not in self.made_cols and base.lower() not in \
                {m.lower() for m in self.made_cols}:
            return None
        return replace(self, made_cols=()).lookup(base)

    def names(self) -> list[str]:
        return list(self.cols)

    # -- building ---------------------------------------------------------------------------
    def with_cols(self, cols: Mapping[str, Col], *, open: tuple[DatasetRef, ...] | None = None,
                  indirect: Iterable[ColumnEdge] = (), keep_aliases: bool = False) -> Frame:
        return Frame(dict(cols), self.indirect | frozenset(indirect),
                     self.open if open is None else open,
                     dict(self.aliases) if keep_aliases else {}, self.dynamic, self.unknown,
                     self.line, self.through, self.made_cols,
                     self.dropped if (self.open if open is None else open) else frozenset())

    def add_indirect(self, edges: Iterable[ColumnEdge]) -> Frame:
        return replace(self, indirect=self.indirect | frozenset(edges))

    def as_kind(self, dynamic: bool) -> Frame:
        return replace(self, dynamic=dynamic)


def merge_frames(frames: list[Frame]) -> Frame:
    """One frame standing for any of ``frames`` (an ``if``/``else``, a union by name)."""
    cols: dict[str, Col] = {}
    for f in frames:
        for name, col in f.cols.items():
            key = next((k for k in cols if k.lower() == name.lower()), name)
            old = cols.get(key)
            if old is None:
                cols[key] = col
            else:
                merged = tuple(dict.fromkeys(old.edges + col.edges))
                cols[key] = Col(merged, old.type or col.type)
    indirect: frozenset[ColumnEdge] = frozenset().union(*(f.indirect for f in frames))
    opened = tuple(dict.fromkeys(ds for f in frames for ds in f.open))
    unknown = "; ".join(f.unknown for f in frames if f.unknown)
    through = "; ".join(dict.fromkeys(f.through for f in frames if f.through))
    made = tuple(dict.fromkeys(m for f in frames for m in f.made_cols))
    # a name is gone only when every open frame dropped it (else one of them still has it)
    open_frames = [f for f in frames if f.open]
    dropped = frozenset.intersection(*(f.dropped for f in open_frames)) if open_frames \
        else frozenset()
    return Frame(cols, indirect, opened, {}, frames[0].dynamic if frames else True, unknown,
                 max((f.line for f in frames), default=0), through, made, dropped)


@dataclass(frozen=True)
class ColExpr:
    """A column expression (``F.col("a")``, ``df["a"] + 1``, ``F.sum("x").alias("t")``).

    ``refs`` are the columns it reads: ``(frame or None, name)`` — None means "the frame the
    expression is used on". ``subtype`` is IDENTITY for a bare column reference. ``names``:
    the columns of a generator given several names (``posexplode(a).alias("pos", "item")``).
    ``window``: the keys (``partitionBy`` / ``orderBy``) of the window it is computed ``over``.
    """

    refs: tuple[tuple[Frame | None, str], ...]
    subtype: str = IDENTITY
    name: str | None = None
    description: str = ""
    star: bool = False
    type: str | None = None
    names: tuple[str, ...] = ()
    window: tuple[Any, ...] = ()
    #: the named fields of a struct it makes (``F.struct(...)``), each with its expression
    fields: tuple[tuple[str, ColExpr], ...] = ()

    def then(self, subtype: str, name: str | None = None, description: str = "") -> ColExpr:
        return ColExpr(self.refs, combine(self.subtype, subtype),
                       name if name is not None else self.name,
                       description or self.description, self.star, None)

    def renamed(self, name: str) -> ColExpr:
        return replace(self, name=name)


def combine_exprs(exprs: Iterable[ColExpr], subtype: str, name: str | None,
                  description: str = "") -> ColExpr:
    """One expression reading all columns of ``exprs`` (a function of several arguments)."""
    refs: list[tuple[Frame | None, str]] = []
    sub = IDENTITY
    for e in exprs:
        refs.extend(e.refs)
        sub = combine(sub, e.subtype)
    return ColExpr(tuple(refs), combine(sub, subtype), name,
                   description or "", False, None)
