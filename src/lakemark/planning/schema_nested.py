"""Fields added inside a tracked column (``address {city}`` arriving as ``address {city, zip}``):
pure Python, no Spark.

A tracked column whose type holds structs — a struct, an array of structs, a map whose values
are structs, at any depth — can meet a record with a field its type does not name. Such a
*nested addition* is found by the readers (the key scan of a JSON run, the records of an XML
run, the writer schemas of an Avro run) as a *path*: the column, then one name per level down,
``element`` for an array's elements and ``value`` for a map's values (Auto Loader's spelling,
as schema hints take it): ``("address", "zip")``, ``("items", "element", "sku")``,
``("m", "value", "n")``.

Types are Spark's JSON form (``"long"``, ``{"type": "struct", "fields": [...]}``).
:func:`additions` lists what one type adds to another, :func:`with_fields` puts additions
into a type, :func:`with_paths` turns the paths a reader saw into the type that holds them
(typed from an observed type where it has them, ``string`` otherwise: Spark's JSON reader
keeps a value of any shape in a string field as its text, so nothing is lost), and
:func:`path_text` spells a path for people (``address.zip``; a name holding a dot, a space or
a backquote is backquoted, as in schema hints).

A field whose name differs from a known one only in case or surrounding whitespace is not an
addition (a table cannot hold both): :func:`additions` leaves it out, and the readers rescue
the values holding it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from .schema_field import name_key

__all__ = ["Path", "additions", "holds_structs", "path_text", "with_fields", "with_paths"]

#: A field inside a column: the column's name, then one name per level down.
Path = tuple[str, ...]

_BARE = re.compile(r"[A-Za-z0-9_:$@#-]+")


def path_text(path: Sequence[str]) -> str:
    """``path`` as people read it: ``address.zip``, ``items.element.sku``, `` `a.b`.c ``."""
    return ".".join(p if _BARE.fullmatch(p) else "`" + p.replace("`", "``") + "`"
                    for p in path)


def _kind(type_: Any) -> str | None:
    return type_.get("type") if isinstance(type_, dict) else None


def holds_structs(type_: Any) -> bool:
    """Whether ``type_`` has a struct anywhere (directly, as array elements or map values)."""
    kind = _kind(type_)
    if kind == "struct":
        return True
    if kind == "array":
        return holds_structs(type_.get("elementType"))
    if kind == "map":
        return holds_structs(type_.get("valueType"))
    return False


def additions(old: Any, new: Any, prefix: Path = ()) -> list[tuple[Path, Any]]:
    """The fields ``new`` has and ``old`` does not, at any depth, as (path below ``prefix``,
    type); a field added whole is listed once (not its own fields). Names are compared
    exactly; a name that differs from one of ``old`` only in case or whitespace is left out
    (see the module doc). Where the two types are not both structs (both arrays, both maps)
    nothing is added: that is a type change, not an addition."""
    kind = _kind(old)
    if kind is None or kind != _kind(new):
        return []
    if kind == "array":
        return additions(old.get("elementType"), new.get("elementType"), (*prefix, "element"))
    if kind == "map":
        return additions(old.get("valueType"), new.get("valueType"), (*prefix, "value"))
    if kind != "struct":
        return []
    have = {f["name"]: f for f in old.get("fields", [])}
    keys = {name_key(n) for n in have}
    out: list[tuple[Path, Any]] = []
    for f in new.get("fields", []):
        name = f["name"]
        if name in have:
            out += additions(have[name]["type"], f["type"], (*prefix, name))
        elif name_key(name) not in keys and name.strip():
            out.append(((*prefix, name), f["type"]))
    return out


def _field(name: str, type_: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "nullable": True, "metadata": {}}


def with_fields(type_: Any, added: Iterable[tuple[Path, Any]]) -> Any:
    """``type_`` with each (path, type) of ``added`` put in (paths below the column: the
    first name is a field of ``type_``'s struct, or ``element`` / ``value``). A path that
    cannot go through ``type_`` (no struct on the way) or that is already there is skipped."""
    for path, inner in added:
        type_ = _put(type_, tuple(path), inner)
    return type_


def _put(type_: Any, path: Path, inner: Any) -> Any:
    kind = _kind(type_)
    if not path:
        return type_
    head, rest = path[0], path[1:]
    if kind == "array" and head == "element":
        return {**type_, "elementType": _put(type_.get("elementType"), rest, inner)}
    if kind == "map" and head == "value":
        return {**type_, "valueType": _put(type_.get("valueType"), rest, inner)}
    if kind != "struct":
        return type_
    fields = list(type_.get("fields", []))
    for i, f in enumerate(fields):
        if f["name"] == head:
            if rest:
                fields[i] = {**f, "type": _put(f["type"], rest, inner)}
            return {**type_, "fields": fields}
    if rest:
        return type_  # the struct on the way is not there
    return {**type_, "fields": [*fields, _field(head, inner)]}


def _at(type_: Any, path: Path) -> Any:
    """The type at ``path`` inside ``type_`` (None: not there)."""
    for head in path:
        kind = _kind(type_)
        if kind == "array" and head == "element":
            type_ = type_.get("elementType")
        elif kind == "map" and head == "value":
            type_ = type_.get("valueType")
        elif kind == "struct":
            found = [f for f in type_.get("fields", []) if f["name"] == head]
            if not found:
                return None
            type_ = found[0]["type"]
        else:
            return None
    return type_


def _seen_at(type_: Any, path: Path) -> Any:
    """The type at ``path`` in an inferred type, where a map's ``value`` may be a struct's
    fields (JSON inference makes every object a struct, also one that a map column reads):
    the first field holding the rest of the path."""
    if not path:
        return type_
    head, rest = path[0], path[1:]
    direct = _at(type_, (head,))
    if direct is not None:
        found = _seen_at(direct, rest)
        if found is not None:
            return found
    if head == "value" and _kind(type_) == "struct":
        for f in type_.get("fields", []):
            found = _seen_at(f["type"], rest)
            if found is not None:
                return found
    return None


def with_paths(type_: Any, paths: Iterable[Path], observed: Any = None) -> Any:
    """``type_`` (a tracked column's) holding every path of ``paths`` (below the column), each
    typed as ``observed`` (the column's type as inference saw it) has it, else ``string``.
    Shorter paths go first, so a field added whole carries its own fields."""
    for path in sorted(dict.fromkeys(map(tuple, paths)), key=len):
        if _at(type_, path) is not None:
            continue
        found = _seen_at(observed, path) if observed is not None else None
        type_ = _put(type_, path, found if found is not None else "string")
    return type_
