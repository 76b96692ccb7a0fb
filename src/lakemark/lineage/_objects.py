"""Non-frame values of the analyser: API objects, user functions, helpers shared by the
interpreter (:mod:`._analyze`) and the API models (:mod:`._api`)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Bound", "Instance", "Lambda", "Method", "Obj", "UserClass", "UserFunc",
           "import_value"]


@dataclass(eq=False)
class Obj:
    """An API object (``glueContext``, ``spark.read…``, a sink, ``args``, a module…).

    ``kind`` says what it is; ``data`` holds what the analyser learned about it (reader
    options, a sink's catalog info…). Sinks are mutated by ``setCatalogInfo``, so objects
    compare by identity.
    """

    kind: str
    name: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Method:
    """``value.name`` not yet called."""

    target: Any
    name: str


@dataclass(frozen=True, eq=False)
class UserFunc:
    """A function defined in the script or an extra py file (analysed, never run)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    globals: dict[str, Any]
    defaults: Mapping[str, Any]
    file: str


@dataclass(eq=False)
class UserClass:
    """A class defined in the script: its methods (analysed at each call) and attributes."""

    name: str
    methods: dict[str, Any]
    attrs: dict[str, Any]
    #: methods decorated @staticmethod / @classmethod
    kinds: dict[str, str] = field(default_factory=dict)
    #: base classes of the script, in order, and the methods this class defines itself
    bases: list[UserClass] = field(default_factory=list)
    own: set[str] = field(default_factory=set)

    def mro(self) -> list[UserClass]:
        """This class and its script base classes, depth first (enough for scripts)."""
        out: list[UserClass] = [self]
        for base in self.bases:
            out.extend(c for c in base.mro() if c not in out)
        return out


@dataclass(eq=False)
class Instance:
    """An object of a script class; ``self.x = …`` lands in ``attrs``."""

    cls: UserClass
    attrs: dict[str, Any]


@dataclass(frozen=True, eq=False)
class Bound:
    """A method of a script class with its ``self`` (or ``cls``)."""

    func: Any
    self_value: Any


@dataclass(frozen=True, eq=False)
class Lambda:
    node: ast.Lambda
    scope: dict[str, Any]


_TRANSFORMS = {
    "ApplyMapping", "SelectFields", "DropFields", "RenameField", "Join", "Filter",
    "Relationalize", "ResolveChoice", "DropNullFields", "SplitFields", "SplitRows", "Union",
    "SelectFromCollection", "Map", "FlatMap", "Spigot", "Unbox", "UnnestFrame",
    "ErrorsAsDynamicFrame", "MapToCollection", "FillMissingValues", "EvaluateDataQuality",
    "DropDuplicates",
}

_CLASSES = {
    "awsglue.context.GlueContext": "GlueContext",
    "awsglue.utils.getResolvedOptions": "getResolvedOptions",
    "awsglue.dynamicframe.DynamicFrame": "DynamicFrame",
    "awsglue.DynamicFrame": "DynamicFrame",
    "awsglue.dynamicframe.DynamicFrameCollection": "DynamicFrameCollection",
    "awsglue.job.Job": "Job",
    "pyspark.context.SparkContext": "SparkContext",
    "pyspark.SparkContext": "SparkContext",
    "pyspark.sql.SparkSession": "SparkSession",
    "pyspark.sql.session.SparkSession": "SparkSession",
    "pyspark.sql.Window": "Window",
    "pyspark.sql.window.Window": "Window",
    "pyspark.sql.types.StructType": "StructType",
    "pyspark.sql.types.StructField": "StructField",
    "pyspark.sql.SQLContext": "SQLContext",
    "pyspark.sql.context.SQLContext": "SQLContext",
    "pyspark.sql.HiveContext": "HiveContext",
    "pyspark.sql.context.HiveContext": "HiveContext",
    "concurrent.futures.ThreadPoolExecutor": "ThreadPoolExecutor",
    "concurrent.futures.thread.ThreadPoolExecutor": "ThreadPoolExecutor",
    "concurrent.futures.ProcessPoolExecutor": "ProcessPoolExecutor",
    "threading.Thread": "Thread",
    "delta.tables.DeltaTable": "DeltaTable",
    "argparse.ArgumentParser": "ArgumentParser",
    "delta.DeltaTable": "DeltaTable",
    "awsgluedq.transforms.EvaluateDataQuality": "transform:EvaluateDataQuality",
}


def import_value(qualname: str) -> Obj:
    """What importing ``qualname`` binds, as far as lineage cares."""
    if qualname in _CLASSES:
        kind = _CLASSES[qualname]
        if kind.startswith("transform:"):
            return Obj("transform", kind.split(":", 1)[1])
        return Obj("class", kind)
    head, _, last = qualname.rpartition(".")
    if head == "awsglue.transforms" or (head.startswith("awsglue.transforms")
                                         and last in _TRANSFORMS):
        return Obj("transform", last)
    if qualname == "pyspark.sql.functions":
        return Obj("module", "pyspark.sql.functions")
    if head == "pyspark.sql.functions":
        return Obj("func", last)
    if head == "pyspark.sql.types":
        return Obj("type", last)
    return Obj("module", qualname)


def predefined() -> dict[str, Any]:
    """Names a Glue script may use without importing them (and the usual imports)."""
    env: dict[str, Any] = {name: Obj("transform", name) for name in _TRANSFORMS}
    env.update({
        "getResolvedOptions": Obj("class", "getResolvedOptions"),
        "GlueContext": Obj("class", "GlueContext"),
        "DynamicFrame": Obj("class", "DynamicFrame"),
        "DynamicFrameCollection": Obj("class", "DynamicFrameCollection"),
        "SparkContext": Obj("class", "SparkContext"),
        "SparkSession": Obj("class", "SparkSession"),
        "Job": Obj("class", "Job"),
        "__name__": "__main__",
    })
    return env
