"""Crafted dataset, column and job names cannot break any lineage renderer: the HTML report is
checked with a real HTML parser (and rendered in headless Chromium), DOT with a parser of DOT's
quoted-string grammar written here, Mermaid with its label-quoting rules; every name comes back
intact as one label, and no node or edge is added."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lakemark.lineage._graph import (
    INDIRECT,
    JOIN,
    ColumnEdge,
    DatasetRef,
    InputDataset,
    JobLineage,
    LineageWarning,
    OutputLineage,
    redact_lineage,
)
from lakemark.lineage._html import to_html
from lakemark.lineage._render import to_dot, to_json, to_mermaid, to_openlineage

HOSTILE = [
    's3://b/in"] --> X["pwn <!--<script>',
    "</script><script>alert(1)</script>",
    "<!-- a comment that never ends",
    'x" -> evil [label="forged"]; y',
    'trailing backslash \\',
    'back\\"slash quote',
    "col|<p>{x}|y",
    "line\nbreak\rreturn",
    "sep\u2028line\u2029para",
    "end",
    "#quot; and #35; and `md`",
    "A --> B\n  C --> D",
    "&amp; &lt; & < >",
    "__DATA__ __TITLE__ ;const NS=1;//",
    "ünïcödé 数据 🚀",
    "a.b",
    "a_b",  # same id characters as "a.b": must stay a different node
    "nel\x85vt\x0bff\x0cfs\x1cnul\x00del\x7f",  # line breaks to str.splitlines, controls
    "lone \udc80 surrogate",  # from a file name read with surrogateescape
    "x" * 2000,
]


def hostile_jobs() -> list[JobLineage]:
    jobs = []
    for n, name in enumerate(HOSTILE):
        src = DatasetRef("s3://in", name)
        other = DatasetRef(name, "t")
        out = DatasetRef("s3://out", f"{name}/{n}")
        e1 = ColumnEdge(src, name, description=name, line=n + 1)
        e2 = ColumnEdge(other, "id", INDIRECT, JOIN, line=n + 1)
        jobs.append(JobLineage(
            job=name, namespace="glue", script=f"{n}.py",
            inputs=(InputDataset(src, ((name, "string"),)), InputDataset(other, (("id", "int"),))),
            outputs=(OutputLineage(out, ((name, (e1,)), ("plain", (e1,))), (e2,)),),
            warnings=(LineageWarning(name, n),)))
    return jobs


def expected(jobs: list[JobLineage]) -> tuple[dict[str, set[str]], dict[str, str], int]:
    """Datasets with their columns, dataset labels, and the number of column edges."""
    datasets: dict[str, set[str]] = {}
    labels: dict[str, str] = {}
    edges = 0
    for job in redact_lineage(jobs):
        for i in job.inputs:
            datasets.setdefault(i.dataset.key, set()).update(n for n, _ in i.fields)
            labels[i.dataset.key] = i.dataset.label
        for o in job.outputs:
            datasets.setdefault(o.dataset.key, set()).update(n for n, _ in o.columns)
            labels[o.dataset.key] = o.dataset.label
            for _, es in o.columns:
                edges += len(es)
                for e in es:
                    datasets.setdefault(e.dataset.key, set()).add(e.field)
            for e in o.indirect:
                datasets.setdefault(e.dataset.key, set())
    return datasets, labels, edges


# -- HTML ------------------------------------------------------------------------------------
def utf8(text: str) -> str:
    """What a UTF-8 page can hold of ``text`` (a lone surrogate becomes "?")."""
    return text.encode("utf-8", "replace").decode("utf-8")


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self.comments: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self.tags.append("/" + tag)
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def parse(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    parser.close()
    return parser


def embedded_data(script: str) -> dict:  # type: ignore[type-arg]
    start = script.index("const D=") + len("const D=")
    data, end = json.JSONDecoder().raw_decode(script, start)
    assert script[end:].startswith(";const NS=")
    return data  # type: ignore[no-any-return]


def test_html_report_keeps_hostile_names_inside_its_data() -> None:
    jobs = hostile_jobs()
    page = to_html(jobs, title='</title><script>alert("t")</script> __DATA__')
    benign = parse(to_html([JobLineage("j", "glue")]))
    hostile = parse(page)
    # the very same elements as a report of nothing: no element, comment or script was added
    assert hostile.tags == benign.tags and hostile.comments == benign.comments == []
    assert len(hostile.scripts) == 2  # the vendored dagre, then the report's data and code
    assert hostile.scripts[0] == benign.scripts[0]
    script = hostile.scripts[1]
    for bad in ("<!--", "</script", "<script", "\u2028", "\u2029"):
        assert bad not in script.lower()
    data = embedded_data(script)
    datasets, labels, edges = expected(jobs)
    assert {d["key"]: set(d["cols"]) for d in data["datasets"]} == \
        {utf8(k): {utf8(c) for c in cols} for k, cols in datasets.items()}
    assert {d["key"]: d["label"] for d in data["datasets"]} == \
        {utf8(k): utf8(v) for k, v in labels.items()}
    assert len(data["edges"]) == edges + sum(len(o.indirect) for j in jobs for o in j.outputs)
    assert data["jobs"] == [utf8(j.job) for j in redact_lineage(jobs)]
    assert "<title>" + html.escape('</title><script>alert("t")</script> __DATA__') in page


def test_html_report_with_hostile_names_renders_in_chromium(tmp_path: Path) -> None:
    from test_lineage_html_render import chromium, run_chromium

    browser = chromium()
    jobs = hostile_jobs()
    path = tmp_path / "hostile.html"
    path.write_text(to_html(jobs), encoding="utf-8")
    dom, _ = run_chromium(browser, tmp_path, path)
    datasets, _, edges = expected(jobs)
    assert len(re.findall(r'<g class="ds[^"]*" data-key=', dom)) == len(datasets)
    assert len(re.findall(r'<g class="col[^"]*" data-name=', dom)) == \
        sum(len(c) for c in datasets.values())
    indirect = sum(len(o.indirect) for j in jobs for o in j.outputs)
    assert len(re.findall(r'<path class="e (?:DIRECT|INDIRECT) ', dom)) == edges + indirect
    assert f'<span id="count">{edges + indirect} edges</span>' in dom
    assert "<script>alert(1)" not in dom.split("<script>", 2)[-1]  # only the report's script
    job_filter = dom.split('<select id="job">', 1)[1].split("</select>", 1)[0]
    assert len(re.findall(r"<option value=", job_filter)) == len(HOSTILE) + 1
    # the index lists every job and dataset, each as one entry
    assert len(re.findall(r'<li class="job[^"]*" data-id="j:', dom)) == len(HOSTILE)
    assert len(re.findall(r'<li class="ds[^"]*" data-id="d:', dom)) == len(datasets)


# -- DOT -------------------------------------------------------------------------------------
_DOT_TOKEN = re.compile(r'\s+|(?P<id>[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?)|(?P<q>")'
                        r"|(?P<p>->|[{}\[\];,=:])")


def dot_tokens(text: str) -> list[tuple[str, str]]:
    """DOT's lexer for the subset lakemark writes: ids, numerals, quoted strings (inside which
    \\" is an escaped quote, \\\\ a kept pair and \\<newline> a continuation) and punctuation."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        m = _DOT_TOKEN.match(text, i)
        assert m, f"unexpected DOT text at {text[i:i + 40]!r}"
        if m.group("id"):
            out.append(("id", m.group("id")))
            i = m.end()
        elif m.group("p"):
            out.append(("p", m.group("p")))
            i = m.end()
        elif m.group("q"):
            j, buf = i + 1, []
            while True:
                assert j < len(text), "unterminated DOT string"
                pair = text[j:j + 2]
                if pair == '\\"':  # graphviz's scan.l: \" is a quote, \\ is kept as a pair
                    buf.append('"')
                    j += 2
                elif pair == "\\\\":
                    buf.append(pair)
                    j += 2
                elif pair == "\\\n":
                    j += 2
                elif text[j] == '"':
                    break
                else:
                    buf.append(text[j])
                    j += 1
            out.append(("q", "".join(buf)))
            i = j + 1
        else:
            i = m.end()
    return out


