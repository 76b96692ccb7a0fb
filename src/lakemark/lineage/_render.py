"""Renderers of :class:`JobLineage`: OpenLineage events, Graphviz DOT, Mermaid, JSON.

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
import json
import re
import uuid
from collections.abc import Sequence
from datetime import datetime, UTC
from typing import Any

from ._graph import DIRECT, JobLineage, redact_lineage

__all__ = ["PRODUCER", "to_dot", "to_json", "to_mermaid", "to_openlineage"]

PRODUCER = "https://github.com/lakemark/lakemark/lineage"
_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _ol_dataset(ds: Any, fields: Sequence[tuple[str, str | None]], output: Any = None,
                ) -> dict[str, Any]:
    from openlineage.client.facet_v2 import (
        column_lineage_dataset,
        schema_dataset,
        symlinks_dataset,
    )

    facets: dict[str, Any] = {}
    if fields:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(fields=[
            schema_dataset.SchemaDatasetFacetFields(name=n, type=t or None)
            for n, t in fields])
    if ds.symlinks:
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(identifiers=[
            symlinks_dataset.Identifier(namespace=s.namespace, name=s.name, type=s.type)
            for s in ds.symlinks])
    if output is not None and (output.columns or output.indirect):
        def field(e: Any) -> Any:
            return column_lineage_dataset.InputField(
                namespace=e.dataset.namespace, name=e.dataset.name, field=e.field,
                transformations=[column_lineage_dataset.Transformation(
                    type=e.type, subtype=e.subtype,
                    description=(f"{e.description} (line {e.line})" if e.description
                                 else f"line {e.line}"),
                    masking=False)])

        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={name: column_lineage_dataset.Fields(inputFields=[field(e) for e in edges])
                    for name, edges in output.columns},
            dataset=[field(e) for e in output.indirect])
    return facets


def to_openlineage(jobs: Sequence[JobLineage], *, event_time: str | None = None,
                   ) -> list[dict[str, Any]]:
    """One COMPLETE RunEvent per job (openlineage-python's model, as plain JSON dicts),
    with ``schema``, ``symlinks`` and ``columnLineage`` facets. Static lineage has no real
    run, so each event gets a fresh run id and ``event_time`` (now by default)."""
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState
    from openlineage.client.facet_v2 import job_type_job, source_code_job
    from openlineage.client.serde import Serde

    when = event_time or datetime.now(UTC).isoformat()
    jobs = redact_lineage(jobs, source=True)
    events: list[dict[str, Any]] = []
    for job in jobs:
        inputs = [InputDataset(namespace=i.dataset.namespace, name=i.dataset.name,
                               facets=_ol_dataset(i.dataset, i.fields))
                  for i in job.inputs]
        outputs = []
        for o in job.outputs:
            fields = [(name, None) for name, _ in o.columns]
            outputs.append(OutputDataset(namespace=o.dataset.namespace, name=o.dataset.name,
                                         facets=_ol_dataset(o.dataset, fields, o)))
        job_facets: dict[str, Any] = {
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH",
                                                    integration="GLUE", jobType="JOB"),
        }
        if job.source_code:
            job_facets["sourceCode"] = source_code_job.SourceCodeJobFacet(
                language="python", sourceCode=job.source_code)
        event = RunEvent(eventType=RunState.COMPLETE, eventTime=when, producer=PRODUCER,
                         run=Run(runId=str(uuid.uuid4())),
                         job=Job(namespace=job.namespace, name=job.job, facets=job_facets),
                         inputs=inputs, outputs=outputs)
        events.append(json.loads(Serde.to_json(event)))
    return events


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
                    lines.append(f'  {src} -> {oid}:{ports.get((o.dataset.key, name), "h")} '
                                 f'[label="{_dot_text(e.subtype.lower())} L{int(e.line)}"'
                                 f'{", color=red" if e.subtype == "UNKNOWN" else ""}];')
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
