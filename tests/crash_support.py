"""Shared by the crash tests (``tests/spark/test_crash_matrix.py``) and the torture run
(``bench/torture.py``): run ``lakemark ingest files`` as a process that may SIGKILL itself at a
named point (``LAKEMARK_FAULT``), read a target the way a reader reads it, and check that the
target holds each row of the files the bookmark covers exactly once.

Every input file is JSON lines with an integer ``id`` unique across the whole source, so a row
is identified by its id and a file by its name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
if str(SRC) not in sys.path:  # the torture run imports this module from outside pytest
    sys.path.insert(0, str(SRC))

from lakemark.sinks import committed_files  # noqa: E402
from lakemark._fault import FAULT_ENV, FAULT_POINTS, FAULT_WAIT_ENV  # noqa: E402
from lakemark.state import open_store  # noqa: E402

__all__ = ["FAULT_POINTS", "KILLED", "FOLDER_FORMATS", "Check", "run_ingest", "start_held",
           "target_ids", "iceberg_ids", "covered_files", "check_exactly_once"]

#: The return code of a process that SIGKILLed itself.
KILLED = -9
#: Folder target formats the checks can read (pyarrow's dataset reader).
FOLDER_FORMATS = ("parquet", "json")


def _ingest_command(source: str, target: str, job: str, state: str, target_format: str,
                    force: bool, env: Mapping[str, str] | None, fault: str | None,
                    wait: tuple[str, Path] | None, extra: Sequence[str] = (),
                    remote: str | None = None) -> tuple[list[str], dict[str, str]]:
    child = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_WAIT_ENV)}
    child.update(env or {})
    child["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), child.get("PYTHONPATH")) if p)
    if fault:
        child[FAULT_ENV] = fault
    if wait:
        child[FAULT_WAIT_ENV] = f"{wait[0]}={wait[1]}"
    # an Iceberg target is a catalog table, named by --table (its catalog: ``extra``)
    where = ["--table", target] if target_format == "iceberg" else [target]
    # over Spark Connect the server's master applies (--master is refused with --remote)
    spark = ["--remote", remote] if remote else ["--master", "local[1]"]
    cmd = [sys.executable, "-m", "lakemark", "ingest", "files", source, *where, "--job", job,
           "--state", state, "--json", *spark, "--target-format", target_format]
    return cmd + (["--force"] if force else []) + list(extra), child


def run_ingest(source: str, target: str, *, job: str, state: str, fault: str | None = None,
               target_format: str = "delta", env: Mapping[str, str] | None = None,
               timeout: float = 900, force: bool = False, extra: Sequence[str] = (),
               remote: str | None = None) -> subprocess.CompletedProcess[str]:
    """One ``python -m lakemark ingest files`` run in a fresh process (``--json``,
    ``--master local[1]``), killed at ``fault`` if given. The repository's ``src`` comes first
    on the child's ``PYTHONPATH``, so the run uses this tree's code; ``env`` adds variables
    (an S3 endpoint, for instance); ``force`` takes the job's lease over; ``extra``: more
    options (``--clean-source delete``, for instance); ``remote``: a Spark Connect endpoint
    to run on (``--remote``) instead of ``--master local[1]``."""
    cmd, child = _ingest_command(source, target, job, state, target_format, force, env, fault,
                                 None, extra, remote)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=child)


def start_held(source: str, target: str, *, job: str, state: str, point: str, gate: Path,
               target_format: str = "delta", force: bool = False,
               env: Mapping[str, str] | None = None, extra: Sequence[str] = (),
               remote: str | None = None) -> tuple[subprocess.Popen[str], bool]:
    """Start an ``ingest files`` process that stops at ``point`` (``LAKEMARK_FAULT_WAIT``)
    until ``gate`` exists; return it once it stands there — ``(process, True)`` — or once it
    ended without reaching the point — ``(process, False)``, e.g. ``mid-write`` in a run with
    nothing to write. Waiting is on the barrier file, never on a guessed duration."""
    cmd, child = _ingest_command(source, target, job, state, target_format, force, env, None,
                                 (point, gate), extra, remote)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child)
    reached = Path(f"{gate}.reached")
    while not reached.exists():
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            continue
        if not reached.exists():
            return proc, False
    return proc, True


def _visible_files(target: Path, target_format: str) -> list[str]:
    """The data files pyarrow's dataset reader reads in a folder target (it skips names that
    start with ``_`` or ``.``: staging and commit records)."""
    import pyarrow.dataset as ds

    if not target.exists():
        return []
    dataset = ds.dataset(str(target), format=target_format)
    return sorted(os.path.normpath(f) for f in dataset.files)


def iceberg_ids(table: str, catalog: str) -> list[int]:
    """The ``id`` of every row pyiceberg's own scan sees in Iceberg table ``table`` (``db.t``)
    of the SQLite SQL catalog ``catalog`` (``sqlite:///…/catalog.db``; lakemark names that
    catalog ``lakemark``), opened with pyiceberg alone. A table not created yet holds no row."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    path = Path(catalog.removeprefix("sqlite:///"))
    reader = SqlCatalog("lakemark", uri=catalog, warehouse=(path.parent / "warehouse").as_uri())
    try:
        table_ = reader.load_table(table)
    except (NoSuchTableError, NoSuchNamespaceError):
        return []
    finally:
        reader.engine.dispose()
    return [int(i) for i in table_.scan(selected_fields=("id",)).to_arrow()
            .column("id").to_pylist()]


