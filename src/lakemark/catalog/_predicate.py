"""Partition predicates (Glue's ``push_down_predicate`` / ``catalogPartitionPredicate``),
evaluated in pure Python over partition values: nothing is executed, no Spark.

The expression is parsed with ``sqlglot`` (Spark dialect, as Glue evaluates these predicates
with Spark SQL over the partition columns) into a small tree that is checked once and then
evaluated per partition.

Supported: ``=``, ``<>``/``!=``, ``<``, ``<=``, ``>``, ``>=``, ``<=>``, ``AND``, ``OR``, ``NOT``,
``[NOT] IN (…)``, ``[NOT] BETWEEN … AND …``, ``[NOT] LIKE`` (with ``ESCAPE``), ``ILIKE``,
``RLIKE``, ``IS [NOT] NULL``, parentheses, string/numeric/boolean/``NULL`` literals, typed
literals (``DATE '2024-01-01'``), ``CAST(… AS type)`` and ``concat``/``||``. Anything else
(other functions, arithmetic, sub-queries) raises :class:`UnsupportedError` naming it; a column
that is not a partition key raises :class:`ConfigError` naming it.

Types follow the partition key's declared type, as Spark does with the catalog's types:

* a key declared ``int``/``bigint``/``decimal``/… compares numerically (``month > 9``,
  ``month = '09'``: the literal is cast);
* a ``string`` key compares as text against a string literal (``year >= '2024'``) and
  numerically against a number (``month > 9`` with ``month`` a string casts the value,
  as Spark does); a value that is not a number is then unknown (not selected);
* ``date``/``timestamp`` keys compare as dates/times (string literals are cast).

SQL's three-valued logic applies: a null (``__HIVE_DEFAULT_PARTITION__``) or an uncastable
value makes a comparison unknown, and only partitions whose predicate is *true* are kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, EnvironmentProblem, UnsupportedError
from ._model import HIVE_DEFAULT_PARTITION, CatalogTable, Column, Partition
from ._types import HiveType, TypeSyntaxError, parse_type

if TYPE_CHECKING:
    from sqlglot import exp

__all__ = ["PartitionPredicate", "compile_predicate", "filter_partitions"]

# A value during evaluation: (kind, python value), or None for SQL NULL.
Value = tuple[str, Any] | None
Row = Sequence[str | None]

SUPPORTED = ("comparisons (= <> != < <= > >= <=>), AND, OR, NOT, IN, BETWEEN, LIKE, ILIKE, "
             "RLIKE, IS [NOT] NULL, CAST, concat and literals")

# --------------------------------------------------------------------------- conversions

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?")
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(?:Z|[+-]\d{2}:?\d{2})?"
)
_TRUE = frozenset({"t", "true", "y", "yes", "1"})
_FALSE = frozenset({"f", "false", "n", "no", "0"})


def _to_number(text: str, integer: bool = False) -> Decimal | None:
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the regex only lets numbers through
        return None
    return Decimal(int(number)) if integer else number


def _to_date(text: str) -> date | None:
    match = _DATE.fullmatch(text.strip())
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2) or 1), int(match.group(3) or 1))
    except ValueError:
        return None


def _to_timestamp(text: str) -> datetime | None:
    match = _TIMESTAMP.fullmatch(text.strip())
    if not match:
        day = _to_date(text)
        return datetime(day.year, day.month, day.day) if day and "-" in text else None
    g = match.groups()
    fraction = (g[6] or "0")[:6].ljust(6, "0")
    try:
        return datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3] or 0), int(g[4] or 0),
                        int(g[5] or 0), int(fraction))
    except ValueError:
        return None


def _to_bool(text: str) -> bool | None:
    lowered = text.strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def _from_string(text: str, kind: str, integer: bool = False) -> Value:
    """A string cast to ``kind`` (Spark's non-ANSI cast: failure is NULL)."""
    converted: Any
    if kind == "string":
        return ("string", text)
    if kind == "number":
        converted = _to_number(text, integer)
    elif kind == "date":
        converted = _to_date(text)
    elif kind == "timestamp":
        converted = _to_timestamp(text)
    elif kind == "boolean":
        converted = _to_bool(text)
    else:
        return ("string", text)
    return None if converted is None else (kind, converted)


def _to_string(value: Value) -> str | None:
    if value is None:
        return None
    kind, v = value
    if kind == "string":
        return str(v)
    if kind == "number":
        number: Decimal = v
        if number == number.to_integral_value():
            return str(int(number))
        return format(number.normalize(), "f")
    if kind == "boolean":
        return "true" if v else "false"
    if kind == "timestamp":
        stamp: datetime = v
        text = stamp.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{stamp.microsecond:06d}".rstrip("0") if stamp.microsecond else "")
    return str(v)  # date: ISO


def _cast(value: Value, kind: str, integer: bool = False) -> Value:
    if value is None:
        return None
    if value[0] == kind:
        if kind == "number" and integer:
            return (kind, Decimal(int(value[1])))
        return value
    if kind == "string":
        text = _to_string(value)
        return None if text is None else ("string", text)
    if value[0] == "date" and kind == "timestamp":
        d: date = value[1]
        return ("timestamp", datetime(d.year, d.month, d.day))
    if value[0] == "timestamp" and kind == "date":
        return ("date", value[1].date())
    if value[0] == "boolean" and kind == "number":
        return ("number", Decimal(1 if value[1] else 0))
    if value[0] == "number" and kind == "boolean":
        return ("boolean", value[1] != 0)
    if value[0] == "string":
        return _from_string(value[1], kind, integer)
    return None


# Kinds that may be compared, and which side is cast to which kind.
_COMMON = {
    frozenset({"string", "number"}): "number",
    frozenset({"string", "date"}): "date",
    frozenset({"string", "timestamp"}): "timestamp",
    frozenset({"date", "timestamp"}): "timestamp",
    frozenset({"string", "boolean"}): "boolean",
}


def _common_kind(left: str, right: str) -> str | None:
    if left == right or right == "null":
        return left
    if left == "null":
        return right
    return _COMMON.get(frozenset({left, right}))


# ---------------------------------------------------------------------------------- nodes


class _Node:
    kind = "null"

    def eval(self, row: Row) -> Value:  # pragma: no cover - overridden
        raise NotImplementedError

    def glue(self) -> str | None:
        """This condition in Glue's ``GetPartitions`` expression syntax, or None when it cannot
        be sent as-is (the server then filters less; the local filter stays exact)."""
        return None


@dataclass
class _Col(_Node):
    index: int
    name: str
    htype: HiveType

    def __post_init__(self) -> None:
        kind = self.htype.kind
        self.kind = kind if kind in ("number", "date", "timestamp", "boolean") else "string"

    def eval(self, row: Row) -> Value:
        raw = row[self.index]
        if raw is None or raw == HIVE_DEFAULT_PARTITION:
            return None
        return _from_string(raw, self.kind, self.htype.is_integer)


@dataclass
class _Lit(_Node):
    value: Value

    def __post_init__(self) -> None:
        self.kind = "null" if self.value is None else self.value[0]

    def eval(self, row: Row) -> Value:
        return self.value


@dataclass
class _Cast(_Node):
    inner: _Node
    target: str
    integer: bool

    def __post_init__(self) -> None:
        self.kind = self.target

    def eval(self, row: Row) -> Value:
        return _cast(self.inner.eval(row), self.target, self.integer)


@dataclass
class _Concat(_Node):
    parts: list[_Node]

    def __post_init__(self) -> None:
        self.kind = "string"

    def eval(self, row: Row) -> Value:
        texts = [_to_string(p.eval(row)) for p in self.parts]
        if any(t is None for t in texts):
            return None
        return ("string", "".join(t for t in texts if t is not None))


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: bool(a == b),
    "<>": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b),
    ">=": lambda a, b: bool(a >= b),
}
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _glue_literal(col: _Col, lit: _Node) -> str | None:
    """A literal as Glue's expression parser takes it, when the server compares it exactly as
    this evaluator does (string key with a string, integer key with an integer)."""
    if not isinstance(lit, _Lit) or lit.value is None or not _SIMPLE_NAME.fullmatch(col.name):
        return None
    kind, value = lit.value
    if col.htype.name == "string" and kind == "string":
        text = str(value)
        return None if "'" in text or "\\" in text else f"'{text}'"
    if col.htype.is_integer and kind == "number" and value == value.to_integral_value():
        return str(int(value))
    return None


