"""The lineage input folder, loaded: connection folders with a catalog and jobs.

Layout (written by ``lakemark lineage extract``, or by hand from ``aws glue get-*`` outputs)::

    <connection folder>/                  e.g. 123456789012-us-east-1/
      catalog/...                         the catalog folder (docs/catalog.md)
      connection.json                     {"Account": ..., "Region": ...}  (optional; else
                                          taken from the folder name <account>-<region>)
      jobs/<job>/job.json                 aws glue get-job --job-name <job>  {"Job": {...}}
      jobs/<job>/script/<file>.py         the script (Command.ScriptLocation)
      jobs/<job>/run-arguments.json       optional: the arguments of a run {"--X": "v"}
      jobs/<job>/extra-py-files/          files named by --extra-py-files (.py and .zip)
      jobs/<job>/libs/                    S3 libraries of --additional-python-modules;
                                          pip-requirements.txt holds the pip names

A job folder may also hold just a script (``jobs/<job>/<file>.py``): offline use needs no
job JSON. Job arguments are resolved as Glue resolves them: ``DefaultArguments``, then the
run's arguments, then ``NonOverridableArguments``.
"""

from __future__ import annotations

import fnmatch
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import FolderCatalog
from ..errors import ConfigError

__all__ = ["ConnectionFolder", "GlueJob", "load_folders", "resolve_arguments"]

_CONNECTION_NAME = re.compile(r"^(\d{12})-([a-z]{2}(?:-[a-z0-9]+)+-\d+)$")
_MAX_SOURCE = 5_000_000


def resolve_arguments(job: Mapping[str, Any], run_arguments: Mapping[str, str] | None = None,
                      ) -> dict[str, str]:
    """The arguments a run of ``job`` (a ``get-job`` ``Job``) sees, without leading ``--``:
    ``DefaultArguments``, then ``run_arguments``, then ``NonOverridableArguments``."""
    out: dict[str, str] = {}
    for source in (job.get("DefaultArguments"), run_arguments, job.get("NonOverridableArguments")):
        if isinstance(source, Mapping):
            for key, value in source.items():
                out[str(key).lstrip("-")] = "" if value is None else str(value)
    return out


@dataclass(frozen=True)
class GlueJob:
    """One job: its definition, script, resolved arguments and extra Python files."""

    name: str
    folder: Path
    definition: Mapping[str, Any]
    script: Path | None
    arguments: Mapping[str, str]
    extra_files: tuple[Path, ...] = ()
    pip_modules: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def language(self) -> str:
        """``python`` or ``scala`` (from ``DefaultArguments --job-language`` or the file)."""
        lang = self.arguments.get("job-language", "")
        if lang:
            return lang.lower()
        if self.script is not None and self.script.suffix == ".scala":
            return "scala"
        return "python"

    def read_script(self) -> str:
        """The script text (:class:`ConfigError` naming the file when it cannot be read)."""
        if self.script is None:
            raise ConfigError(f"job {self.name}: no script in {self.folder}")
        return _read_text(self.script)

    def modules(self) -> dict[str, tuple[str, str]]:
        """Python modules of the extra py files: module name → (file label, source text).
        Zips are read in place; nothing is extracted or imported."""
        out: dict[str, tuple[str, str]] = {}
        for path in self.extra_files:
            if path.suffix == ".py":
                out.setdefault(path.stem, (str(path), _read_text(path)))
            elif path.suffix in (".zip", ".egg", ".whl"):
                try:
                    with zipfile.ZipFile(path) as archive:
                        for info in archive.infolist():
                            if not info.filename.endswith(".py") or info.file_size > _MAX_SOURCE:
                                continue
                            module = info.filename[:-3].replace("\\", "/").strip("/")
                            if module.endswith("/__init__"):
                                module = module[: -len("/__init__")]
                            text = archive.read(info).decode("utf-8", "replace")
                            out.setdefault(module.replace("/", "."),
                                           (f"{path}!{info.filename}", text))
                except (zipfile.BadZipFile, OSError) as exc:
                    raise ConfigError(f"job {self.name}: cannot read {path}: {exc}") from None
        return out


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > _MAX_SOURCE:
            raise ConfigError(f"{path} is larger than {_MAX_SOURCE} bytes; not a script")
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class ConnectionFolder:
    """One account and region: its catalog (when there is one) and jobs."""

    root: Path
    account: str
    region: str
    catalog: FolderCatalog | None
    jobs: tuple[GlueJob, ...] = field(default=())


def _is_connection(path: Path) -> bool:
    return (path / "catalog").is_dir() or (path / "jobs").is_dir()


