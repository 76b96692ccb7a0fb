"""Iceberg targets on real Spark with a real SQL catalog on SQLite (in tmp_path).

``job.write(df, "db.events", format="iceberg", ctx=…)``: the first write creates the table, the
next run appends, a run killed right after its sink committed (``after-sink-commit``) is
retried without appending twice, and pyiceberg reads back exactly the rows written. Bad table
names and catalogs fail with a ConfigError naming them and write nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from lakemark import Job
from lakemark.catalog._iceberg import CATALOG_ENV, WAREHOUSE_ENV
from lakemark.errors import ConfigError, SinkError
from lakemark.sinks._iceberg import APP_ID_KEY, APP_VERSION_KEY
from lakemark.state import open_store

pytestmark = pytest.mark.spark

SRC = Path(__file__).resolve().parents[2] / "src"
KILLED = -9


class Lake:
    """Source folder, state store and an Iceberg SQL catalog: SQLite in tmp_path, or (``pg``)
    the machine's PostgreSQL with a namespace of its own and the warehouse in tmp_path."""

    def __init__(self, tmp: Path, pg_user: str | None = None) -> None:
        self.tmp = tmp
        self.src = tmp / "in"
        self.src.mkdir()
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.warehouse = (tmp / "iceberg" / "warehouse").as_uri()
        self.name = "db.events"
        self.catalog = f"sqlite:///{tmp / 'iceberg' / 'catalog.db'}"
        self.uri = self.catalog
        if pg_user is not None:
            from pgtest import DATABASE, HOST, PORT

            self.name = f"lm{uuid.uuid4().hex[:12]}.events"
            self.catalog = f"postgresql://{pg_user}@{HOST}:{PORT}/{DATABASE}"
            self.uri = self.catalog.replace("postgresql://", "postgresql+psycopg://")

    def arrive(self, first: int, n: int) -> None:
        path = self.src / f"f{first:05d}.json"
        path.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n"
                                for i in range(first, first + n)))
        now = time.time()
        os.utime(path, (now, now))

    def iceberg(self) -> SqlCatalog:
        return SqlCatalog("lakemark", uri=self.uri, warehouse=self.warehouse)

    def table(self) -> Any:
        return self.iceberg().load_table(self.name)

    def ids(self) -> list[int]:
        return sorted(self.table().scan().to_arrow().column("id").to_pylist())

    def summaries(self) -> list[dict[str, str]]:
        return [dict(s.summary.additional_properties) for s in self.table().snapshots()]

    def sinks(self, run_id: str) -> list[str]:
        store = open_store(self.state)
        try:
            return [i.ctx for i in store.run_inputs(run_id) if i.ctx.startswith("sink:")]
        finally:
            store.close()

    def run(self, **read: Any) -> Any:
        """One run: read the new files of ctx ``src`` (a tracked schema unless ``read`` says
        otherwise) and append them to ``db.events``."""
        with Job("j", state=self.state) as job:
            df = job.read_files(str(self.src), format="json", ctx="src", **read)
            return job.write(df, self.name, format="iceberg", ctx="events",
                             iceberg_catalog=self.catalog)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_lake(request: pytest.FixtureRequest, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Lake]:
    """The same behaviour on both SQL catalog backends."""
    if request.param == "sqlite":
        yield Lake(tmp_path)
        return
    from pgtest import need_postgres

    lake = Lake(tmp_path, need_postgres())
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "iceberg" / "warehouse"))
    yield lake
    catalog = lake.iceberg()  # the shared database keeps no test's tables
    namespace = lake.name.split(".")[0]
    for identifier in catalog.list_tables(namespace):
        catalog.drop_table(identifier)
    catalog.drop_namespace(namespace)


def test_first_write_creates_and_next_run_appends(spark: Any, any_lake: Lake) -> None:
    lake = any_lake
    lake.arrive(0, 3)
    first = lake.run()
    lake.arrive(3, 2)
    second = lake.run()
    assert (first.rows, first.skipped, second.rows, second.skipped) == (3, False, 2, False)
    assert lake.ids() == [0, 1, 2, 3, 4]
    schema = lake.table().schema()
    assert [f.name for f in schema.fields] == ["id", "name", "_rescued_data"]
    tokens = [(s[APP_ID_KEY], s[APP_VERSION_KEY]) for s in lake.summaries()]
    assert tokens == [("j/events", "1"), ("j/events", "2")]
    read = spark.read.format("iceberg").option("iceberg_catalog", lake.catalog).load(lake.name)
    assert sorted(r.id for r in read.collect()) == [0, 1, 2, 3, 4]  # read through the catalog


def test_explicit_token_is_not_appended_twice(spark: Any, lake: Lake) -> None:
    from lakemark.sinks import IdempotencyToken, write_target

    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    token = IdempotencyToken("daily", 7)
    first = write_target(spark, df, "db.events", format="iceberg", token=token,
                         iceberg_catalog=lake.catalog)
    again = write_target(spark, df, "db.events", format="iceberg", token=token,
                         iceberg_catalog=lake.catalog)
    older = write_target(spark, df, "db.events", format="iceberg",
                         token=IdempotencyToken("daily", 6), iceberg_catalog=lake.catalog)
    assert (first.skipped, again.skipped, older.skipped) == (False, True, True)
    assert lake.ids() == [1, 2]
    assert len(lake.summaries()) == 1


