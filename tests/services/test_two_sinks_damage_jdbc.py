"""A Delta sink and a PostgreSQL sink of one read, over a Parquet file whose damaged page only
the full read meets: found before the Delta sink commits, so after a kill between the two
sinks and the retry both hold the same rows, once (the damaged file set aside for both)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from damaged_pages import orders_parquet as _parquet
from deltalake import DeltaTable
from pgtest import PgSchema, jdbc_url, need_postgres

from lakemark._fault import FAULT_ENV

pytestmark = [pytest.mark.services, pytest.mark.spark]

SCRIPT = """\
import sys
from lakemark import Job

source, keys, url, user, dbtable = sys.argv[1:6]
with Job("orders") as job:
    orders = job.read_files(source, format="parquet", ctx="landing")
    if not orders.isEmpty():
        job.write(orders.select("id"), keys, format="delta", ctx="order_keys")
        job.write_jdbc(orders, url, dbtable, user=user, ctx="orders_db")
"""


@pytest.fixture
def pg() -> Any:
    db = PgSchema(need_postgres(), "lm_two_")
    yield db
    db.close()


def test_delta_and_jdbc_sinks_hold_the_same_rows_across_damage_and_a_kill(
        pg: PgSchema, tmp_path: Path) -> None:
    src = tmp_path / "landing"
    src.mkdir()
    (src / "part-0.parquet").write_bytes(_parquet(range(3)))
    (src / "part-1.parquet").write_bytes(_parquet(range(100, 400), bad_page=True))
    script = tmp_path / "orders_job.py"
    script.write_text(SCRIPT)
    keys = tmp_path / "order_keys"

    def run(fault: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
        env["PYSPARK_PYTHON"] = sys.executable
        if fault:
            env[FAULT_ENV] = fault
        return subprocess.run(
            [sys.executable, "-m", "lakemark", "run", "--state",
             f"sqlite:///{tmp_path / 's.db'}", str(script), str(src), str(keys), jdbc_url(),
             pg.user, f"{pg.schema}.orders"],
            capture_output=True, text=True, timeout=900, env=env)

    def db_ids() -> list[int]:
        tables = pg.sql("SELECT table_name FROM information_schema.tables WHERE "
                        "table_schema = %s AND table_name = 'orders'", (pg.schema,))
        return sorted(r[0] for r in pg.sql(f'SELECT id FROM "{pg.schema}".orders')) \
            if tables else []

    def delta_ids() -> list[int]:
        if not (keys / "_delta_log").exists():
            return []
        return sorted(DeltaTable(str(keys)).to_pyarrow_table().column("id").to_pylist())

    first = run()
    assert first.returncode == 1 and "part-1.parquet" in first.stderr, first.stderr
    assert (delta_ids(), db_ids()) == ([], [])
    killed = run(fault="after-sink-commit")  # after the Delta sink, before the database's
    assert killed.returncode == -9, killed.stderr
    assert (delta_ids(), db_ids()) == ([0, 1, 2], [])
    retry = run()
    assert retry.returncode == 3, retry.stderr
    assert (delta_ids(), db_ids()) == ([0, 1, 2], [0, 1, 2])