def _glue_compare(left: _Node, op: str, right: _Node) -> str | None:
    if isinstance(right, _Col) and not isinstance(left, _Col):
        left, right, op = right, left, _FLIP[op]
    if not isinstance(left, _Col):
        return None
    literal = _glue_literal(left, right)
    return None if literal is None else f"{left.name} {op} {literal}"


@dataclass
class _Cmp(_Node):
    op: str
    left: _Node
    right: _Node
    common: str

    def __post_init__(self) -> None:
        self.kind = "boolean"
        self._fn = _OPS[self.op]

    def eval(self, row: Row) -> Value:
        a = _cast(self.left.eval(row), self.common)
        if a is None:
            return None
        b = _cast(self.right.eval(row), self.common)
        if b is None:
            return None
        return ("boolean", self._fn(a[1], b[1]))

    def glue(self) -> str | None:
        return _glue_compare(self.left, self.op, self.right)


@dataclass
class _NullSafeEq(_Node):
    left: _Node
    right: _Node
    common: str

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        a = _cast(self.left.eval(row), self.common)
        b = _cast(self.right.eval(row), self.common)
        if a is None or b is None:
            return ("boolean", a is None and b is None)
        return ("boolean", a[1] == b[1])


@dataclass
class _In(_Node):
    operand: _Node
    items: list[_Cmp]

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        unknown = False
        for item in self.items:
            result = item.eval(row)
            if result is None:
                unknown = True
            elif result[1]:
                return ("boolean", True)
        return None if unknown else ("boolean", False)

    def glue(self) -> str | None:
        if not isinstance(self.operand, _Col):
            return None
        literals = [_glue_literal(self.operand, item.right) for item in self.items]
        if any(lit is None for lit in literals):
            return None
        return f"{self.operand.name} IN ({', '.join(str(lit) for lit in literals)})"


