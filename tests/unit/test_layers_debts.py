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
    from lakemark._jdbc_drivers import DRIVER_JARS, driver_jars
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

