"""OpenLineage events of static lineage (issue 19, finding 7): only the spec's transformation
types and subtypes; what is uncertain, not analysed or unlisted is in lakemark's facets, which
validate against docs/lineage-facets.schema.json; the standard facets rebuild as
openlineage-python's facet classes (the package ships no JSON schema of the spec)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lakemark.catalog import FolderCatalog
from lakemark.lineage import analyze_source
from lakemark.lineage._openlineage import DIRECT_SUBTYPES, INDIRECT_SUBTYPES, to_openlineage
from lakemark.lineage._values import ASSUMED

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "lineage" / "corpus"
SCHEMA = json.loads((ROOT / "docs" / "lineage-facets.schema.json").read_text())


def corpus_events() -> tuple[list[Any], list[dict[str, Any]]]:
    catalog = FolderCatalog(CORPUS)
    jobs = [analyze_source(p.read_text(), job=p.stem, catalog=catalog, account="123456789012",
                           region="us-east-1", file=p.name)
            for p in sorted((CORPUS / "scripts").glob("*.py"))]
    return jobs, to_openlineage(jobs, event_time="2026-01-01T00:00:00Z")


def check_facet(facet: dict[str, Any], name: str) -> None:
    assert facet["_schemaURL"].endswith(f"lineage-facets.schema.json#/$defs/{name}")
    jsonschema.validate(facet, {**SCHEMA, "$ref": f"#/$defs/{name}"})


def rebuild_column_lineage(facet: dict[str, Any]) -> None:
    """The facet as openlineage-python's classes: an unknown or missing key raises."""
    from openlineage.client.facet_v2 import column_lineage_dataset as cl

    def field(f: dict[str, Any]) -> Any:
        return cl.InputField(**{**f, "transformations": [cl.Transformation(**t)
                                                        for t in f["transformations"]]})

    cl.ColumnLineageDatasetFacet(
        fields={k: cl.Fields(**{**v, "inputFields": [field(f) for f in v["inputFields"]]})
                for k, v in facet["fields"].items()},
        dataset=[field(f) for f in facet["dataset"]])


def test_corpus_events_use_only_the_specs_subtypes_and_valid_facets() -> None:
    jobs, events = corpus_events()
    unknown = uncertain = assumed = 0
    for job, event in zip(jobs, events):
        facet = event["run"]["facets"]["lakemark_staticAnalysis"]
        check_facet(facet, "StaticAnalysisRunFacet")
        assert [(w["message"], w["line"]) for w in facet["warnings"]] == \
            [(w.message, w.line) for w in job.warnings]
        for o, out in zip(job.outputs, event["outputs"]):
            lineage = out["facets"].get("columnLineage")
            if lineage:
                rebuild_column_lineage(lineage)
                for f in lineage["dataset"]:
                    for t in f["transformations"]:
                        assert t["type"] == "INDIRECT" and t["subtype"] in INDIRECT_SUBTYPES
                for col in lineage["fields"].values():
                    for f in col["inputFields"]:
                        for t in f["transformations"]:
                            assert t["type"] == "DIRECT" and t["subtype"] in DIRECT_SUBTYPES
                            assert not t["description"].startswith("uncertain:")
            extra = out["facets"].get("lakemark_columnUncertainty")
            expect_unknown = {(c, e.dataset.name, e.field) for c, es in o.columns for e in es
                              if e.subtype == "UNKNOWN"
                              and not e.description.startswith("uncertain:")}
            expect_either = {(c, e.dataset.name, e.field) for c, es in o.columns for e in es
                             if e.description.startswith("uncertain:")
                             and not e.description.startswith(ASSUMED)}
            expect_assumed = {(c, e.dataset.name, e.field) for c, es in o.columns for e in es
                              if e.description.startswith(ASSUMED)}
            unknown += len(expect_unknown)
            uncertain += len(expect_either)
            assumed += len(expect_assumed)
            if not (expect_unknown or expect_either or expect_assumed or o.open_inputs):
                assert extra is None
                continue
            check_facet(extra, "ColumnUncertaintyDatasetFacet")
            assert {(c, e["name"], e["field"]) for c, es in extra["notAnalysed"].items()
                    for e in es} == expect_unknown
            assert {(c, e["name"], e["field"]) for c, es in extra["eitherSide"].items()
                    for e in es} == expect_either
            assert {(c, e["name"], e["field"]) for c, es in extra["assumed"].items()
                    for e in es} == expect_assumed
            assert [d["name"] for d in extra["unlistedInputs"]] == \
                [d.name for d in o.open_inputs]
    # the corpus has every kind, so the checks above are not empty
    assert unknown and uncertain and assumed


def test_an_unanalysed_function_is_a_transformation_listed_as_not_analysed() -> None:
    catalog = FolderCatalog(ROOT / "tests" / "fixtures" / "catalog" / "123456789012-us-east-1")
    r = analyze_source(
        "from pyspark.sql import functions as F\n"
        "src = glueContext.create_dynamic_frame.from_catalog(database='sales', "
        "table_name='orders_parquet')\n"
        "df = src.toDF()\n"
        "mask = F.udf(lambda v: v[:2])\n"
        "df.select(mask('customer').alias('c')).write.parquet('s3://out/t')\n",
        catalog=catalog, account="123456789012", region="us-east-1")
    [event] = to_openlineage([r])
    [out] = event["outputs"]
    [f] = out["facets"]["columnLineage"]["fields"]["c"]["inputFields"]
    assert f["transformations"][0]["type"] == "DIRECT"
    assert f["transformations"][0]["subtype"] == "TRANSFORMATION"
    [e] = out["facets"]["lakemark_columnUncertainty"]["notAnalysed"]["c"]
    assert e["field"] == "customer" and e["line"] == 5