@dataclass
class _Like(_Node):
    operand: _Node
    pattern: re.Pattern[str]
    search: bool = False  # RLIKE: a match anywhere

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        text = _to_string(self.operand.eval(row))
        if text is None:
            return None
        found = self.pattern.search(text) if self.search else self.pattern.fullmatch(text)
        return ("boolean", found is not None)


@dataclass
class _IsNull(_Node):
    operand: _Node

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        return ("boolean", self.operand.eval(row) is None)


@dataclass
class _And(_Node):
    children: list[_Node]

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        unknown = False
        for child in self.children:
            result = child.eval(row)
            if result is None:
                unknown = True
            elif not result[1]:
                return ("boolean", False)
        return None if unknown else ("boolean", True)

    def glue(self) -> str | None:
        # Dropping a condition the server cannot take only widens what it returns.
        parts = [p for p in (c.glue() for c in self.children) if p]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)


@dataclass
class _Or(_Node):
    children: list[_Node]

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        unknown = False
        for child in self.children:
            result = child.eval(row)
            if result is None:
                unknown = True
            elif result[1]:
                return ("boolean", True)
        return None if unknown else ("boolean", False)

    def glue(self) -> str | None:
        parts = [c.glue() for c in self.children]
        if any(p is None for p in parts):
            return None
        return " OR ".join(f"({p})" for p in parts)


@dataclass
class _Not(_Node):
    child: _Node

    def __post_init__(self) -> None:
        self.kind = "boolean"

    def eval(self, row: Row) -> Value:
        result = self.child.eval(row)
        return None if result is None else ("boolean", not result[1])


# -------------------------------------------------------------------------------- compiler


def _like_regex(pattern: str, escape: str, case_insensitive: bool) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if case_insensitive else 0))


