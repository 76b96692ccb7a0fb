"""What lakemark's readers and writers call so one code path runs on a classic Spark session
and on a Spark Connect one (docs/connect.md): which kind a session is, its parallelism, an
empty frame, and the one-line refusal of a feature that needs the JVM in this process.

Kept apart from :mod:`lakemark.spark` (which builds sessions and installs lakemark's formats
into them), so sources and tables can use it without importing session set-up.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["default_parallelism", "empty_frame", "is_connect", "mark_batch", "not_over_connect"]

#: Plan leaves that are never streaming (a Read is looked at apart: a batch ``DataSource`` read).
_BATCH_LEAVES = frozenset({"local_relation", "range", "cached_local_relation",
                           "chunked_cached_local_relation"})


def is_connect(session: object) -> bool:
    """True if ``session`` is a Spark Connect session (no JVM in this process)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """Spark's default parallelism: the context's in classic mode; over Spark Connect (no
    context in this process) ``spark.default.parallelism`` of the server, which ``lakemark
    server start`` sets, else this machine's CPU count."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    setting = spark.conf.get("spark.default.parallelism", None) or ""
    return int(setting) if setting.isdigit() and int(setting) > 0 else os.cpu_count() or 1


def not_over_connect(spark: object, feature: str) -> None:
    """UnsupportedError naming ``feature`` when ``spark`` is a Spark Connect session: the
    code path that calls this needs the JVM in this process (docs/connect.md lists them)."""
    if is_connect(spark):
        from .errors import UnsupportedError

        raise UnsupportedError(f"{feature} is not available over Spark Connect yet "
                               "(run it without --remote/SPARK_REMOTE)")


def empty_frame(spark: SparkSession, schema: StructType) -> DataFrame:
    """A DataFrame of no rows with ``schema``. Classic mode: over an RDD with no partitions
    (writing it starts no Python worker, which ``createDataFrame([])``'s empty Python RDD
    does); over Spark Connect ``createDataFrame([])`` is a local relation that starts none."""
    if is_connect(spark):
        return spark.createDataFrame([], schema)
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)


def mark_batch(df: DataFrame) -> DataFrame:
    """``df`` itself; over Spark Connect, when its plan reads nothing but batch sources
    (``spark.read`` of files or a data source, local rows, ``range``), its ``isStreaming`` is
    set to False here, so ``observe`` and the writers do not ask the server (a plan analysis,
    which lists every input file again). Any other leaf (SQL text, a table or view, a
    streaming read) leaves the question to the server, as before."""
    if not is_connect(getattr(df, "sparkSession", None)) or "isStreaming" in vars(df):
        return df
    plan: Any = getattr(df, "_plan")  # noqa: B009 - the Connect frame's own plan
    if _batch_only(plan.to_proto(getattr(df, "_session").client).root):  # noqa: B009
        vars(df)["isStreaming"] = False  # pyspark's cached answer (a cached_property)
    return df


def _batch_only(root: object) -> bool:
    """True if every leaf under the Connect ``Relation`` ``root`` is a batch one."""
    from google.protobuf.message import Message
    from pyspark.sql.connect.proto import relations_pb2

    def below(message: Message) -> list[Message]:  # the nearest Relations under ``message``
        found: list[Message] = []
        for field, value in message.ListFields():
            if field.message_type is None:
                continue
            if field.message_type.GetOptions().map_entry:
                items = list(value.values())
            else:
                items = list(value) if field.is_repeated else [value]
            for item in items:
                if not isinstance(item, Message):  # a map's plain values
                    continue
                found.extend([item] if isinstance(item, relations_pb2.Relation) else below(item))
        return found

    todo = [root]
    while todo:
        relation = todo.pop()
        kind = relation.WhichOneof("rel_type")  # type: ignore[attr-defined]
        if kind == "read":
            read = relation.read  # type: ignore[attr-defined]
            if read.is_streaming or read.WhichOneof("read_type") != "data_source":
                return False
            continue
        if kind in _BATCH_LEAVES:
            continue
        children = below(relation)  # type: ignore[arg-type]
        if not children:  # a leaf of another kind: the server decides
            return False
        todo.extend(children)
    return True
