"""`ingest files --conf KEY=VALUE`: Spark settings for the session the run starts; a malformed
pair or a key that is not a Spark setting is refused by name before any state exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_process import lakemark

from lakemark.ingest import IngestOptionError, IngestOptions


@pytest.mark.parametrize(("pair", "says"), [
    ("foo", "--conf 'foo' is not a setting"),
    ("=hunter2", "--conf '=…' is not a setting"),
    ("spark.master=local[1]", "--conf spark.master is set by lakemark (use --master)"),
    ("ui.enabled=true", "--conf 'ui.enabled' is not a Spark setting"),
    ("spark ui=true", "--conf 'spark ui' is not a Spark setting"),
])
def test_a_bad_pair_is_refused_by_name_before_any_state(tmp_path: Path, pair: str,
                                                        says: str) -> None:
    (tmp_path / "in").mkdir()
    out = lakemark("ingest", "files", str(tmp_path / "in"), str(tmp_path / "lake"), "--job",
                   "j", "--state", f"sqlite:///{tmp_path / 's.db'}", "--conf", pair)
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "hunter2" not in out.stderr
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "lake").exists()


def test_the_library_checks_the_keys_too() -> None:
    opts = IngestOptions(source="/in", target="/out", job_name="j",
                         spark_conf={"spark.app.name": "x"})
    with pytest.raises(IngestOptionError, match="--conf spark.app.name is set by lakemark"):
        opts.check_spark_conf()
    IngestOptions(source="/in", target="/out", job_name="j",
                  spark_conf={"spark.ui.enabled": "true"}).check_spark_conf()


def test_the_settings_reach_the_session_the_run_starts(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text('{"id": 1}\n{"id": 2}\n{"id": 3}\n')
    out = lakemark("ingest", "files", str(tmp_path / "in"), str(tmp_path / "lake"), "--job",
                   "j", "--state", f"sqlite:///{tmp_path / 's.db'}", "--target-format",
                   "parquet", "--conf", "spark.sql.files.maxRecordsPerFile=1", "--json")
    assert out.returncode == 0, out.stderr
    # Spark's writer cut one file per record: the setting was in the session
    assert len(list((tmp_path / "lake").glob("part-*.parquet"))) == 3
