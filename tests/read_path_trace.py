"""Measure the shape of a read: which lakemark modules it passes through, and in what order.

:func:`trace` runs a callable under ``sys.setprofile`` and records every call from one
lakemark module into another (the caller is the nearest lakemark frame up the stack, so a
call made through PySpark or a callback counts too). Only the calls made inside ``segment``
(a function of a module, e.g. ``lakemark.job:read_planned``) are kept, so the numbers are
those of the read, not of the whole run. :class:`Shape` counts, over those calls:

* ``modules``: the lakemark modules entered (the segment's own module included);
* ``re_entries``: calls into a module the read had entered before (it left it and came back;
  the :data:`SHARED` request and error helpers are not counted);
* ``call_backs``: calls into a module that is still on the stack below the caller, i.e. a
  module calling back into one that (directly or not) called it;
* ``up_layer``: calls into a module of a higher layer (tests/unit/test_layers.py's layers)
  than the caller's.

Only calls count (not returns): a module calling a helper twice re-enters the helper once.
A generator resumed (``next`` on a generator expression handed to another module) is data
asked for, not a call, and does not count; a function handed down and called is a call.
``python tests/read_path_trace.py`` is not a command; the numbers are taken by
tests/spark/test_read_path_shape.py, which prints them (``-s``) and pins them.
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any


def _layers() -> dict[str, int]:
    """tests/unit/test_layers.py's layers (the one place they are written)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "_layers_for_trace", Path(__file__).parent / "unit" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LAYERS)


LAYERS = _layers()

PACKAGE = "lakemark"
#: Modules every step of a read uses as values or helpers, not steps of their own: the read
#: request (its option look-ups are method calls), the translation of Spark's errors and the
#: values the steps of a tracked read hand over (``_formats``).
#: Calls into them are not counted as re-entries.
SHARED = ("lakemark.sources._options", "lakemark.sources._errors", "lakemark.sources._formats")
_GENERATOR = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE


def layer_of(module: str) -> int:
    """The layer of ``lakemark.<unit>...`` (test_layers' units; the package root is 8)."""
    parts = module.split(".")
    unit = parts[1] if len(parts) > 1 else "__init__"
    return LAYERS.get(unit, -1)


@dataclass(frozen=True)
class Call:
    """One call between modules: who called, who was entered (and its function), and the
    lakemark modules on the stack below the caller (outermost first)."""

    caller: str
    callee: str
    function: str
    below: tuple[str, ...]


@dataclass
class Shape:
    """The calls between modules made inside the traced segment, and what they count to."""

    root: str
    calls: list[Call] = field(default_factory=list)

    def modules(self) -> list[str]:
        """Modules entered, in order of first entry (the segment's own first)."""
        seen = [self.root]
        for c in self.calls:
            if c.callee not in seen:
                seen.append(c.callee)
        return seen

    def re_entries(self, within: str = PACKAGE) -> list[Call]:
        """Calls into a module (under ``within``, not :data:`SHARED`) entered before in the
        segment."""
        entered = {self.root}
        out = []
        for c in self.calls:
            if c.callee in entered and c.callee.startswith(within) and c.callee not in SHARED:
                out.append(c)
            entered.add(c.callee)
        return out

    def call_backs(self, within: str = PACKAGE) -> list[Call]:
        """Calls into a module (under ``within``) that is on the stack below its caller."""
        return [c for c in self.calls
                if c.callee.startswith(within) and c.callee in c.below]

    def up_layer(self, within: str = PACKAGE) -> list[Call]:
        """Calls from a module (under ``within``) into one of a higher layer."""
        return [c for c in self.calls
                if c.caller.startswith(within) and layer_of(c.callee) > layer_of(c.caller)]

    def counts(self, within: str = PACKAGE) -> dict[str, int]:
        """The numbers: modules entered, re-entries, call-backs, up-layer calls (calls made
        by or into modules under ``within``)."""
        return {"modules": len([m for m in self.modules() if m.startswith(within)]),
                "re_entries": len(self.re_entries(within)),
                "call_backs": len(self.call_backs(within)),
                "up_layer": len(self.up_layer(within))}

    def steps(self, orchestrator: str, within: str = "lakemark.sources") -> list[str]:
        """The calls ``orchestrator`` makes into the other modules under ``within`` (not
        :data:`SHARED`, not a dataclass being made), as ``module.function`` in order: the
        read's steps as it runs them."""
        return [f"{c.callee.removeprefix(within + '.')}.{c.function}" for c in self.calls
                if c.caller == orchestrator and c.callee.startswith(within)
                and c.callee not in SHARED and c.function != "__init__"]

    def callers_of(self, function: str) -> list[str]:
        """The modules that call ``module.function`` (e.g. the schema decision), in order."""
        module, name = function.rsplit(".", 1)
        return [c.caller for c in self.calls if c.callee == module and c.function == name]

    def path(self) -> list[str]:
        """The modules in the order the read is in them (consecutive repeats merged)."""
        out = [self.root]
        for c in self.calls:
            # The caller is where the read is when the call is made.
            if c.caller != out[-1]:
                out.append(c.caller)
            out.append(c.callee)
        return out


def _lakemark_frames(frame: FrameType | None) -> list[tuple[str, str]]:
    """(module, function) of the lakemark frames from ``frame`` outwards."""
    out = []
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            out.append((name, frame.f_code.co_name))
        frame = frame.f_back
    return out


def trace(run: Callable[[], Any], segment: str) -> tuple[Any, Shape]:
    """Run ``run`` and return its result with the :class:`Shape` of the calls made inside
    ``segment`` (``module:function``; the first such frame on the stack bounds it)."""
    root_module, root_function = segment.split(":")
    shape = Shape(root_module)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(PACKAGE) or frame.f_code.co_flags & _GENERATOR:
            return  # not lakemark's, or a generator resumed (data asked for, not a call)
        outer = _lakemark_frames(frame.f_back)
        try:
            at = outer.index((root_module, root_function))
        except ValueError:
            return  # outside the segment
        inside = outer[:at + 1]
        caller = inside[0][0]
        if caller == name:
            return
        below = tuple(dict.fromkeys(m for m, _ in reversed(inside[1:])))
        shape.calls.append(Call(caller, name, frame.f_code.co_name, below))

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = run()
    finally:
        sys.setprofile(before)
    return result, shape


def report(kind: str, shape: Shape) -> str:
    """A few lines for a human: the counts and the path through ``lakemark.sources``."""
    lines = [f"{kind}: read {shape.counts()} sources {shape.counts('lakemark.sources')}"]
    lines.append("  path: " + " > ".join(m.removeprefix("lakemark.") for m in shape.path()))
    lines.append("  steps of the tracked read: "
                 + ", ".join(shape.steps("lakemark.sources._schema_track")))
    again = Counter(c.callee.removeprefix("lakemark.")
                    for c in shape.re_entries("lakemark.sources"))
    lines.append(f"  re-entered in sources: {dict(again.most_common())}")
    for c in shape.call_backs():
        lines.append(f"  call-back: {c.caller} -> {c.callee}.{c.function}")
    for c in shape.up_layer():
        lines.append(f"  up-layer: {c.caller} -> {c.callee}.{c.function}")
    return "\n".join(lines)
