"""The client-side key scan (sources/_client_keys.py) gives what the Spark scan gives.

A small local increment of a tracked JSON source has its key scan done in the client process
(no Spark job: over Spark Connect that job was most of a small run's server time). It must
find exactly what Spark's scan finds: here real Spark evaluates, record by record, the scan's
own expressions (``rlike`` with the scan's pattern, ``json_object_keys``) over generated
records, hard ones included (corrupt lines, case and whitespace variants of a column, escaped
and duplicated keys, single quotes, ``NaN``, trailing text), and whole scans over files (line
ends, file names, ``multiLine``) are compared as :class:`KeyScan` values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.files import FileEntry
from lakemark.sources._client_keys import (
    CLIENT_KEY_SCAN_BYTES,
    Unsupported,
    candidate_pattern,
    client_scan,
    object_keys,
)
from lakemark.sources._json_tracked import _candidate_regex, scan_keys
from lakemark.sources._options import make_request

pytestmark = pytest.mark.spark

NAMES = ["id", "Code", "a.b", "x y", 'q"t', "back\\slash", "a+b", "é", "(n)", ""]
KEYS = NAMES + ["code", " Code", "CODE ", "ID", "new", "extra", "a", "\u00e9\u00e9", "z\tz",
                "k\\u0061", "\U0001f600"]

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                  st.floats(allow_nan=False, allow_infinity=False), _text)
_value = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=6)
_ws = st.sampled_from(["", " ", "  ", "\t", " \t "])


@st.composite
def _object(draw: Any) -> str:
    """A JSON object's text with chosen whitespace, duplicates and escaped keys."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(KEYS), _value), max_size=5))
    parts = []
    for key, value in pairs:
        text = json.dumps(key, ensure_ascii=draw(st.booleans()))
        if draw(st.integers(0, 9)) == 0 and key:
            text = f'"\\u{ord(key[0]):04x}' + text[2:] if ord(key[0]) < 0x10000 else text
        parts.append(draw(_ws) + text + draw(_ws) + ":" + draw(_ws)
                     + json.dumps(value, ensure_ascii=draw(st.booleans())) + draw(_ws))
    return draw(_ws) + "{" + ",".join(parts) + "}"


@st.composite
def _record(draw: Any) -> str:
    text = draw(_object())
    kind = draw(st.integers(0, 14))
    if kind == 0 and len(text) > 1:  # a corrupt (cut) line
        return text[:draw(st.integers(1, len(text) - 1))]
    if kind == 1:  # text after the object
        return text + draw(st.sampled_from(["x", " {\"new\":1}", "}", ",\"extra\":1}", "]"]))
    if kind == 2:  # single quotes (Spark's parser takes them)
        return text.replace('"', "'")
    if kind == 3:  # values JSON does not have
        return text.replace("null", draw(st.sampled_from(["NaN", "Infinity", "-Infinity",
                                                           "01", "1.", "+1", "nul"])), 1)
    if kind == 4:  # not an object
        return draw(st.sampled_from(["", "[1,2]", "42", '"s"', "null", "not json", "\ufeff{}",
                                     '{"new":1', '["new":1]', "\x01{}", "{\"new\"\x01:1}"]))
    if kind == 5:  # something inserted at a random place
        at = draw(st.integers(0, len(text)))
        bit = draw(st.sampled_from([",", ":", "\"", "\\", "'", "\x00", "\x0b", "\n", "\r",
                                    "\u2028", "\\'", "{", "}", " ", ',"new":1']))
        return text[:at] + bit + text[at:]
    return text


def _spark_per_record(spark: Any, records: list[str], names: list[str]) -> list[Any]:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField(n, StringType()) for n in names])
    frame = spark.createDataFrame([(i, r) for i, r in enumerate(records)],
                                  "i int, value string")
    rows = frame.select("i", F.col("value").rlike(_candidate_regex(schema)).alias("m"),
                        F.json_object_keys("value").alias("k")).collect()
    return [(r["m"], r["k"]) for r in sorted(rows, key=lambda r: r["i"])]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(records=st.lists(_record(), min_size=1, max_size=60),
       names=st.lists(st.sampled_from(NAMES), unique=True, max_size=6))
