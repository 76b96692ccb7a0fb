"""Lineage as immutable data: datasets, column edges, warnings, one record per job.

The analyser produces these; OpenLineage, DOT, Mermaid, JSON and HTML are renderers of them
(nothing here knows about any output format).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..redaction import redact, redact_source

__all__ = [
    "AGGREGATION",
    "CONDITIONAL",
    "DIRECT",
    "FILTER",
    "GROUP_BY",
    "IDENTITY",
    "INDIRECT",
    "JOIN",
    "SORT",
    "TRANSFORMATION",
    "UNKNOWN",
    "WINDOW",
    "ColumnEdge",
    "DatasetRef",
    "JobLineage",
    "LineageWarning",
    "InputDataset",
    "OutputLineage",
    "Symlink",
    "redact_lineage",
]

DIRECT = "DIRECT"
INDIRECT = "INDIRECT"
IDENTITY = "IDENTITY"
TRANSFORMATION = "TRANSFORMATION"
AGGREGATION = "AGGREGATION"
FILTER = "FILTER"
JOIN = "JOIN"
GROUP_BY = "GROUP_BY"
SORT = "SORT"
WINDOW = "WINDOW"
CONDITIONAL = "CONDITIONAL"
#: The subtype of an edge whose transformation could not be analysed (a UDF body, …).
UNKNOWN = "UNKNOWN"


@dataclass(frozen=True, order=True)
class Symlink:
    """Another name of a dataset (a Glue catalog table naming an S3 location)."""

    namespace: str
    name: str
    type: str = "TABLE"


@dataclass(frozen=True, order=True)
class DatasetRef:
    """A dataset in OpenLineage naming: ``namespace`` (``s3://bucket``, ``postgres://h:5432``,
    ``arn:aws:glue:<region>:<account>``) and ``name`` (key path, ``db.schema.table``, …).

    ``dynamic`` marks a name the analyser could only partly resolve (an unknown job argument);
    the unresolved parts are shown as ``{?}``.
    """

    namespace: str
    name: str
    symlinks: tuple[Symlink, ...] = ()
    dynamic: bool = False

    @property
    def key(self) -> str:
        """``namespace/name`` — a readable identifier, unique per dataset."""
        sep = "" if self.namespace.endswith("/") or self.name.startswith("/") else "/"
        return f"{self.namespace}{sep}{self.name}"

    @property
    def label(self) -> str:
        """The friendliest name: the Glue table when there is one, else the key."""
        for link in self.symlinks:
            if link.name.startswith("table/"):
                return link.name[len("table/"):].replace("/", ".")
        return self.key


@dataclass(frozen=True, order=True)
class ColumnEdge:
    """One input column of an output column (or of a whole output dataset when indirect).

    ``type`` is DIRECT or INDIRECT; ``subtype`` IDENTITY, TRANSFORMATION, AGGREGATION (direct)
    or FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL (indirect), or UNKNOWN; ``line`` is
    the line of the script where the transformation happens.
    """

    dataset: DatasetRef
    field: str
    type: str = DIRECT
    subtype: str = IDENTITY
    description: str = ""
    line: int = 0


@dataclass(frozen=True)
class LineageWarning:
    """Something the analyser could not resolve — reported, never dropped."""

    message: str
    line: int = 0
    file: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else f"line {self.line}"
        return f"{where}: {self.message}" if self.line or self.file else self.message


@dataclass(frozen=True)
class OutputLineage:
    """What one sink writes: its dataset, each column's inputs, and dataset-level inputs."""

    dataset: DatasetRef
    columns: tuple[tuple[str, tuple[ColumnEdge, ...]], ...]
    indirect: tuple[ColumnEdge, ...] = ()
    line: int = 0
    #: the written frame's schema was not fully known (columns pass through from these inputs)
    open_inputs: tuple[DatasetRef, ...] = ()


@dataclass(frozen=True)
class InputDataset:
    """A dataset the job reads, with the columns known for it (from code or catalog)."""

    dataset: DatasetRef
    fields: tuple[tuple[str, str], ...] = ()
    line: int = 0


@dataclass(frozen=True)
class JobLineage:
    """The lineage of one job: its inputs, its outputs with column edges, and warnings."""

    job: str
    namespace: str
    script: str = ""
    inputs: tuple[InputDataset, ...] = ()
    outputs: tuple[OutputLineage, ...] = ()
    warnings: tuple[LineageWarning, ...] = ()
    source_code: str = field(default="", repr=False)

    def edges(self) -> list[tuple[str, str, ColumnEdge]]:
        """Every column edge as ``(output dataset key, output column, edge)``; dataset-level
        (indirect) edges have an empty output column."""
        out: list[tuple[str, str, ColumnEdge]] = []
        for o in self.outputs:
            for name, edges in o.columns:
                out.extend((o.dataset.key, name, e) for e in edges)
            out.extend((o.dataset.key, "", e) for e in o.indirect)
        return out


# -- credentials never reach an output -----------------------------------------------------------
def _ref(ds: DatasetRef) -> DatasetRef:
    return replace(ds, namespace=redact(ds.namespace), name=redact(ds.name),
                   symlinks=tuple(Symlink(redact(s.namespace), redact(s.name), s.type)
                                  for s in ds.symlinks))


def _edge(e: ColumnEdge) -> ColumnEdge:
    return replace(e, dataset=_ref(e.dataset), field=redact(e.field),
                   description=redact(e.description))


def redact_lineage(jobs: Sequence[JobLineage], *, source: bool = False) -> list[JobLineage]:
    """``jobs`` with credentials removed from every name, description and warning, and from
    the script's source when ``source`` (only OpenLineage's ``sourceCode`` facet shows it; the
    other renderers drop it) (:mod:`lakemark.redaction`). Every renderer renders only this.
    Redaction is deterministic, so a dataset keeps one key across jobs."""
    out: list[JobLineage] = []
    for job in jobs:
        out.append(replace(
            job, job=redact(job.job), namespace=redact(job.namespace), script=redact(job.script),
            inputs=tuple(replace(i, dataset=_ref(i.dataset),
                                 fields=tuple((redact(n), redact(t)) for n, t in i.fields))
                         for i in job.inputs),
            outputs=tuple(replace(
                o, dataset=_ref(o.dataset),
                columns=tuple((redact(n), tuple(_edge(e) for e in es)) for n, es in o.columns),
                indirect=tuple(_edge(e) for e in o.indirect),
                open_inputs=tuple(_ref(d) for d in o.open_inputs)) for o in job.outputs),
            warnings=tuple(replace(w, message=redact(w.message), file=redact(w.file))
                           for w in job.warnings),
            source_code=redact_source(job.source_code) if source else ""))
    return out
