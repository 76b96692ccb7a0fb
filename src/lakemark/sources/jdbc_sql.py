"""SQL text for JDBC sources, built without ever pasting a value in.

Spark's JDBC reader takes a table expression and WHERE clauses as *text*; it has no way to bind
parameters (``dbtable``, ``query`` and ``predicates`` are strings that Spark splices into its
own ``SELECT``). So lakemark renders the few values a key range needs itself, with a renderer
that is safe by construction:

* **Identifiers** (table and column names) are always quoted, per dialect, with the closing
  quote character doubled: ``"a""b"`` (ANSI, PostgreSQL, Oracle), ```a``b``` (MySQL/MariaDB),
  ``[a]]b]`` (SQL Server). A name cannot end the quoting early.
* **Values** are checked by Python type first; anything but int, Decimal, finite float, str,
  date and datetime is refused (bool too). Numbers are rendered from their decimal digits only
  (checked against a strict pattern). Dates and timestamps come from ``isoformat()`` and are
  checked against a digits-only pattern. Strings are never escaped by hand-written rules that a
  server setting could change: PostgreSQL gets dollar quoting with a tag that does not occur in
  the value (content is taken literally whatever ``standard_conforming_strings`` says),
  MySQL/MariaDB a hex literal (``_utf8mb4 X'…'``, no escape processing at all, whatever
  ``NO_BACKSLASH_ESCAPES`` says), SQL Server and Oracle a quoted literal with quotes doubled
  (neither has backslash escapes). NUL characters are refused (no server stores them in text).
  For an unknown dialect, string keys are refused.

The tests feed quotes, ``; DROP TABLE``, backslashes, dollar signs and unicode through keys and
table names against a real PostgreSQL.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from decimal import Decimal

from ..errors import ConfigError
from ..planning.jdbc import KeyValue, Predicate
from ..redaction import redact_url  # noqa: F401 - re-exported; the one redactor of lakemark

__all__ = [
    "DIALECTS",
    "dialect_of",
    "quote_identifier",
    "quote_table",
    "redact_url",
    "render_literal",
    "render_predicate",
    "split_table_name",
]

DIALECTS = ("postgresql", "mysql", "sqlserver", "oracle", "generic")

_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?\Z")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?([+-][0-9]{2}:[0-9]{2})?\Z"  # noqa: E501
)


def dialect_of(url: str) -> str:
    """The SQL dialect of a ``jdbc:`` URL (``generic`` when unknown)."""
    lowered = url.lower()
    for prefix, dialect in (
        ("jdbc:postgresql:", "postgresql"), ("jdbc:redshift:", "postgresql"),
        ("jdbc:mysql:", "mysql"), ("jdbc:mariadb:", "mysql"),
        ("jdbc:sqlserver:", "sqlserver"), ("jdbc:oracle:", "oracle"),
    ):
        if lowered.startswith(prefix):
            return dialect
    return "generic"


def quote_identifier(name: str, dialect: str) -> str:
    """``name`` as one quoted identifier of ``dialect`` (closing quote doubled)."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise ConfigError(f"{name!r} is not a usable table or column name")
    if dialect == "mysql":
        return "`" + name.replace("`", "``") + "`"
    if dialect == "sqlserver":
        return "[" + name.replace("]", "]]") + "]"
    return '"' + name.replace('"', '""') + '"'


_QUOTES = {"postgresql": ('"', '"'), "oracle": ('"', '"'), "generic": ('"', '"'),
           "mysql": ("`", "`"), "sqlserver": ("[", "]")}


def split_table_name(dbtable: str, dialect: str) -> list[str]:
    """``schema.table`` (parts optionally quoted in the dialect's way) into its parts.

    Unquoted parts are folded as the database folds them (PostgreSQL: lower case; Oracle:
    upper case), so ``HR.EMP`` names the same table it names in SQL; quoted parts are kept.
    """
    if not isinstance(dbtable, str) or not dbtable.strip():
        raise ConfigError("dbtable: give a table name (schema.table)")
    open_q, close_q = _QUOTES.get(dialect, ('"', '"'))
    parts: list[str] = []
    i, n = 0, len(dbtable)
    while i < n:
        if dbtable[i] == open_q:
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise ConfigError(f"dbtable {dbtable!r}: unterminated quoted name")
                if dbtable[j] == close_q:
                    if j + 1 < n and dbtable[j + 1] == close_q:
                        buf.append(close_q)
                        j += 2
                        continue
                    break
                buf.append(dbtable[j])
                j += 1
            parts.append("".join(buf))
            i = j + 1
        else:
            j = dbtable.find(".", i)
            j = n if j < 0 else j
            raw = dbtable[i:j].strip()
            if dialect == "postgresql":
                raw = raw.lower()
            elif dialect == "oracle":
                raw = raw.upper()
            parts.append(raw)
            i = j
        if i < n:
            if dbtable[i] != ".":
                raise ConfigError(f"dbtable {dbtable!r}: expected '.' between name parts")
            i += 1
            if i == n:
                raise ConfigError(f"dbtable {dbtable!r}: ends with '.'")
    if not parts or any(not p for p in parts) or len(parts) > 3:
        raise ConfigError(f"dbtable {dbtable!r} is not [catalog.][schema.]table")
    return parts


