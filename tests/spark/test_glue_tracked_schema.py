"""A Glue source with a tracked schema (lakemark's ``schemaEvolutionMode`` connection option):
the columns and types stay from run to run, new columns appear, and a value that does not fit
its column is a Glue choice for ``resolveChoice`` — not a rescued value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakemark.glue import GlueContext
from lakemark.glue._choicetype import is_choice, members

pytestmark = pytest.mark.spark


def test_drift_under_glue_is_choices_and_new_columns(spark: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from lakemark.errors import ConfigError
    from lakemark.glue.job import Job

    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 'state.db'}")
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text('{"id": 1, "code": 5}\n{"id": 2, "code": 6}\n')
    glue = GlueContext(spark.sparkContext)
    options = {"paths": [str(src)], "schemaEvolutionMode": "addNewColumns"}

    def read(ctx: str = "src") -> Any:
        return glue.create_dynamic_frame.from_options(
            connection_type="s3", connection_options=options, format="json",
            transformation_ctx=ctx)

    with pytest.raises(ConfigError, match="transformation_ctx and a started job"):
        read()  # no Job.init: nothing can be tracked
    job = Job(glue)
    job.init("drift", {"job_bookmark_option": "job-bookmark-enable"})
    first = read()
    assert [(f.name, f.dataType.simpleString()) for f in first.schema().fields] == [
        ("code", "bigint"), ("id", "bigint")]  # nothing rescued: no choice, no extra column
    job.commit()

    (src / "b.json").write_text('{"id": 3, "code": "X5", "extra": "e"}\n')
    (src / "c.json").write_text('{"id": 4, "code": 7}\n{not json\n')
    job = Job(glue)
    job.init("drift", {"job_bookmark_option": "job-bookmark-enable"})
    frame = read()
    fields = {f.name: f.dataType for f in frame.schema().fields}
    assert list(fields) == ["code", "id", "extra", "_rescued_data"]
    assert is_choice(fields["code"]) and [n for n, _ in members(fields["code"])] == [
        "long", "string"]
    cols = {r["id"]: r.asDict() for r in
            frame.resolveChoice(specs=[("code", "make_cols")]).toDF().collect()}
    assert sorted(cols, key=str) == [3, 4, None]
    assert [(cols[i]["code_long"], cols[i]["code_string"], cols[i]["extra"]) for i in (3, 4)] \
        == [(None, "X5", "e"), (7, None, None)]
    assert cols[3]["_rescued_data"] is None
    assert cols[4]["_rescued_data"] is None
    assert json.loads(cols[None]["_rescued_data"])["_corrupt_record"] == "{not json"
    assert json.loads(cols[None]["_rescued_data"])["_file_path"].endswith("c.json")
    job.commit()
