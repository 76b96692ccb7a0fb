"""Renderers of :class:`JobLineage`: Graphviz DOT, Mermaid, JSON (OpenLineage events are in
:mod:`._openlineage`, re-exported here).

All are pure functions of the lineage records; none reads files or the network. Each renders
the records only after :func:`~._graph.redact_lineage` removed credentials, and each escapes
every name for its format, so a crafted dataset, column or job name stays one label:

* **DOT**: node ids are generated (``d_<readable part>_<hash>``), never taken from a name;
  every label is a double-quoted string with ``\\`` and ``"`` escaped, record-label
  metacharacters (``{ } | < >``) backslash-escaped, and control characters turned into ``\\n``
  or dropped.
* **Mermaid**: ids are generated the same way; labels are ``["…"]`` / ``|"…"|`` strings in which
  ``"``, ``#``, ``&``, ``<``, ``>``, ``|``, backticks and brackets are Mermaid entity codes
  (``#quot;``, ``#35;`` …) and line breaks are spaces, so no label can end its quotes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from ._graph import DIRECT, JobLineage, redact_lineage
from ._openlineage import PRODUCER, to_openlineage
from ._values import UNCERTAIN

__all__ = ["PRODUCER", "to_dot", "to_json", "to_mermaid", "to_openlineage"]


def to_json(jobs: Sequence[JobLineage]) -> list[dict[str, Any]]:
    """lakemark's own JSON: per job, inputs, outputs with column edges, and warnings."""
    jobs = redact_lineage(jobs)
    out: list[dict[str, Any]] = []
    for job in jobs:
        out.append({
            "job": job.job, "namespace": job.namespace, "script": job.script,
            "inputs": [{"dataset": i.dataset.key, "label": i.dataset.label,
                        "fields": [list(f) for f in i.fields], "line": i.line}
                       for i in job.inputs],
            "outputs": [{"dataset": o.dataset.key, "label": o.dataset.label, "line": o.line,
                         "columns": {name: [_edge(e) for e in edges]
                                     for name, edges in o.columns},
                         "dataset_inputs": [_edge(e) for e in o.indirect],
                         "unlisted_inputs": [d.key for d in o.open_inputs]}
                        for o in job.outputs],
            "warnings": [{"message": w.message, "line": w.line, "file": w.file}
                         for w in job.warnings],
        })
    return out


def _edge(e: Any) -> dict[str, Any]:
    return {"dataset": e.dataset.key, "field": e.field, "type": e.type,
            "subtype": e.subtype, "description": e.description, "line": e.line}


def _id(prefix: str, text: str) -> str:
    """A DOT/Mermaid node id for ``text``: letters, digits and ``_`` only, unique per text (a
    hash of the whole text), readable (its first characters)."""
    readable = re.sub(r"[^A-Za-z0-9_]", "_", text)[:48]
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{prefix}{readable}_{digest}"


# C0 and C1 controls, line/paragraph separators and lone surrogates (which no UTF-8 file holds)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_BREAKS = "\n\r\x85\u2028\u2029"