class _Compiler:
    def __init__(self, text: str, keys: Sequence[Column], table: str) -> None:
        from sqlglot import exp

        self.exp = exp
        self.text = text
        self.table = table
        self.keys = {k.name.lower(): (i, k) for i, k in enumerate(keys)}
        self.key_names = [k.name for k in keys]

    # -- errors --------------------------------------------------------------------------------
    def unsupported(self, node: exp.Expression, what: str | None = None) -> UnsupportedError:
        if what is None:
            if isinstance(node, self.exp.Anonymous) or isinstance(node, self.exp.Func):
                what = f"function {node.sql(dialect='spark')!r}"
            else:
                what = f"{node.sql(dialect='spark')!r} ({type(node).__name__})"
        return UnsupportedError(
            f"partition predicate {self.text!r}: {what} is not supported; supported: {SUPPORTED}"
        )

    def incompatible(self, node: exp.Expression, left: _Node, right: _Node) -> ConfigError:
        return ConfigError(
            f"partition predicate {self.text!r}: cannot compare a {left.kind} with a "
            f"{right.kind} in {node.sql(dialect='spark')!r}"
        )

    # -- structure -------------------------------------------------------------------------------
    def condition(self, node: exp.Expression) -> _Node:
        compiled = self.node(node)
        if compiled.kind not in ("boolean", "null"):
            raise UnsupportedError(
                f"partition predicate {self.text!r}: {node.sql(dialect='spark')!r} is not a "
                "condition (expected a comparison, IN, BETWEEN, LIKE, IS NULL …)"
            )
        return compiled

    def node(self, node: exp.Expression) -> _Node:
        compiled = self._node(node)
        if node.args.get("negate"):
            return _Not(compiled)
        return compiled

    def _node(self, node: exp.Expression) -> _Node:
        e = self.exp
        if isinstance(node, e.Paren):
            return self.node(node.this)
        if isinstance(node, e.And):
            return _And([self.condition(node.this), self.condition(node.expression)])
        if isinstance(node, e.Or):
            return _Or([self.condition(node.this), self.condition(node.expression)])
        if isinstance(node, e.Not):
            return _Not(self.condition(node.this))
        for cls, op in ((e.EQ, "="), (e.NEQ, "<>"), (e.LT, "<"), (e.LTE, "<="), (e.GT, ">"),
                        (e.GTE, ">=")):
            if isinstance(node, cls):
                return self.compare(node, op, self.node(node.this), self.node(node.expression))
        if isinstance(node, (e.NullSafeEQ, e.NullSafeNEQ)):
            left, right = self.node(node.this), self.node(node.expression)
            common = _common_kind(left.kind, right.kind)
            if common is None:
                raise self.incompatible(node, left, right)
            eq = _NullSafeEq(left, right, common)
            return eq if isinstance(node, e.NullSafeEQ) else _Not(eq)
        if isinstance(node, e.In):
            if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
                raise self.unsupported(node, "IN with a sub-query")
            operand = self.node(node.this)
            items = [self.compare(node, "=", operand, self.node(item))
                     for item in node.expressions]
            return _In(operand, items)
        if isinstance(node, e.Between):
            operand = self.node(node.this)
            return _And([self.compare(node, ">=", operand, self.node(node.args["low"])),
                         self.compare(node, "<=", operand, self.node(node.args["high"]))])
        if isinstance(node, e.Escape):
            inner = node.this
            if not isinstance(inner, (e.Like, e.ILike)):
                raise self.unsupported(node)
            escape = self.literal_text(node.expression, "ESCAPE")
            compiled = self.like(inner, escape)
            return _Not(compiled) if inner.args.get("negate") else compiled
        if isinstance(node, (e.Like, e.ILike)):
            return self.like(node, "\\")
        if isinstance(node, e.RegexpLike):
            pattern = self.literal_text(node.expression, "RLIKE pattern")
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ConfigError(
                    f"partition predicate {self.text!r}: bad RLIKE pattern {pattern!r}: {exc}"
                ) from None
            return _Like(self.node(node.this), regex, search=True)
        if isinstance(node, e.Is):
            if not isinstance(node.expression, e.Null):
                raise self.unsupported(node)
            return _IsNull(self.node(node.this))
        if isinstance(node, (e.Concat, e.DPipe)):
            parts = node.expressions if isinstance(node, e.Concat) else [node.this,
                                                                          node.expression]
            return _Concat([self.node(p) for p in parts])
        if isinstance(node, (e.Cast, e.TryCast)):
            return self.cast(node)
        if isinstance(node, e.Column):
            return self.column(node)
        if isinstance(node, e.Literal):
            if node.is_string:
                return _Lit(("string", str(node.this)))
            number = _to_number(str(node.this))
            if number is None:
                raise self.unsupported(node, f"literal {node.sql(dialect='spark')!r}")
            return _Lit(("number", number))
        if isinstance(node, e.Neg):
            inner = self.node(node.this)
            if isinstance(inner, _Lit) and inner.value and inner.value[0] == "number":
                return _Lit(("number", -inner.value[1]))
            raise self.unsupported(node, f"arithmetic {node.sql(dialect='spark')!r}")
        if isinstance(node, e.Boolean):
            return _Lit(("boolean", bool(node.this)))
        if isinstance(node, e.Null):
            return _Lit(None)
        if isinstance(node, (e.Binary, e.Unary)) and not isinstance(node, e.Connector):
            raise self.unsupported(node, f"operator {node.sql(dialect='spark')!r}")
        raise self.unsupported(node)

    # -- pieces ------------------------------------------------------------------------------------
    def compare(self, node: exp.Expression, op: str, left: _Node, right: _Node) -> _Cmp:
        common = _common_kind(left.kind, right.kind)
        if common is None:
            raise self.incompatible(node, left, right)
        return _Cmp(op, left, right, common)

    def column(self, node: exp.Column) -> _Node:
        if node.args.get("table") or node.args.get("db"):
            raise self.unsupported(node, f"qualified column {node.sql(dialect='spark')!r}")
        name = node.name
        found = self.keys.get(name.lower())
        if found is None:
            keys = ", ".join(self.key_names) or "none"
            raise ConfigError(
                f"partition predicate {self.text!r} names column {name!r}, which is not a "
                f"partition key of {self.table} (partition keys: {keys})"
            )
        index, key = found
        try:
            htype = parse_type(key.type)
        except TypeSyntaxError as exc:
            raise ConfigError(f"partition key {self.table}.{key.name}: {exc}") from None
        return _Col(index, key.name, htype)

    def literal_text(self, node: exp.Expression, what: str) -> str:
        compiled = self.node(node)
        if not isinstance(compiled, _Lit) or compiled.kind != "string" or compiled.value is None:
            raise self.unsupported(node, f"a non-literal {what}")
        return str(compiled.value[1])

    def like(self, node: exp.Expression, escape: str) -> _Node:
        pattern = self.literal_text(node.expression, "LIKE pattern")
        if len(escape) > 1:
            raise ConfigError(f"partition predicate {self.text!r}: ESCAPE must be one character")
        regex = _like_regex(pattern, escape, isinstance(node, self.exp.ILike))
        return _Like(self.node(node.this), regex)

    def cast(self, node: exp.Expression) -> _Node:
        target = node.args["to"].sql(dialect="spark").lower()
        try:
            htype = parse_type(target)
        except TypeSyntaxError:
            raise self.unsupported(node, f"CAST to {target!r}") from None
        if htype.kind in ("binary", "complex"):
            raise self.unsupported(node, f"CAST to {target!r}")
        return _Cast(self.node(node.this), htype.kind, htype.is_integer)


