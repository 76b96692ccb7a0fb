"""Issue 17 part 3, the debts paid: each check fails if the old shape comes back."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

import lakemark

ROOT = Path(lakemark.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add("." * node.level + node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_spark_setup_does_not_import_sources() -> None:
    """Session setup needs the driver jars only, found by a module below it."""
    imported = _imported_modules(ROOT / "spark.py")
    assert not [m for m in imported if "sources" in m], imported
    from lakemark.session.jdbc_drivers import DRIVER_JARS, driver_jars
    from lakemark.sources import jdbc

    assert jdbc.DRIVER_JARS is DRIVER_JARS and jdbc.driver_jars is driver_jars


def test_one_ddl_for_both_stores() -> None:
    """Both stores render one template; the SQLite rendering creates every table."""
    from lakemark.state._ddl import ddl

    lite, pg = ddl("sqlite"), ddl("postgresql")
    assert "BIGINT" not in lite and "INTEGER" not in pg
    assert [s.split("(")[0] for s in lite.split(";")] == [s.split("(")[0] for s in pg.split(";")]
    db = sqlite3.connect(":memory:")
    for statement in lite.split(";"):
        db.execute(statement)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"meta", "jobs", "bookmark_versions", "runs", "run_plans", "run_files", "leases",
            "lease_generations"} <= tables
    for store in ("sqlite.py", "postgres.py"):
        assert "CREATE TABLE" not in (ROOT / "state" / store).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="mysql"):
        ddl("mysql")


def test_delta_errors_by_type_not_by_message() -> None:
    """A retry is decided by deltalake's exception type (or the table's state), never by
    the words of a message."""
    from deltalake.exceptions import CommitFailedError, DeltaError

    from lakemark.sinks._delta import _retryable

    assert _retryable(CommitFailedError("conflict"), creating=False)
    assert not _retryable(DeltaError("A table already exists at: x"), creating=False)
    assert _retryable(DeltaError("anything"), creating=True)
    for path in ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for needle in ('"already exists" in str(', '"not found" in str('):
            assert needle not in text, f"{path.relative_to(ROOT)} matches a message: {needle}"


def _host_members() -> set[str]:
    from lakemark.sources._host import SourceHost

    tree = ast.parse((ROOT / "sources" / "_host.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SourceHost")
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert names and all(hasattr(SourceHost, n) for n in names)
    return names


def test_sources_see_the_job_only_through_the_host_protocol() -> None:
    """JDBC, Hudi-table and S3-event sources use what :class:`SourceHost` declares, nothing of
    ``Job``'s internals, and do not import the job module."""
    members = _host_members()
    modules = [ROOT / "sources" / "jdbc.py", ROOT / "sources" / "hudi.py",
               *sorted((ROOT / "events").glob("*.py"))]
    reached: list[str] = []
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not [m for m in _imported_modules(path) if m.endswith("job")], path
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "job" and node.attr not in members:
                reached.append(f"{path.relative_to(ROOT)}:{node.lineno} job.{node.attr}")
    assert reached == []


def test_job_implements_the_host_protocol() -> None:
    from lakemark.job import Job

    job = Job("layers-host", state="sqlite:///:memory:")
    missing = [m for m in _host_members() if not hasattr(Job, m) and m not in vars(job)]
    assert missing == []


def test_runtime_lineage_only_observes() -> None:
    """Runtime lineage learns the frames from the job's ``read``/``written`` events: it
    replaces no method of the job and reads none of its private attributes."""
    text = (ROOT / "lineage" / "runtime.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    calls = {n.func.id for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "setattr" not in calls
    private = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
               and isinstance(n.value, ast.Name) and n.value.id == "job"
               and n.attr.startswith("_")]
    assert private == []
    from lakemark.job import JobEvent

    assert JobEvent("read", "c", {"key": "c"}, frame=object()) == JobEvent("read", "c",
                                                                            {"key": "c"})
