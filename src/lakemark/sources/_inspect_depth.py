"""The nesting check of JSON files: a record nested deeper than Parquet and Spark allow.

A JSON record nested more than :data:`MAX_DEPTH` levels (objects and arrays) makes every run
fail: Spark's analyser overflows its stack on the schema such a record gives, and Parquet
writers refuse more than 100 levels. Nothing of it can be written, so the file is set aside
before the read, with a reason naming the limit, and the run commits the other files.

The check reads the records' text (JSON lines: line by line, a line is at most the record
size limit; ``multiLine``: the whole file, which that limit bounds too), and only a record
holding more than :data:`MAX_DEPTH` opening brackets is parsed further: its strings removed,
its brackets counted — cheap for ordinary data.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_DEPTH", "json_depth_problem"]

#: The deepest record nesting a run writes (Parquet's limit of 100 levels).
MAX_DEPTH = 100

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")
_CHUNK = 1024 * 1024


def _depth(record: bytes) -> int:
    """The deepest nesting of objects and arrays in one JSON record's text."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub(b'""', record)):
        if m.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _too_deep(record: bytes) -> int:
    """The record's depth when it passes :data:`MAX_DEPTH`, else 0."""
    if record.count(b"{") + record.count(b"[") <= MAX_DEPTH:
        return 0
    depth = _depth(record)
    return depth if depth > MAX_DEPTH else 0


def _reason(depth: int, where: str) -> str:
    return (f"a record nested {depth} levels deep ({where}), deeper than the {MAX_DEPTH} "
            "levels Parquet and Spark's schemas allow: it could never be written")


def json_depth_problem(stream: Any, *, multiline: bool) -> str | None:
    """Why the JSON text of ``stream`` (plain or decompressed) cannot be written for its
    nesting, or None."""
    if multiline:
        data = b"".join(iter(lambda: stream.read(_CHUNK), b""))
        depth = _too_deep(data)
        return _reason(depth, "the whole file is one record") if depth else None
    line, rest = 0, b""
    while True:
        chunk = stream.read(_CHUNK)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop() if chunk else b""
        for record in lines:
            line += 1
            depth = _too_deep(record)
            if depth:
                return _reason(depth, f"line {line}")
        if not chunk:
            return None
