"""Job arguments and option translation of the Glue facade (pure Python, no Spark)."""

from __future__ import annotations

import pytest

from lakemark.errors import ConfigError, UnsupportedError
from lakemark.glue._formats import read_format, s3_source_options, write_format
from lakemark.glue.options import GlueArgumentError, bookmark_arguments, getResolvedOptions

ARGV = [
    "script.py", "--JOB_NAME", "orders", "--job-bookmark-option", "job-bookmark-enable",
    "--TempDir", "s3://tmp/", "--threshold", "-1", "--target=s3://out/x=1", "--flag",
]


def test_resolves_requested_and_reserved_arguments() -> None:
    args = getResolvedOptions(ARGV, ["JOB_NAME", "threshold", "target", "TempDir"])
    assert args["JOB_NAME"] == "orders"
    assert args["threshold"] == "-1"  # a value that starts with '-' is still a value
    assert args["target"] == "s3://out/x=1"
    assert args["TempDir"] == "s3://tmp/"
    assert args["job_bookmark_option"] == "job-bookmark-enable"
    assert "flag" not in args  # not asked for


def test_missing_required_arguments_are_all_named() -> None:
    with pytest.raises(GlueArgumentError, match="--source, --dest"):
        getResolvedOptions(ARGV, ["JOB_NAME", "source", "dest"])


def test_reserved_arguments_cannot_be_requested() -> None:
    with pytest.raises(GlueArgumentError, match="job_bookmark_option"):
        getResolvedOptions(ARGV, ["job_bookmark_option"])


def test_bookmark_default_is_disable_and_range_is_read() -> None:
    args = getResolvedOptions(["s.py", "--JOB_NAME", "j"], ["JOB_NAME"])
    assert bookmark_arguments(args) == ("job-bookmark-disable", None, None)
    argv = ["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-pause",
            "--job-bookmark-from", "jr_a", "--job-bookmark-to", "jr_b"]
    assert bookmark_arguments(getResolvedOptions(argv, ["JOB_NAME"])) == (
        "job-bookmark-pause", "jr_a", "jr_b")


def test_csv_format_options_translate() -> None:
    fmt, opts = read_format("csv", {"withHeader": True, "separator": "|", "quoteChar": "-1"})
    assert fmt == "csv"
    assert opts == {"inferSchema": "true", "header": "true", "sep": "|", "quote": ""}


def test_unknown_format_and_option_are_named() -> None:
    with pytest.raises(UnsupportedError, match="'ion'"):
        read_format("ion", {})
    with pytest.raises(UnsupportedError, match="'withHeadr'"):
        read_format("csv", {"withHeadr": True})
    with pytest.raises(ConfigError, match="rowTag"):
        read_format("xml", {})
    with pytest.raises(UnsupportedError, match="'avro'"):
        write_format("avro", {})


def test_glueparquet_writes_parquet_and_csv_writes_a_header() -> None:
    assert write_format("glueparquet", {"compression": "snappy"}) == (
        "parquet", {"compression": "snappy"})
    assert write_format("csv", {"separator": ";"}) == ("csv", {"header": "true", "sep": ";"})


def test_s3_connection_options() -> None:
    opts = s3_source_options(
        {"paths": ["s3://b/in/"], "recurse": True, "exclusions": '["**.tmp"]',
         "boundedFiles": "500", "groupFiles": "inPartition", "groupSize": "1048576"},
    )
    assert opts.paths == ["s3://b/in/"]
    assert opts.recurse is True
    assert opts.exclusions == ["**.tmp"]
    assert opts.bounded_files == 500
    with pytest.raises(UnsupportedError, match="'pathz'"):
        s3_source_options({"pathz": ["x"]})
    with pytest.raises(ConfigError, match="boundedSize"):
        s3_source_options({"boundedSize": "lots"})


def test_tracked_schema_connection_options() -> None:
    assert s3_source_options({"paths": ["s3://b/x"]}).tracking_kwargs() == {}
    tracked = s3_source_options({"schemaEvolutionMode": "rescue"},
                                {"rescuedDataColumn": "_bad", "schemaHints": "id bigint"})
    assert tracked.tracking_kwargs() == {"schema_evolution": "rescue",
                                         "rescued_data_column": "_bad",
                                         "schema_hints": "id bigint"}
    with pytest.raises(ConfigError, match="go with schemaEvolutionMode"):
        s3_source_options({"schemaHints": "id bigint"}).tracking_kwargs()


def test_glue_data_quality_import_fails_naming_it() -> None:
    import importlib
    import sys

    import pytest

    from lakemark.errors import UnsupportedError
    from lakemark.glue import shim_path

    sys.path.insert(0, shim_path())
    try:
        with pytest.raises(UnsupportedError, match="awsgluedq"):
            importlib.import_module("awsgluedq")
    finally:
        sys.path.remove(shim_path())
        sys.modules.pop("awsgluedq", None)


def test_on_modified_connection_option_reaches_the_planner() -> None:
    """Glue scripts choose what a run does with a file taken before that changed."""
    assert s3_source_options({"onModified": "skip"}).planner_kwargs()["on_modified"] == "skip"
    assert "on_modified" not in s3_source_options({}).planner_kwargs()
