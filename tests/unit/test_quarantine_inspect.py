"""The cheap checks that set unreadable input files aside before Spark reads them, and the
policy (strict mode, threshold) — no JVM."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from lakemark.run.quarantine import (BadFilePolicy, QuarantinedFile, QuarantineExceeded,
                                      find_bad_file, pin_failure)
from lakemark.errors import ConfigError
from lakemark.planning import FileEntry
from lakemark.sources._inspect import _longest_span, inspect_file, inspect_files, parse_size

TABLE = pa.table({"id": list(range(2000)), "name": [f"n{i}" * 3 for i in range(2000)]})


def _write(fmt: str, path: Path) -> bytes:
    if fmt == "parquet":
        pq.write_table(TABLE, path)
    elif fmt == "orc":
        po.write_table(TABLE, path)
    else:
        schema = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
            {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]})
        with open(path, "wb") as f:
            fastavro.writer(f, schema, TABLE.to_pylist(), sync_interval=2000)
    return path.read_bytes()


def _check(path: Path, fmt: str, **kw: object) -> str | None:
    return inspect_file(FileEntry(0, str(path), path.stat().st_size if path.exists() else 0),
                        format=fmt, options={str(k): str(v) for k, v in kw.items()
                                             if k != "limit"},
                        max_record_bytes=int(kw.get("limit", 64 << 20)))  # type: ignore[call-overload]


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_columnar_files_cut_anywhere_empty_or_of_another_format_are_found(
        fmt: str, tmp_path: Path) -> None:
    good = _write(fmt, tmp_path / f"good.{fmt}")
    assert _check(tmp_path / f"good.{fmt}", fmt) is None
    for cut in (0, 1, 3, 17, len(good) // 3, len(good) // 2, len(good) - 20, len(good) - 1):
        bad = tmp_path / f"cut{cut}.{fmt}"
        bad.write_bytes(good[:cut])
        reason = _check(bad, fmt)
        assert reason, f"{fmt} cut at {cut} of {len(good)} passed"
    other = {"parquet": "orc", "orc": "avro", "avro": "parquet"}[fmt]
    assert "not a" in (_check(tmp_path / f"good.{fmt}", other) or "")
    (tmp_path / "text").write_text('{"id": 1}\n')
    assert _check(tmp_path / "text", fmt)


def test_empty_columnar_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "e.parquet").write_bytes(b"")
    assert "empty file" in (_check(tmp_path / "e.parquet", "parquet") or "")


def test_links_and_vanished_files(tmp_path: Path) -> None:
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "missing.json")
    (tmp_path / "folder.json").mkdir()
    assert "symbolic link loop" in (_check(tmp_path / "loop.json", "json") or "")
    assert "dangling symbolic link" in (_check(tmp_path / "dangling.json", "json") or "")
    assert "no longer exists" in (_check(tmp_path / "gone.json", "json") or "")
    assert "not a regular file" in (_check(tmp_path / "folder.json", "json") or "")


def test_a_record_over_the_limit_is_found_only_in_files_over_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"a": 1}\n' + '{"a": "' + "x" * 5000 + '"}\n' + '{"a": 2}\n')
    many = tmp_path / "many.json"
    many.write_text('{"a": 1}\n' * 2000)
    assert "5009 bytes is over the record size limit of 1000" in (
        _check(big, "json", limit=1000) or "")
    assert _check(many, "json", limit=1000) is None  # bigger than the limit, short lines
    assert _check(big, "json", limit=100_000) is None  # not scanned at all
    assert "multiLine" in (_check(many, "json", limit=1000, multiline="true") or "")
    xml = tmp_path / "rows.xml"
    xml.write_text("<rows>" + "<row><a>1</a></row>" * 50 + "<row><a>" + "y" * 3000
                   + "</a></row></rows>")
    assert _check(xml, "xml", limit=1000, rowTag="row")
    assert _check(xml, "xml", limit=4000, rowTag="row") is None


@pytest.mark.parametrize(("data", "sep", "longest"), [
    (b"ab\ncde\n\nfghij", b"\n", 5), (b"", b"\n", 0), (b"x" * 10, b"\n", 10),
    (b"<r>a</r><r>bbbbbb</r>", b"<r", 11)])
def test_longest_span(data: bytes, sep: bytes, longest: int) -> None:
    assert _longest_span(io.BytesIO(data), sep) == longest


def test_longest_span_across_chunks() -> None:
    data = b"a" * (3 << 20) + b"\n" + b"b" * 10
    assert _longest_span(io.BytesIO(data), b"\n") == 3 << 20
    xml = b"<row>" + b"c" * (2 << 20) + b"<row>" + b"d" * 7
    assert _longest_span(io.BytesIO(xml), b"<row") == (2 << 20) + 1


def test_inspect_files_keeps_the_order_and_only_bad_files(tmp_path: Path) -> None:
    _write("parquet", tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 not really")
    _write("parquet", tmp_path / "c.parquet")
    entries = [FileEntry(0, str(tmp_path / n), 1) for n in ("a.parquet", "b.parquet",
                                                              "c.parquet")]
    bad = inspect_files(entries, format="parquet")
    assert [b.entry.path for b in bad] == [str(tmp_path / "b.parquet")]


@pytest.mark.parametrize(("text", "size"), [("64MiB", 64 << 20), ("200MB", 200_000_000),
                                            ("1g", 1 << 30), ("1048576", 1 << 20),
                                            ("1.5k", 1536)])
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text, option="--max-record-bytes") == size


@pytest.mark.parametrize("text", ["", "lots", "12q", "-1", "0"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="--max-record-bytes"):
        parse_size(text, option="--max-record-bytes")


def _set_aside(n: int) -> list[QuarantinedFile]:
    return [QuarantinedFile("src", FileEntry(0, f"/in/{i}.json", 1), "bad") for i in range(n)]


def test_policy_default_quarantines_any_number() -> None:
    BadFilePolicy().check("src", _set_aside(50), 50)


def test_strict_policy_fails_naming_the_file() -> None:
    with pytest.raises(QuarantineExceeded, match=r"/in/0.json: bad .*on_bad_file=fail"):
        BadFilePolicy.parse("fail").check("src", _set_aside(1), 10)


@pytest.mark.parametrize(("limit", "bad", "planned", "fails"), [
    ("2", 2, 10, False), ("2", 3, 10, True), ("0", 1, 10, True), ("10%", 1, 10, False),
    ("10%", 2, 10, True), ("50%", 5, 10, False), ("50%", 6, 10, True)])
def test_threshold(limit: str, bad: int, planned: int, fails: bool) -> None:
    policy = BadFilePolicy.parse(max_bad_files=limit)
    if fails:
        with pytest.raises(QuarantineExceeded, match="max_bad_files"):
            policy.check("src", _set_aside(bad), planned)
    else:
        policy.check("src", _set_aside(bad), planned)


@pytest.mark.parametrize(("args", "message"), [
    ({"on_bad_file": "skip"}, "--on-bad-file"), ({"max_bad_files": "many"}, "--max-bad-files"),
    ({"max_bad_files": "150%"}, "max-bad-files"), ({"max_record_bytes": "big"},
                                                   "--max-record-bytes")])
def test_bad_policy_options_name_the_option(args: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BadFilePolicy.parse(**args)


def test_halving_finds_the_one_file_that_fails_alone() -> None:
    files = [FileEntry(i, f"/in/{i:03}.parquet", 1) for i in range(37)]
    reads: list[int] = []

    def fails(subset: object) -> bool:
        chosen = list(subset)  # type: ignore[call-overload]
        reads.append(len(chosen))
        return any(f.path == "/in/029.parquet" for f in chosen)

    assert find_bad_file(files, fails) == files[29]
    assert len(reads) <= 2 * 6 + 1
    assert find_bad_file(files, lambda s: False) is None
    assert find_bad_file([], lambda s: True) is None


def test_pin_failure_takes_the_file_the_error_names_first() -> None:
    files = [FileEntry(0, "/in/a.parquet", 1), FileEntry(0, "/in/aa.parquet", 1)]
    error = RuntimeError("[FAILED_READ_FILE] Encountered error while reading file "
                         "file:///in/aa.parquet. Details: boom")
    assert pin_failure(error, files, lambda s: True) is not None
    assert pin_failure(error, files, lambda s: True)[0].path == "/in/aa.parquet"  # type: ignore[index]
    unnamed = RuntimeError("something broke")
    assert pin_failure(unnamed, files, lambda s: any(f.path == "/in/a.parquet" for f in s)
                       )[0].path == "/in/a.parquet"  # type: ignore[index]
    assert pin_failure(unnamed, files, lambda s: len(list(s)) > 1) is None
