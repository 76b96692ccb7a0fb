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

The frame has the tracked columns, the partition columns and the rescued-data column: a JSON
source is read by Spark's JSON reader (:mod:`._json_tracked`, counts observed while the frame
is written), a CSV source in one pass (:mod:`._csv_tracked`), JSON files with keys that
differ from a column only in case by the exact path (:mod:`._rescue`); XML and Avro sources
have their own reads (:mod:`._xml_tracked`, :mod:`._avro_tracked`: records made on the
executors, :mod:`._tracked_rows`). The caller (the job) commits :attr:`TrackedRead.pending`
with the run and records :attr:`TrackedRead.record` in the run's manifest; an
:attr:`TrackedRead.error` (``failOnNewColumns``) must fail the run before anything is written.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, FormatError
from ..planning.schema import Field, name_key
from ..planning.schema_hints import parse_hints, resolve_hints
from ..planning.schema_nested import path_text
from ..connect_compat import empty_frame
from ._options import ReadRequest, make_request
from ._rescue import (CORRUPT_KEY, FILE_PATH_KEY, RESCUE_FORMATS, observe,
                      read_records, typed_frame)
from ._schema_decision import (SchemaTracking, TrackedRead, _decided, _fields, _later_columns,
                               _struct, _with_inside, tracking_of)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..planning.files import FileEntry
    from ..state import StateStore
    from ._fetched import FetchedRecords

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


def read_tracked(spark: SparkSession, store: StateStore, job_name: str, ctx: str,
                 files: Sequence[FileEntry], *, root: str, format: str,
                 options: Mapping[str, str] | None, mode: str,
                 tracking: SchemaTracking) -> TrackedRead:
    """Read ``files`` of source ``ctx`` against its tracked schema (see the module doc)."""
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
    record: dict[str, Any] = {"kind": "schema", "ctx": ctx, "mode": tracking.mode,
                              "rescued_data_column": tracking.rescued_data_column,
                              "tracked_version": current.version if current else None}
    if not files:
        schema = _struct(tracked or [])
        empty = empty_frame(spark, schema)
        if tracking.rescued_data_column:
            from pyspark.sql import functions as F

            empty = empty.withColumn(tracking.rescued_data_column, F.lit(None).cast("string"))
        return TrackedRead(empty, None, {**record, "inferred": False})
    if request.format in ("xml", "avro"):
        if request.format == "xml":
            from ._xml_tracked import read_tracked_xml as read_other
        else:
            from ._avro_tracked import read_tracked_avro as read_other
        return read_other(spark, request, files, root, tracking, tracked, hints, reserved,
                          record, current.version if current else None)
    if request.format == "json":
        return _read_json(spark, request, files, root, tracking, tracked, hints, reserved,
                          record, current.version if current else None,
                          format=format, options=options, mode=mode)
    return _read_csv(spark, request, files, root, tracking, tracked, hints, reserved, record,
                     current.version if current else None, format=format, options=options,
                     mode=mode)


def _inferred_fields(spark: SparkSession, files: Sequence[FileEntry], *, root: str,
                     format: str, options: Mapping[str, str] | None, mode: str,
                     fetched: FetchedRecords | None = None,
                     request: ReadRequest | None = None) -> list[Field]:
    """The columns Spark infers from ``files``, one per name up to case.

    Spark refuses to infer a schema from JSON records holding keys that differ only in case
    (``code`` and ``Code``: COLUMN_ALREADY_EXISTS) unless the session is case-sensitive, which
    would leave a source's first run failing forever. So inference runs case-sensitively and
    keeps one column per case-insensitive name: the all-lowercase spelling when the files have
    it, else the first in Spark's order. The other spellings are case variants, rescued.
    ``fetched`` (with the ``request`` that made it): infer from the run's records kept from
    S3 (:meth:`._fetched.FetchedRecords.infer_json`) instead of copying the files again.
    """
    from ._read import read_files

    conf = spark.conf
    before = conf.get("spark.sql.caseSensitive", "false") or "false"
    conf.set("spark.sql.caseSensitive", "true")
    try:
        if fetched is not None and request is not None:
            fields = _fields(fetched.infer_json(request, files))
        else:
            fields = _fields(read_files(spark, files, root=root, format=format,
                                        options=options, mode=mode).schema)
    finally:
        conf.set("spark.sql.caseSensitive", before)
    chosen: dict[str, Field] = {}
    for f in fields:
        key = name_key(f.name)
        if key not in chosen or (f.name == f.name.lower() != chosen[key].name):
            chosen[key] = f
    keep = {id(f) for f in chosen.values()}
    return [f for f in fields if id(f) in keep]


