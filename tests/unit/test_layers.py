"""The package's layers stay one-way: a module imports only from its own layer or those below.

The layers are DESIGN.md's (and docs/architecture.md's):

    0  errors, _fault, redaction,        the error tree, the test-only fault hook, redaction,
       _commit_gate, _shown              the pre-commit check sinks run; file names escaped
                                         for human lines
    1  planning                          pure planners
    2  storage                           listing and file systems by URI scheme
    3  state, catalog                    bookmark stores; data catalogs
    4  sources, sinks, spark, spark_io,  plan -> DataFrame; DataFrame -> table; session setup;
       tables, session,                  plain Spark I/O on s3:// without S3A; session/: the
       _recorded                         JVM's stderr filter, the class-data archive, the JDBC
                                         driver jars (_recorded: builder calls of pyspark's
                                         readers and writers, kept for the terminal calls)
    5  job, run                          the run lifecycle (job.py: class Job, the public face;
                                         run/: its collaborators, each given a RunContext and
                                         the RunState: file sources, replay, sinks, exact
                                         reads, quarantine, lease and heartbeat, clean-up,
                                         tracked-schema reads, stage timings)
    6  glue, events, lineage, ingest,    Glue facade; S3 events; lineage; file ingestion;
       console                           the operator's console (queries, web pages)
    7  cli                               parses, calls, prints
    8  lakemark/__init__, __main__       the public surface

Every import counts, also one inside a function (a lazy import is still a dependency), except
those under ``if TYPE_CHECKING:`` (annotations only).
"""

from __future__ import annotations

import ast
from pathlib import Path

import lakemark

ROOT = Path(lakemark.__file__).parent

LAYERS = {
    "errors": 0, "_fault": 0, "_commit_gate": 0, "redaction": 0, "resources": 0,
    "_shown": 0,
    "planning": 1,
    "storage": 2,
    "state": 3, "catalog": 3,
    "sources": 4, "sinks": 4, "spark": 4, "spark_io": 4, "tables": 4, "datasources": 4,
    "session": 4, "_recorded": 4, "connect_server": 4,
    "connect_compat": 4,
    "job": 5, "run": 5,
    "glue": 6, "events": 6, "lineage": 6, "ingest": 6, "console": 6,
    "cli": 7,
    "__init__": 8, "__main__": 8,
}


def _unit(parts: list[str]) -> str:
    """The layer unit of ``lakemark.<parts>``: its first component (a package or module)."""
    return parts[0].removesuffix(".py") if parts else "__init__"


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, imported lakemark unit) of every import in ``path`` (a module under ``root``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = list(path.relative_to(root).parent.parts)
    found = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                if node.level - 1 > len(package):
                    continue
                target = base + (node.module.split(".") if node.module else [])
                if node.module is None:
                    found += [(node.lineno, _unit(target + [a.name])) for a in node.names]
                else:
                    found.append((node.lineno, _unit(target)))
            elif node.module and node.module.split(".")[0] == "lakemark":
                found.append((node.lineno, _unit(node.module.split(".")[1:])))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "lakemark":
                    found.append((node.lineno, _unit(alias.name.split(".")[1:])))
    return found


def test_every_module_has_a_layer() -> None:
    units = {_unit(list(p.relative_to(ROOT).parts)) for p in ROOT.rglob("*.py")}
    assert units <= set(LAYERS), f"modules with no layer: {sorted(units - set(LAYERS))}"


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        own = _unit(list(path.relative_to(ROOT).parts))
        for line, unit in _imports(path):
            if unit in LAYERS and LAYERS[unit] > LAYERS[own]:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({own}, layer {LAYERS[own]}) "
                              f"imports {unit} (layer {LAYERS[unit]})")
    assert upward == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a lazy upward import is found, a TYPE_CHECKING one is not."""
    fake = tmp_path / "lakemark" / "planning" / "x.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from ..job import Job\n"
                    "def f():\n    from ..sinks import write_target\n"
                    "    import lakemark.cli\n")
    assert _imports(fake, tmp_path / "lakemark") == [(5, "sinks"), (6, "cli")]
