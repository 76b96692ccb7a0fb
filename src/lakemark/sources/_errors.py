"""Turning Spark's read failures into :class:`~lakemark.errors.ReadError`, also at action time.

Spark is lazy: a FAILFAST parse error or a corrupt file only surfaces when the DataFrame is
materialised, as a Py4J or PySpark exception carrying a JVM stack trace. :func:`guard` gives the
DataFrame returned by ``read_files`` a subclass whose methods convert such failures into
ReadError (naming the format and, when Spark says it, the file). The subclass is passed on to
every DataFrame derived through its methods (``select``, ``join``, ``unionByName``…), and to
its ``write`` builder, so a failure while writing the data of a failed read is still a
ReadError. Failures that are not about reading (a bad column name, a full disk) pass unchanged.

Limits: DataFrames built from ``groupBy(...).agg``, ``df.rdd`` or ``toLocalIterator`` iteration
are outside the guard and raise Spark's own exceptions.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

from ..errors import ReadError
from ..storage import parse_uri

__all__ = ["guard", "describe", "read_error", "spark_errors", "first_line", "READ_ERROR_PREFIX"]

#: Prefix of messages lakemark raises inside Spark jobs (``raise_error``), to find them again.
READ_ERROR_PREFIX = "lakemark read error: "

_FORMAT_ATTR = "_lakemark_read_format"

# Markers of a failure while reading input, in Spark's and lakemark's messages.
_MARKERS = (
    "MALFORMED_RECORD_IN_PARSING",
    "Malformed records are detected",
    "FAILED_READ_FILE",
    "CANNOT_READ_FILE_FOOTER",
    "lakemark.errors.ReadError: ",
    READ_ERROR_PREFIX,
)
_FILE = re.compile(r"while reading file (\S+?)\.?(?:\s|$)", re.MULTILINE)
_CAUSE = re.compile(r"^Caused by: [\w.$]+: (.+)$", re.MULTILINE)
_OWN = re.compile(r"(?:lakemark\.errors\.ReadError: |" + re.escape(READ_ERROR_PREFIX)
                  + r")(.*?)(?:\s+SQLSTATE: \w+)?$", re.MULTILINE)
_MALFORMED = re.compile(r"Malformed records are detected in record parsing[^\n]*")
_SPARK_LINE = re.compile(r"^(?:: )?(?:[\w.$]+(?:Exception|Error): )?(\[[A-Z_.]+\][^\n]*)$",
                         re.MULTILINE)


def spark_errors() -> tuple[type[BaseException], ...]:
    """The exception families a failed Spark call raises in the driver."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message (or its type name)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


def _display(uri: str) -> str:
    """Spark's ``file:`` URIs as plain local paths; other URIs unchanged."""
    if uri.startswith("file:"):
        try:
            return parse_uri(uri).key
        except Exception:
            return uri
    return uri


def describe(exc: BaseException) -> tuple[str | None, str] | None:
    """``(file or None, reason)`` if ``exc`` is a failure to read input, else None.

    The reason is lakemark's own message when a lakemark task raised it, else the most
    specific line of Spark's message (the malformed-record line, a cause, an error class).
    """
    text = str(exc)
    if not any(marker in text for marker in _MARKERS):
        return None
    own = _OWN.search(text)
    if own:
        return None, own.group(1).strip()
    found = _FILE.search(text)
    malformed = _MALFORMED.search(text)
    if malformed:
        reason = malformed.group(0).strip()
    else:
        reasons = [m.group(1).strip() for m in _SPARK_LINE.finditer(text)]
        specific = [r for r in reasons if not r.startswith("[FAILED_READ_FILE")]
        causes = [m.group(1).strip() for m in _CAUSE.finditer(text)]
        reason = (specific or causes or reasons or [first_line(exc)])[0]
    return (_display(found.group(1)) if found else None), reason


def read_error(exc: BaseException, format: str) -> ReadError | None:
    """A ReadError for ``exc`` if it is a failure to read input, else None."""
    described = describe(exc)
    if described is None:
        return None
    file, reason = described
    if _OWN.search(str(exc)):
        return ReadError(reason)
    where = f" file {file}" if file else ""
    return ReadError(f"reading {format}{where} failed: {reason}")


def _convert(format: str, func: Any) -> Any:
    @functools.wraps(func)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = func(self, *args, **kwargs)
        except spark_errors() as exc:
            error = read_error(exc, format)
            if error is None:
                raise
            raise error from exc
        return _pass_on(result, format)

    return method


def _pass_on(result: Any, format: str) -> Any:
    from pyspark.sql import DataFrame

    if isinstance(result, DataFrame) and getattr(type(result), _FORMAT_ATTR, None) is None:
        return guard(result, format)
    return result


_SUBCLASSES: dict[tuple[type, str], type] = {}


def _subclass(base: type, format: str, *, frame: bool) -> type:
    """A subclass of ``base`` whose public methods convert read failures (cached)."""
    key = (base, format)
    cached = _SUBCLASSES.get(key)
    if cached is not None:
        return cached
    namespace: dict[str, Any] = {}
    for name in dir(base):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(base, name)
        if inspect.isfunction(attr):
            namespace[name] = _convert(format, attr)
    if frame:
        writer = inspect.getattr_static(base, "write", None)
        if isinstance(writer, property) and writer.fget is not None:
            getter = writer.fget

            def write(self: Any) -> Any:
                return _guard_writer(getter(self), format)

            namespace["write"] = property(write, doc=writer.__doc__)
    namespace[_FORMAT_ATTR] = format
    sub = type(f"Guarded{base.__name__}", (base,), namespace)
    _SUBCLASSES[key] = sub
    return sub


def _guard_writer(writer: Any, format: str) -> Any:
    try:
        writer.__class__ = _subclass(type(writer), format, frame=False)
    except TypeError:  # an object whose class cannot be swapped: leave it as it is
        pass
    return writer


def guard(df: Any, format: str) -> Any:
    """``df`` with read failures converted to ReadError at action time (see module doc)."""
    try:
        df.__class__ = _subclass(type(df), format, frame=True)
    except TypeError:
        pass
    return df
