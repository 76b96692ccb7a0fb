"""Field order of a JSON DynamicFrame: the order the records give, as Glue keeps it.

Spark's JSON schema inference sorts every struct's fields by name; Glue's JSON reader lists
fields in the order it first meets them in the records. lakemark reads the leading records of
the source's first files (a bounded sample: at most :data:`SAMPLE_BYTES` in all), notes for
each struct (top level, nested structs, structs inside arrays) the order its fields first
appear, and reorders the frame's fields to match. Fields the sample never shows keep Spark's
order after the ones it shows (so partition columns stay last). Only field order changes:
names, types and values are untouched, and choice structs are left as they are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["SAMPLE_BYTES", "field_order", "in_record_order"]

#: How much of the source is read (from its first files) to learn the field order.
SAMPLE_BYTES = 1 << 20
_MAX_FILES = 20

#: A struct's field order: field name -> the order of its own fields (empty for a leaf).
Order = dict[str, "Order"]


def _note(order: Order, value: Any) -> None:
    """Add the fields of one JSON value to ``order`` (first appearance wins)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _note(order.setdefault(str(key), {}), inner)
    elif isinstance(value, list):
        for item in value:
            _note(order, item)


def field_order(texts: Sequence[tuple[str, bool]], multiline: bool = False) -> Order:
    """The field order of the records in ``texts`` (file text, whether it is the whole file):
    JSON lines, or with ``multiline`` one document per file (an object or a list of them).
    Lines that do not parse (a cut last line, a corrupt record) are skipped."""
    order: Order = {}
    for text, whole in texts:
        if multiline:
            if whole:
                try:
                    _note(order, json.loads(text))
                except ValueError:
                    pass
            continue
        lines = text.splitlines()
        if not whole and lines:
            lines = lines[:-1]  # cut by the sample's size
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                _note(order, record)
    return order


def _sample(files: Sequence[str]) -> list[tuple[str, bool]]:
    """The leading text of the first ``files`` within :data:`SAMPLE_BYTES`."""
    from ..storage import arrow_filesystem, mapped_path

    out: list[tuple[str, bool]] = []
    budget = SAMPLE_BYTES
    for path in files[:_MAX_FILES]:
        if budget <= 0:
            break
        fs, inner = arrow_filesystem(mapped_path(path) or path)
        try:
            with fs.open_input_stream(inner) as stream:
                data = stream.read(budget + 1)
        except OSError:  # gone or unreadable: the read itself reports it; order from the rest
            continue
        whole = len(data) <= budget
        data = data[:budget]
        budget -= len(data)
        out.append((data.decode("utf-8", errors="replace"), whole))
    return out


def _reordered(col: Column, dtype: DataType, order: Order) -> tuple[Column, bool]:
    """``col`` (of ``dtype``) with struct fields in ``order``; whether anything moved."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StructType

    from ._choicetype import is_choice

    if isinstance(dtype, ArrayType):
        element = dtype.elementType
        _, moved = _reordered(col, element, order)  # does anything below move?
        if not moved:
            return col, False
        return F.transform(col, lambda e: _reordered(e, element, order)[0]), True
    if not isinstance(dtype, StructType) or is_choice(dtype) or not order:
        return col, False
    names = [f.name for f in dtype.fields]
    seen = [n for n in order if n in names]
    ranked = seen + [n for n in names if n not in order]
    moved = ranked != names
    parts = []
    for name in ranked:
        field = dtype[name]
        inner, inner_moved = _reordered(col.getField(name), field.dataType, order.get(name, {}))
        moved = moved or inner_moved
        parts.append(inner.alias(name))
    if not moved:
        return col, False
    return F.when(col.isNotNull(), F.struct(*parts)), True


def in_record_order(df: DataFrame, files: Sequence[str], multiline: bool = False) -> DataFrame:
    """``df`` (a JSON frame) with its fields in the order the records of ``files`` give."""
    from pyspark.sql import functions as F

    from ._fieldpaths import quote

    if not files:
        return df
    order = field_order(_sample(files), multiline)
    if not order:
        return df
    names = [f.name for f in df.schema.fields]
    ranked = [n for n in order if n in names] + [n for n in names if n not in order]
    moved = ranked != names
    columns = []
    for name in ranked:
        col = F.col(quote(name))
        inner, inner_moved = _reordered(col, df.schema[name].dataType, order.get(name, {}))
        moved = moved or inner_moved
        columns.append(inner.alias(name) if inner_moved else col)
    return df.select(*columns) if moved else df
