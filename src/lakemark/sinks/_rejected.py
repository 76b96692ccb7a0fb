"""Corrupt records kept aside instead of becoming a table column.

With ``mode=PERMISSIVE`` Spark's JSON and CSV readers put each line they cannot parse into a
column named by ``spark.sql.columnNameOfCorruptRecord`` (``_corrupt_record``), added to the
inferred schema only when some line was malformed. Written as it is, that column would become a
column of the target, and every later clean run would differ from the table. A sink therefore
takes such lines out of the data, keeps them (with the file they came from) as JSON lines in
``<target>/_lakemark_rejected/<run id>.jsonl`` — a hidden folder that Delta, Spark and lakemark
readers skip — and writes the rest. The run's manifest counts them.

A target that already has a column of that name (made on purpose, or by an older lakemark) is
written as before, column included.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import SinkError
from ._location import open_delta, resolve_target

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["Rejected", "split_corrupt_records", "target_columns", "REJECTED_FOLDER",
           "MAX_REJECTED"]

REJECTED_FOLDER = "_lakemark_rejected"

#: More corrupt lines than this in one run is not a few bad lines but a wrong format or
#: schema: the run fails rather than set aside most of its input.
MAX_REJECTED = 100_000


@dataclass(frozen=True)
class Rejected:
    """Corrupt lines taken out of a run's data: how many, and where they were kept."""

    column: str
    count: int
    path: str | None


def corrupt_column(df: DataFrame) -> str | None:
    """The name of Spark's corrupt-record column if ``df`` has it (a string column)."""
    from pyspark.sql.types import StringType

    name = df.sparkSession.conf.get("spark.sql.columnNameOfCorruptRecord", None) \
        or "_corrupt_record"
    for field in df.schema.fields:
        if field.name == name and isinstance(field.dataType, StringType):
            return name
    return None


def target_columns(target: str, format: str) -> list[str] | None:
    """The columns of the Delta table at ``target`` (None for a new table or a folder)."""
    if format.strip().lower() != "delta":
        return None
    table = open_delta(resolve_target(target))
    return None if table is None else [f.name for f in table.schema().fields]


def split_corrupt_records(df: DataFrame, target: str, run_id: str,
                          table_columns: list[str] | None) -> tuple[DataFrame, Rejected | None]:
    """``df`` without its corrupt lines and the corrupt-record column, and what was set aside.

    ``table_columns`` are the target's columns (None if it does not exist yet): a target that
    has the column keeps receiving it. The lines are kept before anything is written.
    """
    from pyspark.sql import functions as F

    column = corrupt_column(df)
    if column is None or (table_columns is not None and column in table_columns):
        return df, None
    others = [c for c in df.columns if c != column]
    if not others:  # Spark refuses a query of the corrupt column alone: keep it cached
        df = df.cache()
    bad = (df.where(F.col(column).isNotNull())
             .select(F.col(column).alias("record"), F.input_file_name().alias("file"),
                     *[F.col("`" + c.replace("`", "``") + "`") for c in others[:1]])
             .limit(MAX_REJECTED + 1).collect())
    clean = df.where(F.col(column).isNull()).drop(column)
    if not bad:
        return clean, None
    if len(bad) > MAX_REJECTED:
        raise SinkError(
            f"more than {MAX_REJECTED:,} records of this run could not be parsed (Spark's "
            f"{column} column); nothing was written to {target}: check the format and its "
            "options, or read with mode FAILFAST to see the first bad record"
        )
    path = _keep(target, run_id, [{"file": row["file"], "record": row["record"]} for row in bad])
    return clean, Rejected(column, len(bad), path)


def _keep(target: str, run_id: str, rows: list[dict[str, Any]]) -> str:
    resolved = resolve_target(target)
    relative = f"{REJECTED_FOLDER}/{run_id}.jsonl"
    fs = resolved.filesystem()
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    try:
        fs.create_dir(resolved.absolute(REJECTED_FOLDER), recursive=True)
        with fs.open_output_stream(resolved.absolute(relative)) as out:
            out.write(data)
    except OSError as exc:
        raise SinkError(f"cannot keep the run's corrupt records in {resolved.root}/{relative}: "
                        f"{exc}") from exc
    return f"{resolved.root.rstrip('/')}/{relative}"
