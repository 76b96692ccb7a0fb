"""A run's S3 text objects fetched once: the records cut from them, kept by Spark for the run.

A later run of a tracked JSON source reads its files twice: a scan of the records' text for
keys that are not tracked columns (which must be known before the frame's schema is fixed),
then the typed parse. Local files are read by Spark's own readers, for which a second read is
cheap; S3 objects are fetched by the Arrow reader on the executors (one GET each), so the
second read doubled the run's requests and most of its time. Here the records the executors
cut from the objects (``RECORD``, ``FOLDER`` and the object's URI, ``FILE``) are made once
and persisted (``MEMORY_AND_DISK``: Spark's block manager keeps them on the executors and
spills what does not fit); the key scan computes and caches them, and the typed parse
(Spark's ``from_json``, exactly as the Arrow reader parses records it fetched itself) reads
the cache. A block that an executor does not have (lost, evicted, another executor) is
recomputed from the plan: the object is fetched again, the same records come out. The
job releases the records when the run ends (:meth:`FetchedRecords.release`), whatever the
outcome.

Carrying the object's URI with each record also fills ``_file_path`` of the rescued data on S3
(Spark's ``input_file_name()`` is empty for rows made by ``mapInArrow``), and lets a run that
meets a new column under ``addNewColumns`` infer its type from the kept records of the files
holding it (:meth:`FetchedRecords.infer_json`) instead of copying them from S3 again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ReadError
from ..storage import mapped_path, parse_uri
from ._arrow_reader import record_frame, splitting_options
from ._errors import describe, first_line, spark_errors
from ._options import ReadRequest
from ._partitions import layout_of
from ._sample import sample_files
from ._tasks import BINARY_FORMATS, FILE, RECORD

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from ..planning.files import FileEntry

__all__ = ["FetchedRecords", "fetch_records", "TEXT", "FILE_URI"]

#: The columns of :meth:`FetchedRecords.text`: a record's text and its object's URI.
TEXT = "value"
FILE_URI = "__lm_file_uri"


@dataclass(frozen=True)
class FetchedRecords:
    """The records of ``paths`` (in this order) under ``root``, cut for ``format`` with
    ``splitting`` (see :func:`._arrow_reader.splitting_options`); ``frame`` is persisted."""

    frame: DataFrame
    root: str
    paths: tuple[str, ...]
    format: str
    splitting: tuple[tuple[str, str], ...]

    def text(self) -> DataFrame:
        """One row per record: its text (``value``) and its object's URI (``FILE_URI``)."""
        from pyspark.sql import functions as F

        return self.frame.select(F.col(RECORD).alias(TEXT), F.col(FILE).alias(FILE_URI))

    def infer_json(self, request: ReadRequest, files: Sequence[FileEntry]) -> StructType:
        """The data schema Spark's JSON reader infers, with ``request``'s options and mode,
        from the kept records of the files an S3 read would sample of ``files``
        (:func:`._sample.sample_files`, which copies them from S3 to infer); ReadError if
        it cannot. Each record is one JSON document here (already cut as the reader cuts
        them), and a file is inferred from whole, not from its first 16 MiB."""
        from pyspark.sql import functions as F

        chosen = [f.path for f in sample_files(request, files)]
        records = self.text().where(F.col(FILE_URI).isin(chosen)).select(TEXT)
        reader = self.frame.sparkSession.read.options(**request.options)
        if request.uses_mode:
            reader = reader.option("mode", request.mode)
        try:
            return reader.json(records).schema
        except spark_errors() as exc:
            own = describe(exc)
            if own is not None and own[0] is None:  # lakemark's reader named the object
                raise ReadError(own[1]) from None
            raise ReadError(f"cannot infer the schema of {len(chosen)} sampled json file(s) "
                            f"starting with {chosen[0]}: {first_line(exc)}") from None

    def release(self) -> None:
        """Drop the kept records from the executors' storage (blocking: the memory and disk
        are free when this returns). A later action on a frame made from them fetches the
        objects again."""
        self.frame.unpersist(blocking=True)


def fetch_records(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                  root: str) -> FetchedRecords | None:
    """The records of ``files`` to be fetched once and kept (lazy: the first action over them
    fetches and stores them), or None when the Arrow reader would not fetch them: local
    files (and a bucket mapped to a local folder) are read by Spark's own readers, binary
    formats have no records."""
    from pyspark import StorageLevel

    if (not files or request.format in BINARY_FORMATS or mapped_path(root) is not None
            or not parse_uri(root).is_s3):
        return None
    frame = record_frame(spark, request, files, root, layout_of(root, files), with_file=True)
    frame.persist(StorageLevel.MEMORY_AND_DISK)
    return FetchedRecords(frame, root, tuple(f.path for f in files), request.format,
                          splitting_options(request))
