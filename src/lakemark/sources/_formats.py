"""The interface every format's tracked read implements: look at the files, then read them.

A tracked read (:func:`._schema_track.read_tracked`) is one path, top to bottom, in the order
of its concerns, each step called once by that one function:

1. **plan** (:mod:`._schema_track`): the read request, the hints, the tracked schema;
2. **look** (:meth:`TrackedFormat.observe`, one module per format): read what the files
   say about their columns (JSON's key scan, CSV's header, XML's parsed records, Avro's
   headers) and type what is new (Spark's inference over the files holding it);
3. **decide** (:mod:`._schema_decision`, once): what the evolution mode makes of it;
4. **read and rescue** (:meth:`TrackedFormat.frame`, the same module): the frame with the
   decided schema, the values that do not fit put in the rescued data.

A format module imports downwards only (the format readers, the rescue helpers, this
module's column helpers); none calls back into the orchestrating one, none takes the
decision, and the decision never calls a format (tests/spark/test_read_path_shape.py).
Here too: the column helpers every format's look step shares (Spark struct <-> fields, what a
later run observes, the names met inside columns), kept apart from the decision so that a
read enters :mod:`._schema_decision` once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlparse

from ..planning.schema import Field, new_columns
from ..planning.schema_nested import with_paths

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from ..planning.files import FileEntry
    from ..planning.schema import SchemaDecision
    from ._options import ReadRequest
    from ._schema_decision import SchemaTracking

__all__ = ["Framed", "Observed", "TrackedFormat", "TrackedInput", "files_named"]


@dataclass(frozen=True)
class TrackedInput:
    """One tracked read as the plan settled it: the files, the request and the tracked
    schema (None: the source's first run); ``format``/``options``/``mode`` as the caller gave
    them (for Spark's inference by ``read_files``)."""

    spark: SparkSession
    request: ReadRequest
    files: Sequence[FileEntry]
    root: str
    tracking: SchemaTracking
    tracked: list[Field] | None
    reserved: list[str]
    format: str
    options: Mapping[str, str] | None
    mode: str


@dataclass
class Observed:
    """What the files hold, for the decision: the columns observed (typed where the mode
    adds them), the keys counted for the manifest, the names that are not data (partition
    columns, reserved names), whether Spark inferred types; ``untyped``: keys with no Spark
    type, whose values are rescued (Avro); ``state``: what the format's own frame step reuses
    (its scan, its records); ``release``: frees what the read keeps for the run."""

    observed: list[Field]
    keys: Mapping[str, int]
    skip: set[str]
    inferred: bool
    untyped: Mapping[str, int] | None = None
    state: Any = None
    release: Callable[[], None] | None = None


@dataclass(frozen=True)
class Framed:
    """The typed frame, the ``Observation`` counting what it rescues once written, and counts
    known already (added to the run's manifest record)."""

    frame: DataFrame
    observation: Any = None
    counts: Mapping[str, Any] = field(default_factory=dict)


class TrackedFormat(Protocol):
    """One format's tracked read, in two steps around the decision."""

    def observe(self, read: TrackedInput) -> Observed:
        """What ``read``'s files hold (see :class:`Observed`)."""
        ...

    def frame(self, read: TrackedInput, seen: Observed, decision: SchemaDecision) -> Framed:
        """The files read with ``decision``'s schema, what does not fit rescued."""
        ...


def files_named(files: Sequence[FileEntry], names: Sequence[str]) -> list[FileEntry] | None:
    """The entries of ``files`` that ``names`` (``input_file_name()`` values) designate; None
    when a name matches no entry (e.g. an empty name from the Arrow reader)."""
    def norm(path: str) -> str:
        parsed = urlparse(path)
        if parsed.scheme in ("", "file"):
            return unquote(parsed.path) if parsed.scheme else path
        return f"{parsed.scheme}://{parsed.netloc}{unquote(parsed.path)}"

    wanted = {norm(n) for n in names}
    chosen = [f for f in files if norm(f.path) in wanted]
    if len({norm(f.path) for f in chosen}) != len(wanted):
        return None
    return chosen


def _fields(struct: StructType) -> list[Field]:
    return [Field(f.name, f.dataType.jsonValue()) for f in struct.fields]


def _struct(fields: Sequence[Field]) -> StructType:
    from pyspark.sql.types import StructType

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": f.name, "type": f.type, "nullable": True, "metadata": {}} for f in fields]})


def _to_type(tracked: list[Field], keys: Sequence[str], reserved: Sequence[str],
             mode: str) -> list[str]:
    """The new keys a later run must type before the decision (Spark's inference over the
    files holding them): those ``addNewColumns`` adds; none in the other modes."""
    return new_columns(tracked, list(keys), reserved) if mode == "addNewColumns" else []


def _later_columns(tracked: list[Field], keys: Sequence[str], reserved: Sequence[str],
                   types: Mapping[str, Any] | None) -> list[Field]:
    """The columns a later run observes: the tracked ones, then the new keys (typed by
    ``types``, inferred for :func:`_to_type`'s keys; untyped when None, as the mode does not
    add them), then the other keys that are not columns (case variants, rescued)."""
    observed = list(tracked)
    fresh = new_columns(tracked, list(keys), reserved)
    if types is not None:
        observed += [Field(n, types.get(n, "string")) for n in fresh]
    else:
        observed += [Field(n) for n in fresh]
    known = {f.name for f in observed}
    observed += [Field(k) for k in keys if k not in known]
    return observed


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
