"""A self-contained HTML report of lineage that stays usable at hundreds of jobs.

The page has a searchable index of jobs and datasets (search also finds columns) and, for the
selected job or dataset, its upstream and downstream graph — jobs and datasets as nodes, each
dataset with its columns, every column edge drawn from its input column through the job that
makes it to its output column — laid out by dagre (a layered graph layout library, vendored in
``assets/``, MIT licence). Depth (jobs away from the selection) is chosen in the page; a small
lineage (up to 80 jobs and datasets) opens on everything, a larger one on its first job, and
``#sel=j:<job>`` / ``#sel=d:<dataset key>`` in the address opens that selection. Clicking a
column highlights its upstream and downstream column lineage; a job filter dims the edges of
other jobs. Pan (drag) and zoom (wheel); each edge's tooltip gives its transformation,
description, job and script line. No external files, fonts or scripts.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ._graph import JobLineage, redact_lineage
from ._values import UNCERTAIN

__all__ = ["to_html"]

_ROW = 18
_HEAD = 24
_WIDTH = 260
_ASSETS = Path(__file__).resolve().parent / "assets"


@cache
def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _collect(jobs: Sequence[JobLineage]
             ) -> tuple[dict[str, dict[str, object]], list[dict[str, object]]]:
    """Every dataset (its columns, the jobs that read and write it) and every column edge."""
    datasets: dict[str, dict[str, object]] = {}

    def add(key: str, label: str, cols: list[str], job: str = "", role: str = "",
            ) -> dict[str, object]:
        entry = datasets.setdefault(key, {"key": key, "label": label, "cols": [], "jobs": [],
                                          "readers": [], "writers": []})
        known: list[str] = entry["cols"]  # type: ignore[assignment]
        for c in cols:
            if c not in known:
                known.append(c)
        for name in ("jobs", role) if role else ():
            listed: list[str] = entry[name]  # type: ignore[assignment]
            if job not in listed:
                listed.append(job)
        return entry

    edges: list[dict[str, object]] = []
    for job in jobs:
        for i in job.inputs:
            add(i.dataset.key, i.dataset.label, [n for n, _ in i.fields], job.job, "readers")
        for o in job.outputs:
            add(o.dataset.key, o.dataset.label, [n for n, _ in o.columns], job.job, "writers")
            for name, es in o.columns:
                for e in es:
                    add(e.dataset.key, e.dataset.label, [e.field], job.job, "readers")
                    edges.append({"from": e.dataset.key, "fcol": e.field, "to": o.dataset.key,
                                  "tcol": name, "kind": e.subtype, "type": e.type,
                                  "desc": e.description, "line": e.line, "job": job.job,
                                  "unsure": e.description.startswith(UNCERTAIN)})
            for e in o.indirect:
                add(e.dataset.key, e.dataset.label, [e.field], job.job, "readers")
                edges.append({"from": e.dataset.key, "fcol": e.field, "to": o.dataset.key,
                              "tcol": "", "kind": e.subtype, "type": e.type, "desc": "",
                              "line": e.line, "job": job.job, "unsure": False})
    return datasets, edges


def to_html(jobs: Sequence[JobLineage], title: str = "lakemark lineage") -> str:
    """The report as one HTML document (see the module docstring).

    Names reach the page only as JSON inside its data ``<script>``, with ``<``, ``>``, ``&`` and
    U+2028/U+2029 written as ``\\u`` escapes (so no name can end the script, open a comment or
    break the JavaScript string), and are put into the page by the script as text nodes and
    attribute values, never as markup. Credentials are removed first (:func:`redact_lineage`).
    """
    jobs = redact_lineage(jobs)
    datasets, edges = _collect(jobs)
    data = {"datasets": list(datasets.values()), "edges": edges,
            "jobs": list(dict.fromkeys(j.job for j in jobs)),
            "warnings": [{"job": j.job, "text": str(w)} for j in jobs for w in j.warnings],
            "row": _ROW, "head": _HEAD, "width": _WIDTH}
    values = {"__TITLE__": html.escape(title), "__DATA__": script_json(data),
              "__CSS__": _asset("report.css"), "__DAGRE__": _asset("dagre.min.js"),
              "__CODE__": _asset("report.js")}
    # one pass, so a title or a name that reads "__DATA__" is not substituted again
    return re.sub(r"__(?:TITLE|DATA|CSS|DAGRE|CODE)__", lambda m: values[m.group(0)], _TEMPLATE)


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                   "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(data: object) -> str:
    """``data`` as a JavaScript literal that is safe inside an HTML ``<script>`` element."""
    # a lone surrogate (a file name read with surrogateescape) becomes "?": no page holds one
    valid = json.dumps(data, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")
    text = json.dumps(json.loads(valid), ensure_ascii=True)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_ESCAPES[m.group(0)], text)


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
__CSS__</style></head><body>
<header><b>__TITLE__</b>
<input id="q" placeholder="search job, dataset or column" size="32">
<button id="all" type="button">whole graph</button>
<label>depth <select id="depth"><option value="1">1</option><option value="2" selected>2</option>
<option value="3">3</option><option value="0">all</option></select></label>
<select id="job"><option value="">all jobs</option></select>
<span id="count"></span><span id="where"></span></header>
<div id="main"><nav id="side"></nav>
<svg id="graph" xmlns="http://www.w3.org/2000/svg"><g id="view"></g></svg></div>
<div id="warn"></div>
<script>
__DAGRE__</script>
<script>
const D=__DATA__;const NS="http://www.w3.org/2000/svg";
__CODE__</script></body></html>
"""
