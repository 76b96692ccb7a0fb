"""Mixed types inside JSON arrays read into a DynamicFrame (issue 32): as Glue's JSON reader
types them, an array whose elements differ (``"codes": [1, "2"]``) is
``array<choice(long, string)>`` and a field of structs inside an array (``items[].qty``) a
choice too; ``resolveChoice`` specs on Glue's ``codes[]`` / ``items[].qty`` paths act on each
element as its documentation says (``project:long`` keeps only the longs, ``cast`` converts,
``make_struct`` keeps both, ``make_cols`` spreads a struct field); ``make_cols`` on the
elements themselves is refused in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakemark.errors import ConfigError
from lakemark.glue import GlueContext
from lakemark.glue._choicetype import glue_tree

pytestmark = pytest.mark.spark

LINES = [
    '{"device": "a", "codes": [1, "2", null], '
    '"items": [{"sku": "x", "qty": 1}, {"sku": "y", "qty": "2"}]}',
    '{"device": "b", "codes": ["E7"], "items": [{"sku": "z", "qty": 3}], "tags": ["t1"]}',
    '{"device": "c", "codes": null, "tags": ["t2", "t3"]}',
]


@pytest.fixture
def frame(spark: Any, tmp_path: Path) -> Any:
    folder = tmp_path / "readings"
    folder.mkdir()
    (folder / "part-0.json").write_text("\n".join(LINES) + "\n")
    return GlueContext(spark.sparkContext).create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [str(folder)]}, format="json")


def rows(frame: Any) -> dict[str, dict[str, Any]]:
    return {r["device"]: r.asDict(recursive=True) for r in frame.toDF().collect()}


def test_array_elements_and_fields_in_arrays_are_choices(frame: Any) -> None:
    tree = glue_tree(frame.schema())
    assert ("|-- codes: array\n|    |-- element: choice\n|    |    |-- long\n"
            "|    |    |-- string") in tree
    assert "|    |    |-- qty: choice" in tree
    # all strings: a plain array of strings, as Glue types it
    assert "|-- tags: array\n|    |-- element: string" in tree
    got = rows(frame)  # toDF: a choice is a struct of its members, as Glue's toDF gives it
    assert got["a"]["codes"] == [{"long": 1, "string": None}, {"long": None, "string": "2"},
                                 None]
    assert got["c"]["codes"] is None and got["c"]["tags"] == ["t2", "t3"]


def test_resolve_choice_on_array_paths(frame: Any) -> None:
    projected = rows(frame.resolveChoice(specs=[("codes[]", "project:long")]))
    assert projected["a"]["codes"] == [1, None, None]
    assert projected["b"]["codes"] == [None] and projected["c"]["codes"] is None
    cast = rows(frame.resolveChoice(specs=[("codes[]", "cast:long")]))
    assert cast["a"]["codes"] == [1, 2, None] and cast["b"]["codes"] == [None]
    text = rows(frame.resolveChoice(specs=[("codes[]", "cast:string")]))
    assert text["a"]["codes"] == ["1", "2", None] and text["b"]["codes"] == ["E7"]
    both = rows(frame.resolveChoice(specs=[("codes[]", "make_struct")]))
    assert both["b"]["codes"] == [{"long": None, "string": "E7"}]
    qty = rows(frame.resolveChoice(specs=[("items[].qty", "project:long")]))
    assert [i["qty"] for i in qty["a"]["items"]] == [1, None]
    spread = rows(frame.resolveChoice(specs=[("items[].qty", "make_cols")]))
    assert spread["a"]["items"] == [{"qty_long": 1, "sku": "x", "qty_string": None},
                                    {"qty_long": None, "sku": "y", "qty_string": "2"}]


def test_frame_wide_choice_and_make_cols_refusal(frame: Any) -> None:
    resolved = rows(frame.resolveChoice(choice="project:long"))
    assert resolved["a"]["codes"] == [1, None, None]
    assert [i["qty"] for i in resolved["a"]["items"]] == [1, None]
    for call in (lambda: frame.resolveChoice(specs=[("codes[]", "make_cols")]),
                 lambda: frame.resolveChoice(choice="make_cols")):
        with pytest.raises(ConfigError, match=r"codes\[\]'.*make_struct") as info:
            call()
        assert "\n" not in str(info.value)
