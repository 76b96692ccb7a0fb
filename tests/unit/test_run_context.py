"""The run's collaborators in lakemark/run/ see the run through RunContext, not the Job
(issue 33): they import nothing from lakemark.job, and each does its part with only a context
over a real state store. No Spark: none of them needs a session."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import lakemark
from lakemark.errors import LeaseLost
from lakemark.run.cleanup import clean_after_commit
from lakemark.run.context import RunContext
from lakemark.run.lease import fail_after_commit_error, start_heartbeat, stop_heartbeat
from lakemark.state.sqlite import SQLiteStore

RUN = Path(lakemark.__file__).parent / "run"


def test_run_package_imports_nothing_from_job() -> None:
    """Not even for annotations: a collaborator that names Job would come to lean on it."""
    for path in sorted(RUN.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                name = "." * node.level + (node.module or "")
                assert name not in ("..job", "lakemark.job"), f"{path.name} imports {name}"


@pytest.fixture
def started(tmp_path: Path) -> tuple[RunContext, list[tuple[str, Any]], SQLiteStore]:
    store = SQLiteStore(tmp_path / "state.db")
    record = store.begin_run("orders", "enable", host="h", pid=1, lease_timeout_s=60.0)
    events: list[tuple[str, Any]] = []

    def no_spark() -> Any:
        raise AssertionError("a collaborator started Spark")

    run = RunContext("orders", record.run_id, store,
                     lambda stage, ctx, detail: events.append((stage, dict(detail))), no_spark,
                     lambda release: None)
    return run, events, store


def test_a_failed_commit_is_recorded_through_the_context(started: Any) -> None:
    run, events, store = started
    message, now = fail_after_commit_error(run, RuntimeError("disk full"), update_bookmark=True)
    assert message == "commit failed: RuntimeError: disk full"
    assert now is not None and now.status == "FAILED" and now.error == message
    assert store.get_bookmark("orders").attempt == 1
    assert events == []  # the job emits "failed" once it has the refreshed record


def test_a_fenced_off_commit_records_nothing(started: Any) -> None:
    run, _, store = started
    message, now = fail_after_commit_error(run, LeaseLost("taken over", job_name="orders",
                                                      holder_run_id="jr_other", generation=1,
                                                      holder_generation=2), update_bookmark=True)
    assert now is None and "LeaseLost" in message
    assert store.get_run(run.run_id).status == "RUNNING"


def test_the_heartbeat_is_started_and_stopped_for_the_context(started: Any) -> None:
    run, _, _ = started
    class Owner:  # the job, held weakly
        pass

    owner = Owner()
    heartbeat = start_heartbeat(run, 30.0, owner)
    assert heartbeat.run_id == run.run_id and heartbeat.store is run.store
    stop_heartbeat(heartbeat, check=True)  # the lease is still held: no error
    stop_heartbeat(None, check=True)


def test_clean_up_after_commit_with_nothing_to_clean(started: Any) -> None:
    run, events, store = started
    store.commit_run(run.run_id, {}, update_bookmark=True)
    assert clean_after_commit(run) == []
    assert events == []  # nothing cleaned, nothing said


def test_a_failed_clean_up_is_left_pending_not_raised(started: Any) -> None:
    run, events, store = started
    store.close()  # the clean-up cannot read the store: the run's commit stands
    [record] = clean_after_commit(run)
    assert record["run_id"] == run.run_id and record["status"] == "pending"
    assert record["error"]
    assert events == []



def _imported_names(tree: ast.AST, package: list[str]) -> list[str]:
    """Every module ``tree`` (a module of ``package``) imports, module level or inside a
    function, as absolute names (``from .. import job`` in lakemark.run gives lakemark.job)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names


def _job_imports(tree: ast.AST) -> list[str]:
    return [n for n in _imported_names(tree, ["lakemark", "run"])
            if n == "lakemark.job" or n.startswith("lakemark.job.")]


def test_no_run_module_imports_the_job_or_takes_it() -> None:
    """No module of lakemark/run/ imports lakemark.job in any spelling (module level, in a
    function, ``from .. import job``), and no function of one takes a ``Job``: each collaborator
    gets the RunContext and the RunState."""
    found = []
    for path in sorted(RUN.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.name} imports {name}" for name in _job_imports(tree)]
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    shown = ast.unparse(arg.annotation) if arg.annotation else ""
                    if arg.arg == "job" or "Job" in shown.replace("JobEvent", ""):
                        found.append(f"{path.name}:{node.lineno} {node.name}({arg.arg}: {shown})")
    assert found == []


@pytest.mark.parametrize("text", [
    "from ..job import Job", "from .. import job", "import lakemark.job",
    "from lakemark.job import UNTRACKED",
    "def f() -> None:\n    from ..job import Job\n",
])
def test_the_check_sees_every_spelling_of_importing_the_job(text: str) -> None:
    """The check above fails on a run module holding any of these."""
    assert _job_imports(ast.parse(text))


#: What the package root holds (issue 33): the public surface and the few modules every layer
#: shares; everything else sits in a package named for its part of the design.
ROOT_MODULES = {
    "__init__.py", "__main__.py", "job.py", "ingest.py", "errors.py", "redaction.py",
    "spark.py", "spark_io.py", "connect_compat.py", "connect_server.py",
    "_fault.py", "_recorded.py", "_shown.py", "_commit_gate.py",
}
ROOT_PACKAGES = {
    "catalog", "cli", "console", "datasources", "events", "glue", "lineage", "planning",
    "resources", "run", "session", "sinks", "sources", "state", "storage", "tables",
}


def test_the_package_root_holds_only_the_listed_modules() -> None:
    """A new module goes into the package of its part (run/, session/, …), not the root; a
    new package is named here on purpose."""
    root = RUN.parent
    modules = {p.name for p in root.glob("*.py")}
    packages = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert modules - ROOT_MODULES == set(), "modules at the root beyond the public surface"
    assert packages == ROOT_PACKAGES
