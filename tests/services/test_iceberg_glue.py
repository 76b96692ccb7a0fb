"""The AWS Glue Data Catalog as the Iceberg catalog, against a real moto_server process.

``iceberg_catalog="glue"`` resolves to pyiceberg's Glue catalog with the endpoint of the
environment (``AWS_ENDPOINT_URL``, set by the ``moto_server`` fixture) and a local warehouse:
a job appends twice exactly once, the table is registered in Glue with ``table_type=ICEBERG``,
and an incremental source reads it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark import Job
from lakemark.catalog._iceberg import WAREHOUSE_ENV

pytestmark = [pytest.mark.services, pytest.mark.spark]


def test_glue_data_catalog_holds_lakemark_iceberg_tables(spark: Any, s3: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))  # no user configuration
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "warehouse"))
    state = f"sqlite:///{tmp_path / 'state.db'}"
    rows = [(1, "a"), (2, "b")]
    for run in range(2):
        with Job("gl", state=state) as job:
            df = spark.createDataFrame(rows[run:run + 1], "id long, name string")
            result = job.write(df, "db.events", format="iceberg", ctx="events",
                               iceberg_catalog="glue")
            assert (result.rows, result.skipped) == (1, False)
    table = s3.client("glue").get_table(DatabaseName="db", Name="events")["Table"]
    assert table["Parameters"]["table_type"] == "ICEBERG"
    assert table["Parameters"]["metadata_location"].startswith((tmp_path / "warehouse")
                                                               .as_uri())
    with Job("reader", state=state) as job:
        read = job.read_table("db.events", format="iceberg", ctx="src",
                              options={"iceberg_catalog": "glue"})
        assert sorted(r.id for r in read.collect()) == [1, 2]