def test_either_side_edges_are_not_asserted_and_warnings_are_in_the_run_facet() -> None:
    r = analyze_source(
        "a = spark.read.json('s3://in/a')\n"
        "b = spark.read.json('s3://in/b')\n"
        "j = a.join(b, 'id')\n"
        "j.select('id', 'x').write.parquet('s3://out/j')\n")
    [event] = to_openlineage([r])
    [out] = event["outputs"]
    fields = out["facets"]["columnLineage"]["fields"]
    assert fields["x"]["inputFields"] == []
    assert [f["name"] for f in fields["id"]["inputFields"]] == ["a"]
    either = out["facets"]["lakemark_columnUncertainty"]["eitherSide"]["x"]
    assert sorted(e["name"] for e in either) == ["a", "b"]
    run = event["run"]["facets"]["lakemark_staticAnalysis"]
    assert any("one of them, not all" in w["message"] and w["line"] == 4
               for w in run["warnings"])
    assert all(f["_producer"] == event["producer"] for f in out["facets"].values())


def test_unlisted_pass_throughs_are_in_the_dataset_and_run_facets() -> None:
    r = analyze_source("df = spark.read.json('s3://in/raw')\n"
                       "df.filter('x > 1').write.parquet('s3://out/t')\n")
    [event] = to_openlineage([r])
    run = event["run"]["facets"]["lakemark_staticAnalysis"]
    assert run["unlistedColumns"] == [{"output": {"namespace": "s3://out", "name": "t"},
                                       "inputs": [{"namespace": "s3://in", "name": "raw"}]}]
    extra = event["outputs"][0]["facets"]["lakemark_columnUncertainty"]
    assert extra["unlistedInputs"] == [{"namespace": "s3://in", "name": "raw"}]
    check_facet(extra, "ColumnUncertaintyDatasetFacet")


@pytest.mark.parametrize("bad", [{"eitherSide": {}, "notAnalysed": {}},
                                 {"eitherSide": {"c": [{"name": "x"}]}, "notAnalysed": {},
                                  "unlistedInputs": []}])
def test_the_facet_schema_rejects_malformed_facets(bad: dict[str, Any]) -> None:
    facet = {"_producer": "p", "_schemaURL": "s", **bad}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(facet, {**SCHEMA, "$ref": "#/$defs/ColumnUncertaintyDatasetFacet"})


@pytest.mark.parametrize("root", ["s3://partner-drop/", "s3://partner-drop", "s3a://partner-drop//"])
def test_a_bucket_root_is_named_as_openlineage_names_it(root: str) -> None:
    # OpenLineage's naming spec: namespace s3://{bucket}, name {path}, URI s3://{bucket}{path};
    # its own client (FilesystemDatasetUtils) names a bucket root namespace s3://bucket, name
    # "/" — the same name here, so static, run-time and other producers' events join
    r = analyze_source(
        "spark = SparkSession.builder.getOrCreate()\n"
        "df = spark.read.parquet('s3://in-bucket/data/')\n"
        f"df.select('a').write.csv({root!r})\n",
        catalog=FolderCatalog(CORPUS), account="123456789012", region="us-east-1")
    [event] = to_openlineage([r])
    [out] = event["outputs"]
    assert (out["namespace"], out["name"]) == ("s3://partner-drop", "/")
    [f] = out["facets"]["columnLineage"]["fields"]["a"]["inputFields"]
    assert (f["namespace"], f["name"]) == ("s3://in-bucket", "data")
    assert [o.dataset.key for o in r.outputs] == ["s3://partner-drop/"]


def test_columns_through_unknown_mappings_are_possible_inputs_not_lineage() -> None:
    r = analyze_source(
        "import json\n"
        "cfg = json.loads(open('m.json').read())\n"
        "c = glueContext.create_dynamic_frame.from_catalog(database='retail', "
        "table_name='customers')\n"
        "ApplyMapping.apply(frame=c, mappings=cfg['m']).toDF().write.parquet('s3://o/m')\n",
        catalog=FolderCatalog(CORPUS), account="123456789012", region="us-east-1")
    [event] = to_openlineage([r])
    [out] = event["outputs"]
    facet = out["facets"]["lakemark_columnUncertainty"]
    check_facet(facet, "ColumnUncertaintyDatasetFacet")
    # each column may come from its same-named input column (the mapping is not known):
    # said in the facet, not stated in columnLineage, and not as a join's "either side"
    assert set(facet["possibleInputs"]) == {"customerId", "firstName", "lastName", "email",
                                            "countryCode"}
    assert facet["eitherSide"] == {}
    lineage = out["facets"].get("columnLineage", {}).get("fields", {})
    assert all(not f["inputFields"] for f in lineage.values())
