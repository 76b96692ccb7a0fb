"""lakemark's Hadoop catalog for pyiceberg (issue 32): the folder layout of Iceberg's
HadoopCatalog (``<warehouse>/<ns>/<table>/metadata/v<N>.metadata.json`` + ``version-hint.text``),
read when another writer made it (a lagging or missing hint included), written the same way,
a concurrent commit refused, and what Iceberg's HadoopCatalog refuses refused too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError, TableAlreadyExistsError

from lakemark.catalog._iceberg_spark import HADOOP_IMPL

ROWS = pa.schema([pa.field("id", pa.int64())])


def hadoop(warehouse: Path):  # type: ignore[no-untyped-def]
    return load_catalog("local", **{"py-catalog-impl": HADOOP_IMPL,
                                    "warehouse": str(warehouse)})


def ids(table) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_writes_the_hadoop_layout(tmp_path: Path) -> None:
    catalog = hadoop(tmp_path)
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", ROWS)
    table.append(pa.table({"id": [1, 2]}, schema=ROWS))
    catalog.load_table("db.events").append(pa.table({"id": [3]}, schema=ROWS))
    metadata = tmp_path / "db" / "events" / "metadata"
    assert sorted(p.name for p in metadata.glob("v*.metadata.json")) == [
        "v1.metadata.json", "v2.metadata.json", "v3.metadata.json"]
    assert (metadata / "version-hint.text").read_text() == "3"
    loaded = catalog.load_table("db.events")
    assert ids(loaded) == [1, 2, 3] and loaded.location() == str(tmp_path / "db" / "events")
    # the metadata log names the earlier files, as Iceberg's does
    assert [Path(e.metadata_file).name for e in loaded.metadata.metadata_log] == [
        "v1.metadata.json", "v2.metadata.json"]
    assert catalog.list_tables("db") == [("db", "events")]
    assert catalog.list_namespaces() == [("db",)]
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.events", ROWS)


def _made_elsewhere(warehouse: Path) -> Path:
    """A table laid out as Iceberg's HadoopCatalog lays it out, its metadata written by another
    writer (pyiceberg's SQL catalog at the same location), versions 1 and 2, hint at 1."""
    other = SqlCatalog("o", uri=f"sqlite:///{warehouse / 'o.db'}", warehouse=warehouse.as_uri())
    other.create_namespace("db")
    folder = warehouse / "db" / "clicks"
    table = other.create_table("db.clicks", ROWS, location=str(folder))
    metadata = folder / "metadata"
    shutil.copy(table.metadata_location.removeprefix("file://"), metadata / "v1.metadata.json")
    table.append(pa.table({"id": [7]}, schema=ROWS))
    shutil.copy(other.load_table("db.clicks").metadata_location.removeprefix("file://"),
                metadata / "v2.metadata.json")
    (metadata / "version-hint.text").write_text("1\n")
    return metadata


def test_reads_a_table_another_writer_made_and_walks_past_a_lagging_hint(tmp_path: Path
                                                                         ) -> None:
    metadata = _made_elsewhere(tmp_path)
    catalog = hadoop(tmp_path)
    table = catalog.load_table("db.clicks")
    assert table.metadata_location.endswith("v2.metadata.json") and ids(table) == [7]
    (metadata / "version-hint.text").unlink()  # no hint: the highest version
    assert ids(catalog.load_table("db.clicks")) == [7]
    table.append(pa.table({"id": [8]}, schema=ROWS))
    assert (metadata / "version-hint.text").read_text() == "3"
    assert ids(catalog.load_table("db.clicks")) == [7, 8]


def test_a_stale_writer_is_rebased_and_an_existing_version_is_never_overwritten(
        tmp_path: Path) -> None:
    catalog = hadoop(tmp_path)
    catalog.create_namespace("db")
    catalog.create_table("db.t", ROWS)
    first, second = catalog.load_table("db.t"), catalog.load_table("db.t")
    first.append(pa.table({"id": [1]}, schema=ROWS))
    # the second writer's view is stale: its commit fails, pyiceberg retries it on the new
    # version (an append does not conflict), and no row is lost
    second.append(pa.table({"id": [2]}, schema=ROWS))
    assert ids(catalog.load_table("db.t")) == [1, 2]
    metadata = tmp_path / "db" / "t" / "metadata"
    winner = (metadata / "v3.metadata.json").read_bytes()
    with pytest.raises(CommitFailedException, match="version 3 exists"):
        catalog._publish(tmp_path / "db" / "t", 3, first.metadata, "db.t")
    assert (metadata / "v3.metadata.json").read_bytes() == winner
    assert (metadata / "version-hint.text").read_text() == "3"
    assert not [p for p in metadata.iterdir() if p.name.startswith(".")]


def test_what_icebergs_hadoop_catalog_refuses(tmp_path: Path) -> None:
    catalog = hadoop(tmp_path)
    catalog.create_namespace("db")
    with pytest.raises(ValueError, match="custom location"):
        catalog.create_table("db.t", ROWS, location=str(tmp_path / "elsewhere"))
    with pytest.raises(ValueError, match="no properties"):
        catalog.create_namespace("db2", {"owner": "me"})
    catalog.create_table("db.t", ROWS)
    with pytest.raises(NotImplementedError, match="rename"):
        catalog.rename_table("db.t", "db.u")
    catalog.drop_table("db.t")
    assert not (tmp_path / "db" / "t").exists()
    with pytest.raises(NoSuchTableError):
        catalog.load_table("db.t")
