"""Runtime lineage: OpenLineage START / COMPLETE / FAIL events for each run of a
:class:`lakemark.Job` (``lakemark run``, ``lakemark ingest …``, or the API).

Off by default. ``LAKEMARK_OPENLINEAGE=file:PATH`` appends one JSON event per line to PATH;
``LAKEMARK_OPENLINEAGE=http(s)://…`` POSTs each event (bearer token from
``OPENLINEAGE_API_KEY``). Job: namespace ``lakemark``, name the job's name; run id: a UUID
derived from lakemark's run id (``uuid5``), which is also in the ``lakemark_run`` run facet.

Inputs are the sources the run planned, as recorded in its manifest (file roots and S3
prefixes, JDBC tables — URLs are recorded without credentials —, events tables); outputs are
the sinks it committed, with the written DataFrame's ``schema`` facet and a ``columnLineage``
facet traced from the plan Spark ran (:mod:`lakemark.lineage._spark_plan`): each written
column maps to the columns of the frames the job read (``read_files``, ``read_jdbc``, so also
the Glue facade's sources) that it was computed from — DIRECT with subtype IDENTITY,
TRANSFORMATION or AGGREGATION — and filter, join, grouping, sort and window keys are
dataset-level INDIRECT inputs. Dataset names follow docs/lineage.md. A transport that fails is
reported on stderr and never fails the run.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..redaction import redact_obj, redact_url
from ._datasets import jdbc_dataset, path_dataset
from ._render import PRODUCER
from ._spark_plan import ColumnTrace, SourceColumn

if TYPE_CHECKING:
    from ..job import Job, JobEvent

__all__ = ["ENV", "RuntimeLineage", "attach", "run_uuid"]

ENV = "LAKEMARK_OPENLINEAGE"
NAMESPACE = "lakemark"
_lock = threading.Lock()


def run_uuid(run_id: str) -> str:
    """The OpenLineage run id (a UUID) of lakemark run ``run_id``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"lakemark:run:{run_id}"))


def _transport(spec: str) -> Callable[[dict[str, Any]], None]:
    if spec.lower().startswith(("http://", "https://")):
        from ._send import send_events

        def post(event: dict[str, Any]) -> None:
            send_events(spec, [event], api_key=os.environ.get("OPENLINEAGE_API_KEY") or None,
                        timeout=10.0)

        return post
    if spec.startswith("file:"):
        path = Path(spec[5:][2:] if spec.startswith("file://") else spec[5:]).expanduser()
        if not str(path) or str(path) == ".":
            raise ConfigError(f"{ENV}={spec!r}: give a file, as file:PATH")

        from ._send import file_emitter

        emit = file_emitter(path)

        def append(event: dict[str, Any]) -> None:
            with _lock:
                emit(event)

        return append
    raise ConfigError(f"{ENV}={spec!r} is neither file:PATH nor an http(s):// URL")


def attach(job: Job) -> RuntimeLineage | None:
    """The emitter of ``job`` when ``LAKEMARK_OPENLINEAGE`` is set, else None."""
    spec = os.environ.get(ENV, "").strip()
    if not spec:
        return None
    return RuntimeLineage(job, _transport(spec))


def _schema(df: Any) -> list[tuple[str, str]] | None:
    try:
        return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    except Exception:  # noqa: BLE001 - lineage never fails a run
        return None


def _column_lineage(trace: ColumnTrace, by_ctx: Mapping[str, list[Any]]) -> Any:
    """The ``columnLineage`` facet of ``trace`` over the input datasets of each source."""
    from openlineage.client.facet_v2 import column_lineage_dataset as cl

    def fields(column: SourceColumn, kind: str, subtypes: list[str]) -> list[Any]:
        return [cl.InputField(namespace=ds.namespace, name=ds.name, field=column.column,
                              transformations=[cl.Transformation(
                                  type=kind, subtype=subtype, description="", masking=False)
                                  for subtype in subtypes])
                for ds in by_ctx.get(column.ctx, [])]

    columns = {name: cl.Fields(inputFields=[f for column, subtype in sorted(
                   found.items(), key=lambda kv: (kv[0].ctx, kv[0].column))
                   for f in fields(column, "DIRECT", [subtype])])
               for name, found in trace.columns.items()}
    columns = {name: f for name, f in columns.items() if f.inputFields}
    dataset = [f for column, subtypes in sorted(trace.indirect.items(),
                                                key=lambda kv: (kv[0].ctx, kv[0].column))
               for f in fields(column, "INDIRECT", sorted(subtypes))]
    if not columns and not dataset:
        return None
    return cl.ColumnLineageDatasetFacet(fields=columns, dataset=dataset)


