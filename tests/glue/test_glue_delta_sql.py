"""A Glue job using Delta's SQL (``scripts/delta_sql_job.py``) run unmodified by
``lakemark run`` without Delta's jars (issue 32): CTAS/RTAS on ``delta.`path```, ``VERSION AS
OF`` and ``DESCRIBE HISTORY``, each giving what Delta on Spark gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from test_glue_scripts import SCRIPTS, GlueEnv

pytestmark = pytest.mark.spark


def test_delta_sql_job_runs_twice_unmodified(tmp_path: Path) -> None:
    glue = GlueEnv(tmp_path)
    raw, lake = tmp_path / "raw", tmp_path / "lake"
    raw.mkdir()
    (raw / "a.json").write_text('{"order_id": 1, "customer": "ann", "amount": 10.0}\n'
                                '{"order_id": 2, "customer": "bob", "amount": 5.5}\n')
    args = ["--JOB_NAME", "delta_sql", "--raw_path", str(raw),
            "--bronze_path", str(lake / "bronze"), "--gold_path", str(lake / "gold")]
    glue.run(SCRIPTS / "delta_sql_job.py", *args)
    (raw / "b.json").write_text('{"order_id": 3, "customer": "ann", "amount": 2.5}\n')
    out = glue.run(SCRIPTS / "delta_sql_job.py", *args)
    gold = DeltaTable(str(lake / "gold"))
    assert sorted(gold.to_pyarrow_table().to_pylist(), key=lambda r: r["customer"]) == [
        {"customer": "ann", "revenue": 22.5, "orders": 3},
        {"customer": "bob", "revenue": 11.0, "orders": 2}]  # run 2 read a.json again too
    log = out.stdout + out.stderr
    assert "bronze held 2 orders at version 0" in log
    assert "gold v0: CREATE OR REPLACE TABLE AS SELECT" in log
    assert "gold v1: CREATE OR REPLACE TABLE AS SELECT" in log
