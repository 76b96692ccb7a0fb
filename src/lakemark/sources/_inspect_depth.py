"""The nesting checks: a record nested deeper than Parquet and Spark allow (JSON, XML, Avro).

A JSON record nested more than :data:`MAX_DEPTH` levels (objects and arrays) makes every run
fail: Spark's analyser overflows its stack on the schema such a record gives, and Parquet
writers refuse more than 100 levels. Nothing of it can be written, so the file is set aside
before the read, with a reason naming the limit, and the run commits the other files.

The check reads the records' text (JSON lines: line by line, a line is at most the record
size limit; ``multiLine``: the whole file, which that limit bounds too), and only a record
holding more than :data:`MAX_DEPTH` opening brackets is parsed further: its strings removed,
its brackets counted — cheap for ordinary data.

XML counts elements: a row element holding elements is one level (a struct), each element
below it holding elements one more, as the nesting of the struct Spark's XML reader makes; a
file is read a chunk at a time (:class:`_XmlNesting`), never held whole, and a record of an
S3 object with at most :data:`MAX_DEPTH` ``<`` is not examined further. Avro's depth is its
schema's (records, arrays and maps; read from the file's header). The same record checks run
in lakemark's own reader of S3 objects (:func:`record_depth_problem`), which the driver does not
read before the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MAX_DEPTH", "avro_depth_problem", "json_depth_problem", "record_depth_problem",
           "xml_depth_problem"]

#: The deepest record nesting a run writes (Parquet's limit of 100 levels).
MAX_DEPTH = 100

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")
_CHUNK = 1024 * 1024
_XML_TAG = re.compile(rb"<(/?)([^\s/>]+)[^>]*?(/?)>", re.S)


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


class _XmlNesting:
    """The deepest struct nesting of the row elements in XML text fed in pieces: elements on
    the path from a row element down, the innermost (a value) not counted. Markup cut by a
    piece's end waits for the next piece, so a file is read a chunk at a time, never whole."""

    def __init__(self, row_tag: bytes) -> None:
        self.row_tag = row_tag
        self.stack: list[bytes] = []
        self.base = -1  # the stack height at the row element, while inside one
        self.deepest = 0
        self.rest = b""  # markup the last piece ended inside of

    def feed(self, data: bytes, *, final: bool = False) -> None:
        """Count the elements of ``data`` (and of the markup the last piece left open);
        ``final``: the text ends here."""
        buf, pos = self.rest + data, 0
        self.rest = b""
        while (i := buf.find(b"<", pos)) >= 0:
            end = _markup_end(buf, i, final)
            if end is None:  # cut by the piece's end: counted with the next piece
                self.rest = buf[i:]
                return
            if end < 0:  # no markup here (not well-formed): the reader judges it
                pos = i + 1
                continue
            tag = _XML_TAG.match(buf, i, end)
            if tag is not None and buf[i + 1:i + 2] not in (b"!", b"?"):
                self._tag(tag.group(1), tag.group(2), tag.group(3))
            pos = end

    def _tag(self, closing: bytes, name: bytes, empty: bytes) -> None:
        stack = self.stack
        if closing:
            while stack and stack.pop() != name:
                pass  # not well-formed: the reader fails on it and pins the file
            if self.base >= 0 and len(stack) <= self.base:
                self.base = -1
            return
        if self.base < 0 and name.rpartition(b":")[2] == self.row_tag:
            self.base = len(stack)
        if self.base >= 0:
            self.deepest = max(self.deepest, len(stack) - self.base + (0 if empty else 1) - 1)
        if not empty:
            stack.append(name)


#: Markup that opens or closes no element and may hold ``<`` and ``>``: comments, CDATA,
#: processing instructions (a declaration, ``<!…>``, ends at its first ``>``).
_XML_SKIPPED = ((b"<!--", b"-->"), (b"<![CDATA[", b"]]>"), (b"<?", b"?>"))


def _markup_end(buf: bytes, i: int, final: bool) -> int | None:
    """Where the markup starting at ``buf[i]`` (a ``<``) ends; None when ``buf`` ends inside it
    (more text may finish it), -1 when none starts there."""
    for opener, closer in _XML_SKIPPED:
        if buf.startswith(opener, i):
            j = buf.find(closer, i + len(opener))
            if j >= 0:
                return j + len(closer)
            if not final:
                return None
            break  # never closed: judged as the markup up to the next ``>``
        if not final and len(buf) - i < len(opener) and opener.startswith(buf[i:]):
            return None
    j = buf.find(b">", i + 1)
    if j < 0:
        return -1 if final else None
    return j + 1 if _XML_TAG.match(buf, i, j + 1) or buf[i + 1:i + 2] == b"!" else -1


def _xml_depth(pieces: Iterable[bytes], row_tag: bytes) -> int:
    """The deepest struct nesting of the row elements in the XML text of ``pieces``."""
    nesting = _XmlNesting(row_tag)
    for piece in pieces:
        nesting.feed(piece)
    nesting.feed(b"", final=True)
    return nesting.deepest


def _local_name(row_tag: str) -> bytes:
    """The row tag as :func:`_xml_depth` compares element names: without a namespace prefix."""
    return row_tag.rpartition(":")[2].encode()


def xml_depth_problem(stream: Any, *, row_tag: str) -> str | None:
    """Why the XML text of ``stream`` cannot be written for its nesting, or None (the whole
    text is read, a chunk at a time: records are cut by ``row_tag``, which may sit at any
    depth)."""
    depth = _xml_depth(iter(lambda: stream.read(_CHUNK), b""), _local_name(row_tag))
    return _reason(depth, f"elements of a <{row_tag}> row") if depth > MAX_DEPTH else None


def record_depth_problem(record: str, format: str, row_tag: str = "") -> str | None:
    """Why one record's text (as lakemark's reader cuts it) cannot be written for its nesting,
    or None; only JSON and XML records are examined."""
    if format == "json":
        depth = _too_deep(record.encode())
        return _reason(depth, "one record") if depth else None
    if format == "xml" and record.count("<") > MAX_DEPTH:
        depth = _xml_depth([record.encode()], _local_name(row_tag))
        return _reason(depth, f"elements of a <{row_tag}> row") if depth > MAX_DEPTH else None
    return None


def _avro_depth(schema: Any, seen: frozenset[str] = frozenset()) -> int:
    """How deep an Avro schema (parsed JSON) nests records, arrays and maps."""
    if isinstance(schema, list):  # a union: its deepest branch
        return max((_avro_depth(s, seen) for s in schema), default=0)
    if not isinstance(schema, dict):
        return 0
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return _avro_depth(kind, seen)
    if kind == "record":
        name = str(schema.get("name", ""))
        if name in seen:
            return MAX_DEPTH + 1  # recursive: Spark cannot read it at any depth
        inner = seen | {name}
        return 1 + max((_avro_depth(f.get("type"), inner) for f in schema.get("fields", ())
                        if isinstance(f, dict)), default=0)
    if kind == "array":
        return 1 + _avro_depth(schema.get("items"), seen)
    if kind == "map":
        return 1 + _avro_depth(schema.get("values"), seen)
    return 0


def avro_depth_problem(schema: Any) -> str | None:
    """Why an Avro file of ``schema`` (its header's, parsed) cannot be written for its nesting,
    or None."""
    depth = _avro_depth(schema)
    if depth <= MAX_DEPTH:
        return None
    return (f"its schema nests {depth} levels deep (records, arrays and maps), deeper than the "
            f"{MAX_DEPTH} levels Parquet and Spark's schemas allow: it could never be written")