def dot_statements(text: str) -> list[list[tuple[str, str]]]:
    tokens = dot_tokens(text)
    assert tokens[:3] == [("id", "digraph"), ("id", "lineage"), ("p", "{")]
    assert tokens[-1] == ("p", "}")
    body, statements, current, depth = tokens[3:-1], [], [], 0
    for tok in body:
        if tok == ("p", "{") or tok == ("p", "}"):
            raise AssertionError("a brace outside a string: a subgraph was injected")
        depth += {("p", "["): 1, ("p", "]"): -1}.get(tok, 0)
        if tok == ("p", ";") and depth == 0:
            statements.append(current)
            current = []
        else:
            current.append(tok)
    assert not current and depth == 0
    return statements


def esc_string(text: str) -> str:
    """A plain label's text (Graphviz escString): \\\\ is a backslash, \\n a line break; any
    other escape (\\N, \\G, \\l …) would be one lakemark never writes."""
    def one(m: re.Match[str]) -> str:
        assert m.group(1) in "\\n", f"unexpected escape \\{m.group(1)}"
        return "\\" if m.group(1) == "\\" else "\n"
    return re.sub(r"\\(.)", one, text, flags=re.S)


def record_fields(label: str) -> list[tuple[str, str]]:
    """A record label's fields as (port, text), splitting only at unescaped '|'."""
    fields, port, buf, i = [], "", [], 0
    while i < len(label):
        c = label[i]
        if c == "\\" and i + 1 < len(label):
            assert label[i + 1] in '{}|<> \\"n', f"unexpected escape \\{label[i + 1]}"
            buf.append(label[i + 1] if label[i + 1] != "n" else "\n")
            i += 2
            continue
        assert c not in "{}<>" or (c == "<" and not buf and not port), f"unescaped {c!r}"
        if c == "<":
            end = label.index(">", i)
            port = label[i + 1:end]
            i = end + 2  # "<port> "
            continue
        if c == "|":
            fields.append((port, "".join(buf)))
            port, buf = "", []
        else:
            buf.append(c)
        i += 1
    fields.append((port, "".join(buf)))
    return fields


