"""The damaged-input harness: good files of each format mixed with damaged ones, run after run.

Files are generated with a fixed seed: good files with unique ids, and damaged ones — cut at a
random offset, bytes flipped at random offsets, empty, another format under the name, a record
over the size limit, deep nesting, bad encoding, broken and looping links — and good files with
hostile names. Several ``ingest files`` runs take them as they arrive. Across the runs:

* the job never sticks: every run commits (exit status 0, or 3 when it set files aside) and the
  last run has nothing left to take;
* every row of every good file is in the target exactly once, and no id is there twice;
* every file is accounted for: set aside (``quarantine list``) or read by a committed run
  (``runs show``) — and the damage that must be set aside (a broken columnar file, a broken
  link, a record over the limit) is.

A small subset runs in the default suite; the full sweep (every format, every kind of damage,
several seeds) is ``-m sweep``.
"""

from __future__ import annotations

import io
import json
import os
import random
import time

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark

LIMIT = 64 * 1024  # --max-record-bytes of the harness's runs
COLUMNAR = ("parquet", "orc", "avro")
AVRO_SCHEMA = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]})


def encode(fmt: str, ids: list[int]) -> bytes:
    """A good file of ``fmt`` holding ``ids`` (and a name per id)."""
    rows = [{"id": i, "name": f"name {i}"} for i in ids]
    out = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), out, compression="snappy")
    elif fmt == "orc":
        po.write_table(pa.Table.from_pylist(rows), out)
    elif fmt == "avro":
        fastavro.writer(out, AVRO_SCHEMA, rows, codec="deflate", sync_interval=512)
    elif fmt == "csv":
        out.write(("id,name\n" + "".join(f"{r['id']},{r['name']}\n" for r in rows)).encode())
    else:
        out.write("".join(json.dumps(r) + "\n" for r in rows).encode())
    return out.getvalue()


@dataclass
class Plan:
    """The files of one format's source: what each is and what must become of it."""

    fmt: str
    good_ids: set[int] = field(default_factory=set)
    must_set_aside: set[str] = field(default_factory=set)
    damaged: set[str] = field(default_factory=set)


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, max(2, len(data) - 1))]


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) // 4, max(len(out) // 4 + 1, len(out) - 16))
        out[at] ^= 1 << rng.randrange(8)
    return bytes(out)


class Generator:
    def __init__(self, root: Path, fmt: str, seed: int) -> None:
        self.src = root / f"src-{fmt}"
        self.outside = root / f"outside-{fmt}"
        self.src.mkdir(parents=True)
        self.outside.mkdir(parents=True)
        self.fmt = fmt
        self.rng = random.Random(f"{seed}-{fmt}")
        self.plan = Plan(fmt)
        self.next_id = 0

    def ids(self, n: int) -> list[int]:
        first, self.next_id = self.next_id, self.next_id + n
        return list(range(first, first + n))

    def put(self, name: str, data: bytes, mtime: float) -> Path:
        path = self.src / name
        path.write_bytes(data)
        os.utime(path, (mtime, mtime))
        return path

    def good(self, name: str, mtime: float, n: int = 20) -> None:
        ids = self.ids(n)
        self.put(name, encode(self.fmt, ids), mtime)
        self.plan.good_ids.update(ids)

    def damaged(self, kind: str, mtime: float) -> None:
        fmt, rng, ext = self.fmt, self.rng, self.fmt
        name = f"bad-{kind}.{ext}"
        data = encode(fmt, self.ids(200))
        must = False
        if kind == "truncated":
            data, must = _truncate(data, rng), fmt in COLUMNAR
        elif kind == "flipped":
            data = _flip(data, rng)
        elif kind == "empty":
            data, must = b"", fmt in COLUMNAR
        elif kind == "wrong-format":
            other = "json" if fmt in COLUMNAR else "parquet"
            data, must = encode(other, self.ids(5)), fmt in COLUMNAR
        elif kind == "huge-record":
            big = {"id": self.ids(1)[0], "name": "x" * (LIMIT * 2)}
            data, must = (json.dumps(big) + "\n").encode(), True
            if fmt == "csv":
                data = f"id,name\n{big['id']},{big['name']}\n".encode()
        elif kind == "deep-nesting":
            deep = "[" * 3000 + "]" * 3000
            data = (f"id,name\n{self.ids(1)[0]},{deep}\n" if fmt == "csv" else
                    json.dumps({"id": self.ids(1)[0], "name": "deep"})[:-1]
                    + ', "deep": ' + deep + "}\n").encode()
        elif kind == "bad-encoding":
            data = (b"id,name\n%d,caf\xe9 \xff\xfe\n" if fmt == "csv" else
                    b'{"id": %d, "name": "caf\xe9 \xff\xfe"}\n') % self.ids(1)[0]
            must = True  # never read with its bytes replaced (issue 31)
        elif kind in ("loop", "dangling"):
            link = self.src / f"bad-{kind}.{ext}"
            link.symlink_to(link if kind == "loop" else self.src / "missing")
            self.plan.must_set_aside.add(str(link))
            self.plan.damaged.add(str(link))
            return
        path = self.put(name, data, mtime)
        self.plan.damaged.add(str(path))
        if must:
            self.plan.must_set_aside.add(str(path))

    def hostile_names(self, mtime: float) -> None:
        for name in (f"we ird #1 %20?.{self.fmt}", f"ünïcødé-名前.{self.fmt}",
                     f"a:b;c'd\"e.{self.fmt}"):
            self.good(name, mtime, n=5)
        # A link to a good file outside the source is a good file of its own.
        ids = self.ids(5)
        target = self.outside / f"linked.{self.fmt}"
        target.write_bytes(encode(self.fmt, ids))
        (self.src / f"link-to-good.{self.fmt}").symlink_to(target)
        self.plan.good_ids.update(ids)


