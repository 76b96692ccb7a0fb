"""Both ways lakemark writes an Iceberg table agree on its partition values: the classic sink
(``LAKEMARK_FORMAT_SERVING=patch``, folder columns in Spark SQL) and the ``iceberg`` Python data
source (``LAKEMARK_FORMAT_SERVING=datasource``, folder columns with pyarrow in the write task)
compute the same folder values for every transform and type pair Iceberg allows (a property
test over generated rows), write files whose partitions are pyiceberg's own transforms of
their rows (truncate on decimal and binary included), and refuse a pair Iceberg forbids in
one line naming column and transform before anything is written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog.sql import SqlCatalog

from lakemark.catalog._iceberg import CATALOG_ENV
from lakemark.datasources import SERVING_ENV
from lakemark.datasources._iceberg_folders import folder_array
from lakemark.errors import ConfigError
from lakemark.planning.partition_transforms import PartitionField
from lakemark.sinks._iceberg_partition import with_partition_folders

from test_iceberg_partitions import partitions_match_rows

pytestmark = pytest.mark.spark

UTC = dt.UTC
_STAMPS = st.datetimes(min_value=dt.datetime(1800, 1, 1), max_value=dt.datetime(2300, 1, 1))
SCHEMA = ("i int, l bigint, d decimal(9,3), s string, b binary, dt date, ts timestamp, "
          "tn timestamp_ntz")
ROW = st.tuples(
    st.none() | st.integers(min_value=-(2**31) + 2**20, max_value=2**31 - 1),
    st.none() | st.integers(min_value=-(2**62), max_value=2**62),
    st.none() | st.decimals(min_value=Decimal("-99999.999"), max_value=Decimal("99999.999"),
                            places=3),
    st.none() | st.text(max_size=8), st.none() | st.binary(max_size=8),
    st.none() | st.dates(min_value=dt.date(1800, 1, 1), max_value=dt.date(2300, 1, 1)),
    st.none() | _STAMPS.map(lambda t: t.replace(tzinfo=UTC)), st.none() | _STAMPS)
ARROW = {"i": pa.int32(), "l": pa.int64(), "d": pa.decimal128(9, 3), "s": pa.string(),
         "b": pa.binary(), "dt": pa.date32(), "ts": pa.timestamp("us", tz="UTC"),
         "tn": pa.timestamp("us")}


def every_allowed_field(width: int) -> list[PartitionField]:
    fields = [PartitionField("truncate", c, width) for c in ("i", "l", "d", "s", "b")]
    for column in ("dt", "ts", "tn"):
        fields += [PartitionField(t, column) for t in ("year", "month", "day")]
    fields += [PartitionField("hour", c) for c in ("ts", "tn")]
    return fields + [PartitionField("identity", c) for c in ("i", "l", "d", "s", "b", "dt")]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=12), width=st.integers(1, 2**20))
def test_the_sink_and_the_data_source_compute_the_same_folders(spark: Any, rows: list[Any],
                                                               width: int) -> None:
    fields = every_allowed_field(width)
    df = spark.createDataFrame(rows, SCHEMA)
    written, names = with_partition_folders(df, fields)
    by_sql = [tuple(r) for r in written.select(*names).collect()]
    columns = {c: pa.array([r[k] for r in rows], type=t) for k, (c, t) in enumerate(ARROW.items())}
    by_arrow = list(zip(*(folder_array(f, columns[f.column]).to_pylist() for f in fields),
                        strict=True))
    as_bytes = [tuple(bytes(v) if isinstance(v, bytearray) else v for v in r) for r in by_sql]
    assert as_bytes == by_arrow


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqlCatalog:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    monkeypatch.setenv(CATALOG_ENV, uri)
    return SqlCatalog("lakemark", uri=uri, warehouse=(tmp_path / "warehouse").as_uri())


@pytest.mark.parametrize("serving", ["patch", "datasource"])
def test_truncate_of_decimals_and_binaries_gives_icebergs_partitions(
        spark: Any, catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch, serving: str) -> None:
    monkeypatch.setenv(SERVING_ENV, serving)
    rows = [(1, Decimal("10.65"), b"abcdef", dt.date(2024, 5, 1)),
            (2, Decimal("10.99"), b"abcxyz", dt.date(2024, 5, 1)),
            (3, Decimal("-0.01"), b"\x00\xff", dt.date(1969, 12, 31)),
            (4, None, None, None)]
    df = spark.createDataFrame(rows, "id long, amount decimal(6,2), key binary, day date")
    df.write.format("iceberg").partitionBy("truncate(50, amount)", "truncate(3, key)",
                                           "months(day)").save("db.money")
    table = catalog.load_table("db.money")
    assert partitions_match_rows(table) == {
        (Decimal("10.50"), b"abc", 652), (Decimal("-0.50"), b"\x00\xff", -1),
        (None, None, None)}
    assert sorted(r.id for r in spark.read.format("iceberg").load("db.money").collect()) == \
        [1, 2, 3, 4]


@pytest.mark.parametrize("serving", ["patch", "datasource"])
@pytest.mark.parametrize(("partition", "named"), [("hours(day)", "hour needs timestamp"),
                                                  ("truncate(2, price)", "truncate needs int"),
                                                  ("bucket(4, id)", "bucket partitions are not")])
def test_a_pair_iceberg_forbids_is_refused_before_writing(
        spark: Any, catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch, serving: str,
        partition: str, named: str) -> None:
    monkeypatch.setenv(SERVING_ENV, serving)
    df = spark.createDataFrame([(1, 2.5, dt.date(2024, 5, 1))], "id long, price double, day date")
    with pytest.raises(ConfigError) as refused:
        df.write.format("iceberg").partitionBy(partition).save("db.bad")
    message = str(refused.value)
    assert "\n" not in message and named in message, message
    column = partition.split(",")[-1].strip(" ()").split("(")[-1]
    assert column in message
    assert not catalog.table_exists("db.bad")
