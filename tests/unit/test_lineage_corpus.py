"""The analyser on the labelled corpus (tests/fixtures/lineage/corpus): scripts in the
shapes of public Glue jobs, with hand-labelled expected edges — and on the held-out set
(tests/fixtures/lineage/heldout: shapes the corpus lacks, labelled before the analyser was run
on them; it reads the corpus's catalog) and the second held-out set
(tests/fixtures/lineage/heldout2, written and labelled by another engineer once the first had
been fixed to 1.00).

For each script: every labelled column edge ``(output, column, input, field)`` is found and
every edge the analyser asserts (not marked uncertain) is labelled, every labelled output is
written, and every labelled warning (a construct the analyser cannot follow) is reported on its
line — nothing vanishes silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakemark.catalog import FolderCatalog
from lakemark.lineage import analyze_source

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "lineage" / "corpus"
HELDOUT = CORPUS.parent / "heldout"
HELDOUT2 = CORPUS.parent / "heldout2"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
CATALOG = FolderCatalog(CORPUS)
CASES = [(CORPUS, n) for n in sorted(EXPECTED)] + [
    (folder, n) for folder in (HELDOUT, HELDOUT2)
    for n in sorted(json.loads((folder / "expected.json").read_text()))]


@pytest.mark.parametrize(("folder", "name"), CASES,
                         ids=[f"{f.name}-{n}" for f, n in CASES])
def test_corpus_script(folder: Path, name: str) -> None:
    label = json.loads((folder / "expected.json").read_text())[name]
    r = analyze_source((folder / "scripts" / f"{name}.py").read_text(), job=name,
                       catalog=CATALOG, account="123456789012", region="us-east-1",
                       file=f"{name}.py")
    found = {(o, c, e.dataset.key, e.field) for o, c, e in r.edges() if c}
    asserted = {(o, c, e.dataset.key, e.field) for o, c, e in r.edges()
                if c and not e.description.startswith("uncertain:")}
    true = {tuple(e[:4]) for e in label["edges"]}
    # every true edge is found; every edge the analyser asserts is true (an edge it marks
    # uncertain — a column of one of several schema-less inputs — may be either)
    assert true <= found
    assert asserted <= true
    assert set(label["outputs"]) <= {o.dataset.key for o in r.outputs}
    for line, text in label["warnings"]:
        assert any(w.line == line and text in w.message for w in r.warnings), (line, text)