def _dot_text(text: str) -> str:
    """``text`` inside a DOT double-quoted string (a plain label)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    return _CONTROL.sub(lambda m: "\\n" if m.group(0) in _BREAKS else " ", out)


def _quote(text: str) -> str:
    """``text`` as one field of a DOT record label (inside a double-quoted string)."""
    out = re.sub(r'([\\"{}|<> ])', r"\\\1", text)
    return _CONTROL.sub(lambda m: "\\n" if m.group(0) in _BREAKS else " ", out)


_MERMAID = {'"': "#quot;", "#": "#35;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "|": "#124;",
            "`": "#96;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;", "(": "#40;",
            ")": "#41;", ";": "#59;", "\\": "#92;"}


def _mermaid_text(text: str) -> str:
    """``text`` inside a Mermaid ``"…"`` label: quotes and markup as entity codes, one line."""
    out = "".join(_MERMAID.get(c, c) for c in text)
    return _CONTROL.sub(" ", out)


def to_dot(jobs: Sequence[JobLineage]) -> str:
    """A Graphviz digraph: datasets as record nodes (one port per column), jobs as boxes,
    column edges labelled with their subtype and line; dataset-level edges dashed."""
    jobs = redact_lineage(jobs)
    datasets: dict[str, tuple[str, dict[str, None]]] = {}
    for job in jobs:
        for i in job.inputs:
            datasets.setdefault(i.dataset.key, (i.dataset.label, {}))[1].update(
                dict.fromkeys(n for n, _ in i.fields))
        for o in job.outputs:
            datasets.setdefault(o.dataset.key, (o.dataset.label, {}))[1].update(
                dict.fromkeys(n for n, _ in o.columns))
            for _, edges in o.columns:
                for e in edges:
                    datasets.setdefault(e.dataset.key, (e.dataset.label, {}))[1][e.field] = None
    lines = ["digraph lineage {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    ports: dict[tuple[str, str], str] = {}
    for key, (label, cols) in datasets.items():
        parts = [f"<h> {_quote(label)}"]
        for n, col in enumerate(cols):
            ports[(key, col)] = f"c{n}"
            parts.append(f"<c{n}> {_quote(col)}")
        lines.append(f'  {_id("d_", key)} [shape=record, label="{"|".join(parts)}"];')
    for job in jobs:
        jid = _id("j_", job.job)
        lines.append(f'  {jid} [shape=box, style="rounded,filled", fillcolor="#dde8ff", '
                     f'label="{_dot_text(job.job)}"];')
        for i in job.inputs:
            lines.append(f"  {_id('d_', i.dataset.key)}:h -> {jid} [color=gray];")
        for o in job.outputs:
            oid = _id("d_", o.dataset.key)
            lines.append(f"  {jid} -> {oid}:h [color=gray];")
            for name, edges in o.columns:
                for e in edges:
                    src = f"{_id('d_', e.dataset.key)}:{ports.get((e.dataset.key, e.field), 'h')}"
                    unsure = e.description.startswith(UNCERTAIN)
                    mark = ", color=red" if e.subtype == "UNKNOWN" else \
                        ", color=orange, style=dotted" if unsure else ""
                    lines.append(f'  {src} -> {oid}:{ports.get((o.dataset.key, name), "h")} '
                                 f'[label="{"uncertain " if unsure else ""}'
                                 f'{_dot_text(e.subtype.lower())} L{int(e.line)}"{mark}];')
            for e in o.indirect:
                src = f"{_id('d_', e.dataset.key)}:{ports.get((e.dataset.key, e.field), 'h')}"
                lines.append(f'  {src} -> {oid}:h [style=dashed, '
                             f'label="{_dot_text(e.subtype.lower())} L{int(e.line)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(jobs: Sequence[JobLineage]) -> str:
    """A Mermaid flowchart: one node per dataset column, grouped by dataset."""
    jobs = redact_lineage(jobs)
    lines = ["flowchart LR"]
    seen: dict[str, set[str]] = {}
    edges: list[str] = []

    def node(ds: Any, col: str) -> str:
        seen.setdefault(ds.key, set()).add(col)
        return _id("n_", ds.key + chr(0) + col)

    labels: dict[str, str] = {}
    for job in jobs:
        for o in job.outputs:
            labels[o.dataset.key] = o.dataset.label
            for name, es in o.columns:
                target = node(o.dataset, name)
                for e in es:
                    labels[e.dataset.key] = e.dataset.label
                    arrow = "-.->" if e.type != DIRECT or e.subtype == "UNKNOWN" else "-->"
                    edges.append(f"  {node(e.dataset, e.field)} {arrow}|"
                                 f'"{_mermaid_text(e.subtype.lower())} L{int(e.line)}"| {target}')
        for i in job.inputs:
            labels[i.dataset.key] = i.dataset.label
            for n, _ in i.fields:
                node(i.dataset, n)
    for key, cols in seen.items():
        lines.append(f'  subgraph {_id("s_", key)}["{_mermaid_text(labels.get(key, key))}"]')
        for col in sorted(cols):
            lines.append(f'    {_id("n_", key + chr(0) + col)}["{_mermaid_text(col)}"]')
        lines.append("  end")
    lines.extend(dict.fromkeys(edges))
    return "\n".join(lines) + "\n"
