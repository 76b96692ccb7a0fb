"""Parquet, JSON, CSV and ORC folders.

Local folders are written by Spark's own writer into a hidden staging folder and then
published by renames (:mod:`._publish`); ``overwrite`` deletes the old visible files after the
new ones are in place. S3 with the S3A connector on Spark's classpath is written by Spark
directly: ``df.write.mode(mode).partitionBy(...).format(fmt).save(path)``, with Spark's commit
protocol and overwrite semantics. Rows are counted by an observation on the written plan.

S3 without S3A takes the executors' pyarrow path (Parquet, JSON Lines, CSV; ORC needs S3A):
the new files are written next to the old ones under unique names, stray files of task attempts
Spark discarded are swept, and for ``overwrite`` the previously listed files are deleted only
after the new ones are all written (readers may briefly see both; never neither).

For local folders a job's per-run token (``commit_token``) adds a commit record, so a retry of a
run whose output was already published is skipped instead of appended again. S3 folders get no
commit record yet.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..errors import ConfigError, FormatError
from ._arrow_writer import ArrowWriteSpec, check_compression, run_arrow_write
from ._location import (
    Target,
    check_target,
    check_folder_location,
    delete_files,
    list_data_files,
    sweep_write,
)
from ._model import IdempotencyToken, WriteResult
from ._publish import commit_record, staged_publish
from ._schema import arrow_schema, check_partition_kinds, spark_kinds
from ._spark_writer import has_s3a, spark_errors, spark_failure, write_folder

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["write_files"]

_ARROW_FORMATS = ("parquet", "json", "csv")
_TRUE = ("true", "1", "yes")


def _arrow_spec_options(format: str, options: Mapping[str, str],
                        target: Target) -> tuple[str, bool, str]:
    """(compression, csv header, csv delimiter) from Spark-style options for the Arrow path."""
    known = {"compression"} | ({"header", "sep", "delimiter"} if format == "csv" else set())
    lowered = {k.lower(): v for k, v in options.items()}
    unknown = sorted(k for k in lowered if k not in known)
    if unknown:
        raise ConfigError(
            f"option(s) {', '.join(unknown)} are not supported when writing {format} to "
            f"{target.root} with pyarrow (no S3A connector); supported: {', '.join(sorted(known))}"
        )
    codec = lowered.get("compression", "snappy" if format == "parquet" else "none").lower()
    if not check_compression(format, codec):
        raise ConfigError(f"unsupported {format} compression {codec!r} for {target.root}")
    delimiter = lowered.get("sep", lowered.get("delimiter", ","))
    if len(delimiter) != 1:
        raise ConfigError(f"CSV separator must be one character, not {delimiter!r}")
    return codec, lowered.get("header", "false").lower() in _TRUE, delimiter


def write_files(spark: SparkSession, df: DataFrame, target: Target, *, format: str, mode: str,
                partition_by: Sequence[str], options: Mapping[str, str],
                commit_token: IdempotencyToken | None = None,
                commit_info: Mapping[str, str] | None = None) -> WriteResult:
    """Write ``df`` as a ``format`` folder at ``target`` (see the module docstring)."""
    fs = target.filesystem()
    check_target(target, fs)
    check_folder_location(target, fs, format)
    kinds = spark_kinds(df.schema)
    check_partition_kinds(kinds, partition_by, target=target.root)

    if not target.is_s3:
        return _write_local(spark, df, target, format=format, mode=mode,
                            partition_by=partition_by, options=options, token=commit_token,
                            commit_info=commit_info or {})
    if has_s3a(spark):
        before = list_data_files(target, fs) if mode == "append" else {}
        rows = write_folder(spark, df, target, format=format, mode=mode,
                            partition_cols=partition_by, options=options)
        new = [info for rel, info in list_data_files(target, fs).items() if rel not in before]
        return WriteResult(target.root, format, rows=rows, files=len(new),
                           bytes=sum(int(info.size or 0) for info in new))

    if format not in _ARROW_FORMATS:
        raise FormatError(
            f"writing {format} to {target.root} needs Spark's S3A connector "
            "(org.apache.hadoop.fs.s3a.S3AFileSystem, from hadoop-aws), which is not on the "
            f"classpath; without it lakemark writes only {', '.join(_ARROW_FORMATS)} to S3"
        )
    arrow_schema(df.schema, target=target.root)  # unsupported types fail before any work
    codec, header, delimiter = _arrow_spec_options(format, options, target)
    write_id = uuid.uuid4().hex
    spec = ArrowWriteSpec(
        fs_config=target.fs_config, root=target.fs_path, write_id=write_id, format=format,
        partition_cols=tuple(partition_by), kinds=tuple(kinds.items()),
        session_tz=spark.conf.get("spark.sql.session.timeZone") or "UTC",
        compression=codec, csv_header=header, csv_delimiter=delimiter,
    )
    before = list_data_files(target, fs)
    try:
        files = run_arrow_write(df, spec)
    except spark_errors() as exc:
        sweep_write(target, fs, write_id)
        raise spark_failure(target, exc) from exc
    except BaseException:
        sweep_write(target, fs, write_id)
        raise
    kept = frozenset(f.path for f in files)
    sweep_write(target, fs, write_id, keep=kept)  # attempts Spark discarded (speculation)
    if mode == "overwrite":
        delete_files(target, fs, [rel for rel in before if rel not in kept])
    return WriteResult(target.root, format, rows=sum(f.rows for f in files), files=len(files),
                       bytes=sum(f.size for f in files))


def _write_local(spark: SparkSession, df: DataFrame, target: Target, *, format: str, mode: str,
                 partition_by: Sequence[str], options: Mapping[str, str],
                 token: IdempotencyToken | None, commit_info: Mapping[str, str]) -> WriteResult:
    """Spark writes into ``_lakemark_staging/<id>/``; the files are then renamed into place
    (and, with a token, a commit record written). A token already committed: skipped."""
    from pathlib import Path

    root = Path(target.location.root)
    if token is not None:
        done = commit_record(root, token)
        if done is not None:
            return WriteResult(target.root, format, rows=0, files=0, bytes=0, skipped=True)
    fs = target.filesystem()
    before = list_data_files(target, fs) if mode == "overwrite" else {}
    rows: list[int] = []

    def write(staging: str) -> None:
        rows.append(write_folder(spark, df, target, format=format, mode="overwrite",
                                 partition_cols=partition_by, options=options,
                                 path="file://" + staging))

    published = staged_publish(target, token, dict(commit_info), write)
    if mode == "overwrite":
        kept = set(published.files)
        delete_files(target, fs, [rel for rel in before if rel not in kept])
    return WriteResult(target.root, format, rows=rows[0], files=len(published.files),
                       bytes=published.bytes)
