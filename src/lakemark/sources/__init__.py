"""Reading the files a run planned, as a Spark DataFrame: exactly those files, nothing else.

* :func:`read_files` reads a list of :class:`~lakemark.planning.files.FileEntry` (local paths or
  ``s3://``/``s3a://`` URIs under one root) in one of :data:`FORMATS`, with Hive ``key=value``
  folders under the root as partition columns and Spark's parse :data:`MODES` for malformed
  records.
* :func:`check_read_options` validates a format and mode up front, without Spark.

Two read paths give the same DataFrame (same columns, types and rows):

* **Spark's file sources** for local files (json, csv, parquet, orc, xml, text): the planned
  files are passed to ``spark.read.load`` with ``basePath`` set to the root.
* **The Arrow reader** for S3 objects (Spark has no S3A connector here) and for Avro anywhere
  (no spark-avro package): the schema is settled on the driver (user schema; else Avro header;
  else Spark's inference over a local copy of a sample of the files; partition columns by
  Spark's own inference over a stand-in folder tree), the executors fetch the files with
  ``pyarrow.fs`` and decode them (pyarrow for parquet/orc, fastavro for avro; for json, csv,
  xml and text they only cut records, which Spark's ``from_json``/``from_csv``/``from_xml``
  parse with the same options). See ``_avro`` for the Avro type mapping.

Errors: bad arguments raise :class:`~lakemark.errors.ConfigError` /
:class:`~lakemark.errors.FormatError` before any I/O; a schema that cannot be inferred raises
:class:`~lakemark.errors.ReadError` from ``read_files``; Spark is lazy, so malformed records
under FAILFAST and unreadable files raise ReadError (naming the format and, when known, the
file) from the returned DataFrame's actions, and from those of DataFrames derived from it.

Known differences of the Arrow reader from Spark's readers:

* Schema inference sees a sample (the first parquet/orc file; up to 16 files or 64 MiB of
  json/csv/xml, at most 16 MiB of a large uncompressed line-based file). A column, a wider type
  or a ``_corrupt_record`` column that only appears in unsampled files is missing; pass a
  schema to be exact. (A tracked JSON source infers from the same sample's records, kept for
  its run, whole: ``_fetched``.)
* ``input_file_name()`` is empty on the rows it makes; ``read_files(file_column=...)`` adds
  each row's ``s3://`` URI (and ``input_file_name()`` on Spark's path).
* Each text-format file is read whole into the task's memory before it is cut into records;
  compression is detected from the extension (gz, bz2, zst, lz4, br).
* JSON: a line (or multiLine file) holding a top-level array of objects is re-serialized per
  object (numbers go through Python floats). ``encoding`` defaults to UTF-8 (a BOM is skipped)
  rather than being auto-detected.
* CSV: with ``header``, the first non-blank, non-comment line of every file is dropped (not
  checked against the schema: ``enforceSchema=false`` is ignored); ``multiLine`` splits records
  on line breaks outside quotes.
* XML: rows are the outermost ``<rowTag>`` elements found textually (tags in comments and CDATA
  are skipped); document-level options such as ``rowValidationXSDPath`` are not applied. An
  opening ``<rowTag>`` never closed (a truncated file) makes the rest of the file one malformed
  record, handled by the mode (Spark's reader makes the whole file's text the corrupt record).
* FAILFAST names the file of the first malformed record (Spark's own reader names it too);
  DROPMALFORMED and PERMISSIVE behave as in Spark because records are parsed by Spark.
* Options that select files (``pathGlobFilter``, ``modifiedBefore``/``After``) are not applied:
  the planned files are read. Parquet/orc columns are matched by name case-insensitively and
  cast to the inferred or given types with Arrow's casts.
* Avro (any location) is only read this way; the schema is the first file's.
"""

from ._options import FORMATS, MODES, check_read_options
from ._read import read_files

__all__ = ["FORMATS", "MODES", "check_read_options", "read_files"]