def shown(name: str) -> str:
    """A name as a DOT label shows it: line breaks become \\n escapes, other control
    characters and lone surrogates spaces."""
    name = re.sub(r"[\n\r\x85\u2028\u2029]", "\n", name)
    return re.sub(r"[\x00-\x09\x0b-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]", " ", name)


def test_dot_output_parses_with_one_node_per_dataset_and_job() -> None:
    jobs = hostile_jobs()
    statements = dot_statements(to_dot(jobs))
    nodes = [s for s in statements if len(s) > 1 and s[0][0] == "id" and s[1] == ("p", "[")
             and s[0][1] not in ("node", "edge", "graph")]
    edges = [s for s in statements if ("p", "->") in s]
    datasets, labels, n_edges = expected(jobs)
    records, boxes = {}, []
    for s in nodes:
        attrs = dict((s[i][1], s[i + 2]) for i in range(2, len(s) - 2)
                     if s[i + 1] == ("p", "=") and s[i][0] == "id")
        assert re.fullmatch(r"[dj]_[A-Za-z0-9_]+", s[0][1])
        if attrs["shape"][1] == "record":
            fields = record_fields(attrs["label"][1])
            records[s[0][1]] = fields
        else:
            boxes.append(esc_string(attrs["label"][1]))
    assert len(records) == len(datasets) and len(set(records)) == len(datasets)
    assert sorted(boxes) == sorted(shown(j.job) for j in redact_lineage(jobs))
    got = sorted((f[0][1], tuple(sorted(t for _, t in f[1:]))) for f in records.values())
    want = sorted((shown(labels[k]), tuple(sorted(shown(c) for c in cols)))
                  for k, cols in datasets.items())
    assert got == want
    job_edges = sum(len(j.inputs) + len(j.outputs) for j in jobs)
    indirect = sum(len(o.indirect) for j in jobs for o in j.outputs)
    assert len(edges) == job_edges + n_edges + indirect
    for s in edges:  # node[:port] -> node[:port] [attrs]
        arrow = s.index(("p", "->"))
        for side in (s[:arrow], s[arrow + 1:s.index(("p", "["))]):
            assert side[0][0] == "id" and side[0][1] in records or side[0][1].startswith("j_")
            assert len(side) in (1, 3)


