"""No import circle between two files of ``src/lakemark`` (issue 33).

A circle makes a file unreadable on its own: to change one side you must know the other's view
of it. The graph is built from the code with ``ast``: every import counts, also one inside a
function (a lazy import is still a dependency), except those under ``if TYPE_CHECKING:``.
Relative imports are resolved, and ``from pkg import name`` where ``name`` is a submodule counts
as importing that submodule (else it imports ``pkg/__init__.py``). Importing ``a.b.c`` is an edge
to ``a/b/c.py`` only: the parents' ``__init__`` files run too, but they are the package's own
surface, and counting them would draw every package as one circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import lakemark

ROOT = Path(lakemark.__file__).parent

# Known debt, may only shrink: the files still in a circle. A circle with a file not listed
# here fails (a new circle); a listed file that is in no circle fails too, so the list is cut as
# the debt is paid. Issue 33 paid it all: keep it empty.
KNOWN_CIRCLE: set[str] = set()


def _module_file(root: Path, parts: list[str]) -> Path | None:
    """The file of module ``lakemark.<parts>`` under ``root``, or None if there is none."""
    base = root.joinpath(*parts)
    if base.with_suffix(".py").is_file() and parts:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def _targets(path: Path, root: Path) -> set[Path]:
    """The files under ``root`` (the ``lakemark`` folder) that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    rel = list(path.relative_to(root).with_suffix("").parts)
    package = rel[:-1]
    found: set[Path | None] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            if node.level:
                if node.level - 1 > len(package):
                    continue
                mod = package[: len(package) - (node.level - 1)] + module
            elif module and module[0] == "lakemark":
                mod = module[1:]
            else:
                continue
            for alias in node.names:
                sub = _module_file(root, mod + [alias.name])
                found.add(sub if sub is not None else _module_file(root, mod))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "lakemark":
                    found.add(_module_file(root, parts[1:]))
    return {f for f in found if f is not None and f != path}


def circles(root: Path) -> list[set[str]]:
    """Every strongly connected component of more than one file (paths relative to ``root``)."""
    files = sorted(root.rglob("*.py"))
    graph = {f: _targets(f, root) for f in files}
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[set[str]] = []

    def visit(v: Path) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w.relative_to(root).as_posix())
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for f in files:
        if f not in index:
            visit(f)
    return found


def test_no_new_import_circle() -> None:
    new = [sorted(c) for c in circles(ROOT) if not c <= KNOWN_CIRCLE]
    assert new == [], f"import circles between files (break them, do not list them): {new}"


def test_known_circle_list_only_shrinks() -> None:
    in_circles = set().union(*circles(ROOT))
    paid = sorted(KNOWN_CIRCLE - in_circles)
    assert paid == [], f"no longer in a circle, remove from KNOWN_CIRCLE: {paid}"


def test_the_check_sees_a_circle(tmp_path: Path) -> None:
    """The checker itself: lazy, relative and submodule imports close a circle; TYPE_CHECKING
    ones do not."""
    pkg = tmp_path / "lakemark"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("def f():\n    from . import y\n")
    (pkg / "a" / "y.py").write_text("from lakemark.a.z import g\n")
    (pkg / "a" / "z.py").write_text("import lakemark.a.x\ng = 1\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from .a import x\n")
    (pkg / "a" / "w.py").write_text("from .. import b\n")
    assert circles(pkg) == [{"a/x.py", "a/y.py", "a/z.py"}]
    (pkg / "b.py").write_text("from .a import w\n")
    assert sorted(map(sorted, circles(pkg))) == [["a/w.py", "b.py"], ["a/x.py", "a/y.py", "a/z.py"]]