def _read_json(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry], root: str,
               tracking: SchemaTracking, tracked: list[Field] | None, hints: list[Field],
               reserved: list[str], record: dict[str, Any], version: int | None, *,
               format: str, options: Mapping[str, str] | None, mode: str) -> TrackedRead:
    """A tracked JSON read by Spark's JSON reader (:mod:`._json_tracked`): one scan of the
    text for untracked keys instead of a parse of every record; the exact path
    (:mod:`._rescue`) only for files with keys that differ from a column in case. S3 objects
    are fetched once for the scan and the typed frame (:mod:`._fetched`), kept until the
    read's ``release`` is called."""
    from ._fetched import fetch_records

    fetched = fetch_records(spark, request, files, root)
    kept: list[DataFrame] = []  # other frames persisted for the run (the exact path's, S3)

    def release() -> None:
        if fetched is not None:
            fetched.release()
        for frame in kept:
            frame.unpersist(blocking=True)

    try:
        read = _read_json_fetched(spark, request, files, root, tracking, tracked, hints,
                                  reserved, record, version, format=format, options=options,
                                  mode=mode, fetched=fetched, kept=kept)
    except BaseException:
        release()
        raise
    if fetched is not None:
        if read.error is not None:
            release()
        else:
            read.release = release
    return read


def _read_json_fetched(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                       root: str, tracking: SchemaTracking, tracked: list[Field] | None,
                       hints: list[Field], reserved: list[str], record: dict[str, Any],
                       version: int | None, *, format: str, options: Mapping[str, str] | None,
                       mode: str, fetched: FetchedRecords | None,
                       kept: list[DataFrame]) -> TrackedRead:
    """:func:`_read_json` with the run's S3 records (None: local files, read by Spark); frames
    it persists for the run are added to ``kept``."""
    from pyspark import StorageLevel
    from pyspark.sql import Observation

    from ._json_tracked import files_named, scan_keys
    from ._json_tracked import typed_frame as fast_frame

    inferred = False
    if tracked is None:
        partitions = set(_partition_names(spark, files, root))
        base = [f for f in _inferred_fields(spark, files, root=root, format=format,
                                            options=options, mode=mode, fetched=fetched,
                                            request=request)
                if f.name not in partitions]
        inferred = True
    else:
        partitions = set(_partition_names(spark, files, root))
        base = list(tracked)
    skip = partitions | set(reserved)
    scan = scan_keys(spark, request, files, root, _struct(base), fetched)
    keys = {k: n for k, n in scan.keys.items() if k not in skip}
    if tracked is None:
        observed = [f for f in base if f.name not in skip]
        known = {f.name for f in observed}
        observed += [Field(k) for k in sorted(keys) if k not in known]
    else:
        def types_of(fresh: list[str]) -> dict[str, Any]:
            holding = files_named(files, sorted({p for n in fresh for p in scan.files[n]}))
            return {f.name: f.type for f in _inferred_fields(
                spark, holding if holding else files, root=root, format=format,
                options=options, mode=mode, fetched=fetched, request=request)}

        observed, inferred = _later_columns(tracked, sorted(keys), reserved, tracking.mode,
                                            types_of)
    # Keys inside tracked columns that their types do not name (address.zip): typed by
    # inference over the files holding them when addNewColumns adds them.
    inside = {p: n for p, n in sorted(scan.fields.items()) if p[0] not in skip}
    if inside:
        types: Mapping[str, Any] = {}
        if tracked is not None and tracking.mode == "addNewColumns":
            holding = files_named(files, sorted({f for p in inside for f in scan.field_files[p]}))
            types = {f.name: f.type for f in _inferred_fields(
                spark, holding if holding else files, root=root, format=format,
                options=options, mode=mode, fetched=fetched, request=request)}
            inferred = True
        observed = _with_inside(observed, inside, types)
    counted = {**keys, **{path_text(p): n for p, n in inside.items()}}
    decision, pending, failed = _decided(spark, tracked, observed, tracking, skip=skip,
                                         hints=hints, keys=counted, inferred=inferred,
                                         record=record, version=version)
    if failed is not None:
        return failed
    schema = _struct(decision.schema)
    names = {f.name for f in decision.schema}
    column_keys = {name_key(n) for n in names}
    variants = [k for k in keys if k not in names and name_key(k) in column_keys]
    hidden = ([k for k in keys if k not in names and k not in variants]
              if tracking.mode != "none" else [])
    # Nested keys the schema does not take (mode rescue; case variants in every mode; not
    # those mode none ignores): their files go to the exact path, which rescues the value.
    taken = {*decision.added_fields, *decision.ignored_fields}
    left = [p for p in inside if path_text(p) not in taken]
    slow_files: list[FileEntry] = []
    if variants or left:
        named = files_named(files, sorted({p for k in variants for p in scan.files[k]}
                                          | {f for p in left for f in scan.field_files[p]}))
        slow_files = named if named is not None else list(files)
    slow_paths = {f.path for f in slow_files}
    fast_files = [f for f in files if f.path not in slow_paths]
    frames = []
    observation = None
    if fast_files:
        observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
        fast, _ = fast_frame(spark, request, fast_files, root, schema, hidden,
                             rescued_column=tracking.rescued_data_column,
                             file_key=FILE_PATH_KEY, corrupt_key=CORRUPT_KEY,
                             observation=observation, records=fetched)
        frames.append(fast)
    if slow_files:
        records, parts = read_records(spark, request, slow_files, root)
        if fetched is not None:  # S3: the exact path's count and frame share one fetch too
            records = records.persist(StorageLevel.MEMORY_AND_DISK)
            kept.append(records)
        seen = observe(records, schema, request.options,
                       rescue_new=tracking.mode != "none")
        record.update({"rescued_values": dict(sorted(seen.mismatched.items())),
                       "corrupt_records": seen.corrupt})
        frames.append(typed_frame(records, schema, parts,
                                  rescued_column=tracking.rescued_data_column,
                                  rescue_new=tracking.mode != "none",
                                  options=request.options))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other, allowMissingColumns=True)
    return TrackedRead(frame, pending, record, observation=observation)


