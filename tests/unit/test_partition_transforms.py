"""Partition fields as users write them (``ts``, ``days(ts)``, ``truncate(4, s)``): parsing and
the type rules, without a JVM."""

from __future__ import annotations

import pytest

from lakemark.errors import ConfigError
from lakemark.planning.partition_transforms import (
    PartitionField,
    check_partition_types,
    parse_partition_field,
    parse_partition_fields,
)


@pytest.mark.parametrize(("text", "field"), [
    ("d", PartitionField("identity", "d")),
    ("`odd name`", PartitionField("identity", "odd name")),
    ("days(ts)", PartitionField("day", "ts")),
    ("day(ts)", PartitionField("day", "ts")),
    ("DATE(ts)", PartitionField("day", "ts")),
    ("years( ts )", PartitionField("year", "ts")),
    ("months(ts)", PartitionField("month", "ts")),
    ("hours(ts)", PartitionField("hour", "ts")),
    ("date_hour(ts)", PartitionField("hour", "ts")),
    ("truncate(4, name)", PartitionField("truncate", "name", 4)),
    ("truncate(name, 4)", PartitionField("truncate", "name", 4)),
    ("bucket(16, id)", PartitionField("bucket", "id", 16)),
])
def test_spellings(text: str, field: PartitionField) -> None:
    assert parse_partition_field(text) == field


def test_text_round_trips() -> None:
    for text in ("d", "days(ts)", "years(ts)", "truncate(4, name)", "bucket(16, id)"):
        assert parse_partition_field(text).text() == text


@pytest.mark.parametrize(("text", "message"), [
    ("weeks(ts)", r"unknown partition transform 'weeks' in 'weeks\(ts\)'"),
    ("truncate(ts)", r"'truncate\(ts\)' needs a width and a column"),
    ("truncate(x, y)", "needs an integer width"),
    ("bucket(0, id)", "must be positive"),
    ("days(a, b)", "takes one column"),
    ("days()", "does not name a column"),
    ("a)", "is not a column or a partition transform"),
    ("", "must name columns or transforms"),
])
def test_bad_spellings_are_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_partition_field(text, "--partition-by")


def test_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"names days\(ts\) twice"):
        parse_partition_fields(["days(ts)", "day(ts)"])


def test_types() -> None:
    types = {"ts": "timestamp", "n": "timestamp_ntz", "d": "date", "s": "string",
             "i": "int", "x": "double", "m": "map<string,int>"}
    ok = ["ts", "years(ts)", "months(n)", "days(d)", "hours(ts)", "hours(n)",
          "truncate(2, s)", "truncate(10, i)", "x"]
    check_partition_types(parse_partition_fields(ok), types, "db.t")
    for bad, message in (("hours(d)", "'d' is date, but hour needs timestamp"),
                         ("days(s)", "'s' is string, but day needs date"),
                         ("truncate(2, x)", "'x' is double, but truncate needs int"),
                         ("bucket(4, i)", "bucket partitions are not supported"),
                         ("m", "must be of a primitive type"),
                         ("days(nope)", "'nope' is not in the DataFrame")):
        with pytest.raises(ConfigError, match=message):
            check_partition_types([parse_partition_field(bad)], types, "db.t")
