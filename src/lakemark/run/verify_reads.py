"""Find damaged input before a run's first sink commits, so every sink of a run sees the same
files.

A job may write one read to several sinks (``job.write`` twice, Delta and JDBC), and a sink
reads only what it needs: a sink of ``df.select("id")`` never decodes a damaged page of
another column, so it can commit while a later sink of the whole frame fails on that page.
Setting the file aside then would leave the first sink holding rows of a file the others never
get (and a ``quarantine retry`` would write them there twice). So, before the first sink of an
attempt writes, :func:`check_before_first_sink` reads every file source of the run whose
damage the cheap checks can miss (Parquet, ORC, Avro, compressed files) in full, with a no-op
write. A file that fails is pinned and set aside by the job's policy
(:func:`lakemark.run.quarantine.pin_read_failure`) and the attempt fails in one line naming it,
before anything was written; the next attempt plans without it, for every sink alike.

``lakemark ingest files`` and ``ingest s3-incremental`` write one sink and pin a failure on
the write itself (``run.quarantine_ingest``), so they skip this read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .quarantine import pin_read_failure
from ..errors import ReadError

if TYPE_CHECKING:
    from .quarantine import ReadArgs
    from .context import RunContext
    from .state import RunState

__all__ = ["SetAsideBeforeWrite", "check_before_first_sink", "needs_full_read"]

#: Formats whose damage (a bad page or block) only a full read meets.
_BINARY = ("parquet", "orc", "avro")
_COMPRESSED = (".gz", ".gzip", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz")


class SetAsideBeforeWrite(ReadError):
    """A file a full read failed on was set aside before the run's first sink wrote."""


def needs_full_read(args: ReadArgs) -> bool:
    """Can a file of this read hold damage that only decoding all of it meets?"""
    if args.mode.upper() == "FAILFAST" or not args.files:
        return False  # FAILFAST asks for the run to fail on it, as it does
    if args.format.lower() in _BINARY:
        return True
    return any(f.path.lower().endswith(_COMPRESSED) for f in args.files)


def check_before_first_sink(run: RunContext, state: RunState) -> None:
    """Before the first sink of the attempt writes: read each file source that
    :func:`needs_full_read` in full; set aside the file one fails on and raise
    :class:`SetAsideBeforeWrite` naming it (or the policy's QuarantineExceeded). Once per
    attempt; a no-op when the run's own write pins failures (``run.quarantine_ingest``)."""
    if state.reads_checked:
        return
    state.reads_checked = True
    for ctx, args in list(state.reads.items()):
        if not needs_full_read(args):
            continue
        error = _failure(run, args)
        if error is None:
            continue
        if not pin_read_failure(run, state, ctx, error):
            raise error  # no single file to blame: the read's own error
        pinned = state.set_aside[ctx][-1]
        state.reads.clear()
        raise SetAsideBeforeWrite(
            f"source {ctx!r}: cannot read {pinned.entry.path}: {pinned.reason}; it is set "
            "aside before any sink wrote, and nothing was written: the next attempt goes on "
            "without it (lakemark quarantine list)")


def _failure(run: RunContext, args: ReadArgs) -> BaseException | None:
    """The error of reading all of ``args.files`` in full (None when they read)."""
    from ..sources import read_files

    try:
        read_files(run.spark(), list(args.files), root=args.root, format=args.format,
                   options=dict(args.options), mode=args.mode,
                   ).write.format("noop").mode("overwrite").save()
    except Exception as exc:  # noqa: BLE001 - any failure is what is looked for
        return exc
    return None
