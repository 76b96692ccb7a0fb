"""Issue 31, "nothing vanishes": generated JSON whose nested shape drifts run after run.

A fixed-seed generator grows a record shape over several runs — new fields inside structs at
any depth, inside the structs of an array, inside the structs of a map's values, whole new
nested structs — writes records of the shape of the moment (fields missing or null at
random, now and then a value of the wrong type, now and then a top-level key in another case
so that its file takes the exact read path), and ingests each run into a Delta table with the
tracked schema. Then every leaf value of every input record must be in the table at its path,
or in ``_rescued_data`` (under its column, inside the rescued text at the same path): no value
may vanish. The default suite runs one seed in ``addNewColumns`` and one in ``rescue``; more
seeds and runs are ``-m sweep``.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from deltalake import DeltaTable

from lakemark.cli import cli

pytestmark = pytest.mark.spark

#: the map column's type, given as a hint on the first run (JSON inference makes structs)
MAP_HINT = "m map<string, struct<n: bigint>>"
Shape = dict[str, Any]  # name -> "long" | "string" | {"struct": Shape} | {"array": Shape}


class Drift:
    """The evolving shape and the records made from it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.shape: Shape = {
            "address": {"struct": {"city": "string"}},
            "items": {"array": {"sku": "string"}},
            "m": {"map": {"n": "long"}},
            "tag": "string",
        }
        self.counter = 0

    def _structs(self, shape: Shape, out: list[Shape]) -> None:
        out.append(shape)
        for value in shape.values():
            if isinstance(value, dict):
                self._structs(next(iter(value.values())), out)

    def grow(self) -> None:
        """Add one or two fields somewhere inside the nested columns (never top level)."""
        for _ in range(self.rng.randint(1, 2)):
            places: list[Shape] = []
            for column in ("address", "items", "m"):
                self._structs(next(iter(self.shape[column].values())), places)
            place = self.rng.choice(places)
            self.counter += 1
            name = f"f{self.counter}"
            kind = self.rng.choice(["long", "string", "struct", "array"])
            place[name] = ({"struct": {f"{name}x": "long"}} if kind == "struct" else
                           {"array": {f"{name}y": "string"}} if kind == "array" else kind)

    def value(self, kind: Any, depth: int = 0) -> Any:
        if self.rng.random() < 0.15:
            return None
        if kind == "long":
            return "oops" if self.rng.random() < 0.05 else self.rng.randint(-9, 99)
        if kind == "string":
            return self.rng.choice(["a", "b", "c d", "é"])
        inner = next(iter(kind.values()))
        if "struct" in kind:
            return self.obj(inner, depth + 1)
        if "array" in kind:
            return [self.obj(inner, depth + 1) for _ in range(self.rng.randint(0, 2))]
        return {f"k{i}": self.obj(inner, depth + 1) for i in range(self.rng.randint(0, 2))}

    def obj(self, shape: Shape, depth: int = 0) -> dict[str, Any]:
        return {k: self.value(v, depth) for k, v in shape.items() if self.rng.random() < 0.85}

    def record(self, id_: int, variant: bool) -> dict[str, Any]:
        out = {"id": id_, **self.obj(self.shape)}
        if variant:
            out["TAG"] = "variant"
        return out


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """The non-null leaf values of a JSON value, by path (list indexes and map keys included)."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in leaves(v, (*path, k))]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in leaves(v, (*path, i))]
    return [] if value is None else [(path, value)]


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            value = dict(value)  # a map as pyarrow gives it
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            return None
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        value = dict(value)
    return value


def found(row: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    """Whether ``value`` (the input's leaf at ``path``) is in the table row or its rescue."""
    if at(row, path) in (value, str(value)):  # a number read into a string field: its text
        return True
    rescued = json.loads(row["_rescued_data"]) if row["_rescued_data"] else {}
    line = rescued.get("_corrupt_record")  # a misfit inside an array or map: the whole line
    if line is not None and at(json.loads(line), path) == value:
        return True
    text = rescued.get(path[0])
    if text is None:
        return False
    if len(path) == 1:
        return bool(text == value or text == json.dumps(value) or text == str(value))
    return at(json.loads(text), path[1:]) == value


def drift_and_check(tmp: Path, seed: int, runs: int, mode: str) -> None:
    src, target = tmp / "in", tmp / "table"
    src.mkdir(parents=True)
    state = f"sqlite:///{tmp / 'state.db'}"
    runner = CliRunner()
    drift = Drift(seed)
    written: dict[int, dict[str, Any]] = {}
    next_id = 1
    for run in range(runs):
        if run:
            drift.grow()
        for f in range(2):
            variant = run > 0 and f == 1 and drift.rng.random() < 0.5
            rows = [drift.record(next_id + i, variant) for i in range(4)]
            next_id += len(rows)
            written.update({r["id"]: r for r in rows})
            path = src / f"r{run}_{f}.json"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            if run == 0:
                old = time.time() - 1000
                os.utime(path, (old, old))
        args = ["ingest", "files", str(src), str(target), "--job", "j", "--state", state,
                "--schema-evolution", mode, "--json"]
        if run == 0:
            args += ["--schema-hints", MAP_HINT]
        result = runner.invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    table = {r["id"]: r for r in DeltaTable(str(target)).to_pyarrow_table().to_pylist()}
    assert sorted(table) == sorted(written)
    lost = [(i, p, v) for i, record in written.items() for p, v in leaves(record)
            if not found(table[i], p, v)]
    assert lost == [], f"seed {seed}: {len(lost)} value(s) vanished, e.g. {lost[:5]}"


@pytest.mark.parametrize("mode", ["addNewColumns", "rescue"])
def test_generated_nested_drift_loses_no_value(spark: Any, tmp_path: Path, mode: str) -> None:
    drift_and_check(tmp_path, seed=31, runs=3, mode=mode)


@pytest.mark.sweep  # the full sweep: ./dev test -m sweep
def test_generated_nested_drift_sweep(spark: Any, tmp_path: Path) -> None:
    """Five seeds over five runs each, in both modes that keep new fields (``none`` drops
    them by design, counted)."""
    for seed in (1, 2, 3, 4, 5):
        for mode in ("addNewColumns", "rescue"):
            drift_and_check(tmp_path / f"{mode}{seed}", seed=seed, runs=5, mode=mode)
