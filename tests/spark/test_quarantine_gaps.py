"""Quarantine gaps of issue 31 end to end on local Spark: a record over the size limit inside a
compressed file, bytes that are not UTF-8, a record nested deeper than Parquet allows."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_quarantine import OLD, Lake, lake, write  # noqa: F401 - the fixture

pytestmark = pytest.mark.spark


def test_a_record_over_the_limit_inside_a_gzip_file_is_set_aside(lake: Lake) -> None:  # noqa: F811
    write("json", lake.src / "a.json", 0, 3)
    big = lake.src / "big.json.gz"
    lines = [json.dumps({"id": 50, "name": "ok"}), json.dumps({"id": 99, "name": "x" * 300_000})]
    big.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    os.utime(big, (OLD, OLD))
    assert big.stat().st_size < 100 * 1024  # smaller than the limit: only the scan sees it
    out = lake.ingest("--max-record-bytes", "100KiB", code=3)
    assert (out["files_taken"], out["files_set_aside"]) == (1, 1)
    assert lake.ids() == [0, 1, 2]
    assert "one record (decompressed) of 300" in lake.aside()["big.json.gz"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_file_with_bytes_that_are_not_utf8_is_set_aside_not_altered(
        lake: Lake, fmt: str) -> None:  # noqa: F811
    if fmt == "csv":
        (lake.src / "a.csv").write_text("id,name\n1,café\n2,b\n")
        (lake.src / "latin1.csv").write_bytes(b"id,name\n3,caf\xe9\n")
    else:
        write("json", lake.src / "a.json", 1, 2)
        (lake.src / "latin1.json").write_bytes(b'{"id": 3, "name": "caf\xe9"}\n')
    for f in lake.src.iterdir():
        os.utime(f, (OLD, OLD))
    extra = ("--option", "header=true") if fmt == "csv" else ()
    out = lake.ingest(*extra, code=3, fmt=fmt)
    assert (out["files_taken"], out["quarantined_files"]) == (1, 1)
    assert [int(i) for i in lake.ids()] == [1, 2]  # a csv source keeps ids as text
    assert "not UTF-8 at byte" in lake.aside()[f"latin1.{fmt}"]
    # Read with its real encoding after a retry: taken once, the text as written.
    lake.json("quarantine", "retry", "j")
    again = lake.ingest(*extra, "--option", "encoding=ISO-8859-1", "--option", "lineSep=\n",
                        fmt=fmt)
    assert again["files"] == 1
    from deltalake import DeltaTable

    rows = DeltaTable(str(lake.target)).to_pyarrow_table().to_pylist()
    assert {str(r["name"]) for r in rows if int(r["id"]) == 3} == {"café"}


def _deep(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"n": value}
    return value


def test_a_record_nested_deeper_than_parquet_allows_is_set_aside(lake: Lake) -> None:  # noqa: F811
    write("json", lake.src / "a.json", 0, 3)
    deep = lake.src / "deep.json"
    deep.write_text(json.dumps({"id": 50, "name": "ok"}) + "\n"
                    + json.dumps({"id": 99, "name": "deep", "tree": _deep(120)}) + "\n")
    os.utime(deep, (OLD, OLD))
    strict = lake.cli("ingest", "files", str(lake.src), str(lake.target), "--job", "j",
                      "--state", lake.state, "--format", "json", "--on-bad-file", "fail")
    assert strict.exit_code == 1, strict.output
    errors = [line for line in strict.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error:"), strict.stderr
    assert "deep.json" in errors[0] and "deeper than the 100 levels" in errors[0]
    assert not lake.target.exists()
    out = lake.ingest(code=3)  # not stuck: the other file commits
    assert (out["files_taken"], out["files_set_aside"]) == (1, 1)
    assert lake.ids() == [0, 1, 2]
    assert "121 levels deep (line 2)" in lake.aside()["deep.json"]
    assert lake.ingest()["files"] == 0


def test_an_xml_row_nested_deeper_than_parquet_allows_is_set_aside(lake: Lake) -> None:  # noqa: F811
    inner = "<v>1</v>"
    for _ in range(120):
        inner = f"<n>{inner}</n>"
    (lake.src / "a.xml").write_text("<rows><row><id>1</id></row><row><id>2</id></row></rows>")
    (lake.src / "deep.xml").write_text(f"<rows><row><id>3</id>{inner}</row></rows>")
    out = lake.ingest("--option", "rowTag=row", code=3, fmt="xml")
    assert (out["files_taken"], out["files_set_aside"]) == (1, 1)
    assert lake.ids() == [1, 2]
    assert "121 levels deep (elements of a <row> row)" in lake.aside()["deep.xml"]


def test_an_avro_schema_nested_too_deep_is_set_aside_by_a_python_job(lake: Lake,  # noqa: F811
                                                                      spark: Any) -> None:
    import fastavro

    from lakemark import Job
    from lakemark.state import open_store

    inner: object = "long"
    value: object = 1
    for i in range(110):
        inner = {"type": "record", "name": f"r{i}", "fields": [{"name": "c", "type": inner}]}
        value = {"c": value}
    for name, schema, row in (
            ("a.avro", {"type": "record", "name": "t", "fields": [{"name": "id", "type": "long"}]},
             {"id": 1}),
            ("deep.avro", {"type": "record", "name": "t", "fields": [
                {"name": "id", "type": "long"}, {"name": "t", "type": inner}]},
             {"id": 2, "t": value})):
        with open(lake.src / name, "wb") as out:
            fastavro.writer(out, fastavro.parse_schema(schema), [row])
    store = open_store(lake.state)
    with Job("j", state=store, spark=spark) as job:
        df = job.read_files(str(lake.src), format="avro", ctx="src")
        job.write(df, str(lake.target), format="delta", ctx="out")
    [aside] = job.set_aside["src"]
    assert Path(aside.entry.path).name == "deep.avro"
    assert "its schema nests 111 levels deep" in aside.reason
    assert lake.ids() == [1]
    store.close()