def _killed_run(lake: Lake, fault: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(f"""
        from lakemark import Job
        from lakemark.spark import get_spark
        spark = get_spark("local[1]")
        with Job("j", state={lake.state!r}, spark=spark) as job:
            df = job.read_files({str(lake.src)!r}, format="json", ctx="src")
            job.write(df, {lake.name!r}, format="iceberg", ctx="events",
                      iceberg_catalog={lake.catalog!r})
    """)
    env = {**os.environ, "LAKEMARK_FAULT": fault, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)


def test_retry_after_sink_commit_does_not_append_twice(spark: Any, any_lake: Lake) -> None:
    lake = any_lake
    lake.arrive(0, 3)
    killed = _killed_run(lake, "after-sink-commit")
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert lake.ids() == [0, 1, 2]  # committed, the run not
    lake.arrive(3, 2)  # arrives before the retry: the retry replays the killed attempt's input
    retry = lake.run()
    assert retry.skipped and retry.rows == 0
    assert lake.ids() == [0, 1, 2]
    after = lake.run()  # the next run takes the file that arrived meanwhile
    assert (after.skipped, after.rows) == (False, 2)
    assert lake.ids() == [0, 1, 2, 3, 4]


def test_killed_write_leaves_no_visible_data(spark: Any, lake: Lake) -> None:
    lake.arrive(0, 3)
    lake.run()
    lake.arrive(3, 2)
    killed = _killed_run(lake, "mid-write")
    assert killed.returncode == KILLED, killed.stderr[-2000:]
    assert lake.ids() == [0, 1, 2]  # files written, not committed: invisible
    retry = lake.run()
    assert (retry.skipped, retry.rows) == (False, 2)
    assert lake.ids() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("name", ["events", "a.b.c.d", "db..t", "db.ev ents", ".t"])
def test_bad_table_name_is_refused_naming_it(spark: Any, lake: Lake, name: str) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    with Job("j", state=lake.state) as job:
        with pytest.raises(ConfigError) as caught:
            job.write(df, name, format="iceberg", ctx="events", iceberg_catalog=lake.catalog)
        run_id = job.run_id
    assert repr(name) in str(caught.value)
    assert not (lake.tmp / "iceberg").exists()
    assert lake.sinks(run_id) == []  # refused before the write was recorded


@pytest.mark.parametrize(("catalog", "named"), [
    ("nosuchcatalog", "'nosuchcatalog'"),
    ("mysql://h/db", "'mysql://h/db'"),
    ("sqlite:///", "'sqlite:///'"),
])
def test_bad_catalog_is_refused_naming_it(spark: Any, lake: Lake, catalog: str,
                                          named: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_HOME", str(lake.tmp))  # no user configuration
    df = spark.createDataFrame([(1,)], "id long")
    with Job("j", state=lake.state) as job, pytest.raises(ConfigError) as caught:
        job.write(df, "db.events", format="iceberg", ctx="events", iceberg_catalog=catalog)
    assert named in str(caught.value)
    monkeypatch.setenv(CATALOG_ENV, catalog)
    with Job("j2", state=lake.state) as job, pytest.raises(ConfigError, match=CATALOG_ENV):
        job.write(df, "db.events", format="iceberg", ctx="events")
    assert not (lake.tmp / "iceberg").exists()


def test_schema_mismatch_writes_nothing(spark: Any, lake: Lake) -> None:
    lake.arrive(0, 2)
    lake.run()
    df = spark.createDataFrame([(1, 2)], "id long, other long")
    with Job("j", state=lake.state) as job, pytest.raises(SinkError, match="'other'"):
        job.write(df, "db.events", format="iceberg", ctx="x", iceberg_catalog=lake.catalog)
    assert lake.ids() == [0, 1]
    data = lake.tmp / "iceberg" / "warehouse" / "db.db" / "events" / "data"
    assert len(list(data.glob("*.parquet"))) == 1


def test_corrupt_records_are_kept_in_the_table_folder(spark: Any, lake: Lake) -> None:
    (lake.src / "a.json").write_text(
        '{"id": 1, "name": "a"}\n{not json\n{"id": 2, "name": "b"}\n')
    result = lake.run(schema_evolution="off")  # tracked, the line would be rescued data
    assert result.rows == 2 and lake.ids() == [1, 2]
    assert [f.name for f in lake.table().schema().fields] == ["id", "name"]
    kept = list((lake.tmp / "iceberg" / "warehouse" / "db.db" / "events"
                 / "_lakemark_rejected").glob("*.jsonl"))
    assert len(kept) == 1 and "{not json" in kept[0].read_text()


def test_ingest_files_cli_appends_to_an_iceberg_table(spark: Any, lake: Lake) -> None:
    from click.testing import CliRunner

    from lakemark.cli import cli

    def ingest(*extra: str) -> Any:
        return CliRunner().invoke(cli, ["ingest", "files", str(lake.src), "--job", "c",
                                        "--state", lake.state, "--json", *extra],
                                  catch_exceptions=False)

    table = ("--target-format", "iceberg", "--table", "db.events",
             "--iceberg-catalog", lake.catalog)
    lake.arrive(0, 3)
    for extra, needle in [(("--target-format", "iceberg"), "--table"),
                          (("--table", "db.events"), "iceberg only"),
                          ((str(lake.tmp / "t"), *table), "not both")]:
        refused = ingest(*extra)
        assert refused.exit_code == 2 and needle in refused.output, refused.output
    first = ingest(*table)
    assert first.exit_code == 0, first.output
    lake.arrive(3, 2)
    second = json.loads(ingest(*table).stdout)
    assert (json.loads(first.stdout)["rows"], second["rows"]) == (3, 2)
    assert second["target"] == "db.events" and second["target_format"] == "iceberg"
    assert lake.ids() == [0, 1, 2, 3, 4]
    assert [s[APP_ID_KEY] for s in lake.summaries()] == ["c/target", "c/target"]
