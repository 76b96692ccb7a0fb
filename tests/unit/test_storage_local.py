"""The storage layer on the local file system: URI parsing, listing, hidden files, exclusions,
partition folders. Real files in a temporary folder; no mocks."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from lakemark.errors import ConfigError, SourceError
from lakemark.planning import FileEntry
from lakemark.storage import (
    Location,
    arrow_filesystem,
    arrow_fs_config,
    check_source,
    list_files,
    list_files_after,
    parse_exclusions,
    parse_uri,
    partition_values,
)

T0 = 1_700_000_000_000  # epoch ms


def put(path: Path, mtime_ms: int, data: bytes = b"x") -> Path:
    """Write a file and set its mtime to an exact millisecond."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000 + 123_456))
    return path


def rel(listing_files: list[FileEntry], root: Path) -> list[str]:
    return [os.path.relpath(f.path, root).replace(os.sep, "/") for f in listing_files]


# --- URI parsing -------------------------------------------------------------------------------


def test_relative_path_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    loc = parse_uri("data/in/")
    assert loc == Location("file", "", str(tmp_path / "data" / "in"), "data/in/")
    assert loc.root == str(tmp_path / "data" / "in")
    assert parse_uri("./data/./in").root == parse_uri("data/in").root


def test_file_uris() -> None:
    assert parse_uri("file:///tmp/a/b").key == "/tmp/a/b"
    assert parse_uri("file:/tmp/a/b/").key == "/tmp/a/b"  # Hadoop's form
    assert parse_uri("file://localhost/tmp/a").key == "/tmp/a"
    assert parse_uri("file:///tmp/a%20b").key == "/tmp/a b"
    assert parse_uri("FILE:///tmp/x").scheme == "file"
    with pytest.raises(ConfigError, match="otherhost"):
        parse_uri("file://otherhost/tmp/a")


def test_s3_schemes_normalize_to_s3() -> None:
    for scheme in ("s3", "s3a", "s3n", "S3A"):
        loc = parse_uri(f"{scheme}://bkt/data/in/")
        assert (loc.scheme, loc.bucket, loc.key) == ("s3", "bkt", "data/in/")
        assert loc.root == "s3://bkt/data/in"
        assert loc.original == f"{scheme}://bkt/data/in/"
    assert parse_uri("s3a://bkt").root == "s3://bkt"
    assert parse_uri("s3://bkt/").key == ""
    # S3 keys are literal: no URL decoding, ? and # are part of the key
    assert parse_uri("s3://bkt/a%20b?x#y").key == "a%20b?x#y"


