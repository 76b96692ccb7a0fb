"""OpenLineage RunEvents of static lineage, with only the spec's transformation types.

The column lineage facet (spec 1-2-0) knows DIRECT edges of subtype IDENTITY, TRANSFORMATION
or AGGREGATION and INDIRECT edges of subtype JOIN, GROUP_BY, FILTER, SORT, WINDOW or
CONDITIONAL. What the analyser could not be sure of is said in lakemark's own facets
(their JSON schema is ``docs/lineage-facets.schema.json``), never with invented subtypes:

* an edge through code the analyser does not read (a UDF, a ``Map`` function; UNKNOWN in
  lakemark's own outputs) is a DIRECT TRANSFORMATION — the input feeds the output, in a way
  not known — and is listed under ``notAnalysed`` of the output's ``lakemark_columnUncertainty``
  facet;
* the "either side" edges of a join of inputs whose columns are not known (a column is in
  one of them, not all) are not asserted in ``columnLineage``: they are listed under
  ``eitherSide`` of that facet, per output column;
* columns of a frame whose columns are not known, assumed from the catalog's columns of the
  table it is written into by name, are not asserted either: they are under ``assumed``;
* inputs a column may come from through code whose effect on columns is not known (an
  ``ApplyMapping`` whose mappings are only known at run time, a pandas function with a declared
  schema) are not asserted either: they are under ``possibleInputs``;
* inputs whose columns pass to the output unlisted are ``unlistedInputs`` of that facet;
* every warning of the analysis (with file and line), and the unlisted pass-throughs of every
  output, are in the run facet ``lakemark_staticAnalysis``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime, UTC
from typing import Any

from ._graph import (
    AGGREGATION,
    DIRECT,
    IDENTITY,
    INDIRECT,
    TRANSFORMATION,
    ColumnEdge,
    JobLineage,
    OutputLineage,
    redact_lineage,
)
from ._values import ASSUMED, UNCERTAIN

__all__ = ["DIRECT_SUBTYPES", "FACETS_SCHEMA", "INDIRECT_SUBTYPES", "PRODUCER",
           "to_openlineage"]

PRODUCER = "https://github.com/lakemark/lakemark/lineage"
#: where the JSON schema of lakemark's facets is published (docs/lineage-facets.schema.json)
FACETS_SCHEMA = "https://github.com/lakemark/lakemark/blob/main/docs/lineage-facets.schema.json"
DIRECT_SUBTYPES = frozenset({IDENTITY, TRANSFORMATION, AGGREGATION})
INDIRECT_SUBTYPES = frozenset({"JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"})


def _standard(e: ColumnEdge) -> tuple[str, str | None]:
    """The spec's (type, subtype) of an edge: unknown subtypes become TRANSFORMATION for a
    DIRECT edge and no subtype for an INDIRECT one (the subtype is optional)."""
    if e.type == DIRECT:
        return DIRECT, e.subtype if e.subtype in DIRECT_SUBTYPES else TRANSFORMATION
    return INDIRECT, e.subtype if e.subtype in INDIRECT_SUBTYPES else None


def _description(e: ColumnEdge) -> str:
    return f"{e.description} (line {e.line})" if e.description else f"line {e.line}"


def _ref(e: ColumnEdge) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": e.dataset.namespace, "name": e.dataset.name,
                           "field": e.field, "line": e.line}
    if e.description:
        out["description"] = e.description
    return out


def _custom(name: str) -> dict[str, str]:
    return {"_producer": PRODUCER, "_schemaURL": f"{FACETS_SCHEMA}#/$defs/{name}"}


def _uncertainty(output: OutputLineage) -> dict[str, Any] | None:
    """The ``lakemark_columnUncertainty`` facet of one output, or None when all is known."""
    either: dict[str, list[dict[str, Any]]] = {}
    assumed: dict[str, list[dict[str, Any]]] = {}
    opaque: dict[str, list[dict[str, Any]]] = {}
    possible: dict[str, list[dict[str, Any]]] = {}
    for name, edges in output.columns:
        for e in edges:
            if e.description.startswith(ASSUMED):
                assumed.setdefault(name, []).append(_ref(e))
            elif e.description.startswith(f"{UNCERTAIN} in one of"):
                either.setdefault(name, []).append(_ref(e))
            elif e.description.startswith(UNCERTAIN):
                possible.setdefault(name, []).append(_ref(e))
            elif e.type == DIRECT and e.subtype not in DIRECT_SUBTYPES:
                opaque.setdefault(name, []).append(_ref(e))
    unlisted = [{"namespace": d.namespace, "name": d.name} for d in output.open_inputs]
    if not (either or assumed or opaque or unlisted or possible):
        return None
    return {**_custom("ColumnUncertaintyDatasetFacet"), "eitherSide": either,
            "assumed": assumed, "notAnalysed": opaque, "possibleInputs": possible,
            "unlistedInputs": unlisted}


def _analysis(job: JobLineage) -> dict[str, Any]:
    """The ``lakemark_staticAnalysis`` run facet: every warning and unlisted pass-through."""
    return {
        **_custom("StaticAnalysisRunFacet"),
        "script": job.script,
        "warnings": [{"message": w.message, "file": w.file, "line": w.line}
                     for w in job.warnings],
        "unlistedColumns": [
            {"output": {"namespace": o.dataset.namespace, "name": o.dataset.name},
             "inputs": [{"namespace": d.namespace, "name": d.name} for d in o.open_inputs]}
            for o in job.outputs if o.open_inputs],
    }


def _ol_dataset(ds: Any, fields: Sequence[tuple[str, str | None]],
                output: OutputLineage | None = None) -> dict[str, Any]:
    from openlineage.client.facet_v2 import (
        column_lineage_dataset,
        schema_dataset,
        symlinks_dataset,
    )

    facets: dict[str, Any] = {}
    if fields:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(fields=[
            schema_dataset.SchemaDatasetFacetFields(name=n, type=t or None)
            for n, t in fields])
    if ds.symlinks:
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(identifiers=[
            symlinks_dataset.Identifier(namespace=s.namespace, name=s.name, type=s.type)
            for s in ds.symlinks])
    if output is not None and (output.columns or output.indirect):
        def field(e: ColumnEdge) -> Any:
            kind, subtype = _standard(e)
            return column_lineage_dataset.InputField(
                namespace=e.dataset.namespace, name=e.dataset.name, field=e.field,
                transformations=[column_lineage_dataset.Transformation(
                    type=kind, subtype=subtype, description=_description(e), masking=False)])

        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={name: column_lineage_dataset.Fields(inputFields=[
                field(e) for e in edges if not e.description.startswith(UNCERTAIN)])
                for name, edges in output.columns},
            dataset=[field(e) for e in output.indirect])
    return facets


def _own_producer(obj: Any) -> None:
    """Every facet names lakemark as its producer (not the client library)."""
    if isinstance(obj, dict):
        if "_producer" in obj:
            obj["_producer"] = PRODUCER
        for v in obj.values():
            _own_producer(v)
    elif isinstance(obj, list):
        for v in obj:
            _own_producer(v)


def to_openlineage(jobs: Sequence[JobLineage], *, event_time: str | None = None,
                   ) -> list[dict[str, Any]]:
    """One COMPLETE RunEvent per job (openlineage-python's model, as plain JSON dicts), with
    ``schema``, ``symlinks`` and ``columnLineage`` facets, and lakemark's
    ``lakemark_columnUncertainty`` (outputs) and ``lakemark_staticAnalysis`` (run) facets.
    Static lineage has no real run, so each event gets a fresh run id and ``event_time``
    (now by default)."""
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState
    from openlineage.client.facet_v2 import job_type_job, source_code_job
    from openlineage.client.serde import Serde

    when = event_time or datetime.now(UTC).isoformat()
    jobs = redact_lineage(jobs, source=True)
    events: list[dict[str, Any]] = []
    for job in jobs:
        inputs = [InputDataset(namespace=i.dataset.namespace, name=i.dataset.name,
                               facets=_ol_dataset(i.dataset, i.fields))
                  for i in job.inputs]
        outputs = []
        for o in job.outputs:
            fields = [(name, None) for name, _ in o.columns]
            outputs.append(OutputDataset(namespace=o.dataset.namespace, name=o.dataset.name,
                                         facets=_ol_dataset(o.dataset, fields, o)))
        job_facets: dict[str, Any] = {
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH",
                                                    integration="GLUE", jobType="JOB"),
        }
        if job.source_code:
            job_facets["sourceCode"] = source_code_job.SourceCodeJobFacet(
                language="python", sourceCode=job.source_code)
        event = RunEvent(eventType=RunState.COMPLETE, eventTime=when, producer=PRODUCER,
                         run=Run(runId=str(uuid.uuid4())),
                         job=Job(namespace=job.namespace, name=job.job, facets=job_facets),
                         inputs=inputs, outputs=outputs)
        data = json.loads(Serde.to_json(event))
        _own_producer(data)
        data["run"].setdefault("facets", {})["lakemark_staticAnalysis"] = _analysis(job)
        for o, out in zip(job.outputs, data["outputs"]):
            facet = _uncertainty(o)
            if facet is not None:
                out.setdefault("facets", {})["lakemark_columnUncertainty"] = facet
        events.append(data)
    return events