def test_each_record_as_spark_sees_it(spark: Any, records: list[str], names: list[str]) -> None:
    """Per record: the pattern finds a candidate where ``rlike`` does, and the keys are
    ``json_object_keys``' (a record the client hands back to Spark is the only exception)."""
    pattern = candidate_pattern(names)
    expected = _spark_per_record(spark, records, names)
    for record, (matched, keys) in zip(records, expected):
        assert (pattern.search(record) is not None) == matched, record
        try:
            got = object_keys(record)
        except Unsupported:
            continue
        assert got == keys, record


HARD = [
    '{"id": 1, "Code": "x"}',
    '{"id": 2, "code": "variant in case"}',
    '{"id": 3, " Code": "variant in whitespace", "Code ": 1}',
    '{"id": 4, "new": 1, "new": 2}',  # duplicated key: one record
    '{"\\u006eew": 5, "id": 5}',  # an escaped key
    '{"id": 6, "note": "a \\"b\\": 1, \\"hidden\\": 2"}',  # a key's text inside a string
    '{"id": 7, "deep": {"inner": {"x": [1, {"y": 2}]}}}',
    '{"id": 8, "bad": }',  # corrupt
    '{"id": 9, "new": NaN}',  # corrupt for Spark's parser too
    '{"id": 10, "new": 1} trailing',
    'not json at all, "new": 1',
    '[{"new": 1}]',
    '{"id": 11, "ctl": "tab\there\x01"}',
    "",
    '{"\U0001f600": 1, "é": 2}',
]


def _files(tmp: Path, ends: list[str]) -> list[FileEntry]:
    folder = tmp / "src"
    folder.mkdir(exist_ok=True)
    names = ["plain.json", "a b#\u00a0.json", "x%41y.json", "ü[1].json", "sub/p.json"]
    entries = []
    for i, end in enumerate(ends):
        path = folder / names[i % len(names)]
        path.parent.mkdir(exist_ok=True)
        rows = HARD[i::2] if i % 2 else HARD
        path.write_bytes(end.join(rows).encode("utf-8") + (end.encode() if i % 3 else b""))
        entries.append(FileEntry(1.0, str(path), path.stat().st_size))
    return entries


def _both(spark: Any, entries: list[FileEntry], root: Path, names: list[str],
          options: dict[str, str] | None = None) -> tuple[Any, Any]:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema = StructType([StructField(n, LongType() if n == "id" else StringType())
                         for n in names])
    request = make_request("json", "PERMISSIVE", options, None, str(root))
    assert client_scan(spark, request, entries, str(root), names) is not None
    local = scan_keys(spark, request, entries, str(root), schema)
    spark.conf.set(CLIENT_KEY_SCAN_BYTES, "0")
    try:
        assert client_scan(spark, request, entries, str(root), names) is None
        remote = scan_keys(spark, request, entries, str(root), schema)
    finally:
        spark.conf.unset(CLIENT_KEY_SCAN_BYTES)
    return local, remote


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_scan_over_files_equals_spark_scan(spark: Any, tmp_path: Path, end: str) -> None:
    entries = _files(tmp_path, [end] * 5)
    local, remote = _both(spark, entries, tmp_path / "src", ["id", "Code", "deep"])
    assert local == remote
    assert {"new", "code", " Code", "Code ", "note", "ctl"} <= set(local.keys)
    assert len(local.files["new"]) == 5


