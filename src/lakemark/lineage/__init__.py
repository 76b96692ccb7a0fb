"""Static, column-level lineage of AWS Glue jobs (and any PySpark script).

extract (Glue API → folder) → model (folder → jobs, catalog, resolved arguments) → analyse
(each script's AST, never executed) → render (OpenLineage, DOT, Mermaid, JSON, HTML).
See docs/lineage.md.
"""

from __future__ import annotations

from ._extract import extract
from ._graph import (
    ColumnEdge,
    DatasetRef,
    InputDataset,
    JobLineage,
    LineageWarning,
    OutputLineage,
    redact_lineage,
)
from ._html import to_html
from ._model import ConnectionFolder, GlueJob, load_folders, resolve_arguments
from ._render import to_dot, to_json, to_mermaid, to_openlineage
from ._scan import analyze_job, analyze_source, scan_folder
from ._send import send_events

__all__ = [
    "ColumnEdge",
    "ConnectionFolder",
    "DatasetRef",
    "GlueJob",
    "InputDataset",
    "JobLineage",
    "LineageWarning",
    "OutputLineage",
    "analyze_job",
    "analyze_source",
    "extract",
    "load_folders",
    "redact_lineage",
    "resolve_arguments",
    "scan_folder",
    "send_events",
    "to_dot",
    "to_html",
    "to_json",
    "to_mermaid",
    "to_openlineage",
]
