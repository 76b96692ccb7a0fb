"""A check a sink runs after its data files are written and before its commit.

The run lifecycle (layer 5) sets the check around a write with :func:`commit_gate`; every sink
(layer 4) calls :func:`before_commit` at the last moment before it commits — after Spark has
read the input and written the data files, when a commit is still undone. The run uses it to
verify that each planned file still has the size and mtime it was planned with
(``lakemark.run.exact_read``): the read was of exactly what was planned. Outside a gated write
(a sink used directly) it does nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["before_commit", "commit_gate"]

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("lakemark_commit_gate", default=None)


@contextmanager
def commit_gate(check: Callable[[], None]) -> Iterator[None]:
    """Run ``check`` wherever a sink inside this block is about to commit (it raises to stop
    the commit)."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def before_commit() -> None:
    """Called by a sink just before it commits: run the gate's check, if one is set."""
    check = _CHECK.get()
    if check is not None:
        check()
