"""Glue's JDBC bookmark options turned into the core JDBC source (no JVM)."""

from __future__ import annotations

from typing import Any

import pytest

from lakemark.errors import ConfigError
from lakemark.glue.jdbc import _catalog_dbtable, jdbc_source

BASE = {"url": "jdbc:postgresql://h:5432/hr", "dbtable": "hr.emp", "user": "u",
        "password": "pw-xyzzy"}


def source(**extra: Any):  # type: ignore[no-untyped-def]
    return jdbc_source(None, "postgresql", {**BASE, **extra})  # type: ignore[arg-type]


def test_keys_and_both_spellings_of_the_sort_order() -> None:
    s = source(jobBookmarkKeys=["empno"], jobBookmarksKeysSortOrder="asc")
    assert (s.keys, s.order) == (("empno",), "asc")
    s = source(jobBookmarkKeys=["a", "b"], jobBookmarkKeysSortOrder="DESC")
    assert (s.keys, s.order) == (("a", "b"), "desc")
    assert source().keys is None and source().order == "asc"
    assert source(jobBookmarkKeys="a, b").keys == ("a", "b")
    assert "xyzzy" not in repr(source())  # the password is not in the repr
    with_url_pw = source(url="jdbc:postgresql://h/hr?password=xyzzy")
    assert "xyzzy" not in repr(with_url_pw)


@pytest.mark.parametrize("extra, match", [
    ({"jobBookmarkKeysSortOrder": "up"}, "jobBookmarkKeysSortOrder"),
    ({"jobBookmarksKeysSortOrder": "sideways"}, "jobBookmarksKeysSortOrder"),
    ({"jobBookmarkKeysSortOrder": "asc", "jobBookmarksKeysSortOrder": "desc"}, "disagree"),
    ({"jobBookmarkKeys": [1]}, "jobBookmarkKeys"),
    ({"hashpartitions": "x", "hashfield": "id"}, "hashpartitions"),
    ({"hashpartitions": "4"}, "hashpartitions needs"),
    ({"fetchsize": "0"}, "fetchsize"),
    ({"dbtable": "a.b.c.d"}, "dbtable"),
])
def test_bad_options_are_named(extra: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        source(**extra)


def test_parallel_options() -> None:
    s = source(hashfield="empno", hashpartitions="5", fetchsize="100")
    assert (s.hashfield, s.hashpartitions, s.fetchsize) == ("empno", 5, 100)


def test_catalog_location_drops_the_database_the_url_names() -> None:
    assert _catalog_dbtable("test.hr.emp", "jdbc:postgresql://h/test") == "hr.emp"
    assert _catalog_dbtable("shop.orders", "jdbc:mysql://h/shop") == "shop.orders"