# ------------------------------------------------------------------------------- interface


@dataclass(frozen=True)
class PartitionPredicate:
    """A compiled partition predicate for one table's partition keys.

    Call it with a partition's values (strings, in partition-key order) to learn whether the
    partition is selected. :attr:`glue_expression` is the part of it that can be sent to Glue's
    ``GetPartitions`` as ``Expression`` (None: nothing can); the server's answer must still be
    filtered with this predicate.
    """

    text: str
    keys: tuple[str, ...]
    _root: _Node

    def evaluate(self, values: Row) -> bool | None:
        """SQL's answer: True, False, or None (unknown)."""
        if len(values) != len(self.keys):
            raise ConfigError(
                f"partition values {list(values)!r} do not match partition keys {list(self.keys)}"
            )
        result = self._root.eval(values)
        return None if result is None else bool(result[1])

    def __call__(self, values: Row) -> bool:
        return self.evaluate(values) is True

    def matches(self, partition: Partition) -> bool:
        return self(partition.values)

    @property
    def glue_expression(self) -> str | None:
        return self._root.glue()


def compile_predicate(text: str, partition_keys: Sequence[Column],
                      table: str = "the table") -> PartitionPredicate:
    """Parse and check ``text`` against ``partition_keys`` (``table`` names it in errors)."""
    return _compile(text, tuple(partition_keys), table)


@lru_cache(maxsize=256)
def _compile(text: str, keys: tuple[Column, ...], table: str) -> PartitionPredicate:
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"empty partition predicate {text!r}")
    try:
        import sqlglot
        from sqlglot.errors import ParseError, TokenError
    except ImportError:  # pragma: no cover - sqlglot is a dependency
        raise EnvironmentProblem(
            "partition predicates need the 'sqlglot' package (pip install sqlglot)"
        ) from None
    try:
        statements: list[Any] = [s for s in sqlglot.parse(text, dialect="spark")
                                 if s is not None]
    except (ParseError, TokenError) as exc:
        raise ConfigError(f"cannot parse partition predicate {text!r}: {_parse_message(exc)}") \
            from None
    if len(statements) != 1:
        raise UnsupportedError(
            f"partition predicate {text!r}: expected one condition, found {len(statements)}"
        )
    compiler = _Compiler(text, keys, table)
    root = compiler.condition(statements[0])
    return PartitionPredicate(text, tuple(k.name for k in keys), root)


def _parse_message(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if errors and isinstance(errors[0], dict) and errors[0].get("description"):
        return str(errors[0]["description"])
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def filter_partitions(table: CatalogTable, partitions: Iterable[Partition],
                      predicate: str | None) -> list[Partition]:
    """The partitions of ``table`` that ``predicate`` selects (all of them when it is empty)."""
    if predicate is None or not predicate.strip():
        return list(partitions)
    compiled = compile_predicate(predicate, table.partition_keys, table.qualified_name)
    return [p for p in partitions if compiled(p.values)]