def quote_table(dbtable: str, dialect: str) -> str:
    """``dbtable`` with every part quoted (see :func:`split_table_name`)."""
    return ".".join(quote_identifier(p, dialect) for p in split_table_name(dbtable, dialect))


def _checked(text: str, pattern: re.Pattern[str], what: str) -> str:
    if not pattern.match(text):
        raise ConfigError(f"cannot render {what} {text!r} safely")
    return text


def _render_string(value: str, dialect: str) -> str:
    if "\x00" in value:
        raise ConfigError("a bookmark key string holds a NUL character; it cannot be compared")
    if dialect == "postgresql":
        n = 0
        # The first occurrence of the closing tag must be the tag itself.
        while (value + f"$lm{n}$").find(f"$lm{n}$") != len(value):
            n += 1
        tag = f"$lm{n}$"
        return f"{tag}{value}{tag}"
    if dialect == "mysql":
        return "_utf8mb4 X'" + value.encode("utf-8").hex() + "'"
    if dialect == "sqlserver":
        return "N'" + value.replace("'", "''") + "'"
    if dialect == "oracle":
        return "'" + value.replace("'", "''") + "'"
    raise ConfigError(
        "string bookmark keys are supported for PostgreSQL, MySQL/MariaDB, SQL Server and "
        "Oracle URLs only (no safe literal syntax is known for this database)"
    )


def render_literal(value: KeyValue, dialect: str) -> str:
    """``value`` as an SQL literal of ``dialect``; ConfigError for anything not renderable."""
    if isinstance(value, bool) or value is None:
        raise ConfigError(f"cannot render bookmark key value {value!r}")
    if isinstance(value, int):
        return _checked(str(int(value)), _NUMBER, "integer")
    if isinstance(value, (Decimal, float)):
        number = Decimal(repr(value)) if isinstance(value, float) else value
        if not number.is_finite():
            raise ConfigError(f"cannot render non-finite bookmark key value {value!r}")
        return _checked(format(number, "f"), _NUMBER, "number")
    if isinstance(value, str):
        return _render_string(value, dialect)
    if isinstance(value, _dt.datetime):
        text = _checked(value.isoformat(sep=" "), _TIMESTAMP, "timestamp")
        if dialect == "sqlserver":
            kind = "DATETIMEOFFSET" if value.tzinfo else "DATETIME2"
            return f"CAST('{text}' AS {kind})"
        kind = "TIMESTAMP WITH TIME ZONE" if value.tzinfo else "TIMESTAMP"
        if dialect == "mysql":
            kind = "TIMESTAMP"
            if value.tzinfo:  # MySQL has no zoned literal: compare in UTC
                text = value.astimezone(_dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
                text = _checked(text, _TIMESTAMP, "timestamp")
        return f"{kind} '{text}'"
    if isinstance(value, _dt.date):
        text = _checked(value.isoformat(), _DATE, "date")
        return f"CAST('{text}' AS DATE)" if dialect == "sqlserver" else f"DATE '{text}'"
    raise ConfigError(f"cannot render a bookmark key value of type {type(value).__name__}")


def render_predicate(predicate: Predicate, dialect: str,
                     columns: dict[str, str] | None = None) -> str:
    """A planner predicate as a WHERE condition (no ``WHERE``); ``1=1`` when unbounded.

    ``columns`` maps key names to their actual names in the table (as Spark reported them).
    """
    if not predicate:
        return "1=1"
    bounds: list[str] = []
    for bound in predicate:
        if not bound:
            return "1=0"
        disjuncts = []
        for conj in bound:
            terms = [
                f"{quote_identifier((columns or {}).get(c, c), dialect)} {op} "
                f"{render_literal(v, dialect)}"
                for c, op, v in conj
            ]
            disjuncts.append("(" + " AND ".join(terms) + ")")
        bounds.append("(" + " OR ".join(disjuncts) + ")")
    return " AND ".join(bounds)


def not_null(columns: Sequence[str], dialect: str) -> str:
    """``c1 IS NOT NULL AND …`` for quoted ``columns``."""
    return " AND ".join(f"{quote_identifier(c, dialect)} IS NOT NULL" for c in columns)
