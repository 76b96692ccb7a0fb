"""Parquet, JSON, CSV and ORC folders, staged and published (:mod:`._publish`).

Every write puts the run's files into a staging folder first (:mod:`._staging`): beside the
target, ``<target>__lakemark_staging/<write id>/``, when a job keeps the commit records in its
state store; else the hidden ``<target>/_lakemark_staging/<write id>/``. Then it publishes
them: locally by renames, on S3 by server-side copies (the staging objects are then deleted).
``overwrite`` deletes the old visible files after the new ones are in place (readers may
briefly see both; never neither).

Who writes the staged files: Spark's own writer for local folders and for S3 when the S3A
connector is on Spark's classpath (``df.write...save(<staging>)``, rows counted by an
observation on the written plan); otherwise, for S3, the executors' pyarrow path (Parquet, JSON
Lines, CSV; ORC needs S3A), which reports the files of the task attempts Spark kept, so files of
discarded attempts stay in staging and go with it.

A job's per-run token (``commit_token``) adds a pending record before the write and a commit
record after the publish (in the job's state store, or under ``_lakemark_commits/`` in the
folder: :mod:`._commit_log`), so a retry of a run whose output was already published is
skipped instead of appended again, and a dead write's published files are removed before the
retry writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ConfigError, FormatError
from ._arrow_writer import ArrowWriteSpec, check_compression, run_arrow_write
from ._location import (
    Target,
    check_target,
    check_folder_location,
    delete_files,
    list_data_files,
)
from ._commit_log import FolderLog, StoreRecords
from ._staging import SIBLING_SUFFIX, sibling_staged
from ._model import IdempotencyToken, WriteResult
from ._publish import clear_trace, commit_record, staged_publish, staging_folder, store_for
from ._schema import arrow_schema, check_partition_kinds, spark_kinds
from ._spark_writer import has_s3a, spark_errors, spark_failure, spark_path, write_folder

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
                commit_info: Mapping[str, str] | None = None,
                commit_records: StoreRecords | None = None) -> WriteResult:
    """Write ``df`` as a ``format`` folder at ``target`` (see the module docstring).

    The run's files are written into a staging folder (:mod:`._staging`), then
    published (renamed locally, copied server-side on S3) and, with ``commit_token``, a commit
    record written — in the state store of ``commit_records``, else under the folder's
    ``_lakemark_commits/``; a token that already has a commit record is skipped."""
    fs = target.filesystem()
    check_target(target, fs)
    check_folder_location(target, fs, format)
    kinds = spark_kinds(df.schema)
    check_partition_kinds(kinds, partition_by, target=target.root)
    raw = store_for(target)
    log = commit_records.log(raw) if commit_records is not None else FolderLog(raw)
    # records in the state store: staging beside the target too (old layout: inside it)
    sibling = sibling_staged(raw) if commit_records and not commit_records.in_folder else None
    store = sibling or raw

    spec: ArrowWriteSpec | None = None
    if target.is_s3 and not has_s3a(spark):
        if format not in _ARROW_FORMATS:
            raise FormatError(
                f"writing {format} to {target.root} needs Spark's S3A connector "
                "(org.apache.hadoop.fs.s3a.S3AFileSystem, from hadoop-aws), which is not on the "
                f"classpath; without it lakemark writes only {', '.join(_ARROW_FORMATS)} to S3"
            )
        arrow_schema(df.schema, target=target.root)  # unsupported types fail before any work
        codec, header, delimiter = _arrow_spec_options(format, options, target)
        spec = ArrowWriteSpec(
            fs_config=target.fs_config, root=target.fs_path, write_id="", format=format,
            partition_cols=tuple(partition_by), kinds=tuple(kinds.items()),
            session_tz=spark.conf.get("spark.sql.session.timeZone") or "UTC",
            compression=codec, csv_header=header, csv_delimiter=delimiter,
        )

    if commit_token is not None:
        done = commit_record(store, commit_token, log)
        if done is not None:
            clear_trace(store, commit_token, log)  # a leftover .pending of a finished write
            return WriteResult(target.root, format, rows=0, files=0, bytes=0, skipped=True)
    before = list_data_files(target, fs) if mode == "overwrite" else {}
    rows: list[int] = []

    def write(write_id: str) -> list[str] | None:
        staging = staging_folder(write_id)
        if sibling is not None:  # <target>__lakemark_staging/<write id>
            spark_at = f"{spark_path(target).rstrip('/')}{SIBLING_SUFFIX}/{write_id}"
            arrow_at = f"{target.fs_path.rstrip('/')}{SIBLING_SUFFIX}/{write_id}"
        else:
            spark_at = f"{spark_path(target).rstrip('/')}/{staging}"
            arrow_at = target.absolute(staging)
        if spec is None:  # Spark's own writer: local, or S3 through S3A
            rows.append(write_folder(spark, df, target, format=format, mode="overwrite",
                                     partition_cols=partition_by, options=options,
                                     path=spark_at))
            return None
        staged = replace(spec, root=arrow_at, write_id=write_id)
        try:
            files = run_arrow_write(df, staged)
        except spark_errors() as exc:
            raise spark_failure(target, exc) from exc
        rows.append(sum(f.rows for f in files))
        return [f.path for f in files]  # only the task attempts Spark kept

    published = staged_publish(store, commit_token, dict(commit_info or {}), write, log)
    if mode == "overwrite":
        kept = set(published.files)
        delete_files(target, fs, [rel for rel in before if rel not in kept])
    return WriteResult(target.root, format, rows=rows[0], files=len(published.files),
                       bytes=published.bytes)
