"""The run's side of quarantine: set aside planned input files that cannot be read.

One file a reader cannot read must never stick a job (docs/bookmarks.md, "Quarantine"). Before
a run reads a file source (``Job.read_files``/``read_planned``), :func:`screen` takes the
planned files and

1. leaves out the files set aside earlier (same path, size and mtime) — by an earlier attempt
   of this run, or by an earlier run when a reset or an untracked source plans them again;
2. checks the others cheaply (:mod:`lakemark.sources._inspect`: links, existence, magic bytes
   and footers, the record size limit) and sets aside what fails, in the state store at once
   with its reason, size and mtime (so a failed attempt's retry goes on without it);
3. applies the :class:`BadFilePolicy`: ``on_bad_file="fail"`` fails the run naming the file
   instead; ``max_bad_files`` (a count or a share of the planned files) fails a run that sets
   aside more.

The bookmark still counts a set-aside file as processed (its state element moves past it), so
no later run takes it on its own; ``lakemark quarantine retry`` marks it, and the next run adds
it to its plan (:func:`add_retries`) and takes it once: the commit marks it ``retried`` in the
same transaction, or it is set aside again with the new reason.

What the checks cannot see (a damaged page inside a Parquet file) fails when Spark reads;
:func:`pin_failure` finds the file — the one Spark's error names, else by reading halves of the
run's files until one file fails alone — so the caller can set it aside and read again without
it (``lakemark ingest files`` does; a Python job's attempt fails with one line and its retry
goes on without the file).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._shown import shown as shown_name
from ..errors import ChangedDuringRun, ConfigError, ReadError
from ..planning.files import FileEntry

if TYPE_CHECKING:
    from .context import RunContext
    from .state import RunState
    from ..planning.files import FilePlan

__all__ = ["POLICY_ENV", "BadFilePolicy", "QuarantinedFile", "QuarantineExceeded", "ReadArgs",
           "add_retries", "find_bad_file", "is_read_failure", "pin_after_failure", "pin_failure",
           "policy_from_env",
           "pin_read_failure", "read_screened", "record_pinned", "remember_read",
           "retried_paths", "screen"]

log = logging.getLogger("lakemark")

ON_BAD_FILE = ("quarantine", "fail")


class QuarantineExceeded(ReadError):
    """A run set aside more input files than its policy allows (or any, in strict mode)."""


@dataclass(frozen=True)
class QuarantinedFile:
    """A file this run set aside (or left out because an earlier attempt or run had)."""

    ctx: str
    entry: FileEntry
    reason: str
    earlier: bool = False  # set aside before this run (this run only left it out)

    def to_json(self) -> dict[str, Any]:
        return {"ctx": self.ctx, "path": self.entry.path, "size": self.entry.size,
                "mtime": self.entry.mtime, "reason": self.reason, "earlier": self.earlier}


@dataclass(frozen=True)
class BadFilePolicy:
    """What a run does with input files it cannot read.

    ``on_bad_file``: ``quarantine`` (set them aside, go on with the others; the default) or
    ``fail`` (fail the run naming the first one). ``max_bad_files``: fail a run that sets aside
    more than this many files of one source (an int) or more than this share of its planned
    files (a float in (0, 1], from ``"10%"``); None: no limit. ``max_record_bytes``: the
    largest record of a line format (json, csv, text, xml) before its file is set aside.
    """

    on_bad_file: str = "quarantine"
    max_bad_files: int | float | None = None
    max_record_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.on_bad_file not in ON_BAD_FILE:
            raise ConfigError(f"on_bad_file must be one of {', '.join(ON_BAD_FILE)}, got "
                              f"{self.on_bad_file!r}")
        limit = self.max_bad_files
        if limit is not None and (limit < 0 or (isinstance(limit, float) and limit > 1)):
            raise ConfigError(f"max_bad_files must be a count >= 0 or a share in [0, 1], got "
                              f"{limit!r}")
        if self.max_record_bytes is not None and self.max_record_bytes <= 0:
            raise ConfigError(f"max_record_bytes must be positive, got {self.max_record_bytes}")

    @classmethod
    def parse(cls, on_bad_file: str = "quarantine", max_bad_files: str | None = None,
              max_record_bytes: str | int | None = None) -> BadFilePolicy:
        """A policy from command-line text: ``max_bad_files`` ``"5"`` or ``"10%"``,
        ``max_record_bytes`` ``"64MiB"``; ConfigError naming the option otherwise."""
        from ..sources._inspect import parse_size

        limit: int | float | None = None
        if max_bad_files is not None:
            text = max_bad_files.strip()
            try:
                limit = float(text[:-1]) / 100 if text.endswith("%") else int(text)
            except ValueError:
                raise ConfigError(f"--max-bad-files {max_bad_files!r}: give a count (5) or a "
                                  "share of the run's files (10%)") from None
        size = None
        if max_record_bytes is not None:
            try:
                size = parse_size(max_record_bytes, option="--max-record-bytes")
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        try:
            return cls(on_bad_file, limit, size)
        except ConfigError as exc:
            raise ConfigError("--" + str(exc).replace("_", "-", 2)) from None

    def check(self, ctx: str, set_aside: Sequence[QuarantinedFile], planned: int) -> None:
        """Raise QuarantineExceeded when ``set_aside`` (of ``planned`` files) breaks the
        policy."""
        if not set_aside:
            return
        first = set_aside[0]
        if self.on_bad_file == "fail":
            raise QuarantineExceeded(
                f"source {ctx!r}: cannot read {shown_name(first.entry.path)}: "
                f"{shown_name(first.reason)} (on_bad_file="
                "fail / --on-bad-file fail; nothing was written and the bookmark keeps the "
                "run's files)")
        limit = self.max_bad_files
        if limit is None:
            return
        over = (len(set_aside) > limit if isinstance(limit, int)
                else len(set_aside) > limit * max(planned, 1))
        if over:
            shown = f"{limit:.0%}" if isinstance(limit, float) else str(limit)
            raise QuarantineExceeded(
                f"source {ctx!r}: {len(set_aside)} of {planned} planned files cannot be read, "
                f"more than max_bad_files {shown} (first: {shown_name(first.entry.path)}: "
                f"{shown_name(first.reason)}); "
                "nothing was written and the bookmark keeps the run's files")


#: Environment variables that give a job made without ``bad_files`` its policy (``lakemark
#: run --on-bad-file/--max-bad-files/--max-record-bytes`` sets them for the script's jobs).
POLICY_ENV = ("LAKEMARK_ON_BAD_FILE", "LAKEMARK_MAX_BAD_FILES", "LAKEMARK_MAX_RECORD_BYTES")


def policy_from_env(env: Mapping[str, str]) -> BadFilePolicy:
    """The policy :data:`POLICY_ENV` in ``env`` gives (the default policy when none is set);
    ConfigError naming the variable for a bad value."""
    on, most, size = (env.get(name) or None for name in POLICY_ENV)
    if on is None and most is None and size is None:
        return BadFilePolicy()
    try:
        return BadFilePolicy.parse(on or "quarantine", most, size)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (from ${'/$'.join(POLICY_ENV)})") from None


def _policy(run: RunContext) -> BadFilePolicy:
    policy = run.bad_files
    return policy if isinstance(policy, BadFilePolicy) else BadFilePolicy()


def screen(run: RunContext, state: RunState, ctx: str, files: Sequence[FileEntry], *,
           format: str, options: Mapping[str, str] | None) -> list[FileEntry]:
    """The planned ``files`` of source ``ctx`` that this run reads: without the ones set aside
    earlier and the ones that fail the checks (set aside now; see the module doc)."""
    if not files:
        return list(files)
    from ..sources._inspect import DEFAULT_MAX_RECORD_BYTES, inspect_files

    policy = _policy(run)
    store = run.store
    open_rows = store.quarantined(run.job_name, ctx=ctx, statuses=("open",))
    known = {(q.path, q.size, q.mtime): q for q in open_rows}
    # Taken again if read now: files marked for retry, and set-aside files changed since.
    retrying = ({q.path for q in store.quarantined(run.job_name, ctx=ctx, statuses=("retry",))}
                | {q.path for q in open_rows})
    earlier = [QuarantinedFile(ctx, f, known[(f.path, f.size, f.mtime)].reason, earlier=True)
               for f in files if (f.path, f.size, f.mtime) in known]
    left_out = {q.entry.path for q in earlier}
    candidates = [f for f in files if f.path not in left_out]
    bad = inspect_files(candidates, format=format, options=options,
                        max_record_bytes=policy.max_record_bytes or DEFAULT_MAX_RECORD_BYTES)
    found = [QuarantinedFile(ctx, b.entry, b.reason) for b in bad]
    policy.check(ctx, earlier + found, len(files))
    if found:
        store.quarantine_files(run.run_id, run.job_name, ctx,
                               [(q.entry.path, q.entry.size, q.entry.mtime, q.reason)
                                for q in found])
        for q in found:
            log.warning("set aside %s (source %r): %s", shown_name(q.entry.path), ctx,
                        shown_name(q.reason))
    _note(run, state, ctx, earlier + found)
    gone = left_out | {q.entry.path for q in found}
    state.retrying[ctx] = {p for p in retrying if p in {f.path for f in files}} - gone
    return [f for f in candidates if f.path not in gone]


def _note(run: RunContext, state: RunState, ctx: str, files: Sequence[QuarantinedFile]) -> None:
    """Keep what the run set aside on the job (the run summary's count) and emit it."""
    kept = state.set_aside.setdefault(ctx, [])
    seen = {q.entry.path for q in kept}
    new = [q for q in files if q.entry.path not in seen]
    kept.extend(new)
    if new:
        run.emit("quarantined", ctx, {"files": len(kept),
                                      "paths": [q.entry.path for q in new]})


def record_pinned(run: RunContext, state: RunState, ctx: str, entry: FileEntry, reason: str,
                  planned: int) -> None:
    """Set aside ``entry``, which made the read of source ``ctx`` fail at action time (the
    policy may fail the run instead)."""
    already = state.set_aside.get(ctx, [])
    pinned = QuarantinedFile(ctx, entry, reason)
    _policy(run).check(ctx, [*already, pinned], planned)
    run.store.quarantine_files(run.run_id, run.job_name, ctx,
                               [(entry.path, entry.size, entry.mtime, reason)])
    log.warning("set aside %s (source %r): %s", shown_name(entry.path), ctx, shown_name(reason))
    _note(run, state, ctx, [pinned])
    state.retrying.get(ctx, set()).discard(entry.path)


def retried_paths(state: RunState) -> dict[str, list[str]]:
    """Per ctx, the set-aside files this run took again (for the commit to mark them)."""
    return {ctx: sorted(paths) for ctx, paths in state.retrying.items() if paths}


def add_retries(run: RunContext, ctx: str, listing: Sequence[FileEntry],
                plan: FilePlan) -> FilePlan:
    """``plan`` with the files of ``ctx`` that ``lakemark quarantine retry`` marked (as they
    are listed now) added, once; a marked file no longer listed is logged and stays marked."""
    wanted = {q.path for q in run.store.quarantined(run.job_name, ctx=ctx, statuses=("retry",))}
    if not wanted:
        return plan
    have = {f.path for f in plan.files}
    listed = {f.path: f for f in listing if f.path in wanted}
    for path in sorted(wanted - set(listed) - have):
        log.warning("set-aside file %s (source %r) is marked for retry but no longer listed",
                    shown_name(path), ctx)
    extra = [f for p, f in listed.items() if p not in have]
    if not extra:
        return plan
    return replace(plan, files=tuple(sorted((*plan.files, *extra))))


def find_bad_file(files: Sequence[FileEntry],
                  fails: Callable[[Sequence[FileEntry]], bool]) -> FileEntry | None:
    """One file of ``files`` that fails alone (``fails(subset)`` True when reading the subset
    fails), by halving: about 2·log2(n) reads. None when no single file fails alone."""
    current = list(files)
    if not current:
        return None
    while len(current) > 1:
        half = len(current) // 2
        left, right = current[:half], current[half:]
        if fails(left):
            current = left
        elif fails(right):
            current = right
        else:
            return None  # only the files together fail
    return current[0] if fails(current) else None


def pin_failure(error: BaseException, files: Sequence[FileEntry],
                fails: Callable[[Sequence[FileEntry]], bool]) -> tuple[FileEntry, str] | None:
    """The file of ``files`` that made a read fail with ``error``, and the reason: the file
    the error names, else the one :func:`find_bad_file` finds; None if none can be pinned."""
    from ..sources._errors import describe, first_line

    described = describe(error)
    reason = described[1] if described else first_line(error)
    if isinstance(error, ReadError) and " failed: " in reason:  # "reading <fmt> file X failed: R"
        reason = "read failed: " + reason.split(" failed: ", 1)[1]
    text = str(error)
    named = described[0] if described else None
    for entry in sorted(files, key=lambda f: len(f.path), reverse=True):
        if (named and (named == entry.path or named.endswith(entry.path))) or \
                (len(entry.path) > 1 and entry.path in text):
            return entry, reason
    found = find_bad_file(files, fails)
    return (found, reason) if found is not None else None


@dataclass(frozen=True)
class ReadArgs:
    """How a run read one file source: what :func:`pin_read_failure` reads again in parts."""

    files: tuple[FileEntry, ...]  # the files read (set-aside ones left out)
    planned: int
    root: str
    format: str
    options: Mapping[str, str]
    mode: str


def remember_read(state: RunState, ctx: str, args: ReadArgs) -> None:
    """Keep how source ``ctx`` was read, for pinning a failure later in the run."""
    state.reads[ctx] = args


def read_screened(run: RunContext, state: RunState, ctx: str, files: Sequence[FileEntry], *,
                  root: str, format: str,
                  options: Mapping[str, str] | None, schema: Any, mode: str) -> Any:
    """A DataFrame of ``files`` of source ``ctx`` without the ones set aside (:func:`screen`),
    the read remembered for pinning a later failure; when every file was set aside the frame
    is marked empty, so a sink of it writes nothing. For sources above the run lifecycle (the
    S3-events source), which hand over the job's context and state (``Job._parts``)."""
    from ..sources import read_files

    kept = screen(run, state, ctx, files, format=format, options=options)
    remember_read(state, ctx, ReadArgs(tuple(kept), len(files), root, format,
                                       dict(options or {}), mode))
    frame = read_files(run.spark(), list(kept), root=root, format=format, options=options,
                       schema=schema, mode=mode)
    if files and not kept:
        state.empty_reads[id(frame)] = frame
    return frame


def _probe(run: RunContext, args: ReadArgs) -> Callable[[Sequence[FileEntry]], bool]:
    """``fails(files)``: does reading just ``files`` as ``args`` says fail? (A no-op write
    makes Spark read every row.)"""
    def fails(files: Sequence[FileEntry]) -> bool:
        from ..sources import read_files

        try:
            read_files(run.spark(), files, root=args.root, format=args.format,
                       options=dict(args.options), mode=args.mode,
                       ).write.format("noop").mode("overwrite").save()
        except Exception:  # noqa: BLE001 - any failure of these files is what is looked for
            return True
        return False
    return fails


def is_read_failure(error: BaseException) -> bool:
    """Is ``error`` a failure to read input that a file may be to blame for?"""
    from ..sources._errors import describe

    if isinstance(error, (QuarantineExceeded, ConfigError, ChangedDuringRun)):
        return False  # ChangedDuringRun: the file was read, it changed (exact_read)
    return isinstance(error, ReadError) or describe(error) is not None


def pin_read_failure(run: RunContext, state: RunState, ctx: str, error: BaseException) -> bool:
    """Find the file of source ``ctx`` that made the read fail with ``error`` and set it aside;
    False when no single file is to blame, or the source is read with ``mode="FAILFAST"``
    (QuarantineExceeded when the policy says fail)."""
    args = state.reads.get(ctx)
    if args is None or not args.files or args.mode.upper() == "FAILFAST":
        return False  # FAILFAST asks for the run to fail on a malformed record
    found = pin_failure(error, args.files, _probe(run, args))
    if found is None:
        return False
    entry, reason = found
    record_pinned(run, state, ctx, entry, reason, args.planned)
    state.reads[ctx] = replace(args, files=tuple(f for f in args.files
                                                if f.path != entry.path))
    return True


def pin_after_failure(run: RunContext, state: RunState, error: BaseException) -> None:
    """A Python job's attempt failed: if a read failure is to blame on one input file, set it
    aside so the next attempt goes on without it (the attempt still fails). Never raises."""
    if not state.reads or not is_read_failure(error):
        return
    for ctx in list(state.reads):
        try:
            if pin_read_failure(run, state, ctx, error):
                return
        except Exception as exc:  # noqa: BLE001 - the attempt fails with its own error anyway
            log.warning("could not set aside the file that failed source %r: %s", ctx, exc)
            return
