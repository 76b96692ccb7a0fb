"""Synthetic Glue estates for the lineage report at scale: a catalog and N job scripts.

Job ``job_NNN`` reads one or two catalog tables (raw tables or tables that earlier jobs write),
joins them on ``id``, filters, renames and transforms columns, and writes its own catalog table
``t_NNN``; so the jobs form chains and fans that a person looks at per dataset. Deterministic
for a given N (seeded), so screenshots and expectations are stable.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SCRIPT = '''from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from pyspark.context import SparkContext
from pyspark.sql import functions as F

glueContext = GlueContext(SparkContext.getOrCreate())
a = glueContext.create_dynamic_frame.from_catalog(database="lake", table_name="{a}").toDF()
b = glueContext.create_dynamic_frame.from_catalog(database="lake", table_name="{b}").toDF()
df = a.join(b.select("id", F.col("{bcol}").alias("b_{n}")), "id").where(F.col("{acol}") > 0)
out = df.select("id", F.col("{acol}").alias("a_{n}"), F.upper(F.col("{acol2}")).alias("u_{n}"),
                "b_{n}")
glueContext.write_dynamic_frame.from_catalog(frame=DynamicFrame.fromDF(out, glueContext, "o"),
                                             database="lake", table_name="t_{n}")
'''


def _table(name: str, cols: list[str]) -> dict[str, object]:
    return {"Name": name, "DatabaseName": "lake", "Parameters": {"classification": "parquet"},
            "StorageDescriptor": {"Columns": [{"Name": c, "Type": "string"} for c in cols],
                                  "Location": f"s3://lake-123456789012/{name}/",
                                  "Parameters": {"classification": "parquet"}}}


def make_estate(root: Path, jobs: int, seed: int = 19) -> dict[str, tuple[str, str]]:
    """Write a connection folder with ``jobs`` jobs under ``root``; return each job's inputs
    (two table names; the same name twice when it reads one table)."""
    rng = random.Random(seed)
    conn = root / "123456789012-us-east-1"
    raw = [f"raw_{k:03d}" for k in range(max(2, jobs // 4))]
    columns = {t: ["id"] + [f"c{k}" for k in range(6)] for t in raw}
    reads: dict[str, tuple[str, str]] = {}
    for i in range(jobs):
        n = f"{i:03d}"
        earlier = [f"t_{k:03d}" for k in range(max(0, i - 12), i)]
        pool = raw + earlier if rng.random() < 0.3 or not earlier else earlier
        a, b = rng.choice(pool), rng.choice(pool)
        acol, acol2 = rng.sample(columns[a][1:], 2)
        bcol = rng.choice(columns[b][1:])
        script = SCRIPT.format(a=a, b=b, n=n, acol=acol, acol2=acol2, bcol=bcol)
        job = conn / "jobs" / f"job_{n}"
        job.mkdir(parents=True)
        (job / f"job_{n}.py").write_text(script)
        columns[f"t_{n}"] = ["id", f"a_{n}", f"u_{n}", f"b_{n}"]
        reads[f"job_{n}"] = (a, b)
    catalog = conn / "catalog"
    (catalog / "tables").mkdir(parents=True)
    (catalog / "databases.json").write_text(json.dumps({"DatabaseList": [{"Name": "lake"}]}))
    (catalog / "tables" / "lake.json").write_text(json.dumps(
        {"TableList": [_table(t, cols) for t, cols in columns.items()]}))
    return reads
