"""The root cause of a failed Spark write, in one line, out of the Py4J/Spark error chain.

Spark reports a failed write as "An error occurred while calling o287.parquet" or "Job aborted
due to stage failure", with the reason several ``Caused by:`` links down a JVM stack trace
(a task's ``java.io.IOException: No space left on device``). A person needs that reason and
the target, not the trace: the operating-system errors that have one fix each (a full disk, a
read-only file system, a missing permission) are named in plain words; otherwise the deepest
``Caused by:`` message is used, and only then the first line of Spark's own message.
"""

from __future__ import annotations

import re

__all__ = ["spark_root_cause"]

#: Operating-system errors as the JVM words them, and what they mean for a target.
_OS_ERRORS = (
    ("No space left on device", "the disk under the target is full"),
    ("Disk quota exceeded", "the disk quota of the target is exceeded"),
    ("Read-only file system", "the target's file system is read-only"),
    ("Permission denied", "this user may not write the target"),
    ("File too large", "a file grew past the size limit of the target's file system"),
)
_CAUSED_BY = re.compile(r"^\s*Caused by: ([\w.$]+)(?:: (.*\S))?\s*$", re.MULTILINE)
_CALLING = re.compile(r"^An error occurred while calling [\w.$]+\.?$")
_FRAME = re.compile(r"^(?:at |\.\.\. \d+ more|JVM stacktrace:)")


def _texts(exc: BaseException) -> list[str]:
    """The messages along the exception's chain, with any JVM stack trace they carry."""
    out: list[str] = []
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        try:
            out.append(str(link))
        except Exception:  # noqa: BLE001 - a Py4J error whose JVM is gone cannot say more
            out.append(type(link).__name__)
        for attr in ("_stackTrace", "_stacktrace"):  # PySpark's captured JVM trace
            trace = getattr(link, attr, None)
            if isinstance(trace, str):
                out.append(trace)
        nxt = getattr(link, "cause", None)  # PySpark's converted JVM cause
        link = nxt if isinstance(nxt, BaseException) else (link.__cause__ or link.__context__)
    return out


def spark_root_cause(exc: BaseException) -> str:
    """One line saying why a Spark write failed (see the module doc)."""
    texts = _texts(exc)
    joined = "\n".join(texts)
    for marker, meaning in _OS_ERRORS:
        if marker in joined:
            return f"{meaning} ({marker})"
    causes = [m.group(2) or m.group(1) for m in _CAUSED_BY.finditer(joined)]
    if causes:
        return causes[-1].strip()
    for text in texts:
        for line in text.splitlines():
            line = line.strip().lstrip(":").strip()
            if line and not _CALLING.match(line) and not _FRAME.match(line):
                return line
    return type(exc).__name__
