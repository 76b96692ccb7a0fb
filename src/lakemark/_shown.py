"""Names of others' files in human lines: control characters escaped, so one name is one line.

A file or S3 key may be called ``a\\nb.json`` (a newline inside), carry a carriage return, an
escape sequence or a byte that is not UTF-8 (a lone surrogate after ``os.fsdecode``). Printed
as it is, such a name splits the run summary or a warning line in two, or rewrites the
terminal. Every human line that names a file or says a reason that may quote one goes through
:func:`shown`: newline, carriage return and tab become ``\\n``, ``\\r``, ``\\t``; other C0/C1
controls, line/paragraph separators and lone surrogates become ``\\xNN`` / ``\\uNNNN``. Names
without such characters are unchanged (backslashes too). ``--json`` output keeps the exact
names (JSON escapes them itself); lineage graphs escape names for their own formats
(``lineage/_render.py``).
"""

from __future__ import annotations

import re

__all__ = ["shown"]

# C0 and C1 controls, line/paragraph separators and lone surrogates (as lineage/_render.py).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """``text`` for one human line: its control characters escaped (see the module doc)."""
    return _CONTROL.sub(_escape, str(text))
