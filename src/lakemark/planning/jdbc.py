"""Which rows of a JDBC table a run takes, as data: the key range and the next state.

Pure functions over plain values: no Spark, no database, no SQL text. The source
(:mod:`lakemark.sources.jdbc`) asks the database for the current extreme key, hands it in, and
renders the :class:`KeyRange` this module returns with identifiers quoted per dialect and values
rendered by a strict, type-checked literal renderer.

The rules are AWS Glue's JDBC bookmark rules, made exact:

* One or more **bookmark keys** form a composite key, compared lexicographically
  (``(k1, k2) > (v1, v2)`` ⇔ ``k1 > v1 OR (k1 = v1 AND k2 > v2)``).
* ``asc`` (the default): new rows have larger keys. A run pins its **upper bound** (the largest
  key at planning time) and takes ``(last, upper]``; ``desc``: new rows have smaller keys, the
  run pins the smallest key and takes ``[lower, last)``. Rows inserted while the run reads lie
  outside the pinned range, so they are neither half-read nor lost; a retried run re-plans from
  the same ``last``.
* Only keys beyond the last one taken are found: a row changed in place, or inserted with a
  key behind the bookmark, is not taken again (as in Glue). The *updated-rows* mode uses a
  cursor such as ``(updated_at, id)`` as the key, so a row whose cursor moves forward is taken
  again; see ``docs/jdbc.md`` for its guarantees.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..errors import ConfigError

__all__ = [
    "JDBC_STATE_KIND",
    "KeyRange",
    "KeyValue",
    "JdbcKeys",
    "JdbcPlan",
    "JdbcState",
    "Comparison",
    "Predicate",
    "compare_keys",
    "evaluate",
    "decode_value",
    "encode_value",
    "plan_jdbc",
]

JDBC_STATE_KIND = "jdbc"

#: A key value as the database driver returns it (through Spark): these types only.
KeyValue = int | Decimal | float | str | _dt.date | _dt.datetime

SORT_ORDERS = ("asc", "desc")


def _check_value(value: object, what: str) -> KeyValue:
    """``value`` if it is a supported key value (never bool, NaN or infinity)."""
    if isinstance(value, bool) or value is None:
        raise ConfigError(f"{what}: a bookmark key value must not be {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{what}: a bookmark key value must be finite, got {value!r}")
    if isinstance(value, Decimal) and not value.is_finite():
        raise ConfigError(f"{what}: a bookmark key value must be finite, got {value!r}")
    if not isinstance(value, (int, Decimal, float, str, _dt.date)):
        raise ConfigError(
            f"{what}: a bookmark key must be a number, string, date or timestamp column, "
            f"got a {type(value).__name__}"
        )
    return value


def encode_value(value: KeyValue) -> dict[str, str]:
    """A key value as tagged JSON, so the state gives back exactly the same type and value."""
    value = _check_value(value, "bookmark key")
    if isinstance(value, int):
        return {"type": "int", "value": str(value)}
    if isinstance(value, Decimal):
        return {"type": "decimal", "value": str(value)}
    if isinstance(value, float):
        return {"type": "float", "value": repr(value)}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, _dt.datetime):
        return {"type": "timestamp", "value": value.isoformat()}
    return {"type": "date", "value": value.isoformat()}


def decode_value(data: Mapping[str, Any]) -> KeyValue:
    """The inverse of :func:`encode_value`; ConfigError for anything else."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"bookmark key value {data!r} in the state is not a tagged value")
    kind, text = data.get("type"), data.get("value")
    if not isinstance(text, str):
        raise ConfigError(f"bookmark key value {data!r} in the state has no text value")
    try:
        if kind == "int":
            return int(text)
        if kind == "decimal":
            return _check_value(Decimal(text), "state")
        if kind == "float":
            return _check_value(float(text), "state")
        if kind == "string":
            return text
        if kind == "timestamp":
            return _dt.datetime.fromisoformat(text)
        if kind == "date":
            return _dt.date.fromisoformat(text)
    except (ValueError, ArithmeticError) as exc:
        raise ConfigError(f"bookmark key value {data!r} in the state is malformed: {exc}") from exc
    raise ConfigError(f"bookmark key value {data!r} in the state has an unknown type {kind!r}")


