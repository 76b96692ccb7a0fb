"""Runtime column lineage: the columnLineage facet of a run's COMPLETE event follows the plan
Spark ran — renames, expressions, aggregates, joins, unions and self-joins of the frames the job
read — with filter, join, grouping and sort keys as dataset-level INDIRECT inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from lakemark import Job
from lakemark.lineage.runtime import ENV

pytestmark = pytest.mark.spark


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))


def edges(facet: dict[str, Any]) -> dict[str, set[tuple[str, str, str, str]]]:
    """output column → {(input dataset name tail, input column, type, subtype)}."""
    out: dict[str, set[tuple[str, str, str, str]]] = {}
    for column, spec in facet["fields"].items():
        out[column] = {(f["name"].rsplit("/", 1)[-1], f["field"], t["type"], t["subtype"])
                       for f in spec["inputFields"] for t in f["transformations"]}
    return out


def indirect(facet: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["name"].rsplit("/", 1)[-1], f["field"], t["subtype"])
            for f in facet.get("dataset", []) for t in f["transformations"]}


def complete_outputs(events: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    done = [e for e in lines if e["eventType"] == "COMPLETE"]
    assert len(done) == 1
    return {o["name"].rsplit("/", 1)[-1]: o["facets"] for o in done[0]["outputs"]}


def test_columns_are_traced_through_the_plan_that_ran(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    orders, customers = tmp_path / "orders", tmp_path / "customers"
    write_rows(orders, [{"order_id": i, "customer_id": i % 3, "amount": i * 1.5,
                         "status": "paid" if i % 2 else "open"} for i in range(12)])
    write_rows(customers, [{"id": i, "name": f"c{i}", "country": "DE"} for i in range(3)])
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(ENV, f"file:{events}")
    with Job("report", state=f"sqlite:///{tmp_path / 's.db'}", spark=spark) as job:
        o = job.read_files(str(orders), format="json", ctx="orders")
        c = job.read_files(str(customers), format="json", ctx="customers")
        totals = (o.where(F.col("status") == "paid")
                  .join(c, o.customer_id == c.id)
                  .groupBy(c.name.alias("customer"))
                  .agg(F.sum("amount").alias("total"), F.count("order_id").alias("orders"))
                  .withColumn("label", F.upper("customer"))
                  .withColumn("source", F.lit("lake"))
                  .orderBy("total"))
        job.write(totals, str(tmp_path / "totals"), format="parquet", ctx="totals")
        # A union of two frames over the same files, and a self-join: Spark gives the second
        # copy of the relation new column ids; it is still the orders source.
        pairs = (o.select("order_id", "customer_id")
                 .unionByName(o.select("order_id", "customer_id"))
                 .join(o.select(F.col("customer_id").alias("cid"),
                                F.col("amount").alias("other_amount")),
                       F.col("customer_id") == F.col("cid")))
        job.write(pairs.drop("cid"), str(tmp_path / "pairs"), format="parquet", ctx="pairs")
        job.write(o, str(tmp_path / "copy"), format="delta", ctx="copy")

    outputs = complete_outputs(events)
    totals_facet = outputs["totals"]["columnLineage"]
    assert edges(totals_facet) == {
        "customer": {("customers", "name", "DIRECT", "IDENTITY")},
        "total": {("orders", "amount", "DIRECT", "AGGREGATION")},
        "orders": {("orders", "order_id", "DIRECT", "AGGREGATION")},
        "label": {("customers", "name", "DIRECT", "TRANSFORMATION")},
    }  # "source" is a literal: no input column
    assert indirect(totals_facet) == {
        ("orders", "status", "FILTER"), ("orders", "customer_id", "JOIN"),
        ("customers", "id", "JOIN"), ("customers", "name", "GROUP_BY"),
        ("orders", "amount", "SORT"),  # ordered by the total computed from it
    }
    pairs_facet = outputs["pairs"]["columnLineage"]
    assert edges(pairs_facet) == {
        "order_id": {("orders", "order_id", "DIRECT", "IDENTITY")},
        "customer_id": {("orders", "customer_id", "DIRECT", "IDENTITY")},
        "other_amount": {("orders", "amount", "DIRECT", "IDENTITY")},
    }
    assert indirect(pairs_facet) == {("orders", "customer_id", "JOIN")}
    copy_facet = outputs["copy"]["columnLineage"]
    assert edges(copy_facet) == {name: {("orders", name, "DIRECT", "IDENTITY")}
                                 for name in ("amount", "customer_id", "order_id", "status",
                                              "_rescued_data")}  # the source's tracked schema
    assert "dataset" not in copy_facet or copy_facet["dataset"] == []
