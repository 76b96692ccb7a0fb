"""A file source with a tracked schema: infer once, then reuse and evolve it run after run.

:func:`read_tracked` is what ``Job.read_files(..., schema_evolution=...)`` calls for a source
with a ``transformation_ctx``. The source's schema lives in the state store
(``source_schemas``, see ``state/_schemas.py``):

* first run (no tracked schema): Spark infers the schema as an untracked read does (from the
  run's files, or a sample of them on S3), and the run commits it with its bookmark;
* later runs do not infer: a JSON run scans its text for untracked keys
  (:func:`._json_tracked.scan_keys`), a CSV run reads its header, an XML run scans its parsed
  records, an Avro run reads its files' headers; :func:`lakemark.planning.schema.decide` says
  what the evolution mode makes of new keys (``_decided``, one place for every format). Only
  when ``addNewColumns`` meets a new column does Spark infer again, from the files holding
  it, and only that column's type is taken.

The read is one path, each step called once and in order by :func:`read_tracked`
(:mod:`._formats`): the plan (request, hints, tracked schema), the format's look at its files
(``observe``), the decision (:mod:`._schema_decision`), the format's typed frame (``frame``).
One module per format: JSON (:mod:`._json_tracked`: Spark's JSON reader, counts observed while
the frame is written; files with keys that differ from a column only in case by the exact path,
:mod:`._rescue`; S3 records fetched once, :mod:`._fetched`), CSV (:mod:`._csv_tracked`, one
pass), XML and Avro (:mod:`._xml_tracked`, :mod:`._avro_tracked`: records made on the
executors, :mod:`._tracked_rows`). The frame has the tracked columns, the partition columns and
the rescued-data column. The caller (the job) commits :attr:`TrackedRead.pending` with the run
and records :attr:`TrackedRead.record` in the run's manifest; an :attr:`TrackedRead.error`
(``failOnNewColumns``) must fail the run before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError
from ..planning.schema import Field
from ..planning.schema_hints import parse_hints, resolve_hints
from ..connect_compat import empty_frame
from ._options import make_request
from ._formats import TrackedInput, _struct
from ._rescue import CORRUPT_KEY, RESCUE_FORMATS
from ._schema_decision import SchemaTracking, TrackedRead, _decided, tracking_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..planning.files import FileEntry
    from ..state import StateStore
    from ._formats import TrackedFormat

__all__ = ["SchemaTracking", "TRACKED_FORMATS", "TrackedRead", "add_observed", "read_tracked",
           "tracking_of"]

#: Formats whose reads can track their schema (XML: ``._xml_tracked``; Avro: ``._avro_tracked``).
TRACKED_FORMATS = (*RESCUE_FORMATS, "xml", "avro")


def resolved_hints(text: str | None, format: str) -> list[Field]:
    """The hints of ``text`` (:mod:`lakemark.planning.schema_hints`) with their types parsed
    by Spark (needs a session); ConfigError naming the hint whose type is not one, and for a
    nested hint on a ``csv`` source (CSV has no nesting)."""
    from pyspark.sql.types import DataType, StructType

    if text is None:
        return []
    entries = parse_hints(text)
    types = []
    for entry in entries:
        if format == "csv" and len(entry.path) > 1:
            raise ConfigError(f"schema hint {entry.text!r}: a CSV source has no nested fields "
                              f"(hint a column by its name; backquote a name holding a dot)")
        try:
            parsed = DataType.fromDDL(f"`_` {entry.type_text}")
        except Exception as exc:  # Spark's ParseException (a PySparkException) or a Py4J error
            lines = str(exc).strip().splitlines()
            raise ConfigError(f"schema hint {entry.text!r}: {entry.type_text!r} is not a "
                              f"Spark type ({lines[0] if lines else type(exc).__name__})"
                              ) from None
        if not isinstance(parsed, StructType) or len(parsed.fields) != 1:
            raise ConfigError(f"schema hint {entry.text!r}: {entry.type_text!r} is not one "
                              f"Spark type")
        types.append(parsed.fields[0].dataType.jsonValue())
    return list(resolve_hints(entries, types))


def _format_of(name: str) -> TrackedFormat:
    """The tracked read of format ``name`` (one module each)."""
    if name == "json":
        from ._json_tracked import JsonTracked

        return JsonTracked()
    if name == "csv":
        from ._csv_tracked import CsvTracked

        return CsvTracked()
    if name == "xml":
        from ._xml_tracked import XmlTracked

        return XmlTracked()
    from ._avro_tracked import AvroTracked

    return AvroTracked()


def read_tracked(spark: SparkSession, store: StateStore, job_name: str, ctx: str,
                 files: Sequence[FileEntry], *, root: str, format: str,
                 options: Mapping[str, str] | None, mode: str,
                 tracking: SchemaTracking) -> TrackedRead:
    """Read ``files`` of source ``ctx`` against its tracked schema (see the module doc): plan,
    then the format's look at the files, the decision, the format's typed frame, in this
    order (:mod:`._formats`)."""
    request = make_request(format, mode, options, None, root)
    if request.format not in TRACKED_FORMATS:
        raise FormatError(f"schema tracking (schema_evolution) reads "
                          f"{', '.join(TRACKED_FORMATS)} sources; not {request.format}")
    if request.mode != "PERMISSIVE":
        raise ConfigError(f"schema tracking keeps malformed records in the rescued data; read "
                          f"mode {request.mode} does not apply (use PERMISSIVE)")
    hints = resolved_hints(tracking.hints, request.format)
    reserved = [CORRUPT_KEY] + ([tracking.rescued_data_column]
                                if tracking.rescued_data_column else [])
    current = store.get_source_schema(job_name, ctx)
    tracked = [Field.from_json(f) for f in current.fields] if current and current.fields else None
    version = current.version if current else None
    record: dict[str, Any] = {"kind": "schema", "ctx": ctx, "mode": tracking.mode,
                              "rescued_data_column": tracking.rescued_data_column,
                              "tracked_version": version}
    if not files:
        schema = _struct(tracked or [])
        empty = empty_frame(spark, schema)
        if tracking.rescued_data_column:
            from pyspark.sql import functions as F

            empty = empty.withColumn(tracking.rescued_data_column, F.lit(None).cast("string"))
        return TrackedRead(empty, None, {**record, "inferred": False})
    reader = _format_of(request.format)
    read = TrackedInput(spark, request, files, root, tracking, tracked, reserved, format,
                        options, mode)
    seen = reader.observe(read)
    try:
        decision, pending, failed = _decided(spark, tracked, seen.observed, tracking,
                                             skip=seen.skip, hints=hints, keys=seen.keys,
                                             inferred=seen.inferred, record=record,
                                             version=version)
        if seen.untyped is not None and tracking.mode != "none":
            names = {f.name for f in decision.schema}
            untyped = {k: n for k, n in seen.untyped.items() if k not in names}
            record["rescued_new_columns"] = dict(sorted(
                {**record.get("rescued_new_columns", {}), **untyped}.items()))
        if failed is not None:
            if seen.release is not None:
                seen.release()
            return failed  # its record is ``record``: the lines above are in it
        framed = reader.frame(read, seen, decision)
    except BaseException:
        if seen.release is not None:
            seen.release()
        raise
    record.update(framed.counts)
    return TrackedRead(framed.frame, pending, record, observation=framed.observation,
                       release=seen.release)


def add_observed(record: dict[str, Any], observation: Any) -> bool:
    """Add the counts a written tracked frame observed to its manifest ``record``; False (and
    nothing added) when the frame was not written."""
    from ._json_tracked import observed_counts

    try:
        jo = getattr(observation, "_jo", None)  # classic: the py4j handle
        # Spark Connect: the action's response fills the result in the client
        done = (bool(jo.future().isCompleted()) if jo is not None
                else getattr(observation, "_result", None) is not None)
    except Exception:  # noqa: BLE001 - no metrics to add
        return False
    if not done:
        return False
    rescued, corrupt = observed_counts(observation.get)
    values = dict(record.get("rescued_values") or {})
    for column, n in rescued.items():
        values[column] = values.get(column, 0) + n
    record["rescued_values"] = dict(sorted(values.items()))
    record["corrupt_records"] = int(record.get("corrupt_records") or 0) + corrupt
    counted = {k[2:]: int(v or 0) for k, v in observation.get.items() if k.startswith("k:")}
    for entry in ("ignored_columns", "rescued_new_columns"):
        columns = record.get(entry)
        if columns:
            record[entry] = {c: counted.get(c, n) for c, n in columns.items()}
    return True
