"""Compressed line files are scanned for records over the size limit, streaming: gzip, bz2,
xz, zstd and zlib (.deflate) on real files; a file too small to hold such a record is not."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zlib
from pathlib import Path

import pytest

from lakemark.planning.files import FileEntry
from lakemark.sources._inspect import inspect_files
from lakemark.sources._inspect_compressed import may_hold_over

LIMIT = 100 * 1024
BIG = (json.dumps({"id": 1, "blob": "x" * 300_000}) + "\n").encode()
SMALL = b"".join(json.dumps({"id": i, "name": f"n{i}"}).encode() + b"\n" for i in range(5000))
HEAD = SMALL[: SMALL.index(b"\n", 2000) + 1]  # whole lines


def _pack(codec: str, data: bytes) -> bytes:
    if codec == ".gz":
        half = len(data) // 2  # two gzip members, as `cat a.gz b.gz` makes
        return gzip.compress(data[:half]) + gzip.compress(data[half:])
    if codec == ".bz2":
        return bz2.compress(data)
    if codec == ".xz":
        return lzma.compress(data)
    if codec == ".deflate":
        return zlib.compress(data)
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def _entry(path: Path) -> FileEntry:
    return FileEntry(1000, str(path), path.stat().st_size)


@pytest.mark.parametrize("codec", [".gz", ".bz2", ".xz", ".deflate", ".zst"])
def test_a_record_over_the_limit_inside_a_compressed_file_is_found(tmp_path: Path,
                                                                   codec: str) -> None:
    big = tmp_path / f"big.json{codec}"
    big.write_bytes(_pack(codec, HEAD + BIG + HEAD))
    fine = tmp_path / f"fine.json{codec}"
    fine.write_bytes(_pack(codec, SMALL))
    assert big.stat().st_size < LIMIT and fine.stat().st_size < LIMIT
    bad = inspect_files([_entry(big), _entry(fine)], format="json", max_record_bytes=LIMIT)
    assert [b.entry.path for b in bad] == [str(big)]
    assert (f"one record (decompressed) of {len(BIG) - 1} bytes is over the record size limit "
            "of 102400 bytes") in bad[0].reason


def test_multiline_json_counts_the_whole_decompressed_file(tmp_path: Path) -> None:
    doc = tmp_path / "doc.json.gz"
    doc.write_bytes(gzip.compress(json.dumps([{"id": i} for i in range(20_000)]).encode()))
    [bad] = inspect_files([_entry(doc)], format="json", options={"multiLine": "true"},
                          max_record_bytes=LIMIT)
    assert "the whole file (decompressed)" in bad.reason


def test_which_compressed_files_are_scanned() -> None:
    # deflate expands at most 1032 times: 99 bytes of gzip cannot hold 102400 bytes
    assert not may_hold_over("a.json.gz", 99, LIMIT)
    assert may_hold_over("a.json.gz", 100, LIMIT)
    assert may_hold_over("a.csv.bz2", 10, LIMIT)  # bz2: no useful bound
    assert not may_hold_over("a.json.snappy", 10**9, LIMIT)  # Hadoop framing: not scanned


def test_damaged_compressed_data_is_left_to_the_read(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json.gz"
    packed = gzip.compress(SMALL + BIG)
    cut.write_bytes(packed[: len(packed) // 2])
    assert inspect_files([_entry(cut)], format="json", max_record_bytes=LIMIT) == []


@pytest.mark.parametrize("name", ["orders.csv", "orders.csv.gz"])
def test_bytes_that_are_not_utf8_are_found_with_their_place(tmp_path: Path, name: str) -> None:
    good = "id,name\n" + "".join(f"{i},café {i}\n" for i in range(100_000))  # > 1 MiB
    data = good.encode() + b"7,caf\xe9 \xff\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    [bad] = inspect_files([_entry(path)], format="csv", max_record_bytes=LIMIT)
    assert f"not UTF-8 at byte {len(good.encode()) + 5} (line 100002)" in bad.reason
    # Valid UTF-8 (a character cut by a chunk boundary included) and other encodings pass.
    path.write_bytes(good.encode())
    assert inspect_files([_entry(path)], format="csv", max_record_bytes=LIMIT) == []
    path.write_bytes(data if not name.endswith(".gz") else gzip.compress(data))
    assert inspect_files([_entry(path)], format="csv", options={"encoding": "ISO-8859-1"},
                         max_record_bytes=LIMIT) == []


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": "]]]}}} [[[ {{{"}  # brackets inside strings do not count
    for _ in range(depth - 1):
        value = {"n": value}
    return value


@pytest.mark.parametrize("name", ["events.json", "events.json.gz"])
def test_a_json_record_nested_deeper_than_parquet_allows_is_found(tmp_path: Path,
                                                                  name: str) -> None:
    lines = [json.dumps({"id": 1, "tree": _nested(100)}),  # 101 levels with the outer record
             json.dumps({"id": 2, "list": [[[1]]] * 200}),  # wide, not deep
             json.dumps({"id": 3, "tree": _nested(99)})]
    path = tmp_path / name
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    [bad] = inspect_files([_entry(path)], format="json")
    assert "a record nested 101 levels deep (line 1), deeper than the 100 levels" in bad.reason
    path.write_bytes(("\n".join(lines[1:]) + "\n").encode())
    assert inspect_files([_entry(path)], format="json") == []
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps([{"tree": _nested(100)}], indent=1))
    [deep] = inspect_files([_entry(doc)], format="json", options={"multiLine": "true"})
    assert "102 levels deep (the whole file is one record)" in deep.reason