class RuntimeLineage:
    """Turns a job's lifecycle events into OpenLineage run events (see the module doc)."""

    def __init__(self, job: Job, send: Callable[[dict[str, Any]], None]) -> None:
        self.job = job
        self.send = send
        self.run_id: str | None = None
        # The DataFrames read and written, from the job's ``read`` and ``written`` events.
        self._read_frames: list[tuple[Any, str]] = []  # (df, manifest key of its source)
        self._written: dict[str, tuple[list[tuple[str, str]] | None, ColumnTrace | None]] = {}

    def _trace(self, df: Any) -> ColumnTrace | None:
        """The columns ``df`` was computed from, or None when its plan cannot be read."""
        from ..connect_compat import is_connect
        from ._spark_plan import frame_sources, trace_columns

        if is_connect(getattr(df, "sparkSession", None)):
            print("lakemark: column lineage is not available over Spark Connect yet (the "
                  "run's lineage has no column facet)", file=sys.stderr)
            return None
        try:
            return trace_columns(df, frame_sources(self._read_frames))
        except Exception as exc:  # noqa: BLE001 - lineage never fails a run
            print(f"lakemark: column lineage not traced: {exc}", file=sys.stderr)
            return None

    def __call__(self, event: JobEvent) -> None:
        try:
            detail: Mapping[str, Any] = event.detail or {}
            if event.stage == "read" and event.frame is not None:
                self._read_frames.append((event.frame, str(detail.get("key"))))
            elif event.stage == "written" and event.frame is not None:
                key = str(detail.get("table") or detail.get("target"))
                self._written[key] = (_schema(event.frame), self._trace(event.frame))
            elif event.stage == "started":
                self.run_id = str(detail.get("run_id"))
                self._emit("START", detail)
            elif event.stage in ("committed", "ended"):
                self._emit("COMPLETE", detail)
            elif event.stage == "failed":
                self._emit("FAIL", detail)
        except Exception as exc:  # noqa: BLE001 - lineage never fails a run
            print(f"lakemark: OpenLineage event not emitted: {exc}", file=sys.stderr)

    def _datasets(self) -> tuple[list[Any], list[Any]]:
        from openlineage.client.event_v2 import InputDataset, OutputDataset
        from openlineage.client.facet_v2 import schema_dataset

        assert self.run_id is not None
        inputs: list[Any] = []
        by_ctx: dict[str, list[Any]] = {}
        outputs: list[Any] = []
        for item in self.job.store.run_inputs(self.run_id):
            plan = item.plan
            kind = plan.get("kind")
            if kind == "sink":
                if plan.get("status") in ("committed", "skipped"):
                    outputs.append(plan)
                continue
            if kind == "jdbc" or ("url" in plan and "dbtable" in plan):
                refs = [jdbc_dataset(redact_url(str(plan["url"])), str(plan["dbtable"]))]
            elif plan.get("source"):
                refs = [path_dataset(p) for p in str(plan["source"]).split(",") if p]
            else:
                continue
            for ref in refs:
                ds = InputDataset(namespace=ref.namespace, name=ref.name)
                inputs.append(ds)
                by_ctx.setdefault(item.ctx, []).append(ref)
        out: list[Any] = []
        for plan in outputs:
            ref = (jdbc_dataset(str(plan["url"]), str(plan["dbtable"]))
                   if plan.get("format") == "jdbc" and plan.get("dbtable") else
                   path_dataset(str(plan["target"])))
            fields, trace = self._written.get(str(plan["target"]), (None, None))
            facets: dict[str, Any] = {}
            if fields:
                facets["schema"] = schema_dataset.SchemaDatasetFacet(fields=[
                    schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in fields])
            if trace is not None:
                lineage = _column_lineage(trace, by_ctx)
                if lineage is not None:
                    facets["columnLineage"] = lineage
            out.append(OutputDataset(namespace=ref.namespace, name=ref.name, facets=facets))
        return inputs, out

    def _emit(self, state: str, detail: Mapping[str, Any]) -> None:
        from openlineage.client.event_v2 import Job as OLJob
        from openlineage.client.event_v2 import Run, RunEvent, RunState
        from openlineage.client.facet_v2 import error_message_run, job_type_job
        from openlineage.client.serde import Serde

        assert self.run_id is not None
        run_facets: dict[str, Any] = {}
        if state == "FAIL":
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=redact_url(str(detail.get("error", ""))), programmingLanguage="python")
        inputs, outputs = self._datasets() if state != "START" else ([], [])
        event = RunEvent(
            eventType=getattr(RunState, state),
            eventTime=datetime.now(UTC).isoformat(), producer=PRODUCER,
            run=Run(runId=run_uuid(self.run_id), facets=run_facets),
            job=OLJob(namespace=NAMESPACE, name=self.job.name, facets={
                "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH",
                                                        integration="LAKEMARK", jobType="JOB")}),
            inputs=inputs, outputs=outputs)
        data = json.loads(Serde.to_json(event))
        data["run"].setdefault("facets", {})["lakemark_run"] = {
            "_producer": PRODUCER, "_schemaURL": PRODUCER + "#lakemark_run",
            "runId": self.run_id, **{k: detail[k] for k in ("run", "attempt", "version")
                                     if k in detail}}
        self.send(redact_obj(data))
