"""Schema hints on columns and nested fields (Auto Loader's ``schemaHints``): pure Python.

A hints text is a comma-separated list of ``path type`` entries, as Databricks Auto Loader
takes them: ``id bigint, payload.amount decimal(12,2), tags.element string, m.key string,
m.value.n int, `a.b`.c int``. A path is a column name, then ``.`` and a field name for each
level down; ``element`` names an array's elements and ``key`` / ``value`` a map's keys and
values; a name with dots, spaces or other characters is backquoted (a backquote inside one is
doubled). An optional ``:`` may follow the path (``a: int``), as Spark's DDL allows.

:func:`parse_hints` splits the text (syntax only; the type texts are Spark's to parse, which
the source layer does, see ``sources/_schema_track.py``); :func:`resolve_hints` pairs each
entry with its parsed type and refuses conflicting hints; :func:`hinted_type` gives a column's
type with its hints applied (creating the structs, arrays and maps a path needs when the
column or a field on the way is absent; a map's keys stay strings, as every tracked format
writes them). Every error is a ConfigError naming the hint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .schema_field import Field, name_key

__all__ = ["Hint", "HintText", "as_hint", "hinted_type", "parse_hints", "resolve_hints"]

_BARE = re.compile(r"\w+")
_OPEN = {"<": ">", "(": ")"}


@dataclass(frozen=True)
class HintText:
    """One entry of a hints text as written: its path's names (unquoted), which of them were
    backquoted, and the text of its type."""

    path: tuple[str, ...]
    quoted: tuple[bool, ...]
    type_text: str
    text: str  # the entry as written, for errors


def _entries(text: str) -> list[str]:
    """The entries of ``text``: split at commas outside ``<>``, ``()``, quotes and backquotes."""
    out: list[str] = []
    depth: list[str] = []
    quote: str | None = None
    start = 0
    for i, ch in enumerate(text):
        if quote is not None:
            if ch == quote:
                quote = None  # a doubled quote closes then reopens: same outcome
        elif ch in "`'\"":
            quote = ch
        elif ch in _OPEN:
            depth.append(_OPEN[ch])
        elif depth and ch == depth[-1]:
            depth.pop()
        elif ch == "," and not depth:
            out.append(text[start:i])
            start = i + 1
    if quote is not None or depth:
        raise ConfigError(f"schema hints {text!r}: unbalanced "
                          f"{'quote' if quote is not None else 'brackets'}")
    out.append(text[start:])
    return out


def _entry(entry: str, text: str) -> HintText:
    """One stripped entry parsed into its path and type text."""
    names: list[str] = []
    quoted: list[bool] = []
    i = 0
    while True:
        if entry.startswith("`", i):
            end = i + 1
            name = []
            while True:
                close = entry.find("`", end)
                if close < 0:
                    raise ConfigError(f"schema hint {entry!r}: unclosed backquote")
                name.append(entry[end:close])
                if entry.startswith("`", close + 1):  # a doubled backquote
                    name.append("`")
                    end = close + 2
                    continue
                i = close + 1
                break
            names.append("".join(name))
            quoted.append(True)
        else:
            bare = _BARE.match(entry, i)
            if bare is None:
                raise ConfigError(
                    f"schema hint {entry!r}: expected a column name at {entry[i:]!r} "
                    f"(backquote names with dots, spaces or other characters: `my col`) in "
                    f"schema hints {text!r}")
            names.append(bare.group())
            quoted.append(False)
            i = bare.end()
        if not entry.startswith(".", i):
            break
        i += 1
    rest = entry[i:]
    if rest and not (rest[0].isspace() or rest[0] == ":"):
        raise ConfigError(f"schema hint {entry!r}: expected a space and a type after "
                          f"the name, not {rest!r}")
    type_text = rest.strip()
    if type_text.startswith(":"):
        type_text = type_text[1:].strip()
    if not type_text:
        raise ConfigError(f"schema hint {entry!r}: no type (write 'name type', such as "
                          f"'id bigint' or 'payload.amount decimal(12,2)')")
    if any(not n.strip() for n in names):
        raise ConfigError(f"schema hint {entry!r}: an empty name in its path")
    return HintText(tuple(names), tuple(quoted), type_text, entry)


def parse_hints(text: str) -> list[HintText]:
    """The entries of a hints text, in order; ConfigError naming the hint that is malformed."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"schema hints must be a non-empty list such as "
                          f"'id bigint, ts timestamp', not {text!r}")
    out = []
    for raw in _entries(text):
        entry = raw.strip()
        if not entry:
            raise ConfigError(f"schema hints {text!r}: an empty entry (a stray comma?)")
        out.append(_entry(entry, text))
    return out


@dataclass(frozen=True)
class Hint(Field):
    """A resolved hint: a :class:`Field` (the column it is in and the type it gives, in
    Spark's JSON form) with the path inside that column (empty: the column itself; ``element``,
    ``key`` and ``value`` step into arrays and maps). A plain Field given as a hint is a hint
    on its column."""

    path: tuple[str, ...] = ()
    quoted: tuple[bool, ...] = ()  # per name of ``path``: backquoted (a struct field)
    text: str = ""  # the hint as written, for errors

    def label(self) -> str:
        """The hint as written (or as it would be)."""
        return self.text or " ".join([".".join((self.name, *self.path)), str(self.type)])


