"""The model of a tracked schema and the decision step of every format's tracked read.

:class:`SchemaTracking` (how a source tracks its schema), :class:`TrackedRead` (what a tracked
read returns) and ``_decided`` (the evolution mode's decision on the observed columns, recorded
in the run's manifest). :func:`._schema_track.read_tracked` takes the decision, once per read,
between the format's look at its files and its typed frame (:mod:`._formats`); no format
module calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..planning.schema import (DEFAULT_EVOLUTION_MODE, Field, SchemaDecision, decide,
                               normalize_evolution_mode)
from ..planning.schema_hints import parse_hints
from ..connect_compat import empty_frame
from ..state import PendingSchema
from ._formats import _struct
from ._rescue import RESCUED_DATA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

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