def test_whole_file_records_equal_spark_scan(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    texts = ['{\n "id": 1,\n "new": {"a": 1}\n}\n', '[{"new": 1}]', '{"id": 2, "x": 1',
             '{"id": 3,\r\n "Code": 1, "code": 2}']
    entries = []
    for i, text in enumerate(texts):
        path = folder / f"m{i}.json"
        path.write_text(text)
        entries.append(FileEntry(1.0, str(path), path.stat().st_size))
    local, remote = _both(spark, entries, folder, ["id", "Code"], {"multiLine": "true"})
    assert local == remote
    assert local.keys == {"new": 1, "code": 1}


def test_handed_back_to_spark(spark: Any, tmp_path: Path) -> None:
    """What the client scan does not reproduce goes to the Spark scan, not to a guess."""
    import gzip

    folder = tmp_path / "src"
    folder.mkdir()
    plain = folder / "ok.json"
    plain.write_text('{"id": 1}\n')
    zipped = folder / "z.json.gz"
    zipped.write_bytes(gzip.compress(b'{"id": 1, "new": 2}\n'))
    latin = folder / "latin.json"
    latin.write_bytes('{"id": 1, "n\u00e9w": 2}\n'.encode("latin-1"))
    quoted = folder / "quoted.json"
    quoted.write_text("{\"id\": 1, 'new': 2, \"x\": 3}\n")
    request = make_request("json", "PERMISSIVE", None, None, str(folder))

    def entry(path: Path) -> FileEntry:
        return FileEntry(1.0, str(path), path.stat().st_size)

    assert client_scan(spark, request, [entry(plain)], str(folder), ["id"]) == ({}, {})
    for path in (zipped, latin, quoted):
        assert client_scan(spark, request, [entry(plain), entry(path)], str(folder),
                           ["id"]) is None
    separated = make_request("json", "PERMISSIVE", {"lineSep": ";"}, None, str(folder))
    assert client_scan(spark, separated, [entry(plain)], str(folder), ["id"]) is None
    (folder / "day=1").mkdir()
    parted = folder / "day=1" / "p.json"
    parted.write_text('{"id": 1}\n')
    # files at the root and under a key=value folder: Spark's partition discovery decides
    assert client_scan(spark, request, [entry(plain), entry(parted)], str(folder),
                       ["id"]) is None
    # the Spark scan sees the single-quoted key (the other one makes the record a candidate)
    from pyspark.sql.types import LongType, StructField, StructType

    scan = scan_keys(spark, request, [entry(quoted)], str(folder),
                     StructType([StructField("id", LongType())]))
    assert scan.keys == {"new": 1, "x": 1}


def test_threshold_setting(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    path = folder / "a.json"
    path.write_text('{"id": 1, "new": 2}\n' * 10)
    entries = [FileEntry(1.0, str(path), path.stat().st_size)]
    request = make_request("json", "PERMISSIVE", None, None, str(folder))
    try:
        spark.conf.set(CLIENT_KEY_SCAN_BYTES, "100")  # below the file's 200 bytes
        assert client_scan(spark, request, entries, str(folder), ["id"]) is None
        spark.conf.set(CLIENT_KEY_SCAN_BYTES, "1k")
        assert client_scan(spark, request, entries, str(folder), ["id"]) is not None
        spark.conf.set(CLIENT_KEY_SCAN_BYTES, "lots")
        with pytest.raises(ConfigError, match=CLIENT_KEY_SCAN_BYTES.replace(".", r"\.")):
            client_scan(spark, request, entries, str(folder), ["id"])
    finally:
        spark.conf.unset(CLIENT_KEY_SCAN_BYTES)


def test_same_partition_folders_equal_spark_scan(spark: Any, tmp_path: Path) -> None:
    """Files under the same key=value folders (the usual layout) keep the client scan."""
    folder = tmp_path / "src"
    entries = []
    for day in ("2026-01-01", "2026-01-02"):
        for i in range(2):
            path = folder / f"date={day}" / f"h={i}" / "part.json"
            path.parent.mkdir(parents=True)
            path.write_text('{"id": 1, "new": 2}\n{"id": 2, "Id": 3}\n')
            entries.append(FileEntry(1.0, str(path), path.stat().st_size))
    local, remote = _both(spark, entries, folder, ["id"])
    assert local == remote
    assert local.keys == {"new": 4, "Id": 4}