def as_hint(field: Field) -> Hint:
    """``field`` as a hint (a plain Field hints its whole column)."""
    return field if isinstance(field, Hint) else Hint(field.name, field.type)


def resolve_hints(entries: Sequence[HintText], types: Sequence[Any]) -> list[Hint]:
    """The hints of ``entries`` with their parsed ``types`` (Spark's JSON form, one per entry).

    A path given twice (up to case) with the same type counts once; with another type, or a
    path inside another hint's path (``s struct<a: int>`` and ``s.b string``), the hints
    conflict: ConfigError naming both.
    """
    out: list[Hint] = []
    seen: dict[tuple[str, ...], Hint] = {}
    for entry, type_ in zip(entries, types, strict=True):
        hint = Hint(entry.path[0], type_, entry.path[1:], entry.quoted[1:], entry.text)
        key = tuple(name_key(n) for n in entry.path)
        if key in seen:
            if seen[key].type != type_:
                raise ConfigError(f"schema hints {seen[key].label()!r} and {hint.label()!r} "
                                  f"conflict: one path, two types")
            continue
        for other, earlier in seen.items():
            short, long_ = sorted((other, key), key=len)
            if long_[:len(short)] == short:
                raise ConfigError(
                    f"schema hints {earlier.label()!r} and {hint.label()!r} conflict: one "
                    f"is inside the other (hint the whole type, or its fields one by one)")
        seen[key] = hint
        out.append(hint)
    return out


def _kind(type_: Any) -> str | None:
    return type_.get("type") if isinstance(type_, dict) else None


def _describe(type_: Any) -> str:
    kind = _kind(type_)
    return kind if kind is not None else str(type_)


def _create(name: str, quoted: bool, inner: Any) -> Any:
    """An absent level of a path made up: an array for ``element``, a map for ``key`` /
    ``value`` (its other side ``string``), else a struct holding the one field."""
    word = name.lower() if not quoted else None
    if word == "element":
        return {"type": "array", "elementType": inner, "containsNull": True}
    if word == "key":
        return {"type": "map", "keyType": inner, "valueType": "string",
                "valueContainsNull": True}
    if word == "value":
        return {"type": "map", "keyType": "string", "valueType": inner,
                "valueContainsNull": True}
    return {"type": "struct", "fields": [{"name": name, "type": inner, "nullable": True,
                                          "metadata": {}}]}


def _apply(type_: Any, hint: Hint, depth: int) -> Any:
    """``type_`` (None: absent) with ``hint`` applied from ``hint.path[depth]`` down."""
    if depth == len(hint.path):
        return hint.type
    name, quoted = hint.path[depth], hint.quoted[depth]
    if type_ is None:
        return _create(name, quoted, _apply(None, hint, depth + 1))
    where = ".".join((hint.name, *hint.path[:depth]))
    kind = _kind(type_)
    if kind == "struct":
        fields = [dict(f) for f in type_.get("fields", [])]
        match = next((f for f in fields if f["name"] == name), None) or next(
            (f for f in fields if name_key(f["name"]) == name_key(name)), None)
        if match is None:
            fields.append({"name": name, "type": _apply(None, hint, depth + 1),
                           "nullable": True, "metadata": {}})
        else:
            match["type"] = _apply(match["type"], hint, depth + 1)
        return {**type_, "fields": fields}
    word = name.lower()
    if kind == "array":
        if word != "element":
            raise ConfigError(f"schema hint {hint.label()!r}: {where} is an array; name its "
                              f"elements {where}.element, not {where}.{name}")
        return {**type_, "elementType": _apply(type_["elementType"], hint, depth + 1)}
    if kind == "map":
        if word not in ("key", "value"):
            raise ConfigError(f"schema hint {hint.label()!r}: {where} is a map; name its "
                              f"keys {where}.key and its values {where}.value, not "
                              f"{where}.{name}")
        side = "keyType" if word == "key" else "valueType"
        return {**type_, side: _apply(type_[side], hint, depth + 1)}
    raise ConfigError(f"schema hint {hint.label()!r}: {where} is {_describe(type_)}, not a "
                      f"struct, array or map, so it has no field {name!r}")


def hinted_type(type_: Any, hints: Sequence[Hint]) -> Any:
    """The type of one column (``type_``, None: absent or unknown) with ``hints`` (all of
    that column's) applied in order: a whole-column hint replaces it, a nested one replaces
    or adds the field it names. ConfigError naming the hint whose path cannot go through."""
    for hint in hints:
        type_ = _apply(type_, hint, 0)
        if _keyed_by_other_than_text(type_):
            raise ConfigError(f"schema hint {hint.label()!r}: map keys are text in JSON, XML "
                              f"and Avro files, so a map's key type must be string")
    return type_


def _keyed_by_other_than_text(type_: Any) -> bool:
    """Whether ``type_`` holds a map whose keys are not strings (no tracked format has such)."""
    kind = _kind(type_)
    if kind == "map":
        return (type_["keyType"] != "string" or _keyed_by_other_than_text(type_["valueType"]))
    if kind == "array":
        return _keyed_by_other_than_text(type_["elementType"])
    if kind == "struct":
        return any(_keyed_by_other_than_text(f["type"]) for f in type_.get("fields", []))
    return False
