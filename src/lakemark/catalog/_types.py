"""Hive column types (as the Glue Data Catalog stores them) parsed once, rendered for Spark.

The catalog keeps Hive type strings: ``int``, ``decimal(10,2)``, ``varchar(20)``,
``array<struct<a:int,b:string>>``, ``map<string,bigint>``. :func:`parse_type` turns one into a
small tree; :meth:`HiveType.spark` renders a Spark DDL type (field names quoted with backticks,
``varchar``/``char`` as ``string``), :meth:`HiveType.hive` the canonical Hive form and
:attr:`HiveType.kind` the comparison family the partition-predicate evaluator uses.

Pure Python: no Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["HiveType", "TypeSyntaxError", "parse_type", "quote_name", "KINDS"]

#: Comparison families: how a value of the type compares in a partition predicate.
KINDS = ("string", "number", "date", "timestamp", "boolean", "binary", "complex")

# Hive/Spark primitive name -> (canonical Hive name, Spark DDL name, kind).
_PRIMITIVES: dict[str, tuple[str, str, str]] = {
    "tinyint": ("tinyint", "tinyint", "number"),
    "byte": ("tinyint", "tinyint", "number"),
    "smallint": ("smallint", "smallint", "number"),
    "short": ("smallint", "smallint", "number"),
    "int": ("int", "int", "number"),
    "integer": ("int", "int", "number"),
    "bigint": ("bigint", "bigint", "number"),
    "long": ("bigint", "bigint", "number"),
    "float": ("float", "float", "number"),
    "real": ("float", "float", "number"),
    "double": ("double", "double", "number"),
    "double precision": ("double", "double", "number"),
    "boolean": ("boolean", "boolean", "boolean"),
    "string": ("string", "string", "string"),
    "binary": ("binary", "binary", "binary"),
    "date": ("date", "date", "date"),
    "timestamp": ("timestamp", "timestamp", "timestamp"),
    "timestamp_ntz": ("timestamp", "timestamp_ntz", "timestamp"),
    "timestamp_ltz": ("timestamp", "timestamp", "timestamp"),
}
_INTEGERS = frozenset({"tinyint", "smallint", "int", "bigint"})
_MAX_PRECISION = 38


class TypeSyntaxError(ConfigError):
    """A type string that is not a Hive type lakemark can map (the caller names the column).
    A :class:`ConfigError` (hence also a ``ValueError``), so the CLI reports it as bad input."""


@dataclass(frozen=True)
class HiveType:
    """One parsed Hive type.

    ``name`` is the canonical Hive name (``int``, ``decimal``, ``varchar``, ``array``, ``map``,
    ``struct``…); ``params`` the numeric parameters (precision/scale, length); ``children`` the
    element types (``array``: one; ``map``: key and value; ``struct``: one per field) and
    ``fields`` the struct field names.
    """

    name: str
    params: tuple[int, ...] = ()
    children: tuple[HiveType, ...] = ()
    fields: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """One of :data:`KINDS`."""
        if self.name in ("decimal",):
            return "number"
        if self.name in ("varchar", "char"):
            return "string"
        if self.name in ("array", "map", "struct"):
            return "complex"
        return _PRIMITIVES[self.name][2]

    @property
    def is_integer(self) -> bool:
        return self.name in _INTEGERS

    def spark(self) -> str:
        """The Spark DDL type (``varchar(n)``/``char(n)`` become ``string``)."""
        if self.name == "array":
            return f"array<{self.children[0].spark()}>"
        if self.name == "map":
            return f"map<{self.children[0].spark()},{self.children[1].spark()}>"
        if self.name == "struct":
            inner = ",".join(f"{quote_name(n)}:{t.spark()}"
                             for n, t in zip(self.fields, self.children))
            return f"struct<{inner}>"
        if self.name == "decimal":
            return f"decimal({self.params[0]},{self.params[1]})"
        if self.name in ("varchar", "char"):
            return "string"
        return _PRIMITIVES[self.name][1]

    def hive(self) -> str:
        """The canonical Hive type string, as the Glue Data Catalog stores it."""
        if self.name == "array":
            return f"array<{self.children[0].hive()}>"
        if self.name == "map":
            return f"map<{self.children[0].hive()},{self.children[1].hive()}>"
        if self.name == "struct":
            inner = ",".join(f"{n}:{t.hive()}" for n, t in zip(self.fields, self.children))
            return f"struct<{inner}>"
        if self.name == "decimal":
            return f"decimal({self.params[0]},{self.params[1]})"
        if self.name in ("varchar", "char"):
            return f"{self.name}({self.params[0]})"
        return _PRIMITIVES[self.name][0]


def quote_name(name: str) -> str:
    """A Spark identifier in backticks (an inner backtick is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def parse_type(text: str) -> HiveType:
    """Parse a Hive type string (case-insensitive, blanks allowed between tokens).

    Raises :class:`TypeSyntaxError` for malformed strings and for types Spark cannot hold
    (``uniontype``, ``interval``, a decimal precision above 38).
    """
    if not isinstance(text, str) or not text.strip():
        raise TypeSyntaxError("empty type")
    parser = _Parser(text)
    result = parser.type_()
    parser.blank()
    if parser.pos != len(text):
        raise TypeSyntaxError(f"unexpected {text[parser.pos:]!r} in type {text!r}")
    return result


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> TypeSyntaxError:
        return TypeSyntaxError(f"{what} at position {self.pos} of type {self.text!r}")

    def blank(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.blank()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def word(self) -> str:
        self.blank()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum()
                                             or self.text[self.pos] == "_"):
            self.pos += 1
        if start == self.pos:
            raise self.fail("expected a type name")
        return self.text[start:self.pos].lower()

    def number(self) -> int:
        self.blank()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if start == self.pos:
            raise self.fail("expected a number")
        return int(self.text[start:self.pos])

    def numbers(self) -> tuple[int, ...]:
        if self.peek() != "(":
            return ()
        self.pos += 1
        out = [self.number()]
        while self.peek() == ",":
            self.pos += 1
            out.append(self.number())
        self.expect(")")
        return tuple(out)

    def type_(self) -> HiveType:
        name = self.word()
        if name == "double":  # "double precision"
            save = self.pos
            self.blank()
            if self.text[self.pos:self.pos + 9].lower() == "precision":
                self.pos += 9
            else:
                self.pos = save
        if name == "array":
            self.expect("<")
            element = self.type_()
            self.expect(">")
            return HiveType("array", children=(element,))
        if name == "map":
            self.expect("<")
            key = self.type_()
            self.expect(",")
            value = self.type_()
            self.expect(">")
            return HiveType("map", children=(key, value))
        if name == "struct":
            return self.struct()
        if name in ("uniontype", "interval", "void", "variant"):
            raise TypeSyntaxError(f"type {name!r} has no Spark equivalent (in {self.text!r})")
        params = self.numbers()
        if name in ("decimal", "numeric", "dec"):
            if len(params) > 2:
                raise self.fail("decimal takes (precision[, scale])")
            precision = params[0] if params else 10
            scale = params[1] if len(params) > 1 else 0
            if not 1 <= precision <= _MAX_PRECISION or scale > precision:
                raise TypeSyntaxError(
                    f"decimal({precision},{scale}) is out of range (precision 1..38, "
                    f"scale <= precision) in {self.text!r}"
                )
            return HiveType("decimal", (precision, scale))
        if name in ("varchar", "char"):
            if len(params) != 1:
                raise self.fail(f"{name} takes one length")
            return HiveType(name, params)
        if name not in _PRIMITIVES:
            raise TypeSyntaxError(f"unknown type {name!r} in {self.text!r}")
        if params:
            raise self.fail(f"type {name!r} takes no parameters")
        if name == "timestamp_ntz":  # Spark's; the catalog's Hive form is plain timestamp
            return HiveType(name)
        return HiveType(_PRIMITIVES[name][0])

    def struct(self) -> HiveType:
        self.expect("<")
        names: list[str] = []
        types: list[HiveType] = []
        if self.peek() == ">":
            self.pos += 1
            return HiveType("struct")
        while True:
            names.append(self.field_name())
            self.expect(":")
            types.append(self.type_())
            nxt = self.peek()
            if nxt == ",":
                self.pos += 1
                continue
            if nxt == ">":
                self.pos += 1
                break
            raise self.fail("expected ',' or '>' in struct")
        return HiveType("struct", children=tuple(types), fields=tuple(names))

    def field_name(self) -> str:
        """A struct field name: backtick-quoted, or everything up to the next ``:``."""
        if self.peek() == "`":
            self.pos += 1
            out: list[str] = []
            while True:
                end = self.text.find("`", self.pos)
                if end < 0:
                    raise self.fail("unclosed '`'")
                out.append(self.text[self.pos:end])
                self.pos = end + 1
                if self.text.startswith("`", self.pos):  # doubled backtick
                    out.append("`")
                    self.pos += 1
                    continue
                return "".join(out)
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ":,<>":
            self.pos += 1
        name = self.text[start:self.pos].strip()
        if not name:
            raise self.fail("expected a struct field name")
        return name
