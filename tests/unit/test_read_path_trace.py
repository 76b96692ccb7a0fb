"""tests/read_path_trace.py counts what it says: on three made-up lakemark modules (no Spark),
a call-back, a call up a layer, a re-entry and the orchestrator's steps are each seen, and a
generator handed down and resumed is not a call."""

from __future__ import annotations

import types

from read_path_trace import trace


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(source, module.__dict__)  # the probe modules written above, not scanned input
    return module


def test_the_trace_sees_call_backs_up_layer_calls_re_entries_and_steps() -> None:
    run = _module("lakemark.run._probe", "def note(x):\n    return x\n")
    helper = _module("lakemark.sources._probe_helper", (
        "def step(callback, run):\n"
        "    run.note(1)\n"             # sources -> run: up a layer
        "    return callback()\n"))     # calls back into the orchestrator's module
    top = _module("lakemark.sources._probe_top", (
        "def read(helper, run):\n"
        "    first = helper.step(lambda: 1, run)\n"
        "    values = sum(x for x in range(3))\n"  # a generator: not a call
        "    return first + helper.step(lambda: 2, run) + values\n"))
    result, shape = trace(lambda: top.read(helper, run), "lakemark.sources._probe_top:read")
    assert result == 6
    assert shape.modules() == ["lakemark.sources._probe_top", "lakemark.sources._probe_helper",
                               "lakemark.run._probe"]
    assert shape.steps("lakemark.sources._probe_top", within="lakemark.sources") == [
        "_probe_helper.step", "_probe_helper.step"]
    assert [(c.caller, c.callee) for c in shape.call_backs()] == [
        ("lakemark.sources._probe_helper", "lakemark.sources._probe_top")] * 2
    assert [(c.caller, c.callee) for c in shape.up_layer()] == [
        ("lakemark.sources._probe_helper", "lakemark.run._probe")] * 2
    # Entered before: the helper (second step), run (second note), top (both call-backs).
    assert len(shape.re_entries()) == 4
    assert shape.counts("lakemark.sources") == {"modules": 2, "re_entries": 3,
                                                "call_backs": 2, "up_layer": 2}


def test_calls_outside_the_segment_are_not_counted() -> None:
    other = _module("lakemark.sources._probe_other", "def f():\n    return 1\n")
    top = _module("lakemark.sources._probe_outer",
                  "def outside(other):\n    return other.f()\n"
                  "def read(other):\n    return other.f()\n")
    _, shape = trace(lambda: top.outside(other), "lakemark.sources._probe_outer:read")
    assert shape.calls == []
