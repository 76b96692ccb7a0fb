"""The HTML lineage report in headless Chromium at 30 and 500 jobs (issue 19, finding 8): the
index lists every job and dataset, search narrows it, selecting a dataset draws its upstream and
downstream graph (jobs as nodes, laid out by dagre), the depth control widens it, a clicked
column highlights its column lineage, and the job filter really dims other edges (the CSS
``.dim`` rule used to lose to ``path.e``). The interactions run in the browser: a test script
appended to a copy of the report uses the page's own controls and writes what it saw into the
DOM, which ``--dump-dom`` returns.

Set LAKEMARK_UPDATE_SCREENSHOT=1 to refresh docs/lineage-report-30.png and -500.png."""

from __future__ import annotations

import html
import json
import os
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lineage_synth import make_estate
from test_lineage_html_render import HEIGHT, ROOT, WIDTH, chromium

from lakemark.lineage import scan_folder
from lakemark.lineage._html import to_html

PROBE = """<script>
(function(){const R={};
 const ids=()=>[...document.querySelectorAll("#side li")].filter(li=>getComputedStyle(li).display!=="none").map(li=>li.dataset.id);
 const shown=()=>({ds:[...document.querySelectorAll("#view g.ds")].map(g=>g.dataset.key).sort(),
   jobs:[...document.querySelectorAll("#view g.job")].map(g=>g.dataset.job).sort()});
 const edges=()=>[...document.querySelectorAll("#view path.e")];
 try{
  R.first={...shown(),where:document.getElementById("where").textContent,index:ids().length};
  const q=document.getElementById("q");
  q.value=__QUERY__;q.dispatchEvent(new Event("input"));R.search=ids();
  q.value="";q.dispatchEvent(new Event("input"));
  document.querySelector('#side li[data-id="d:'+CSS.escape(__DATASET__)+'"]').click();
  R.selected={...shown(),hash:decodeURIComponent(location.hash),
   sel:[...document.querySelectorAll("#side li.sel")].map(li=>li.dataset.id)};
  const depth=document.getElementById("depth");depth.value="1";depth.dispatchEvent(new Event("change"));
  R.depth1=shown();
  const job=document.getElementById("job");job.value=__JOB__;job.dispatchEvent(new Event("change"));
  R.filter=edges().map(p=>[D.edges[+p.dataset.i].job,getComputedStyle(p).opacity]);
  R.filterDims=[...document.querySelectorAll("#view g.job")].map(g=>[g.dataset.job,getComputedStyle(g).opacity]);
  R.count=document.getElementById("count").textContent;
  job.value="";job.dispatchEvent(new Event("change"));
  const col=[...document.querySelectorAll('#view g.ds[data-key="'+CSS.escape(__DATASET__)+'"] g.col')]
   .find(c=>c.dataset.name===__COLUMN__);
  col.dispatchEvent(new MouseEvent("click",{bubbles:true}));
  R.column=edges().filter(p=>p.classList.contains("hit")).map(p=>+p.dataset.i).sort((a,b)=>a-b);
  R.columnDim=edges().filter(p=>getComputedStyle(p).opacity==="0.12").length;
  R.edgesInView=edges().length;
 }catch(e){R.error=String(e)+" "+e.stack}
 const pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(R);
 document.body.appendChild(pre)})();
</script></body></html>"""


def build(tmp_path: Path, jobs: int) -> tuple[Path, dict[str, Any]]:
    make_estate(tmp_path / "in", jobs)
    page = to_html(scan_folder(tmp_path / "in"))
    path = tmp_path / f"lineage{jobs}.html"
    path.write_text(page)
    m = re.search(r"const D=(.*?);const NS=", page, re.S)
    assert m
    return path, json.loads(m.group(1))


