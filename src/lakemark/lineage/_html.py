"""A self-contained HTML report of lineage: datasets with their columns, jobs, and every
column edge, laid out left to right as an SVG a person can pan (drag), zoom (wheel), search
(highlights matching columns and their edges) and filter by job. Each edge's tooltip gives
its transformation, description and script line. No external files, fonts or scripts.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence

from ._graph import JobLineage, redact_lineage

__all__ = ["to_html"]

_ROW = 18
_HEAD = 24
_WIDTH = 260
_GAP_X = 200
_GAP_Y = 24


def _layout(jobs: Sequence[JobLineage]) -> tuple[dict[str, dict[str, object]], list[dict[str, object]]]:
    """Datasets placed in columns by depth (inputs left, outputs right), rows per column."""
    datasets: dict[str, dict[str, object]] = {}
    depth: dict[str, int] = {}

    def add(key: str, label: str, cols: list[str]) -> dict[str, object]:
        entry = datasets.setdefault(key, {"key": key, "label": label, "cols": [], "jobs": []})
        for c in cols:
            if c not in entry["cols"]:  # type: ignore[operator]
                entry["cols"].append(c)  # type: ignore[attr-defined]
        return entry

    edges: list[dict[str, object]] = []
    for job in jobs:
        for i in job.inputs:
            entry = add(i.dataset.key, i.dataset.label, [n for n, _ in i.fields])
            entry["jobs"].append(job.job)  # type: ignore[attr-defined]
            depth.setdefault(i.dataset.key, 0)
        for o in job.outputs:
            entry = add(o.dataset.key, o.dataset.label, [n for n, _ in o.columns])
            entry["jobs"].append(job.job)  # type: ignore[attr-defined]
            for name, es in o.columns:
                for e in es:
                    add(e.dataset.key, e.dataset.label, [e.field])
                    depth[o.dataset.key] = max(depth.get(o.dataset.key, 1),
                                               depth.get(e.dataset.key, 0) + 1)
                    edges.append({"from": e.dataset.key, "fcol": e.field, "to": o.dataset.key,
                                  "tcol": name, "kind": e.subtype, "type": e.type,
                                  "desc": e.description, "line": e.line, "job": job.job})
            for e in o.indirect:
                add(e.dataset.key, e.dataset.label, [e.field])
                edges.append({"from": e.dataset.key, "fcol": e.field, "to": o.dataset.key,
                              "tcol": "", "kind": e.subtype, "type": e.type, "desc": "",
                              "line": e.line, "job": job.job})
            depth.setdefault(o.dataset.key, 1)
    ys: dict[int, int] = {}
    for key, entry in datasets.items():
        d = depth.get(key, 0)
        y = ys.get(d, 20)
        entry["x"] = 20 + d * (_WIDTH + _GAP_X)
        entry["y"] = y
        ys[d] = y + _HEAD + _ROW * max(1, len(entry["cols"])) + _GAP_Y  # type: ignore[arg-type]
    return datasets, edges


def to_html(jobs: Sequence[JobLineage], title: str = "lakemark lineage") -> str:
    """The report as one HTML document (see the module docstring).

    Names reach the page only as JSON inside its one ``<script>``, with ``<``, ``>``, ``&`` and
    U+2028/U+2029 written as ``\\u`` escapes (so no name can end the script, open a comment or
    break the JavaScript string), and are put into the page by the script as text nodes and
    attribute values, never as markup. Credentials are removed first (:func:`redact_lineage`).
    """
    jobs = redact_lineage(jobs)
    datasets, edges = _layout(jobs)
    data = {"datasets": list(datasets.values()), "edges": edges,
            "jobs": [j.job for j in jobs],
            "warnings": [{"job": j.job, "text": str(w)} for j in jobs for w in j.warnings],
            "row": _ROW, "head": _HEAD, "width": _WIDTH}
    payload = script_json(data)
    values = {"__TITLE__": html.escape(title), "__DATA__": payload}
    # one pass, so a title or a name that reads "__DATA__" is not substituted again
    return re.sub(r"__TITLE__|__DATA__", lambda m: values[m.group(0)], _TEMPLATE)


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
body{margin:0;font:13px system-ui,sans-serif;display:flex;flex-direction:column;height:100vh}
header{padding:6px 10px;background:#f3f5f9;border-bottom:1px solid #ccd;display:flex;gap:10px;align-items:center}
#graph{flex:1;cursor:grab}
.ds rect.box{fill:#fff;stroke:#7a8ab0;rx:4}
.ds rect.hd{fill:#dde8ff}
.ds text{font-size:12px}
.col.hit text{font-weight:bold;fill:#b00}
path.e{fill:none;stroke:#5b6b9a;stroke-width:1.2;opacity:.7}
path.e.INDIRECT{stroke-dasharray:4 3;stroke:#999}
path.e.UNKNOWN{stroke:#d33}
path.e.hit{stroke:#b00;stroke-width:2.5;opacity:1}
.dim{opacity:.12}
#warn{max-height:20vh;overflow:auto;padding:4px 10px;background:#fff8e5;border-top:1px solid #eed}
</style></head><body>
<header><b>__TITLE__</b>
<input id="q" placeholder="search column or dataset" size="30">
<select id="job"><option value="">all jobs</option></select>
<span id="count"></span></header>
<svg id="graph" xmlns="http://www.w3.org/2000/svg"><g id="view"></g></svg>
<div id="warn"></div>
<script>
const D=__DATA__;const NS="http://www.w3.org/2000/svg";
const view=document.getElementById("view"),svg=document.getElementById("graph");
const pos={};
function el(n,a,p){const e=document.createElementNS(NS,n);for(const k in a)e.setAttribute(k,a[k]);p.appendChild(e);return e}
const edgeLayer=el("g",{},view);
for(const d of D.datasets){
 const g=el("g",{class:"ds","data-key":d.key,"data-jobs":d.jobs.join("\\n")},view);
 const h=D.head+D.row*Math.max(1,d.cols.length);
 el("rect",{class:"box",x:d.x,y:d.y,width:D.width,height:h},g);
 el("rect",{class:"hd",x:d.x,y:d.y,width:D.width,height:D.head},g);
 const t=el("text",{x:d.x+6,y:d.y+16,"font-weight":"bold"},g);t.textContent=d.label;
 el("title",{},t).textContent=d.key;
 d.cols.forEach((c,i)=>{const cy=d.y+D.head+D.row*i;
  const cg=el("g",{class:"col","data-name":c.toLowerCase()},g);
  const ct=el("text",{x:d.x+12,y:cy+13},cg);ct.textContent=c;
  pos[d.key+"\\u0000"+c]={x:d.x,y:cy+D.row/2};});
 pos[d.key+"\\u0000"]={x:d.x,y:d.y+D.head/2};
}
const paths=[];
for(const e of D.edges){
 const a=pos[e.from+"\\u0000"+e.fcol]||pos[e.from+"\\u0000"],b=pos[e.to+"\\u0000"+e.tcol]||pos[e.to+"\\u0000"];
 if(!a||!b)continue;const x1=a.x+D.width,x2=b.x,mx=(x1+x2)/2;
 const p=el("path",{class:"e "+e.type+" "+e.kind,d:`M${x1},${a.y} C${mx},${a.y} ${mx},${b.y} ${x2},${b.y}`},edgeLayer);
 el("title",{},p).textContent=`${e.from}.${e.fcol} -> ${e.to}.${e.tcol||"(dataset)"}\\n${e.type} ${e.kind}${e.desc?": "+e.desc:""}\\njob ${e.job}, line ${e.line}`;
 paths.push([p,e]);
}
const sel=document.getElementById("job");
for(const j of D.jobs){const o=document.createElement("option");o.value=o.textContent=j;sel.appendChild(o)}
const w=document.getElementById("warn");
w.innerHTML="";for(const x of D.warnings){const div=document.createElement("div");div.textContent="warning "+x.job+": "+x.text;w.appendChild(div)}
function apply(){
 const q=document.getElementById("q").value.trim().toLowerCase(),job=sel.value;let n=0;
 for(const [p,e] of paths){const inJob=!job||e.job===job;
  const hit=q&&((e.fcol+" "+e.tcol+" "+e.from+" "+e.to).toLowerCase().includes(q));
  p.classList.toggle("dim",!inJob||(q&&!hit));p.classList.toggle("hit",!!hit&&inJob);if(inJob&&(!q||hit))n++}
 for(const g of view.querySelectorAll("g.ds")){const js=g.dataset.jobs.split("\\n");
  g.classList.toggle("dim",!!job&&!js.includes(job));
  for(const c of g.querySelectorAll("g.col"))c.classList.toggle("hit",!!q&&c.dataset.name.includes(q));}
 document.getElementById("count").textContent=n+" edges";
}
document.getElementById("q").oninput=apply;sel.onchange=apply;apply();
let vb=[0,0,svg.clientWidth||1200,svg.clientHeight||800],drag=null;
function setvb(){svg.setAttribute("viewBox",vb.join(" "))}setvb();
svg.onmousedown=e=>{drag=[e.clientX,e.clientY]};window.onmouseup=()=>drag=null;
window.onmousemove=e=>{if(!drag)return;const s=vb[2]/svg.clientWidth;vb[0]-=(e.clientX-drag[0])*s;vb[1]-=(e.clientY-drag[1])*s;drag=[e.clientX,e.clientY];setvb()};
svg.onwheel=e=>{e.preventDefault();const f=e.deltaY>0?1.1:0.9;vb[2]*=f;vb[3]*=f;setvb()};
</script></body></html>
"""
