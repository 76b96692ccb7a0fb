"""``--bucket-map``: parsing, longest-prefix resolution and listings under the s3:// names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakemark.errors import ConfigError
from lakemark.storage import BUCKET_MAP_ENV, list_files, mapped_path, parse_bucket_map
from lakemark.storage._bucket_map import s3_name


def test_parse_normalizes_uris_and_folders(tmp_path: Path) -> None:
    mapping = parse_bucket_map([f"s3://prod/={tmp_path}/a", f"s3a://prod/in/={tmp_path}/b"])
    assert mapping == {"s3://prod": f"{tmp_path}/a", "s3://prod/in": f"{tmp_path}/b"}


@pytest.mark.parametrize("item", ["prod=/x", "s3://prod", "s3:///x=/y", "s3://prod=",
                                  "gs://prod=/x"])
def test_malformed_items_name_the_option_and_the_value(item: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_bucket_map([item], "--bucket-map")
    assert f"--bucket-map {item!r}" in str(err.value)


def test_same_prefix_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="mapped twice"):
        parse_bucket_map(["s3://b=/x", "s3://b/=/y"])


def test_longest_prefix_wins_on_whole_segments() -> None:
    mapping = {"s3://b": "/all", "s3://b/in": "/inputs"}
    assert mapped_path("s3://b/in/x.json", mapping) == "/inputs/x.json"
    assert mapped_path("s3a://b/in", mapping) == "/inputs"
    assert mapped_path("s3://b/inbox/y", mapping) == "/all/inbox/y"
    assert mapped_path("s3://other/in/x", mapping) is None
    assert mapped_path("/local/path", mapping) is None
    assert s3_name("s3://b/in/", "/inputs/d=1/x.json", mapping) == "s3://b/in/d=1/x.json"


def test_listing_of_a_mapped_prefix_keeps_s3_names(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in" / "d=1").mkdir(parents=True)
    (tmp_path / "in" / "d=1" / "a.json").write_text("{}\n")
    (tmp_path / "in" / "_SUCCESS").write_text("")
    monkeypatch.setenv(BUCKET_MAP_ENV, json.dumps({"s3://prod": str(tmp_path)}))
    listing = list_files("s3://prod/in/")
    assert listing.root == "s3://prod/in"
    assert [f.path for f in listing.files] == ["s3://prod/in/d=1/a.json"]
    assert list_files("s3://prod/missing/").files == []  # an empty prefix, as on S3


def test_exclusions_match_the_s3_uri_of_a_mapped_file(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text("{}\n")
    (tmp_path / "in" / "b.txt").write_text("x\n")
    monkeypatch.setenv(BUCKET_MAP_ENV, json.dumps({"s3://prod": str(tmp_path)}))
    by_uri = list_files("s3://prod/in/", exclusions=["s3://prod/in/*.txt"])
    by_rel = list_files("s3://prod/in/", exclusions=["**.json"])
    assert [f.path for f in by_uri.files] == ["s3://prod/in/a.json"]
    assert [f.path for f in by_rel.files] == ["s3://prod/in/b.txt"]