def browser(browser_path: str, tmp_path: Path, url: str, *, shot: Path | None = None) -> str:
    args = [browser_path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={tmp_path / 'profile'}"]
    args += [f"--screenshot={shot}"] if shot else ["--dump-dom"]
    done = subprocess.run([*args, url], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


def neighbourhood(data: dict[str, Any], start: str, depth: int) -> set[str]:
    """What the page must draw for a selection: the node and everything up to ``depth`` jobs
    upstream and downstream of it (ids ``d:<key>`` and ``j:<job>``)."""
    preds: dict[str, set[str]] = {}
    succs: dict[str, set[str]] = {}
    for d in data["datasets"]:
        for j in d["readers"]:
            preds.setdefault("j:" + j, set()).add("d:" + d["key"])
            succs.setdefault("d:" + d["key"], set()).add("j:" + j)
        for j in d["writers"]:
            succs.setdefault("j:" + j, set()).add("d:" + d["key"])
            preds.setdefault("d:" + d["key"], set()).add("j:" + j)
    nodes = {start}
    for step in (preds, succs):
        front = {start}
        for _ in range(depth * 2):
            front = {m for n in front for m in step.get(n, ())} - nodes
            nodes |= front
    return nodes


def split(nodes: set[str]) -> dict[str, list[str]]:
    return {"ds": sorted(n[2:] for n in nodes if n[0] == "d"),
            "jobs": sorted(n[2:] for n in nodes if n[0] == "j")}


def column_lineage(data: dict[str, Any], key: str, col: str, view: set[str]) -> list[int]:
    """Indexes of the edges upstream and downstream of one column (as drawn in the view)."""
    hit: set[int] = set()
    edges = data["edges"]
    for upstream in (True, False):
        todo, seen = [(key, col)], set()
        while todo:
            port = todo.pop()
            if port in seen:
                continue
            seen.add(port)
            for i, e in enumerate(edges):
                if upstream and (e["to"], e["tcol"]) == port:
                    hit.add(i)
                    todo.append((e["from"], e["fcol"]))
                elif not upstream and (e["from"], e["fcol"]) == port:
                    hit.add(i)
                    if e["tcol"]:
                        todo.append((e["to"], e["tcol"]))
    return sorted(i for i in hit if {"d:" + edges[i]["from"], "d:" + edges[i]["to"],
                                     "j:" + edges[i]["job"]} <= view)


def probe(tmp_path: Path, path: Path, data: dict[str, Any], *, query: str, dataset: str,
          job: str, column: str) -> dict[str, Any]:
    page = path.read_text()
    values = {"__QUERY__": query, "__DATASET__": dataset, "__JOB__": job, "__COLUMN__": column}
    script = PROBE
    for k, v in values.items():
        script = script.replace(k, json.dumps(v))
    probed = tmp_path / "probe.html"
    probed.write_text(page.rsplit("</body></html>", 1)[0] + script)
    dom = browser(chromium(), tmp_path, probed.resolve().as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, dom[-2000:]
    result: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    assert "error" not in result, result["error"]
    return result


@pytest.mark.parametrize("jobs", [30, 500])
def test_index_search_focus_depth_filter_and_column_lineage_in_chromium(
        tmp_path: Path, jobs: int) -> None:
    path, data = build(tmp_path, jobs)
    keys = {d["label"]: d["key"] for d in data["datasets"]}
    target = keys[f"lake.t_{jobs // 3:03d}"]
    writer = f"job_{jobs // 3:03d}"
    column = f"a_{jobs // 3:03d}"
    r = probe(tmp_path, path, data, query=f"u_{jobs // 3:03d}", dataset=target, job=writer,
              column=column)

    # the index holds every job and dataset; the first view is everything only when small
    assert r["first"]["index"] == len(data["jobs"]) + len(data["datasets"])
    if jobs > 30:
        first = split(neighbourhood(data, "j:job_000", 2))
        assert {k: r["first"][k] for k in ("ds", "jobs")} == first
        assert "job job_000" in r["first"]["where"]
    else:
        assert len(r["first"]["jobs"]) == jobs and len(r["first"]["ds"]) == len(data["datasets"])
    # search narrows the index (to the dataset with that column)
    assert r["search"] == ["d:" + target]
    # selecting a dataset draws its upstream and downstream graph, to depth 2 then 1
    view2 = neighbourhood(data, "d:" + target, 2)
    assert {k: r["selected"][k] for k in ("ds", "jobs")} == split(view2)
    assert r["selected"]["hash"] == "#sel=d:" + target and r["selected"]["sel"] == ["d:" + target]
    view1 = neighbourhood(data, "d:" + target, 1)
    assert r["depth1"] == split(view1) and len(view1) < len(view2)
    # the job filter dims the other jobs' edges for real (computed opacity)
    assert {op for j, op in r["filter"] if j == writer} == {"0.7"}
    assert {op for j, op in r["filter"] if j != writer} == {"0.12"}
    assert {op for j, op in r["filterDims"] if j != writer} == {"0.12"}
    assert r["count"] == f"{sum(1 for j, _ in r['filter'] if j == writer)} edges"
    # a clicked column lights its lineage, upstream and downstream, and dims the rest
    expected = column_lineage(data, target, column, view1)
    assert expected and r["column"] == expected
    assert r["columnDim"] == r["edgesInView"] - len(expected)


@pytest.mark.parametrize("jobs", [30, 500])
def test_report_screenshots_at_scale(tmp_path: Path, jobs: int) -> None:
    path, data = build(tmp_path, jobs)
    target = {d["label"]: d["key"] for d in data["datasets"]}[f"lake.t_{jobs // 2:03d}"]
    url = path.resolve().as_uri() + "#sel=d:" + target
    dom = browser(chromium(), tmp_path, url)
    drawn = re.findall(r'<g class="ds[^"]*" data-key="([^"]*)"', dom)
    assert len(drawn) == len(split(neighbourhood(data, "d:" + target, 2))["ds"])
    assert re.search(rf'<g class="ds focus" data-key="{re.escape(html.escape(target))}"', dom)
    shot = tmp_path / "shot.png"
    browser(chromium(), tmp_path, url, shot=shot)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (WIDTH, HEIGHT)
    if os.environ.get("LAKEMARK_UPDATE_SCREENSHOT"):
        (ROOT / "docs" / f"lineage-report-{jobs}.png").write_bytes(png)
