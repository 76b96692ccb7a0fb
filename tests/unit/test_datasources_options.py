"""The serving switch and the option parsing of lakemark's Python data sources (no Spark)."""

from __future__ import annotations

import pytest
from pyiceberg import expressions as E
from pyspark.sql import datasource as D

from lakemark.datasources import SERVING_ENV, serving
from lakemark.datasources._iceberg_filters import row_filter
from lakemark.datasources._options import partition_by, save_mode
from lakemark.errors import ConfigError


def test_serving_defaults_to_patch_and_refuses_other_values(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.delenv(SERVING_ENV, raising=False)
    assert serving() == "patch"
    monkeypatch.setenv(SERVING_ENV, "DataSource")
    assert serving() == "datasource"
    monkeypatch.setenv(SERVING_ENV, "jars")
    with pytest.raises(ConfigError, match=f"^{SERVING_ENV}='jars': must be patch or datasource$"):
        serving()


def test_save_mode_and_partition_columns_from_hidden_options() -> None:
    assert save_mode("t", {}, False) == "append"
    assert save_mode("t", {}, True) == "overwrite"
    assert save_mode("t", {"lakemark.saveMode": "ErrorIfExists"}, False) == "error"
    assert save_mode("t", {"lakemark.savemode": "ignore"}, False) == "ignore"
    with pytest.raises(ConfigError, match="unknown save mode 'upsert'"):
        save_mode("t", {"lakemark.saveMode": "upsert"}, False)
    assert partition_by("t", {"lakemark.partitionBy": '["d", "h"]'}) == ["d", "h"]
    with pytest.raises(ConfigError, match="lakemark.partitionBy must be a JSON list"):
        partition_by("t", {"lakemark.partitionBy": "d"})


def test_pushed_filters_become_an_iceberg_row_filter() -> None:
    got = row_filter([D.EqualTo(("d",), "a"), D.GreaterThan(("n",), 3),
                      D.In(("d",), ("a", "b")), D.IsNotNull(("n",)),
                      D.EqualTo(("nested", "x"), 1),  # a nested field: not used for pruning
                      D.StringContains(("d",), "z"),  # no Iceberg counterpart: dropped
                      D.Not(D.IsNull(("d",)))], ["d", "n"])
    want = E.And(E.And(E.And(E.And(E.EqualTo("d", "a"), E.GreaterThan("n", 3)),
                             E.In("d", {"a", "b"})), E.NotNull("n")), E.Not(E.IsNull("d")))
    assert got == want
    assert row_filter([], ["d"]) == E.AlwaysTrue()


def test_serving_is_chosen_per_format_and_direction(monkeypatch: pytest.MonkeyPatch) -> None:
    def all_four() -> dict[str, str]:
        return {f"{f}.{o}": serving(f, o) for f in ("delta", "iceberg") for o in ("read", "write")}

    monkeypatch.delenv(SERVING_ENV, raising=False)
    # the defaults: the data source where it measured at par or faster (Delta writes)
    assert all_four() == {"delta.read": "patch", "delta.write": "datasource",
                          "iceberg.read": "patch", "iceberg.write": "patch"}
    monkeypatch.setenv(SERVING_ENV, "patch")  # the way back: the wrapper for everything
    assert set(all_four().values()) == {"patch"}
    monkeypatch.setenv(SERVING_ENV, "datasource")
    assert set(all_four().values()) == {"datasource"}
    monkeypatch.setenv(SERVING_ENV, " Delta:Patch , iceberg.read:datasource ")
    assert all_four() == {"delta.read": "patch", "delta.write": "patch",
                          "iceberg.read": "datasource", "iceberg.write": "patch"}
    monkeypatch.setenv(SERVING_ENV, "datasource,delta.read:patch")  # the narrower name wins
    assert all_four() == {"delta.read": "patch", "delta.write": "datasource",
                          "iceberg.read": "datasource", "iceberg.write": "datasource"}


@pytest.mark.parametrize(("value", "message"), [
    ("delta:jars", "'delta:jars' must be patch, datasource or NAME:patch|datasource$"),
    ("patch,hudi:patch", "unknown name 'hudi' in 'hudi:patch' \\(names: delta, delta.read, "
                         "delta.write, iceberg, iceberg.read, iceberg.write\\)$"),
])
def test_serving_refuses_a_bad_item_naming_it(monkeypatch: pytest.MonkeyPatch, value: str,
                                              message: str) -> None:
    monkeypatch.setenv(SERVING_ENV, value)
    with pytest.raises(ConfigError, match=f"^{SERVING_ENV}={value!r}: {message}"):
        serving("delta", "write")
