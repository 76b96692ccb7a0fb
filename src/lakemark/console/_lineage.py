"""The console's Lineage page: the column-lineage report of an export folder (the scripts
analysed statically, never run) and of what runs reported (the OpenLineage events runtime
lineage wrote to a file), drawn by the same report the `lineage` commands write.

Events are read back into the lineage model (:class:`lakemark.lineage.JobLineage`), the newest
COMPLETE event of each job standing for it, so both views share one renderer and one JSON
shape (``lakemark.lineage.to_json``). A folder is analysed once per console process (a page may
ask again with ``?rescan=1``); an events file is read at each request, so new runs show.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..lineage import (ColumnEdge, DatasetRef, InputDataset, JobLineage, LineageWarning,
                       OutputLineage, redact_lineage, scan_folder, to_html, to_json)

__all__ = ["LineageViews", "jobs_from_events"]


class LineageViews:
    """The lineage the console shows: of ``folder`` (an export folder), of ``events`` (an
    OpenLineage JSON-lines file), or both; checked at start so a wrong path fails then."""

    def __init__(self, folder: str | None = None, events: str | None = None) -> None:
        if folder is not None and not Path(folder).is_dir():
            raise ConfigError(f"--lineage {folder}: not a folder (give the folder "
                              "`lakemark lineage extract` wrote, or one of job folders)")
        if events is not None and not Path(events).is_file():
            raise ConfigError(f"--lineage-events {events}: no such file (the file:PATH that "
                              "LAKEMARK_OPENLINEAGE names)")
        self.folder = folder
        self.events = events
        self._scanned: list[JobLineage] | None = None

    @property
    def configured(self) -> bool:
        return self.folder is not None or self.events is not None

    def jobs(self, view: str, *, rescan: bool = False) -> list[JobLineage]:
        """The jobs of one view: ``scripts`` (the folder) or ``runs`` (the events file)."""
        if view == "scripts":
            if self.folder is None:
                raise ConfigError("no export folder: start the console with --lineage FOLDER")
            if self._scanned is None or rescan:
                self._scanned = scan_folder(self.folder)
            return redact_lineage(self._scanned)
        if view == "runs":
            if self.events is None:
                raise ConfigError("no events file: start the console with "
                                  "--lineage-events FILE")
            return redact_lineage(jobs_from_events(_read_events(self.events)))
        raise ConfigError(f"query parameter 'view' must be 'scripts' or 'runs', got {view!r}")

    def json(self, view: str, *, rescan: bool = False) -> Any:
        return to_json(self.jobs(view, rescan=rescan))

    def html(self, view: str, *, rescan: bool = False) -> str:
        title = "lineage of the scripts" if view == "scripts" else "lineage of what runs reported"
        return to_html(self.jobs(view, rescan=rescan), title=title)


def _read_events(path: str) -> list[Mapping[str, Any]]:
    """Every event of the file; a line that is not a JSON object is a ConfigError naming it
    (a half-written last line, while a run appends, is skipped: the next read has it)."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    events: list[Mapping[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue
            raise ConfigError(f"{path}:{number}: not an OpenLineage event (not JSON)") from None
        if not isinstance(event, dict):
            raise ConfigError(f"{path}:{number}: not an OpenLineage event (not an object)")
        events.append(event)
    return events


def jobs_from_events(events: Iterable[Mapping[str, Any]]) -> list[JobLineage]:
    """One :class:`JobLineage` per job named by the events: its newest COMPLETE event's inputs
    and outputs, with each output's ``columnLineage`` as column edges."""
    newest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for event in events:
        job = event.get("job") or {}
        if event.get("eventType") != "COMPLETE" or not isinstance(job, dict):
            continue
        key = (str(job.get("namespace") or ""), str(job.get("name") or ""))
        if key not in newest or str(event.get("eventTime") or "") >= str(
                newest[key].get("eventTime") or ""):
            newest[key] = event
    return [_job(ns, name, event) for (ns, name), event in sorted(newest.items())]


def _ref(dataset: Mapping[str, Any]) -> DatasetRef:
    return DatasetRef(str(dataset.get("namespace") or ""), str(dataset.get("name") or ""))


def _job(namespace: str, name: str, event: Mapping[str, Any]) -> JobLineage:
    inputs = []
    for d in event.get("inputs") or ():
        fields = ((d.get("facets") or {}).get("schema") or {}).get("fields") or ()
        inputs.append(InputDataset(_ref(d), tuple((str(f.get("name")), str(f.get("type") or ""))
                                                  for f in fields if isinstance(f, dict))))
    outputs = []
    for d in event.get("outputs") or ():
        columns = ((d.get("facets") or {}).get("columnLineage") or {}).get("fields") or {}
        outputs.append(OutputLineage(_ref(d), tuple(
            (str(column), tuple(_edge(f) for f in spec.get("inputFields") or ()
                                if isinstance(f, dict)))
            for column, spec in sorted(columns.items()) if isinstance(spec, dict))))
    run_id = str((event.get("run") or {}).get("runId") or "")
    warnings = () if outputs or inputs else (
        LineageWarning(f"run {run_id} reported no inputs and no outputs"),)
    return JobLineage(job=name, namespace=namespace, inputs=tuple(inputs),
                      outputs=tuple(outputs), warnings=warnings)


def _edge(field: Mapping[str, Any]) -> ColumnEdge:
    transformations = field.get("transformations") or [{}]
    first = transformations[0] if isinstance(transformations[0], dict) else {}
    return ColumnEdge(_ref(field), str(field.get("field") or ""),
                      type=str(first.get("type") or "DIRECT"),
                      subtype=str(first.get("subtype") or "IDENTITY"),
                      description=str(first.get("description") or ""))
