"""Benchmark: recall and precision of the lineage analyser's column edges on two labelled sets,
reported separately: the corpus (tests/fixtures/lineage/corpus: scripts in the shapes of public
Glue jobs, written next to the analyser's fixes) and the held-out set
(tests/fixtures/lineage/heldout: scripts in shapes the analyser had not seen, labelled before
it was run on them; it reads the corpus's catalog folder) and a second held-out set
(tests/fixtures/lineage/heldout2: scripts written and labelled by another engineer after the
first held-out set had been fixed to 1.00, so that a measurement on unseen shapes exists again).

An edge is ``(output dataset, output column, input dataset, input column)``. Edges the
analyser marks *uncertain* (a column of one of several schema-less inputs: "in one of them,
not all") count for recall when true, and are left out of precision, which is measured on
the edges the analyser asserts; their number is reported. ``wrong_without_warning`` counts
the scripts with a missing or wrongly asserted edge and no warning at all (the worst
outcome). Subtypes are compared separately
(``subtype_agreement``: the share of found true edges whose subtype is
the labelled one). A *silent loss* is an expected output missing from the result, or a
labelled warning (line + text) that is not reported. Nothing is executed: the scripts are
only parsed. Run: PYTHONPATH=src .venv/bin/python bench/lineage_accuracy.py [--label NAME]
(results are merged into bench/results/lineage_accuracy.json: the corpus under NAME, the
held-out sets under NAME:heldout and NAME:heldout2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lakemark.catalog import FolderCatalog
from lakemark.lineage import analyze_source

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "lineage" / "corpus"
HELDOUT = ROOT / "tests" / "fixtures" / "lineage" / "heldout"
HELDOUT2 = ROOT / "tests" / "fixtures" / "lineage" / "heldout2"
#: each set: its folder (scripts/ + expected.json); all read the corpus's catalog folder
SETS = {"corpus": CORPUS, "heldout": HELDOUT, "heldout2": HELDOUT2}
RESULTS = ROOT / "bench" / "results" / "lineage_accuracy.json"


def measure(folder: Path = CORPUS) -> dict[str, Any]:
    """Per-script and total counts of true, found and matched edges and silent losses of the
    labelled set in ``folder``."""
    expected = json.loads((folder / "expected.json").read_text())
    catalog = FolderCatalog(CORPUS)
    totals = {"expected": 0, "found": 0, "matched": 0, "subtype_ok": 0, "silent_losses": 0,
              "asserted": 0, "asserted_true": 0, "uncertain": 0, "uncertain_true": 0,
              "wrong_without_warning": 0}
    per_script: dict[str, Any] = {}
    for name, label in sorted(expected.items()):
        source = (folder / "scripts" / f"{name}.py").read_text()
        result = analyze_source(source, job=name, catalog=catalog, account="123456789012",
                                region="us-east-1", file=f"{name}.py")
        found = {(o, c, e.dataset.key, e.field): e.subtype for o, c, e in result.edges() if c}
        unsure = {(o, c, e.dataset.key, e.field) for o, c, e in result.edges()
                  if c and e.description.startswith("uncertain:")}
        true = {tuple(e[:4]): e[4] for e in label["edges"]}
        matched = set(found) & set(true)
        asserted = set(found) - unsure
        outputs = {o.dataset.key for o in result.outputs}
        losses = [f"output {o} missing" for o in label["outputs"] if o not in outputs]
        losses += [f"no warning at line {line} about {text!r}" for line, text in label["warnings"]
                   if not any(w.line == line and text in w.message for w in result.warnings)]
        row = {"expected": len(true), "found": len(found), "matched": len(matched),
               "subtype_ok": sum(found[k] == true[k] for k in matched),
               "silent_losses": len(losses), "asserted": len(asserted),
               "asserted_true": len(asserted & set(true)), "uncertain": len(unsure),
               "uncertain_true": len(unsure & set(true)),
               # the worst outcome: a missing or wrong edge in a script with no warning at all
               "wrong_without_warning": int(bool((set(true) - set(found)) or
                                                 (asserted - set(true)))
                                            and not result.warnings)}
        for k in totals:
            totals[k] += row[k]
        row["missing"] = sorted("|".join(k) for k in set(true) - set(found))
        row["wrong"] = sorted("|".join(k) for k in asserted - set(true))
        row["losses"] = losses
        # a script with a miss must say so: the warnings it carries, to check each miss is
        # either fixed or warned
        row["warnings"] = [f"{w.line}: {w.message}" for w in result.warnings] \
            if row["missing"] or row["wrong"] or losses else []
        per_script[name] = row
    return {
        "scripts": len(expected),
        "recall": round(totals["matched"] / max(totals["expected"], 1), 3),
        "precision": round(totals["asserted_true"] / max(totals["asserted"], 1), 3),
        "precision_counting_uncertain": round(totals["matched"] / max(totals["found"], 1), 3),
        "subtype_agreement": round(totals["subtype_ok"] / max(totals["matched"], 1), 3),
        **totals,
        "per_script": per_script,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="current")
    args = parser.parse_args()
    stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for set_name, folder in SETS.items():
        result = measure(folder)
        summary = {k: v for k, v in result.items() if k != "per_script"}
        print(set_name, json.dumps(summary, indent=2))
        for name, row in result["per_script"].items():
            if row["missing"] or row["wrong"] or row["losses"]:
                print(set_name, name,
                      json.dumps({k: row[k] for k in ("missing", "wrong", "losses",
                                                      "warnings")}),
                      file=sys.stderr)
        stored[args.label if set_name == "corpus" else f"{args.label}:{set_name}"] = result
    RESULTS.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
