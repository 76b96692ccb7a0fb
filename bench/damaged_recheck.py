"""The damaged-input re-check: shapes of broken input from public bug reports that the sweep
(``tests/spark/test_damaged_input.py``) does not write, each run through ``lakemark ingest
files`` and a Python ``Job`` against the rules.

Each case is a fresh folder with one good file (ids 0..2) and one damaged file; the damaged
file's readable rows, if any, carry ids from 100. A case holds when, for both entry points:
the run ends in exit 0/3 (the good rows once, the damaged file either set aside with a reason
naming it or read with none of its readable rows silently missing) or in one ``error:`` line
naming the file with no state change and no output. Used by ``bench/damaged_input.py
--recheck`` (which splices its table into bench/damaged_input.md) and by
``tests/spark/test_damaged_recheck.py``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GOOD = [{"id": i, "name": f"g{i}"} for i in range(3)]


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _rows(first: int, n: int) -> list[dict[str, Any]]:
    return [{"id": first + i, "name": f"d{first + i}"} for i in range(n)]


def _csv(rows: list[dict[str, Any]], end: str = "\n") -> bytes:
    return ("id,name" + end + "".join(f"{r['id']},{r['name']}{end}" for r in rows)).encode()


def _parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink, compression="NONE")
    return sink.getvalue()


@dataclass
class Case:
    """One kind of damage: how to make it, the format, and what a reader may take from it."""

    kind: str
    fmt: str
    name: str
    make: Callable[[Path], None]
    #: ids of the damaged file's rows a run that reads it must land (none may vanish).
    readable: set[int] = field(default_factory=set)
    #: it must be set aside (or fail the run), never read.
    must_set_aside: bool = False
    options: tuple[str, ...] = ()
    note: str = ""


def _write(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(data)
    return make


def _gzip_truncated(path: Path) -> None:
    data = gzip.compress(_lines(_rows(100, 200)))
    path.write_bytes(data[: len(data) // 2])


def _gzip_garbage(path: Path) -> None:
    path.write_bytes(gzip.compress(_lines(_rows(100, 3))) + b"\x00garbage after the stream")


def _gzip_bad_block(path: Path) -> None:
    data = bytearray(gzip.compress(_lines(_rows(100, 200))))
    for i in range(20, min(60, len(data) - 8)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def _parquet_footer_length(path: Path) -> None:
    data = bytearray(_parquet_bytes(_rows(100, 3)))
    data[-8:-4] = (len(data) * 4).to_bytes(4, "little")  # a footer longer than the file
    path.write_bytes(bytes(data))


def _parquet_tail_magic(path: Path) -> None:
    data = bytearray(_parquet_bytes(_rows(100, 3)))
    data[-4:] = b"PARE"  # encrypted-footer magic: not a plain Parquet file
    path.write_bytes(bytes(data))


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "inner.json").write_bytes(_lines(_rows(100, 2)))


def _fifo(path: Path) -> None:
    os.mkfifo(path)  # a reader would block on it forever


def _long_line(path: Path) -> None:
    path.write_bytes(_lines([{"id": 100, "name": "x" * (8 * 1024 * 1024)}]))


CASES: list[Case] = [
    Case("gzip-truncated", "json", "bad.json.gz", _gzip_truncated, must_set_aside=True,
         note="Hadoop's codec: EOFException 'Unexpected end of input stream'"),
    Case("gzip-trailing-garbage", "json", "bad.json.gz", _gzip_garbage, readable={100, 101, 102},
         note="bytes after the gzip member (gunzip ignores them; Hadoop's codec fails)"),
    Case("gzip-bad-block", "json", "bad.json.gz", _gzip_bad_block, must_set_aside=True,
         note="'invalid stored block lengths' inside the deflate stream"),
    Case("not-gzip", "json", "bad.json.gz", _write(_lines(_rows(100, 3))), must_set_aside=True,
         note="plain text named .gz: 'Not in GZIP format'"),
    Case("zero-byte-gzip", "json", "bad.json.gz", _write(b""), note="empty .gz object"),
    Case("zero-byte-json", "json", "bad.json", _write(b""), note="empty file: no rows"),
    Case("parquet-footer-length", "parquet", "bad.parquet", _parquet_footer_length,
         must_set_aside=True, note="footer length field past the file's start"),
    Case("parquet-encrypted-magic", "parquet", "bad.parquet", _parquet_tail_magic,
         must_set_aside=True, note="PARE tail magic (encrypted footer)"),
    Case("csv-unclosed-quote", "csv", "bad.csv",
         _write(b'id,name\n100,"never closed\n101,d101\n102,d102\n'),
         options=("--option", "header=true", "--option", "multiLine=true"),
         note="a quote opened on line 2 that the file never closes (multiLine)"),
    Case("json-bom", "json", "bad.json", _write(b"\xef\xbb\xbf" + _lines(_rows(100, 3))),
         readable={100, 101, 102}, note="UTF-8 byte-order mark before the first record"),
    Case("json-utf16", "json", "bad.json",
         _write(_lines(_rows(100, 3)).decode().encode("utf-16")), readable={100, 101, 102},
         note="UTF-16 with BOM: Spark's JSON reader detects it (the UTF-8 check lets a BOM "
              "pass)"),
    Case("nul-bytes", "json", "bad.json",
         _write(_lines(_rows(100, 1)) + b"\x00\x00\x00\n" + _lines(_rows(101, 2))),
         readable={100, 101, 102}, note="a line of NUL bytes between records"),
    Case("mixed-line-endings", "csv", "bad.csv",
         _write(b"id,name\r\n100,d100\n101,d101\r102,d102\r\n"), readable={100, 101, 102},
         options=("--option", "header=true"), note="CRLF, LF and a lone CR in one file"),
    Case("directory-named-like-a-file", "json", "bad.json", _directory, readable={100, 101},
         note="a folder bad.json/ holding inner.json (recursive listing)"),
    Case("fifo", "json", "bad.json", _fifo,
         note="a named pipe named like a file: not listed (not a regular file), no read "
              "blocks on it"),
    Case("very-long-line", "json", "bad.json", _long_line, readable={100},
         note="one 8 MiB line, under --max-record-bytes"),
    Case("control-chars-in-name", "json", "bad\nname\t.json", _write(_lines(_rows(100, 2))),
         readable={100, 101}, note="newline and tab in the file name"),
]


@dataclass
class Outcome:
    """What one entry point did with one case."""

    entry: str
    status: str  # "set aside", "read", "failed", "wrong"
    detail: str


def _table_ids(target: Path) -> list[int] | None:
    from deltalake import DeltaTable

    if not (target / "_delta_log").exists():
        return None
    return sorted(int(i) for i in DeltaTable(str(target)).to_pyarrow_table()
                  .column("id").to_pylist() if i is not None)


def _good(fmt: str) -> bytes:
    if fmt == "csv":
        return _csv(GOOD)
    if fmt == "parquet":
        return _parquet_bytes(GOOD)
    return _lines(GOOD)


def _judge(case: Case, entry: str, code: int, ids: list[int] | None, aside: dict[str, str],
           error: str) -> Outcome:
    """The rules, applied to one run's result."""
    if code == 1:
        ok = ids is None and error.count("\n") == 0 and error.startswith("error:") \
            and "bad" in error
        return Outcome(entry, "failed" if ok else "wrong", error[:200])
    if ids is None or sorted(i for i in ids if i < 100) != [0, 1, 2]:
        return Outcome(entry, "wrong", f"good rows not landed once: {ids}")
    damaged = {i for i in ids if i >= 100}
    if aside:
        if damaged:
            return Outcome(entry, "wrong", f"set aside and read: {sorted(damaged)}")
        reason = next(iter(aside.values()))
        return Outcome(entry, "set aside", reason[:200])
    if case.must_set_aside:
        return Outcome(entry, "wrong", f"read, not set aside ({sorted(damaged)} landed)")
    if not case.readable <= damaged:
        return Outcome(entry, "wrong", f"rows vanished: {sorted(case.readable - damaged)}")
    return Outcome(entry, "read", f"{len(damaged)} row(s) of it landed")