def _read_csv(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry], root: str,
              tracking: SchemaTracking, tracked: list[Field] | None, hints: list[Field],
              reserved: list[str], record: dict[str, Any], version: int | None, *,
              format: str, options: Mapping[str, str] | None, mode: str) -> TrackedRead:
    """A tracked CSV read in one pass (:mod:`._csv_tracked`): the header names the columns."""
    from pyspark.sql import Observation

    from ._csv_tracked import header_of
    from ._csv_tracked import typed_frame as csv_frame
    from ._read import read_files

    header, partitions = header_of(spark, request, files, root)
    skip = set(partitions) | set(reserved)
    keys = {n: 0 for n in header if n not in skip}
    inferred = False
    if tracked is None:
        observed = [f for f in _fields(read_files(spark, files, root=root, format=format,
                                                  options=options, mode=mode).schema)
                    if f.name not in skip]
        inferred = True
    else:
        observed, inferred = _later_columns(
            tracked, list(keys), reserved, tracking.mode,
            lambda _fresh: {f.name: f.type for f in _fields(read_files(
                spark, files, root=root, format=format, options=options, mode=mode).schema)})
    decision, pending, failed = _decided(spark, tracked, observed, tracking, skip=skip,
                                         hints=hints, keys=keys, inferred=inferred,
                                         record=record, version=version)
    if failed is not None:
        return failed
    observation = Observation(f"lakemark_schema_{uuid.uuid4().hex}")
    frame = csv_frame(spark, request, files, root, _struct(decision.schema), header,
                      rescued_column=tracking.rescued_data_column,
                      rescue_new=tracking.mode != "none", file_key=FILE_PATH_KEY,
                      corrupt_key=CORRUPT_KEY, observation=observation)
    return TrackedRead(frame, pending, record, observation=observation)


def _partition_names(spark: SparkSession, files: Sequence[FileEntry], root: str) -> list[str]:
    """The partition columns (``key=value`` folders under ``root``) of ``files``."""
    from ._read import read_files

    probe = read_files(spark, files[:1], root=root, format="text")
    return [c for c in probe.columns if c != "value"]


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
