"""The reader: runs the analyser over the jobs of a lineage input folder."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..catalog import FolderCatalog
from ..errors import LakemarkError
from ._analyze import analyze_script
from ._datasets import DatasetResolver
from ._graph import JobLineage, LineageWarning
from ._model import ConnectionFolder, GlueJob, load_folders

__all__ = ["analyze_job", "analyze_source", "scan_folder"]


def _namespace(conn: ConnectionFolder | None, account: str, region: str) -> str:
    return f"glue://{account}-{region}" if conn is None else \
        f"glue://{conn.account}-{conn.region}"


def analyze_source(source: str, *, job: str = "script", catalog: FolderCatalog | None = None,
                   arguments: Mapping[str, str] | None = None, account: str = "unknown",
                   region: str = "unknown", modules: Mapping[str, tuple[str, str]] | None = None,
                   file: str = "script.py") -> JobLineage:
    """The lineage of one script's text (for tests, notebooks and single files)."""
    resolver = DatasetResolver(catalog, region, account, lambda m, line: None)
    return analyze_script(source, job=job, namespace=_namespace(None, account, region),
                          resolver=resolver, arguments=dict(arguments or {}),
                          modules=dict(modules or {}), file=file)


def _account(conn: ConnectionFolder, job: GlueJob) -> str:
    """The connection's account, else the one in the job's role ARN
    (``arn:aws:iam::123456789012:role/…``)."""
    if conn.account != "unknown":
        return conn.account
    role = job.definition.get("Role") if isinstance(job.definition, Mapping) else None
    m = re.match(r"^arn:aws[\w-]*:iam::(\d{12}):", role) if isinstance(role, str) else None
    return m.group(1) if m else conn.account


def analyze_job(conn: ConnectionFolder, job: GlueJob) -> JobLineage:
    """The lineage of one job of a connection folder; problems with its files become
    warnings (one job never stops a scan)."""
    account = _account(conn, job)
    namespace = f"glue://{account}-{conn.region}"
    problems = [LineageWarning(p) for p in job.problems]
    if job.script is None:
        return JobLineage(job.name, namespace, "", warnings=tuple(problems))
    if job.language != "python":
        problems.append(LineageWarning(f"{job.language} scripts are not analysed", 0,
                                       job.script.name))
        return JobLineage(job.name, namespace, job.script.name, warnings=tuple(problems))
    try:
        source = job.read_script()
        modules = job.modules()
    except LakemarkError as exc:
        problems.append(LineageWarning(str(exc)))
        return JobLineage(job.name, namespace, job.script.name, warnings=tuple(problems))
    resolver = DatasetResolver(conn.catalog, conn.region, account, lambda m, line: None)
    result = analyze_script(source, job=job.name, namespace=namespace, resolver=resolver,
                            arguments=dict(job.arguments), modules=modules,
                            file=job.script.name)
    if problems:
        result = JobLineage(result.job, result.namespace, result.script, result.inputs,
                            result.outputs, tuple(problems) + result.warnings,
                            result.source_code)
    return result


def scan_folder(path: str | Path, *, run_arguments: Mapping[str, str] | None = None,
                include: Sequence[str] = (), exclude: Sequence[str] = ()) -> list[JobLineage]:
    """The lineage of every selected job under ``path`` (a connection folder or a folder of
    them), in folder and job-name order."""
    out: list[JobLineage] = []
    for conn in load_folders(path, run_arguments=run_arguments, include=include,
                             exclude=exclude):
        out.extend(analyze_job(conn, job) for job in conn.jobs)
    return out