LINE_KINDS = ("truncated", "flipped", "huge-record", "deep-nesting", "bad-encoding", "loop",
              "dangling", "wrong-format")
COLUMNAR_KINDS = ("truncated", "flipped", "empty", "wrong-format", "loop", "dangling")


def run_harness(tmp_path: Path, fmt: str, seed: int, kinds: tuple[str, ...],
                batches: int) -> dict[str, str]:
    """Run the scenario; returns, per damaged file, ``set aside`` or ``read`` (for counts)."""
    gen = Generator(tmp_path, fmt, seed)
    state = f"sqlite:///{tmp_path / f'state-{fmt}.db'}"
    target = tmp_path / f"target-{fmt}"
    runner = CliRunner()
    per_batch = [kinds[i::batches] for i in range(batches)]

    def ingest() -> dict[str, Any]:
        extra = ["--option", "header=true"] if fmt == "csv" else []
        result = runner.invoke(cli, [
            "ingest", "files", str(gen.src), str(target), "--job", "h", "--state", state,
            "--format", fmt, "--max-record-bytes", str(LIMIT), "--json", *extra],
            catch_exceptions=False)
        assert result.exit_code in (0, 3), (result.stdout, result.stderr)  # never stuck
        out: dict[str, Any] = json.loads(result.stdout)
        assert out["status"] == "SUCCEEDED"
        assert (result.exit_code == 3) == (out["quarantined_files"] > 0)
        return out

    def show(*args: str) -> Any:
        result = runner.invoke(cli, [*args, "--state", state, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    runs = []
    for b, batch in enumerate(per_batch):
        # Files arrive as they would: written now (a file with an mtime older than a run that
        # already listed the folder counts as processed, as in Glue).
        mtime = time.time() - 2
        gen.good(f"good-{b}-a.{fmt}", mtime)
        gen.good(f"good-{b}-b.{fmt}", mtime)
        if b == 0:
            gen.hostile_names(mtime)
        for kind in batch:
            gen.damaged(kind, mtime)
        runs.append(ingest())
    last = ingest()
    assert (last["files"], last["rows"]) == (0, 0)  # nothing left, nothing taken again

    ids = DeltaTable(str(target)).to_pyarrow_table().column("id").to_pylist()
    # A csv source's tracked schema may keep ids as text: compare them as numbers.
    present = [int(i) for i in ids if i is not None and str(i).lstrip("-").isdigit()]
    assert len(present) == len(set(present)), "an id is in the target twice"
    missing = gen.plan.good_ids - set(present)
    assert not missing, f"good rows missing: {sorted(missing)[:10]}"

    aside = {f["path"] for f in show("quarantine", "list", "h")["files"]}
    read: set[str] = set()
    for out in runs:
        details = show("runs", "show", out["run_id"])
        read |= {f["path"] for f in details["sources"]["source"]["files"]}
    listed = {str(p) for p in gen.src.iterdir()}
    assert listed <= read | aside, f"files neither read nor set aside: {listed - read - aside}"
    assert gen.plan.must_set_aside <= aside, (
        f"not set aside: {gen.plan.must_set_aside - aside}")
    assert aside <= gen.plan.damaged, f"good files set aside: {aside - gen.plan.damaged}"
    return {Path(p).name: "set aside" if p in aside else "read" for p in sorted(gen.plan.damaged)}


@pytest.mark.parametrize(("fmt", "kinds"), [
    ("parquet", ("truncated", "flipped", "empty", "wrong-format", "loop")),
    ("json", ("truncated", "huge-record", "deep-nesting", "bad-encoding", "dangling")),
    ("avro", ("truncated", "flipped", "wrong-format")),
])
def test_damaged_input_fixed_seed(tmp_path: Path, spark: Any, fmt: str,
                                  kinds: tuple[str, ...]) -> None:
    run_harness(tmp_path, fmt, seed=31, kinds=kinds, batches=2)


@pytest.mark.sweep  # the full sweep: ./dev test -m sweep (bench/damaged_input.py too)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro", "json", "csv"])
def test_damaged_input_sweep(tmp_path: Path, spark: Any, fmt: str, seed: int) -> None:
    kinds = COLUMNAR_KINDS if fmt in COLUMNAR else LINE_KINDS
    run_harness(tmp_path, fmt, seed=seed, kinds=kinds, batches=3)


