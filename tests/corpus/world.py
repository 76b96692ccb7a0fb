"""The small world one corpus script runs in: data folders, a catalog folder, a state store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).parent / "scripts"


class World:
    """Everything under one temporary folder; ``run`` calls ``lakemark run`` as a user would."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        self.state = f"sqlite:///{tmp / 'state.db'}"
        self.catalog = tmp / "connection" / "catalog"
        (self.catalog / "tables").mkdir(parents=True, exist_ok=True)
        self.env = dict(env or {})
        self.databases: list[str] = []
        self.seed: dict[str, Any] = {}  # what a case leaves for its later runs

    def folder(self, name: str, files: dict[str, str]) -> Path:
        """A data folder with ``files`` (relative path → text)."""
        root = self.tmp / name
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return root

    def table(self, database: str, name: str, location: Path, classification: str,
              columns: list[tuple[str, str]] = (), partition_keys: list[tuple[str, str]] = (),
              parameters: dict[str, str] | None = None, serde: str | None = None,
              serde_parameters: dict[str, str] | None = None) -> None:
        """A catalog table as a Glue crawler records it."""
        if database not in self.databases:
            self.databases.append(database)
        (self.catalog / "databases.json").write_text(
            json.dumps({"DatabaseList": [{"Name": d} for d in self.databases]}))
        serdes = {"csv": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                  "json": "org.openx.data.jsonserde.JsonSerDe",
                  "parquet": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}
        entry = {
            "Name": name, "DatabaseName": database, "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {
                "Columns": [{"Name": n, "Type": t} for n, t in columns],
                "Location": str(location) + "/",
                "SerdeInfo": {"SerializationLibrary": serde or serdes[classification],
                              "Parameters": serde_parameters or {}},
            },
            "PartitionKeys": [{"Name": n, "Type": t} for n, t in partition_keys],
            "Parameters": {"classification": classification, **(parameters or {})},
        }
        path = self.catalog / "tables" / f"{database}.json"
        tables = json.loads(path.read_text())["TableList"] if path.exists() else []
        path.write_text(json.dumps({"TableList": [*tables, entry]}))

    def run(self, script: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **self.env)
        cmd = [sys.executable, "-m", "lakemark", "run", "--state", self.state,
               "--catalog", str(self.catalog.parent), *self.seed.get("run_options", []),
               str(SCRIPTS / script), *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                              cwd=self.tmp)


def json_rows(folder: Path) -> list[dict[str, Any]]:
    """Every JSON-lines record of the ``.json`` data files under ``folder`` (not the hidden
    ``_``/``.`` files a committed write keeps beside them, which readers skip too)."""
    files = [f for f in sorted(folder.rglob("*.json"))
             if not any(part.startswith(("_", ".")) for part in f.relative_to(folder).parts)]
    return [json.loads(line) for f in files for line in f.read_text().splitlines()
            if line.strip()]


def parquet_rows(folder: Path) -> list[dict[str, Any]]:
    """Every record of the parquet files under ``folder`` (hive partition columns included)."""
    import pyarrow.dataset as ds

    return ds.dataset(str(folder), format="parquet", partitioning="hive").to_table().to_pylist()