@pytest.mark.parametrize("uri", ["gs://bkt/x", "hdfs://nn:8020/x", "http://h/x", "abfss://c@a/x"])
def test_unknown_scheme_names_uri_and_supported_schemes(uri: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_uri(uri)
    assert uri in str(err.value)
    assert "s3://" in str(err.value) and "file://" in str(err.value)


@pytest.mark.parametrize("uri", ["s3://", "s3:///key", "s3:/bkt/key", "", "   "])
def test_malformed_locations(uri: str) -> None:
    with pytest.raises(ConfigError):
        parse_uri(uri)


# --- listing -----------------------------------------------------------------------------------


def test_listing_order_fields_and_start_time(tmp_path: Path) -> None:
    put(tmp_path / "b.json", T0 + 5, b"12345")
    put(tmp_path / "a.json", T0 + 5, b"1")
    put(tmp_path / "z.json", T0 + 1, b"12")
    put(tmp_path / "sub" / "c.json", T0 + 3, b"123")
    before = time.time_ns() // 1_000_000
    listing = list_files(str(tmp_path) + "/")
    after = time.time_ns() // 1_000_000
    assert listing.root == str(tmp_path)
    assert listing.requests == 0
    assert before <= listing.started_ms <= after
    # (mtime, path) order: equal mtimes are ordered by path
    assert [(f.mtime, os.path.relpath(f.path, tmp_path), f.size) for f in listing.files] == [
        (T0 + 1, "z.json", 2),
        (T0 + 3, "sub/c.json", 3),
        (T0 + 5, "a.json", 1),
        (T0 + 5, "b.json", 5),
    ]
    assert all(os.path.isabs(f.path) and isinstance(f.mtime, int) for f in listing.files)
    assert listing.total_bytes == 11


def test_mtime_is_st_mtime_ns_in_whole_ms(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_text("x")
    os.utime(p, ns=(0, 1_700_000_000_123_999_999))
    [entry] = list_files(str(tmp_path)).files
    assert entry.mtime == 1_700_000_000_123


def test_file_uri_and_relative_path_list_the_same_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(tmp_path / "in" / "a.csv", T0)
    monkeypatch.chdir(tmp_path)
    a = list_files("in")
    b = list_files(f"file://{tmp_path}/in/")
    assert a.root == b.root == str(tmp_path / "in")
    assert a.files == b.files


def test_recurse_on_and_off(tmp_path: Path) -> None:
    put(tmp_path / "top.csv", T0)
    put(tmp_path / "d1" / "mid.csv", T0 + 1)
    put(tmp_path / "d1" / "d2" / "deep.csv", T0 + 2)
    put(tmp_path / "year=2024" / "p.csv", T0 + 3)
    assert rel(list_files(str(tmp_path)).files, tmp_path) == [
        "top.csv", "d1/mid.csv", "d1/d2/deep.csv", "year=2024/p.csv"
    ]
    assert rel(list_files(str(tmp_path), recurse=False).files, tmp_path) == ["top.csv"]


def test_hidden_files_and_folders_are_skipped_like_spark(tmp_path: Path) -> None:
    put(tmp_path / "keep.parquet", T0)
    put(tmp_path / "_SUCCESS", T0)
    put(tmp_path / ".keep.parquet.crc", T0)
    put(tmp_path / "_temporary" / "0" / "part-0.parquet", T0)
    put(tmp_path / ".spark-staging" / "x.parquet", T0)
    put(tmp_path / "copy.csv._COPYING_", T0)
    put(tmp_path / "_year=2024" / "in_partition.csv", T0 + 1)  # "_" + "=": a partition folder
    put(tmp_path / "d" / "_metadata", T0)
    put(tmp_path / "d" / "ok_name_.csv", T0 + 2)
    assert rel(list_files(str(tmp_path)).files, tmp_path) == [
        "keep.parquet", "_year=2024/in_partition.csv", "d/ok_name_.csv"
    ]


def test_hidden_rule_does_not_apply_to_the_root_itself(tmp_path: Path) -> None:
    root = tmp_path / "_staging" / ".out"
    put(root / "a.csv", T0)
    assert rel(list_files(str(root)).files, root) == ["a.csv"]


def test_single_file_lists_just_that_file(tmp_path: Path) -> None:
    p = put(tmp_path / "one.json", T0 + 7, b"abc")
    put(tmp_path / "other.json", T0)
    listing = list_files(str(p))
    assert listing.root == str(p)
    assert listing.files == [FileEntry(T0 + 7, str(p), 3)]
    # named explicitly, a hidden-looking file is still listed
    hidden = put(tmp_path / "_SUCCESS", T0)
    assert [f.path for f in list_files(str(hidden)).files] == [str(hidden)]


def test_missing_path_error_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "in"
    with pytest.raises(SourceError, match="nope/in"):
        list_files(str(missing))
    with pytest.raises(SourceError, match="nope"):
        check_source(str(missing))
    put(tmp_path / "file.txt", T0)
    with pytest.raises(SourceError, match="file.txt/sub"):
        list_files(str(tmp_path / "file.txt" / "sub"))


def test_check_source_accepts_existing_paths(tmp_path: Path) -> None:
    assert check_source(str(tmp_path)).root == str(tmp_path)
    with pytest.raises(ConfigError, match="gs://"):
        check_source("gs://bkt/x")


def test_empty_folder_lists_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert list_files(str(tmp_path / "empty")).files == []


def test_symlinked_folders_are_followed_once_even_in_a_cycle(tmp_path: Path) -> None:
    put(tmp_path / "real" / "a.csv", T0)
    (tmp_path / "real" / "loop").symlink_to(tmp_path / "real")
    assert rel(list_files(str(tmp_path / "real")).files, tmp_path / "real") == ["a.csv"]


def test_broken_file_links_are_listed_for_the_run_to_set_aside(tmp_path: Path) -> None:
    """A dangling link or a loop of links does not fail the listing or vanish from it: it is
    listed (size 0, the link's mtime) and the run that plans it sets it aside."""
    put(tmp_path / "real" / "a.csv", T0)
    (tmp_path / "real" / "dangling.csv").symlink_to(tmp_path / "missing.csv")
    (tmp_path / "real" / "self.csv").symlink_to(tmp_path / "real" / "self.csv")
    (tmp_path / "real" / "x.csv").symlink_to(tmp_path / "real" / "y.csv")
    (tmp_path / "real" / "y.csv").symlink_to(tmp_path / "real" / "x.csv")
    listed = list_files(str(tmp_path / "real")).files
    assert rel(listed, tmp_path / "real") == ["a.csv", "dangling.csv", "self.csv", "x.csv",
                                              "y.csv"]
    assert [f.size for f in listed if not f.path.endswith("a.csv")] == [0, 0, 0, 0]


def _list_as_unprivileged_user(path: str) -> str:
    """List ``path`` in a forked child that dropped root's rights (root ignores permission
    bits); returns ``"SourceError: <message>"`` or ``"listed"``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        status = 0
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            try:
                list_files(path)
                result = "listed"
            except SourceError as exc:
                result = f"SourceError: {exc}"
            os.write(write_fd, result.encode())
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            os.write(write_fd, f"child failed: {exc!r}".encode())
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    return out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX permissions")
def test_unreadable_folder_raises_source_error_naming_it() -> None:
    base = Path(tempfile.mkdtemp(prefix="lakemark-perm-", dir="/tmp"))
    locked = base / "locked"
    try:
        base.chmod(0o755)
        put(base / "ok.csv", T0)
        put(locked / "secret.csv", T0)
        locked.chmod(0o000)
        if os.geteuid() == 0:
            out = _list_as_unprivileged_user(str(base))
        else:
            with pytest.raises(SourceError) as err:
                list_files(str(base))
            out = f"SourceError: {err.value}"
        assert out.startswith("SourceError:"), out
        assert str(locked) in out
    finally:
        locked.chmod(0o755)
        shutil.rmtree(base)


# --- exclusions --------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for i, name in enumerate(
        ["a.json", "a.csv", "logs/l.txt", "logs/deep/d.json", "data/x/y.json", "data/x/y.csv",
         "data/keep.json"]
    ):
        put(tmp_path / name, T0 + i)
    return tmp_path


def test_exclusions_double_star_crosses_folders(tree: Path) -> None:
    files = list_files(str(tree), exclusions=["**.json"]).files
    assert rel(files, tree) == ["a.csv", "logs/l.txt", "data/x/y.csv"]


def test_exclusions_single_star_stays_in_one_folder(tree: Path) -> None:
    files = list_files(str(tree), exclusions=["*.json"]).files
    assert rel(files, tree) == [
        "a.csv", "logs/l.txt", "logs/deep/d.json", "data/x/y.json", "data/x/y.csv", "data/keep.json"
    ]
    files = list_files(str(tree), exclusions=["data/*/*.json"]).files
    assert "data/x/y.json" not in rel(files, tree) and "data/keep.json" in rel(files, tree)


def test_exclusions_as_glue_json_string(tree: Path) -> None:
    files = list_files(str(tree), exclusions='["**.json", "logs/**"]').files
    assert rel(files, tree) == ["a.csv", "data/x/y.csv"]
    # a plain string is one pattern
    assert rel(list_files(str(tree), exclusions="logs/**").files, tree) == [
        "a.json", "a.csv", "data/x/y.json", "data/x/y.csv", "data/keep.json"
    ]


def test_exclusions_match_the_full_path_too(tree: Path) -> None:
    files = list_files(str(tree), exclusions=[f"{tree}/data/**"]).files
    assert rel(files, tree) == ["a.json", "a.csv", "logs/l.txt", "logs/deep/d.json"]


def test_exclusions_classes_braces_and_leading_double_star(tree: Path) -> None:
    files = list_files(str(tree), exclusions=["**/*.{json,txt}"]).files
    assert rel(files, tree) == ["a.csv", "data/x/y.csv"]  # **/ also matches the top level
    files = list_files(str(tree), exclusions=["a.[!j]*", "?ogs/**"]).files
    assert rel(files, tree) == ["a.json", "data/x/y.json", "data/x/y.csv", "data/keep.json"]


def test_exclusions_apply_to_a_single_file_and_with_recurse_off(tree: Path) -> None:
    assert list_files(str(tree / "a.json"), exclusions=["*.json"]).files == []
    assert rel(list_files(str(tree), recurse=False, exclusions=["*.csv"]).files, tree) == ["a.json"]


@pytest.mark.parametrize(
    "bad", ['["**.json"', "[1, 2]", '{"a": 1}', '["ok", ""]', ["a{b"], ["[abc"]]
)
def test_invalid_exclusions_are_config_errors_naming_the_option(bad: object) -> None:
    with pytest.raises(ConfigError, match="exclusions"):
        parse_exclusions(bad)  # type: ignore[arg-type]


def test_invalid_exclusions_fail_before_listing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="exclusions"):
        list_files(str(tmp_path / "missing"), exclusions="[not json")


def test_empty_exclusions_exclude_nothing() -> None:
    for value in ((), [], "", "[]"):
        assert not parse_exclusions(value)
        assert not parse_exclusions(value).excludes("a.json", "/x/a.json")


# --- partitions --------------------------------------------------------------------------------


def test_partition_values_between_root_and_file() -> None:
    assert partition_values("/data/t", "/data/t/year=2024/month=07/part-0.parquet") == {
        "year": "2024", "month": "07"
    }
    assert partition_values("/data/t/", "/data/t/x/city=S%C3%A3o%20Paulo/f.csv") == {
        "city": "São Paulo"
    }
    assert partition_values("/data/t", "/data/t/f.csv") == {}
    assert partition_values("/data/t", "/data/t/k=v=w/a=b.csv") == {"k": "v=w"}  # not the file
    assert partition_values("/data/t", "/data/t/=x/f") == {}
    # folders above the root are not partitions of this source
    assert partition_values("/data/year=1999/t", "/data/year=1999/t/day=3/f") == {"day": "3"}


def test_partition_values_across_s3_schemes() -> None:
    assert partition_values("s3a://b/t/", "s3://b/t/dt=2024-01-01/f.json") == {"dt": "2024-01-01"}
    assert partition_values("s3://b", "s3://b/p=1/f") == {"p": "1"}
    with pytest.raises(ConfigError):
        partition_values("s3://b/t", "s3://other/t/p=1/f")
    with pytest.raises(ConfigError):
        partition_values("/data/t", "/data/tt/p=1/f")


def test_partition_values_of_listed_files(tmp_path: Path) -> None:
    put(tmp_path / "year=2024" / "day=01" / "a.csv", T0)
    [entry] = list_files(str(tmp_path)).files
    assert partition_values(str(tmp_path), entry.path) == {"year": "2024", "day": "01"}


# --- arrow and misc ----------------------------------------------------------------------------


def test_arrow_filesystem_for_local_paths(tmp_path: Path) -> None:
    p = put(tmp_path / "f.bin", T0, b"payload")
    fs, path = arrow_filesystem(f"file://{p}")
    assert path == str(p)
    with fs.open_input_file(path) as fh:
        assert fh.read() == b"payload"
    assert arrow_fs_config(str(p)) == {"kind": "local"}


def test_list_files_after_is_s3_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="S3"):
        list_files_after(str(tmp_path), "a")


def test_source_errors_carry_the_path_as_a_field(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(SourceError) as caught:
        list_files(str(missing))
    assert caught.value.uri == str(missing)


def test_errors_about_one_place_name_it_without_credentials() -> None:
    from lakemark.catalog._types import TypeSyntaxError
    from lakemark.errors import SinkError

    assert issubclass(TypeSyntaxError, ConfigError) and issubclass(TypeSyntaxError, ValueError)
    err = SinkError("cannot write", target="s3://AKIALKMKTEST00000099:secretpart@b/t")
    assert "AKIALKMKTEST00000099" not in (err.target or "")
    assert SourceError("x").uri is None