@dataclass(frozen=True)
class JdbcKeys:
    """The bookmark keys of a JDBC source (Glue's ``jobBookmarkKeys``) and their sort order."""

    columns: tuple[str, ...]
    order: str = "asc"

    def __post_init__(self) -> None:
        if not self.columns:
            raise ConfigError("jobBookmarkKeys: give at least one key column")
        for c in self.columns:
            if not isinstance(c, str) or not c.strip() or "\x00" in c:
                raise ConfigError(f"jobBookmarkKeys: {c!r} is not a column name")
        if len({c.lower() for c in self.columns}) != len(self.columns):
            raise ConfigError(f"jobBookmarkKeys: a column is named twice in {list(self.columns)}")
        if self.order not in SORT_ORDERS:
            raise ConfigError(
                f"jobBookmarkKeysSortOrder must be 'asc' or 'desc', got {self.order!r}"
            )


def compare_keys(a: Sequence[KeyValue], b: Sequence[KeyValue]) -> int:
    """-1, 0 or 1 as composite key ``a`` sorts before, with or after ``b`` (lexicographic)."""
    if len(a) != len(b):
        raise ConfigError(f"composite keys of different lengths: {len(a)} and {len(b)}")
    for x, y in zip(a, b):
        try:
            if x < y:  # type: ignore[operator]
                return -1
            if x > y:  # type: ignore[operator]
                return 1
        except TypeError as exc:
            raise ConfigError(
                f"bookmark key values {x!r} and {y!r} cannot be compared (the key column "
                "changed type? reset the ctx)"
            ) from exc
    return 0


