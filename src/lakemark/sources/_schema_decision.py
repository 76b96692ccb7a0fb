"""The model of a tracked schema and the decision every format's tracked read shares.

:class:`SchemaTracking` (how a source tracks its schema), :class:`TrackedRead` (what a tracked
read returns) and ``_decided`` (the evolution mode's decision on the observed columns, recorded
in the run's manifest) live here, below :mod:`._schema_track` and the per-format reads
(:mod:`._xml_tracked`, :mod:`._avro_tracked`), so that those reads use them without importing
the module that dispatches to them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..planning.schema import (DEFAULT_EVOLUTION_MODE, Field, SchemaDecision, decide,
                               new_columns, normalize_evolution_mode)
from ..planning.schema_hints import parse_hints
from ..planning.schema_nested import with_paths
from ..connect_compat import empty_frame
from ..state import PendingSchema
from ._rescue import RESCUED_DATA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["SchemaTracking", "TrackedRead", "tracking_of"]


@dataclass(frozen=True)
class SchemaTracking:
    """How a source tracks its schema: the evolution mode and the rescued-data column
    (None: off; corrupt records then go to Spark's ``_corrupt_record``, set aside by sinks)."""

    mode: str = DEFAULT_EVOLUTION_MODE
    rescued_data_column: str | None = RESCUED_DATA
    hints: str | None = None  # "id bigint, payload.ts timestamp": types over inference


def tracking_of(mode: str | None, rescued_data_column: str | None | bool = RESCUED_DATA,
                hints: str | None = None) -> SchemaTracking | None:
    """Validate the arguments of a tracked read (None: the source does not track its schema).

    ``rescued_data_column``: a column name, or None/False/"" for no rescued-data column.
    ``hints``: ``path type`` entries whose types win over inference
    (:mod:`lakemark.planning.schema_hints`; the syntax is checked here, the types when read).
    """
    if hints is not None:
        parse_hints(hints)  # the syntax, before anything runs (the types: when read)
    if mode is None:
        if hints is not None:
            raise ConfigError("schema hints apply to a tracked schema: a json, csv, xml or "
                              "avro source read with a transformation_ctx, no schema and "
                              "schema evolution not 'off'")
        return None
    chosen = normalize_evolution_mode(mode)
    if rescued_data_column is True:
        rescued_data_column = RESCUED_DATA
    column = rescued_data_column or None
    if column is not None and (not isinstance(column, str) or not column.strip()):
        raise ConfigError(f"rescued data column must be a non-empty name, not {column!r}")
    return SchemaTracking(chosen, column, hints)


@dataclass
class TrackedRead:
    """The outcome of one tracked read."""

    frame: DataFrame
    pending: PendingSchema | None  # to commit with the run (None: unchanged)
    record: dict[str, Any] = field(default_factory=dict)  # for the run's manifest
    error: str | None = None
    observation: Any = None  # counts gathered when the frame is written (add_observed)
    #: Call when the run ends: frees what the frame keeps for the run (S3 records, _fetched).
    release: Callable[[], None] | None = None


def _fields(struct: StructType) -> list[Field]:
    return [Field(f.name, f.dataType.jsonValue()) for f in struct.fields]


def _struct(fields: Sequence[Field]) -> StructType:
    from pyspark.sql.types import StructType

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": f.name, "type": f.type, "nullable": True, "metadata": {}} for f in fields]})


def _record_decision(record: dict[str, Any], decision: SchemaDecision, keys: Mapping[str, int],
                     tracking: SchemaTracking, later: bool, inferred: bool) -> None:
    """The decision in the run's manifest ``record``; new fields inside columns are listed by
    path (``address.zip``) with the new columns, counted from ``keys`` (records holding each)."""
    schema_names = {f.name for f in decision.schema}
    rescued_new = ({c: keys.get(c, 0) for c in decision.rescued_columns
                    if c in keys and c not in schema_names}
                   if tracking.mode != "none" else {})
    if tracking.mode == "rescue":
        rescued_new.update({p: keys.get(p, 0) for p in decision.new_fields})
    record.update({
        "inferred": inferred,
        "new_columns": list(decision.new_columns) + list(decision.new_fields),
        "added_columns": ([f.name for f in decision.added] + list(decision.added_fields)
                          if later else []),
        "ignored_columns": {c: keys.get(c, 0)
                            for c in (*decision.ignored_columns, *decision.ignored_fields)},
        "rescued_new_columns": rescued_new,
    })


def _pending(decision: SchemaDecision, tracked: Sequence[Field] | None, version: int | None,
             record: dict[str, Any]) -> PendingSchema | None:
    if not decision.changed:
        return None
    record["tracked_version_after"] = (version or 0) + 1
    return PendingSchema([f.to_json() for f in decision.schema], list(decision.changes),
                         "inferred" if tracked is None else "evolved")


def _decided(spark: SparkSession, tracked: list[Field] | None, observed: list[Field],
             tracking: SchemaTracking, *, skip: set[str], hints: list[Field],
             keys: Mapping[str, int], inferred: bool, record: dict[str, Any],
             version: int | None
             ) -> tuple[SchemaDecision, PendingSchema | None, TrackedRead | None]:
    """The evolution mode's decision on the ``observed`` columns of a tracked read, recorded in
    its manifest ``record`` (counts reset, to be observed when the frame is written); the
    schema change to commit with the run; and, when the mode refuses the files
    (``failOnNewColumns``), the read to return at once: an empty frame with the error. One
    place for what every format's tracked read decides the same way."""
    decision = decide(tracked, observed, tracking.mode, reserved=sorted(skip), hints=hints)
    _record_decision(record, decision, keys, tracking, tracked is not None, inferred)
    record.update({"rescued_values": {}, "corrupt_records": 0})
    if decision.error is not None:
        empty = empty_frame(spark, _struct(decision.schema))
        return decision, None, TrackedRead(empty, None, record, decision.error)
    return decision, _pending(decision, tracked, version, record), None


def _later_columns(tracked: list[Field], keys: Sequence[str], reserved: Sequence[str],
                   mode: str, types_of: Callable[[list[str]], Mapping[str, Any]]
                   ) -> tuple[list[Field], bool]:
    """The columns a later run observes: the tracked ones, then the new keys (typed by
    ``types_of``, Spark's inference over the files holding them, under ``addNewColumns``;
    untyped otherwise, as the mode does not add them), then the other keys that are not
    columns (case variants, rescued); and whether inference ran."""
    observed = list(tracked)
    fresh = new_columns(tracked, list(keys), reserved)
    inferred = bool(fresh) and mode == "addNewColumns"
    if inferred:
        types = types_of(fresh)
        observed += [Field(n, types.get(n, "string")) for n in fresh]
    else:
        observed += [Field(n) for n in fresh]
    known = {f.name for f in observed}
    observed += [Field(k) for k in keys if k not in known]
    return observed, inferred


def _with_inside(observed: list[Field], inside: Mapping[tuple[str, ...], int],
                 types: Mapping[str, Any]) -> list[Field]:
    """``observed`` with each column's type holding the ``inside`` paths under it, typed as
    ``types`` (inferred column types) has them, else ``string``
    (:func:`lakemark.planning.schema_nested.with_paths`)."""
    out = []
    for f in observed:
        below = [p[1:] for p in inside if p[0] == f.name]
        if below and f.type is not None:
            f = Field(f.name, with_paths(f.type, below, types.get(f.name)))
        out.append(f)
    return out
