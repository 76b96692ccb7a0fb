"""The extractor: Glue API (boto3) → a lineage input folder (layout in :mod:`._model`).

It reads the catalog (databases, tables, connections — paginated in full) and the jobs
(``GetJobs``), downloads each job's script and ``--extra-py-files`` / S3
``--additional-python-modules`` from S3, and writes everything under
``OUT/<account>-<region>/``. Every name that becomes a file name goes through
:func:`safe_component`, so nothing is written outside ``OUT``. Connection passwords and other
secret properties, job arguments whose name says they are secret, and credentials anywhere
else in a connection, a job definition or a script's string literals are never written
(:mod:`lakemark.redaction`).
A job that fails is reported and skipped; it never stops the extraction.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..catalog._model import is_secret_property, mask_secrets
from ..errors import ConfigError, LakemarkError
from ..redaction import redact, redact_obj, redact_source
from ._names import inside, safe_component

__all__ = ["ExtractReport", "extract"]

_MAX_FILE = 50_000_000


@dataclass
class ExtractReport:
    """What an extraction wrote and what it skipped (with the reason)."""

    folder: Path
    databases: int = 0
    tables: int = 0
    jobs: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot write {type(value).__name__}")


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # every JSON file of the folder (databases, tables, connections, jobs) is redacted
    tmp.write_text(json.dumps(redact_obj(data), indent=2, default=_default, sort_keys=True) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


def _pages(client: Any, operation: str, key: str, **kwargs: Any) -> list[Any]:
    out: list[Any] = []
    for page in client.get_paginator(operation).paginate(**kwargs):
        out.extend(page.get(key) or [])
    return out


def _clean_connection(conn: Mapping[str, Any]) -> dict[str, Any]:
    entry = dict(conn)
    props = entry.get("ConnectionProperties")
    if isinstance(props, Mapping):
        entry["ConnectionProperties"] = {k: mask_secrets(k, str(v)) for k, v in props.items()
                                         if not is_secret_property(k)}
    for key in ("AuthenticationConfiguration", "SparkProperties", "AthenaProperties",
                "PythonProperties"):
        entry.pop(key, None)
    cleaned = redact_obj(entry)
    assert isinstance(cleaned, dict)
    return cleaned


def _split_s3(uri: str) -> tuple[str, str]:
    m = re.match(r"^s3[an]?://([^/]+)/(.+)$", uri.strip())
    if not m:
        raise ConfigError(f"{uri!r} is not an s3://bucket/key URI")
    return m.group(1), m.group(2)


def _download(s3: Any, uri: str, folder: Path) -> Path:
    bucket, key = _split_s3(uri)
    target = inside(folder, key.rsplit("/", 1)[-1] or "file")
    folder.mkdir(parents=True, exist_ok=True)
    head = s3.head_object(Bucket=bucket, Key=key)
    if int(head.get("ContentLength", 0)) > _MAX_FILE:
        raise ConfigError(f"{uri} is larger than {_MAX_FILE} bytes; not downloaded")
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    if target.suffix == ".py":
        # A script's hard-coded credentials stay out of the folder; the code stays valid Python
        # (only string literals and comments change), so its lineage is the same.
        try:
            body = redact_source(body.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            pass
    target.write_bytes(body)
    return target


def extract(out: str | Path, *, session: Any = None, include: Sequence[str] = (),
            exclude: Sequence[str] = (), progress: Callable[[str], None] | None = None,
            ) -> ExtractReport:
    """Extract the Glue catalog and jobs of the current AWS account and region into
    ``out/<account>-<region>/`` (standard AWS configuration; ``AWS_ENDPOINT_URL`` works)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    say = progress or (lambda message: None)
    session = session or boto3.session.Session()
    region = session.region_name or os.environ.get("AWS_REGION") or "us-east-1"
    try:
        account = session.client("sts", region_name=region).get_caller_identity()["Account"]
    except (BotoCoreError, ClientError) as exc:
        raise ConfigError(f"cannot identify the AWS account (sts get-caller-identity): {exc}"
                          ) from None
    root = Path(out).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    conn_dir = inside(root, f"{account}-{region}")
    report = ExtractReport(conn_dir)
    glue = session.client("glue", region_name=region)
    s3 = session.client("s3", region_name=region)
    _write_json(conn_dir / "connection.json", {"Account": account, "Region": region})
    catalog = conn_dir / "catalog"
    try:
        databases = _pages(glue, "get_databases", "DatabaseList")
    except (BotoCoreError, ClientError) as exc:
        raise ConfigError(f"cannot list Glue databases: {exc}") from None
    _write_json(catalog / "databases.json", {"DatabaseList": databases})
    report.databases = len(databases)
    for db in databases:
        name = str(db.get("Name", ""))
        if safe_component(name) != name:
            report.skipped.append((f"database {name!r}", "name is not safe as a file name"))
            continue
        try:
            tables = _pages(glue, "get_tables", "TableList", DatabaseName=name)
        except (BotoCoreError, ClientError) as exc:
            report.skipped.append((f"database {name}", redact(str(exc))))
            continue
        _write_json(inside(catalog, "tables", f"{name}.json"), {"TableList": tables})
        report.tables += len(tables)
        say(f"database {name}: {len(tables)} tables")
    try:
        connections = _pages(glue, "get_connections", "ConnectionList", HidePassword=True)
        _write_json(catalog / "connections.json",
                    {"ConnectionList": [_clean_connection(c) for c in connections]})
    except (BotoCoreError, ClientError) as exc:
        report.skipped.append(("connections", redact(str(exc))))
    for job in _pages(glue, "get_jobs", "Jobs"):
        name = str(job.get("Name", ""))
        if include and not any(fnmatch.fnmatchcase(name, p) for p in include):
            continue
        if any(fnmatch.fnmatchcase(name, p) for p in exclude):
            continue
        folder = inside(conn_dir, "jobs", name)
        try:
            _extract_job(s3, job, folder)
            report.jobs.append(name)
            say(f"job {name}")
        except (BotoCoreError, ClientError, LakemarkError, OSError) as exc:
            shutil.rmtree(folder, ignore_errors=True)  # no half-written job folder
            report.skipped.append((f"job {name}", redact(str(exc))))
            say(f"job {name}: skipped ({redact(str(exc))})")
    return report


def _extract_job(s3: Any, job: Mapping[str, Any], folder: Path) -> None:
    # Arguments whose name looks secret become ***; secrets inside the others (a JDBC URL's
    # password, --conf …secret.key=…) and anywhere else in the definition are removed.
    definition = redact_obj(dict(job))
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / "job.json", {"Job": definition})
    location = str((job.get("Command") or {}).get("ScriptLocation") or "")
    if location:
        _download(s3, location, folder / "script")
    args = {**(job.get("DefaultArguments") or {}), **(job.get("NonOverridableArguments") or {})}
    for uri in filter(None, (u.strip() for u in str(args.get("--extra-py-files", ""))
                             .split(","))):
        _download(s3, uri, folder / "extra-py-files")
    pip: list[str] = []
    for module in filter(None, (m.strip() for m in str(
            args.get("--additional-python-modules", "")).split(","))):
        if module.lower().startswith("s3://"):
            _download(s3, module, folder / "libs")
        else:
            pip.append(module)
    if pip:
        (folder / "libs").mkdir(parents=True, exist_ok=True)
        (folder / "libs" / "pip-requirements.txt").write_text(
            "\n".join(redact(p) for p in pip) + "\n", encoding="utf-8")
