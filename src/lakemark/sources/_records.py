"""Cutting the text of one file into records, as Spark's text-based readers do, so that Spark's
own parsers (``from_json``, ``from_csv``, ``from_xml``) can then parse each record.

Used on the executors by the Arrow read path, which fetches files itself (Spark cannot reach
them without the S3A connector) but leaves parsing, types and malformed-record handling to
Spark. Pure functions over strings.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator

__all__ = [
    "xml_encoding",
    "xml_text",
    "split_lines",
    "json_records",
    "csv_records",
    "xml_records",
    "text_records",
]

_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str, line_sep: str | None = None) -> list[str]:
    """Lines as Hadoop's line reader gives them: ``\\n``, ``\\r\\n`` or ``\\r`` end a line (or
    exactly ``line_sep`` when given); a final separator does not start an empty last line."""
    if not text:
        return []
    lines = text.split(line_sep) if line_sep else _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _array_elements(text: str) -> list[str] | None:
    """The objects of a top-level JSON array, re-serialized one by one (None if not one)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return [json.dumps(v, ensure_ascii=False) for v in value]


def json_records(text: str, *, multiline: bool = False, line_sep: str | None = None
                 ) -> Iterator[str]:
    """JSON records: one per non-blank line (JSON Lines), or the whole file with ``multiline``.

    A top-level array of objects (on one line, or as the whole file in multiline mode) gives
    one record per object, as Spark's JSON reader does. Anything unparsable is passed on as is,
    for the parser to treat as malformed.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if multiline:
        body = text.strip()
        if not body:
            return
        elements = _array_elements(body) if body.startswith("[") else None
        yield from (elements if elements is not None else [body])
        return
    for line in split_lines(text, line_sep):
        body = line.strip()
        if not body:
            continue
        if body.startswith("["):
            elements = _array_elements(body)
            if elements is not None:
                yield from elements
                continue
        yield line


def _quoted_records(text: str, quote: str, escape: str) -> list[str]:
    """Records separated by line breaks outside quoted fields (CSV ``multiLine`` mode)."""
    if not quote:
        return split_lines(text)
    # An escape equal to the quote is the doubled-quote convention: toggling twice is right.
    escaped = re.escape(escape) + "." if escape and escape != quote else None
    parts = [escaped, re.escape(quote), r"\r\n|\r|\n"]
    token = re.compile("|".join(p for p in parts if p), re.DOTALL)
    records: list[str] = []
    start, quoted = 0, False
    for match in token.finditer(text):
        found = match.group(0)
        if found == quote:
            quoted = not quoted
        elif found in ("\n", "\r", "\r\n") and not quoted:
            records.append(text[start:match.start()])
            start = match.end()
    if start < len(text):
        records.append(text[start:])
    return records


def csv_records(
    text: str,
    *,
    header: bool = False,
    multiline: bool = False,
    quote: str = '"',
    escape: str = "\\",
    comment: str | None = None,
    line_sep: str | None = None,
) -> Iterator[str]:
    """CSV records of one file: blank lines and ``comment`` lines skipped; with ``header`` the
    first remaining record (the file's header) dropped. With ``multiline``, line breaks inside
    quoted fields stay in the record."""
    if text.startswith("\ufeff"):
        text = text[1:]
    records = _quoted_records(text, quote, escape) if multiline else split_lines(text, line_sep)
    skip_header = header
    for record in records:
        if not record.strip() or (comment and record.startswith(comment)):
            continue
        if skip_header:
            skip_header = False
            continue
        yield record


_DECLARED = re.compile(rb"""\A\s*<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
         (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def xml_encoding(data: bytes, given: str | None = None) -> str:
    """The encoding of an XML file's bytes, as Spark's XML reader takes it: the ``encoding``
    option when given, else a byte-order mark, else the XML declaration's ``encoding``
    (``<?xml version="1.0" encoding="ISO-8859-1"?>``), else UTF-8. A UTF-8 BOM is skipped
    (``utf-8-sig``) with the option ``UTF-8`` too."""
    for bom, name in _BOMS:
        if data.startswith(bom) and (not given or codecs.lookup(given).name
                                     == codecs.lookup(name.replace("-sig", "")).name):
            return name
    if given:
        return given
    declared = _DECLARED.match(data[:1024])
    return declared.group(1).decode("ascii") if declared else "utf-8"


def xml_text(data: bytes, given: str | None = None, *, errors: str = "strict") -> str:
    """An XML file's bytes as text, in :func:`xml_encoding`'s encoding (an unknown encoding
    name raises LookupError; with ``errors="strict"`` bytes that are not of the encoding raise
    UnicodeDecodeError)."""
    return data.decode(xml_encoding(data, given), errors=errors)


_ATTRIBUTES = r"""(?:"[^"]*"|'[^']*'|[^'">])*"""


def xml_records(text: str, row_tag: str, *, any_prefix: bool = False) -> Iterator[str]:
    """Each ``<row_tag …>…</row_tag>`` (or ``<row_tag …/>``) element of a document, outermost
    ones only; tags inside comments and CDATA sections are ignored. ``any_prefix`` (Spark's
    ``ignoreNamespace``): ``<ns:row_tag>`` is a row too.

    An opening ``row_tag`` that is never closed (a truncated file, or a missing end tag that
    swallows the records after it) gives the rest of the file from that tag as a last record:
    it is not well-formed, so the parser treats it as malformed (kept, dropped or failing the
    read by the mode) instead of it vanishing without a word."""
    tag = (r"(?:[^\s/<>:!?]+:)?" if any_prefix else "") + re.escape(row_tag)
    token = re.compile(
        r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<(/?)" + tag + r"(?=[\s/>])(" + _ATTRIBUTES + r")>",
        re.DOTALL,
    )
    depth, start = 0, 0
    for match in token.finditer(text):
        if match.group(2) is None:  # a comment or CDATA section
            continue
        closing = match.group(1) == "/"
        self_closing = not closing and match.group(2).endswith("/")
        if closing:
            if depth == 0:
                continue
            depth -= 1
            if depth == 0:
                yield text[start:match.end()]
        elif self_closing:
            if depth == 0:
                yield match.group(0)
        else:
            if depth == 0:
                start = match.start()
            depth += 1
    if depth > 0:
        yield text[start:].rstrip()


def text_records(text: str, *, wholetext: bool = False, line_sep: str | None = None
                 ) -> Iterator[str]:
    """Rows of Spark's text source: one per line, or the whole file with ``wholetext``."""
    if wholetext:
        yield text
        return
    yield from split_lines(text, line_sep)