def run_case(case: Case, tmp: Path, spark: Any) -> list[Outcome]:
    """Run ``case`` through ``ingest files`` and a Python Job; their outcomes."""
    from click.testing import CliRunner

    from lakemark import Job
    from lakemark.cli import cli
    from lakemark.state import open_store

    outcomes = []
    src = tmp / "in"
    src.mkdir()
    (src / f"good.{case.fmt}").write_bytes(_good(case.fmt))
    case.make(src / case.name)
    # ingest files
    target, state = tmp / "cli-out", f"sqlite:///{tmp / 'cli.db'}"
    result = CliRunner().invoke(cli, [
        "ingest", "files", str(src), str(target), "--job", "c", "--state", state,
        "--format", case.fmt, "--json", *case.options])
    aside: dict[str, str] = {}
    if result.exit_code in (0, 3):
        out = json.loads(result.stdout)
        aside = {q["path"]: q["reason"] for q in out.get("quarantined", [])}
    outcomes.append(_judge(case, "ingest files", result.exit_code if result.exit_code in (0, 1, 3)
                           else 99, _table_ids(target), aside, result.stderr.strip()))
    # a Python Job: a read failure at action or inference time fails the run naming the file
    # and records it set aside, so the next run goes on without it (docs/bookmarks.md)
    target = tmp / "job-out"
    store = open_store(f"sqlite:///{tmp / 'job.db'}")
    options = dict(o.split("=", 1) for o in case.options[1::2])
    try:
        for attempt in (1, 2):
            code, error, aside = 0, "", {}
            try:
                with Job("p", state=store, spark=spark) as job:
                    df = job.read_files(str(src), format=case.fmt, ctx="src", options=options)
                    job.write(df, str(target), format="delta", ctx="out")
                aside = {q.entry.path: q.reason for q in job.set_aside.get("src", [])}
            except Exception as exc:  # noqa: BLE001 - judged: one line naming the file
                code, error = 1, f"error: {exc}"
            first = _judge(case, "Python Job", code, _table_ids(target), aside, error)
            if code == 0 or attempt == 2:
                if attempt == 2:
                    first.detail = f"run 1 failed naming it, run 2: {first.detail}"
                outcomes.append(first)
                break
            moved = store.get_bookmark("p").run != 0
            if first.status != "failed" or moved or not store.quarantined("p"):
                first.status = "wrong"
                first.detail += f" (bookmark moved: {moved}; recorded: {store.quarantined('p')})"
                outcomes.append(first)
                break
    finally:
        store.close()
    return outcomes
