"""Static, column-level lineage of AWS Glue jobs (and any PySpark script).

extract (Glue API → folder) → model (folder → jobs, catalog, resolved arguments) → analyse
(each script's AST, never executed) → render (OpenLineage, DOT, Mermaid, JSON, HTML).
See docs/lineage.md.
"""

from __future__ import annotations

from ._graph import ColumnEdge, DatasetRef, InputDataset, JobLineage, LineageWarning, OutputLineage
from ._model import ConnectionFolder, GlueJob, load_folders, resolve_arguments
from ._scan import analyze_job, analyze_source, scan_folder

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
    "load_folders",
    "resolve_arguments",
    "scan_folder",
]
