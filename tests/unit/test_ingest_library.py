"""``lakemark.ingest``: the options of ``lakemark ingest files`` checked as a whole, and a run
as a library call (an empty source: no Spark is started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakemark.ingest import IngestOptionError, IngestOptions, ingest_files
from lakemark.state import open_store


@pytest.mark.parametrize(("changes", "message"), [
    ({"txn_app_id": "a"}, "--txn-version is missing"),
    ({"txn_app_id": "a", "txn_version": 1, "target_format": "parquet"}, "and Iceberg targets only"),
    ({"merge_schema": True, "target_format": "csv"}, "--merge-schema applies"),
    ({"schema_evolution": "rescue", "format": "parquet"}, "json, csv, xml, avro sources"),
    ({"schema_hints": "id bigint", "format": "parquet"}, r"not tracked \(--format parquet\)"),
    ({"schema_hints": "id bigint", "schema_evolution": "off"},
     r"not tracked \(--schema-evolution off\)"),
    ({"schema_hints": "id bigint", "merge_keys": ("id",)}, r"not tracked \(--merge-key\)"),
    ({"order_by": "ts"}, "go with --merge-key"),
    ({"merge_keys": ("id",), "partition_by": ("d",)}, "cannot be combined with --partition-by"),
    ({"incremental_listing": True}, "applies to S3 sources"),
])
def test_options_that_cannot_go_together(tmp_path: Path, changes: dict[str, object],
                                         message: str) -> None:
    options = IngestOptions(str(tmp_path), str(tmp_path / "out"), "layers-ingest", **changes)
    with pytest.raises(IngestOptionError, match=message):
        options.check()


def test_writer_options() -> None:
    options = IngestOptions("s", "t", "j", txn_app_id="app", txn_version=3, merge_schema=True)
    assert options.writer_options() == {"txnAppId": "app", "txnVersion": "3",
                                        "mergeSchema": "true"}


def test_a_run_with_nothing_new_commits_without_spark(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    stages: list[str] = []
    done = ingest_files(IngestOptions(str(tmp_path / "in"), str(tmp_path / "out"),
                                      "layers-ingest"), store,
                        on_event=lambda event: stages.append(event.stage))
    out = done.to_json()
    assert (out["status"], out["files"], out["rows"], out["bookmark_version"]) == (
        "SUCCEEDED", 0, 0, 1)
    assert stages[0] == "started" and "committed" in stages and done.write is None
    store.close()


def test_bad_planner_options_fail_the_check(tmp_path: Path) -> None:
    from lakemark.errors import ConfigError

    for bad in ({"max_band_ms": -5}, {"bounded_files": 0}):
        with pytest.raises(ConfigError):
            IngestOptions(str(tmp_path), str(tmp_path / "out"), "j", **bad).check()  # type: ignore[arg-type]