def target_ids(target: Path | str, target_format: str,
               iceberg_catalog: str | None = None) -> list[int]:
    """The ``id`` of every row a reader sees in the target: ``deltalake`` for a Delta table,
    pyiceberg for an Iceberg table (``target`` its name, in the SQLite catalog
    ``iceberg_catalog``), pyarrow's dataset reader for a folder. A target not written yet holds
    no row."""
    if target_format == "iceberg":
        if iceberg_catalog is None:
            raise ValueError("an Iceberg target needs its catalog")
        return iceberg_ids(str(target), iceberg_catalog)
    target = Path(target)
    if not target.exists():
        return []
    if target_format == "delta":
        from deltalake import DeltaTable

        return list(DeltaTable(str(target)).to_pyarrow_table(columns=["id"])
                    .column("id").to_pylist())
    if target_format not in FOLDER_FORMATS:
        raise ValueError(f"cannot read a {target_format} target here")
    import pyarrow.dataset as ds

    files = _visible_files(target, target_format)
    if not files:
        return []
    table = ds.dataset(files, format=target_format).to_table()
    if "id" not in table.column_names:  # only empty files so far
        return []
    return [int(i) for i in table.column("id").to_pylist()]


def covered_files(state: str, job: str, ctx: str = "source") -> set[str]:
    """Names of the files the job's successful runs took for source ``ctx``: what the bookmark
    covers (a killed attempt's files count only once a later attempt commits them)."""
    store = open_store(state)
    try:
        return {Path(e.path).name for run in store.list_runs(job) if run.status == "SUCCEEDED"
                for i in store.run_inputs(run.run_id) if i.ctx == ctx for e in i.files}
    finally:
        store.close()


@dataclass
class Check:
    """What :func:`check_exactly_once` found: the rows a reader sees, counts of bad row ids
    and a line per problem (``ok`` when there is none)."""

    rows: int = 0
    lost: int = 0
    duplicated: int = 0
    extra: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_exactly_once(target: Path | str, target_format: str, *, state: str, job: str,
                       files: Mapping[str, Sequence[int]], all_taken: bool = False,
                       ctx: str = "source", iceberg_catalog: str | None = None) -> Check:
    """Check the target against the bookmark.

    ``files`` maps each file that arrived in the source to the ids of its rows. The target
    must hold every row of the files the bookmark covers exactly once and no other row; the
    bookmark must cover no file that never arrived and, with ``all_taken``, every one that did.
    For a folder target every data file a reader sees must also be named by a commit record
    (only committed output is visible).
    """
    result = Check()
    covered = covered_files(state, job, ctx)
    unknown = covered - set(files)
    if unknown:
        result.problems.append(f"bookmark covers files that never arrived: {sorted(unknown)}")
    if all_taken and set(files) - covered:
        missing = sorted(set(files) - covered)
        result.problems.append(f"{len(missing)} arrived file(s) not taken, e.g. {missing[:5]}")
    want = Counter(i for name in covered & set(files) for i in files[name])
    have = Counter(target_ids(target, target_format, iceberg_catalog))
    duplicated = sorted(i for i, n in have.items() if n > 1)
    lost = sorted(i for i in want if i not in have)
    extra = sorted(i for i in have if i not in want)
    result.rows = sum(have.values())
    result.lost, result.duplicated, result.extra = len(lost), len(duplicated), len(extra)
    if duplicated:
        result.problems.append(f"{len(duplicated)} duplicated row id(s), e.g. {duplicated[:5]}")
    if lost:
        result.problems.append(f"{len(lost)} lost row id(s), e.g. {lost[:5]}")
    if extra:
        result.problems.append(f"{len(extra)} row id(s) of files the bookmark does not cover, "
                               f"e.g. {extra[:5]}")
    if target_format in FOLDER_FORMATS:
        target = Path(target)
        visible = set(_visible_files(target, target_format))
        committed = ({os.path.normpath(f) for f in committed_files(str(target), state)}
                     if target.exists() else set())
        uncommitted = sorted(visible - committed)
        if uncommitted:
            result.problems.append(f"{len(uncommitted)} visible data file(s) named by no commit "
                                   f"record, e.g. {uncommitted[:3]}")
        hidden = sorted(committed - visible)
        if hidden:
            result.problems.append(f"{len(hidden)} committed file(s) a reader does not see, "
                                   f"e.g. {hidden[:3]}")
    return result
