"""A file pattern as SQL that means the same on SQLite and PostgreSQL.

A pattern without ``*`` or ``?`` matches every path that contains it (a substring); with them
it is a glob over the whole path (``*``: any run of characters, ``/`` included; ``?``: one
character). Matching is case-sensitive on both stores: SQLite's ``LIKE`` ignores ASCII case,
so SQLite uses ``instr``/``GLOB`` and PostgreSQL ``strpos``/``LIKE``. The pattern is always a
bound parameter, never pasted into the statement.
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["is_glob", "path_condition"]


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` is a glob (has ``*`` or ``?``) rather than a substring."""
    return "*" in pattern or "?" in pattern


def _like(pattern: str) -> str:
    """A glob as a LIKE pattern with ``\\`` as its escape character."""
    out = []
    for ch in pattern:
        if ch in "\\%_":
            out.append("\\" + ch)
        elif ch == "*":
            out.append("%")
        elif ch == "?":
            out.append("_")
        else:
            out.append(ch)
    return "".join(out)


def path_condition(dialect: str, column: str, pattern: str) -> tuple[str, str]:
    """``(condition, parameter)``: a WHERE condition on ``column`` (a column name of ours,
    never user input) with one ``?`` placeholder, and the value to bind to it."""
    if not pattern:
        raise ConfigError("an empty file pattern matches nothing; give part of a path or a glob")
    if dialect == "sqlite":
        if is_glob(pattern):
            return f"{column} GLOB ?", pattern.replace("[", "[[]")
        return f"instr({column}, ?) > 0", pattern
    if is_glob(pattern):
        return f"{column} LIKE ? ESCAPE '\\'", _like(pattern)
    return f"strpos({column}, ?) > 0", pattern