# -- Mermaid ---------------------------------------------------------------------------------
_LABEL = r'"(?P<label>[^"\n]*)"'
_MERMAID_LINES = {
    "subgraph": re.compile(r"  subgraph (?P<id>s_[A-Za-z0-9_]+)\[" + _LABEL + r"\]"),
    "node": re.compile(r"    (?P<id>n_[A-Za-z0-9_]+)\[" + _LABEL + r"\]"),
    "end": re.compile(r"  end"),
    "edge": re.compile(r"  (?P<a>n_[A-Za-z0-9_]+) (?:-->|-\.->)\|" + _LABEL
                       + r"\| (?P<b>n_[A-Za-z0-9_]+)"),
}


def unescape_mermaid(label: str) -> str:
    # every '#' starts an entity code: a bare one would be read as the start of a code
    assert re.fullmatch(r"(?:[^#]|#(?:\d+|[a-z]+);)*", label), label
    return re.sub(r"#(\d+|[a-z]+);",
                  lambda m: chr(int(m.group(1))) if m.group(1).isdigit()
                  else html.unescape(f"&{m.group(1)};"), label)


def test_mermaid_output_follows_the_label_quoting_rules() -> None:
    jobs = hostile_jobs()
    lines = to_mermaid(jobs).splitlines()
    assert lines[0] == "flowchart LR"
    kinds: dict[str, list[re.Match[str]]] = {k: [] for k in _MERMAID_LINES}
    for line in lines[1:]:
        for kind, pattern in _MERMAID_LINES.items():
            m = pattern.fullmatch(line)
            if m:
                kinds[kind].append(m)
                break
        else:
            raise AssertionError(f"not a line lakemark writes: {line!r}")
    datasets, labels, n_edges = expected(jobs)
    with_columns = {k: c for k, c in datasets.items() if c}
    assert len(kinds["subgraph"]) == len(kinds["end"]) == len(with_columns)
    assert sorted(unescape_mermaid(m["label"]) for m in kinds["subgraph"]) == \
        sorted(shown(labels[k]).replace("\n", " ") for k in with_columns)
    assert sorted(unescape_mermaid(m["label"]) for m in kinds["node"]) == \
        sorted(shown(c).replace("\n", " ") for cols in with_columns.values() for c in cols)
    node_ids = {m["id"] for m in kinds["node"]}
    assert len(node_ids) == len(kinds["node"])
    assert len(kinds["edge"]) == n_edges
    assert all(m["a"] in node_ids and m["b"] in node_ids for m in kinds["edge"])


def test_json_and_openlineage_keep_names_as_data() -> None:
    jobs = hostile_jobs()
    keys = {o["dataset"] for job in to_json(jobs) for o in job["outputs"]}
    assert keys == {o.dataset.key for j in redact_lineage(jobs) for o in j.outputs}
    events = to_openlineage(jobs, event_time="2026-01-01T00:00:00Z")
    assert [e["job"]["name"] for e in events] == [j.job for j in redact_lineage(jobs)]
    json.loads(json.dumps(events))


@pytest.mark.parametrize("name", HOSTILE)
def test_each_name_alone_is_one_label(name: str) -> None:
    src = DatasetRef("s3://in", name)
    job = JobLineage(name, "glue", inputs=(InputDataset(src, ((name, "string"),)),),
                     outputs=(OutputLineage(DatasetRef("s3://o", "x"),
                                            ((name, (ColumnEdge(src, name),)),)),))
    mermaid = to_mermaid([job]).splitlines()
    assert len(mermaid) == 1 + 2 * 3 + 1  # header, 2 subgraphs (open, node, end), 1 edge
    statements = dot_statements(to_dot([job]))
    assert len([s for s in statements if ("p", "->") in s]) == 3
    page = parse(to_html([job]))
    assert len(page.scripts) == 2 and embedded_data(page.scripts[1])["jobs"] == [utf8(job.job)]