def _identity(root: Path) -> tuple[str, str]:
    info = root / "connection.json"
    if info.is_file():
        data = _load_json(info)
        if isinstance(data, Mapping):
            return str(data.get("Account") or "unknown"), str(data.get("Region") or "unknown")
    m = _CONNECTION_NAME.match(root.name)
    if m:
        return m.group(1), m.group(2)
    return "unknown", "unknown"


def _within(path: Path, root: Path) -> bool:
    real, top = path.resolve(), root.resolve()
    return real == top or top in real.parents


def _load_job(folder: Path, run_arguments: Mapping[str, str] | None) -> GlueJob:
    problems: list[str] = []
    definition: Mapping[str, Any] = {}
    job_file = folder / "job.json"
    if job_file.is_file():
        data = _load_json(job_file)
        if isinstance(data, Mapping) and isinstance(data.get("Job"), Mapping):
            definition = data["Job"]
        elif isinstance(data, Mapping):
            definition = data
        else:
            raise ConfigError(f"{job_file}: expected the JSON of 'aws glue get-job'")
    name = str(definition.get("Name") or folder.name)
    run_args: dict[str, str] = {}
    run_file = folder / "run-arguments.json"
    if run_file.is_file():
        data = _load_json(run_file)
        if not isinstance(data, Mapping):
            raise ConfigError(f"{run_file}: expected a JSON object of arguments")
        run_args.update({str(k): str(v) for k, v in (data.get("Arguments", data)).items()})
    run_args.update(run_arguments or {})
    arguments = resolve_arguments(definition, run_args)
    arguments.setdefault("JOB_NAME", name)
    script = _find_script(folder, definition)
    if script is not None and not _within(script, folder):
        problems.append(f"{script} resolves outside the job folder (a symlink); not read")
        script = None
    if script is None and not problems:
        problems.append(f"no script found in {folder} (expected script/<file>.py)")
    extra: list[Path] = []
    extra_dir = folder / "extra-py-files"
    if extra_dir.is_dir():
        for p in sorted(q for q in extra_dir.iterdir() if q.is_file()):
            if _within(p, folder):
                extra.append(p)
            else:
                problems.append(f"{p} resolves outside the job folder (a symlink); not read")
    pip: list[str] = []
    req = folder / "libs" / "pip-requirements.txt"
    if req.is_file():
        pip.extend(line.strip() for line in _read_text(req).splitlines() if line.strip())
    return GlueJob(name, folder, definition, script, arguments, tuple(extra), tuple(pip),
                   tuple(problems))


def _find_script(folder: Path, definition: Mapping[str, Any]) -> Path | None:
    command = definition.get("Command") if isinstance(definition.get("Command"), Mapping) \
        else {}
    wanted = str(command.get("ScriptLocation") or "").rsplit("/", 1)[-1]  # type: ignore[union-attr]
    candidates: list[Path] = []
    for where in (folder / "script", folder):
        if where.is_dir():
            candidates.extend(sorted(p for p in where.iterdir()
                                     if p.is_file() and p.suffix in (".py", ".scala")))
    for path in candidates:
        if wanted and path.name == wanted:
            return path
    return candidates[0] if candidates else None


def _selected(name: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    if include and not any(fnmatch.fnmatchcase(name, p) for p in include):
        return False
    return not any(fnmatch.fnmatchcase(name, p) for p in exclude)


def load_folders(path: str | Path, *, run_arguments: Mapping[str, str] | None = None,
                 include: Sequence[str] = (), exclude: Sequence[str] = (),
                 ) -> list[ConnectionFolder]:
    """The connection folders at ``path`` (itself one, or a folder of them)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ConfigError(f"lineage input folder {str(path)!r} does not exist")
    roots = [root] if _is_connection(root) else sorted(
        p for p in root.iterdir() if p.is_dir() and _is_connection(p))
    if not roots:
        raise ConfigError(
            f"{root} is not a lineage input folder: expected catalog/ or jobs/ in it, or "
            "connection folders (<account>-<region>/) holding them (see docs/lineage.md)")
    out: list[ConnectionFolder] = []
    for conn in roots:
        account, region = _identity(conn)
        catalog = FolderCatalog(conn) if (conn / "catalog").is_dir() else None
        jobs: list[GlueJob] = []
        jobs_dir = conn / "jobs"
        if jobs_dir.is_dir():
            for folder in sorted(p for p in jobs_dir.iterdir() if p.is_dir()):
                job = _load_job(folder, run_arguments)
                if _selected(job.name, include, exclude):
                    jobs.append(job)
        out.append(ConnectionFolder(conn, account, region, catalog, tuple(jobs)))
    return out
