"""The folder columns of Iceberg writes through the ``iceberg`` data source
(:func:`lakemark.datasources._iceberg_folders.folder_array`) against pyiceberg's own transform
functions, for every transform and type pair Iceberg allows (property tests); every pair it
forbids is refused naming the column and the transform, by the folder code and by the type
check both write paths make before writing (no JVM)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg import types as it
from pyiceberg.transforms import (
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)

from lakemark.datasources._iceberg_folders import folder_array
from lakemark.errors import ConfigError
from lakemark.planning.partition_transforms import (
    PartitionField,
    check_partition_types,
    parse_partition_field,
)

EPOCH = dt.date(1970, 1, 1)
_MICROS = st.integers(min_value=-30_000 * 86_400_000_000, max_value=100_000 * 86_400_000_000)

#: name -> (arrow type, pyiceberg type, Spark simpleString, values as pyiceberg takes them)
TYPES: dict[str, tuple[pa.DataType, Any, str, Any]] = {
    "int": (pa.int32(), it.IntegerType(), "int",
            st.integers(min_value=-(2**31) + 2**20, max_value=2**31 - 1)),
    "long": (pa.int64(), it.LongType(), "bigint",
             st.integers(min_value=-(2**62), max_value=2**62)),
    "decimal": (pa.decimal128(9, 3), it.DecimalType(9, 3), "decimal(9,3)",
                st.decimals(min_value=Decimal("-99999.999"), max_value=Decimal("99999.999"),
                            places=3)),
    "string": (pa.string(), it.StringType(), "string", st.text(max_size=12)),
    "binary": (pa.binary(), it.BinaryType(), "binary", st.binary(max_size=12)),
    "date": (pa.date32(), it.DateType(), "date",
             st.integers(min_value=-300_000, max_value=2_900_000)),
    "timestamptz": (pa.timestamp("us", tz="UTC"), it.TimestamptzType(), "timestamp", _MICROS),
    "timestamp": (pa.timestamp("us"), it.TimestampType(), "timestamp_ntz", _MICROS),
}
#: Types no transform but identity takes.
OTHERS: dict[str, tuple[pa.DataType, str]] = {
    "float": (pa.float32(), "float"), "double": (pa.float64(), "double"),
    "boolean": (pa.bool_(), "boolean")}
TIME = ("date", "timestamptz", "timestamp")
ALLOWED: dict[str, tuple[str, ...]] = {
    "identity": (*TYPES, *OTHERS),
    "truncate": ("int", "long", "decimal", "string", "binary"),
    "year": TIME, "month": TIME, "day": TIME, "hour": ("timestamptz", "timestamp"),
}


def arrow_column(kind: str, values: list[Any]) -> pa.Array:
    """``values`` (as pyiceberg takes them: days, micros) as an arrow column of ``kind``."""
    arrow = TYPES[kind][0]
    if kind == "date":
        return pa.array(values, type=pa.int32()).cast(arrow)
    if kind in ("timestamptz", "timestamp"):
        return pa.array(values, type=pa.int64()).cast(arrow)
    return pa.array(values, type=arrow)


def iceberg_value(transform: str, folder: Any) -> Any:
    """The Iceberg partition value a folder value stands for."""
    if folder is None or transform in ("identity", "truncate"):
        return folder
    if transform == "day":
        return (folder - EPOCH).days
    if transform == "year":
        return folder - 1970
    if transform == "month":
        year, month = folder.split("-")
        return (int(year) - 1970) * 12 + int(month) - 1
    day, hour = dt.date.fromisoformat(folder[:-3]), int(folder[-2:])
    return (day - EPOCH).days * 24 + hour


def transform_of(transform: str, width: int) -> Any:
    return {"identity": IdentityTransform(), "truncate": TruncateTransform(width),
            "year": YearTransform(), "month": MonthTransform(), "day": DayTransform(),
            "hour": HourTransform()}[transform]


PAIRS = [(t, k) for t, kinds in ALLOWED.items() for k in kinds if k in TYPES]


@pytest.mark.parametrize(("transform", "kind"), PAIRS)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), width=st.integers(min_value=1, max_value=2**20))
def test_folder_values_are_icebergs_partition_values(transform: str, kind: str, data: Any,
                                                     width: int) -> None:
    values = data.draw(st.lists(st.none() | TYPES[kind][3], max_size=20))
    field = PartitionField(transform, "c", width if transform == "truncate" else None)
    folders = folder_array(field, arrow_column(kind, values)).to_pylist()
    if kind == "binary":  # a folder name holds the bytes in hex
        assert all(f is None or f == f.lower() for f in folders)
        folders = [None if f is None else bytes.fromhex(f) for f in folders]
    apply = transform_of(transform, width).transform(TYPES[kind][1])
    if transform == "identity":  # the column itself
        assert folders == arrow_column(kind, values).to_pylist()
        return
    assert [iceberg_value(transform, f) for f in folders] == \
        [None if v is None else apply(v) for v in values]


def test_the_spec_allows_what_lakemark_writes() -> None:
    """The pairs above are Iceberg's: pyiceberg's transforms take exactly them."""
    for transform in ("truncate", "year", "month", "day", "hour"):
        for kind, (_, iceberg, _, _) in TYPES.items():
            assert transform_of(transform, 4).can_transform(iceberg) == \
                (kind in ALLOWED[transform]), (transform, kind)


REFUSED = [(t, k) for t in (*ALLOWED, "bucket") for k in (*TYPES, *OTHERS)
           if k not in ALLOWED.get(t, ())]


@pytest.mark.parametrize(("transform", "kind"), REFUSED)
def test_a_pair_iceberg_forbids_is_refused_naming_column_and_transform(transform: str,
                                                                      kind: str) -> None:
    field = PartitionField(transform, "col_x", 4 if transform in ("truncate", "bucket")
                           else None)
    arrow, spark = TYPES[kind][0::2] if kind in TYPES else OTHERS[kind]
    column = pa.array([None], type=arrow)
    with pytest.raises(ConfigError) as folder_error:
        folder_array(field, column)
    message = str(folder_error.value)
    assert "\n" not in message and "col_x" in message and transform in message
    with pytest.raises(ConfigError) as check_error:  # both write paths check this first
        check_partition_types([parse_partition_field(field.text())], {"col_x": spark}, "db.t")
    message = str(check_error.value)
    assert "\n" not in message and "col_x" in message and transform in message