@dataclass(frozen=True)
class JdbcState:
    """The state element of a JDBC source: its keys and the last key taken (None: none yet)."""

    keys: JdbcKeys
    last: tuple[KeyValue, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": JDBC_STATE_KIND,
            "keys": list(self.keys.columns),
            "order": self.keys.order,
            "last": None if self.last is None else [encode_value(v) for v in self.last],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JdbcState:
        if data.get("kind") != JDBC_STATE_KIND:
            raise ConfigError(
                f"the ctx holds state of a {data.get('kind', 'files')!r} source, not a JDBC "
                "source; use another ctx or reset it"
            )
        keys = JdbcKeys(tuple(data.get("keys") or ()), str(data.get("order", "asc")))
        raw = data.get("last")
        last = None if raw is None else tuple(decode_value(v) for v in raw)
        if last is not None and len(last) != len(keys.columns):
            raise ConfigError("the JDBC state's last key does not match its key columns")
        return cls(keys, last)


@dataclass(frozen=True)
class KeyRange:
    """The rows a run reads, as data: ``after`` (exclusive) to ``through`` (inclusive), in the
    direction of the sort order. ``after`` None: from the start; ``through`` None: no bound
    (a full read). ``empty``: nothing to read."""

    keys: JdbcKeys
    after: tuple[KeyValue, ...] | None
    through: tuple[KeyValue, ...] | None
    empty: bool = False

    def contains(self, key: Sequence[KeyValue]) -> bool:
        """Whether a row with composite key ``key`` is in the range (the SQL predicate's sense)."""
        if self.empty:
            return False
        sign = 1 if self.keys.order == "asc" else -1
        if self.after is not None and sign * compare_keys(key, self.after) <= 0:
            return False
        if self.through is not None and sign * compare_keys(key, self.through) > 0:
            return False
        return True

    def predicate(self) -> Predicate:
        """The range as a predicate over the key columns (data; the source renders it).

        An AND of bounds, each an OR of ANDs of single-column comparisons: the lexicographic
        comparison spelled out, which every SQL dialect understands (row-value comparisons
        are not portable). An empty range is ``((),)``: one bound that no row meets.
        """
        if self.empty:
            return ((),)
        cols = self.keys.columns
        asc = self.keys.order == "asc"
        bounds: list[tuple[tuple[Comparison, ...], ...]] = []
        if self.after is not None:
            bounds.append(_lexicographic(cols, ">" if asc else "<", self.after))
        if self.through is not None:
            bounds.append(_lexicographic(cols, "<=" if asc else ">=", self.through))
        return tuple(bounds)

    def to_json(self) -> dict[str, Any]:
        return {
            "keys": list(self.keys.columns),
            "order": self.keys.order,
            "after": None if self.after is None else [encode_value(v) for v in self.after],
            "through": None if self.through is None else [encode_value(v) for v in self.through],
            "empty": self.empty,
        }


#: One single-column comparison: (column, operator, value); operator in ``_OPS``.
Comparison = tuple[str, str, KeyValue]
#: AND of bounds; a bound is an OR of conjunctions (ANDs) of comparisons. ``()`` as a bound's
#: disjunction list is never produced; ``((),)`` (one bound with no disjuncts) matches nothing.
Predicate = tuple[tuple[tuple[Comparison, ...], ...], ...]

_OPS = ("<", "<=", "=", ">", ">=")


def _lexicographic(columns: Sequence[str], op: str,
                   values: Sequence[KeyValue]) -> tuple[tuple[Comparison, ...], ...]:
    """``(c1, …, cn) op (v1, …, vn)`` as an OR of ANDs of single-column comparisons."""
    strict = op[0]  # "<" or ">"
    disjuncts: list[tuple[Comparison, ...]] = []
    n = len(columns)
    for i in range(n):
        prefix = tuple((columns[j], "=", values[j]) for j in range(i))
        last_op = op if i == n - 1 else strict
        disjuncts.append((*prefix, (columns[i], last_op, values[i])))
    return tuple(disjuncts)


def evaluate(predicate: Predicate, row: Mapping[str, KeyValue]) -> bool:
    """Whether ``row`` meets ``predicate`` (what the rendered SQL means, in Python)."""
    def meets(c: Comparison) -> bool:
        column, op, value = c
        x = row[column]
        if op == "=":
            return bool(x == value)
        if op == "<":
            return bool(x < value)  # type: ignore[operator]
        if op == "<=":
            return bool(x <= value)  # type: ignore[operator]
        if op == ">":
            return bool(x > value)  # type: ignore[operator]
        return bool(x >= value)  # type: ignore[operator]

    return all(any(all(meets(c) for c in conj) for conj in bound) for bound in predicate)


@dataclass(frozen=True)
class JdbcPlan:
    """What a run reads and the state it leaves behind when it succeeds."""

    range: KeyRange
    next_state: JdbcState


def _key_tuple(values: Sequence[Any] | None, keys: JdbcKeys,
               what: str) -> tuple[KeyValue, ...] | None:
    if values is None:
        return None
    out = tuple(_check_value(v, f"{what} of {', '.join(keys.columns)}") for v in values)
    if len(out) != len(keys.columns):
        raise ConfigError(f"{what} has {len(out)} values for {len(keys.columns)} key columns")
    return out


def plan_jdbc(previous: JdbcState | None, keys: JdbcKeys,
              extreme: Sequence[Any] | None) -> JdbcPlan:
    """Plan one run.

    ``extreme`` is the largest key (``asc``) or smallest key (``desc``) in the table at planning
    time, None for an empty table. The run reads ``(previous.last, extreme]`` in the sort
    order, and the next state's ``last`` is ``extreme``. When the keys or their order differ
    from the previous state's, ConfigError: the bookmark would compare unlike things.
    """
    through = _key_tuple(extreme, keys, "the current extreme key")
    last = None
    if previous is not None:
        if previous.keys != keys:
            raise ConfigError(
                f"jobBookmarkKeys {list(keys.columns)} ({keys.order}) differ from the keys this "
                f"ctx was bookmarked with, {list(previous.keys.columns)} "
                f"({previous.keys.order}); reset the ctx to change them"
            )
        last = previous.last
    if through is None:
        return JdbcPlan(KeyRange(keys, last, None, empty=True), JdbcState(keys, last))
    sign = 1 if keys.order == "asc" else -1
    if last is not None and sign * compare_keys(through, last) <= 0:
        # Nothing beyond the bookmark (rows behind it are not taken, as in Glue).
        return JdbcPlan(KeyRange(keys, last, last, empty=True), JdbcState(keys, last))
    return JdbcPlan(KeyRange(keys, last, through), JdbcState(keys, through))
