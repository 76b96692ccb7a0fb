"""How a tracked source schema evolves when a run observes its files: pure Python, no Spark.

A file source that tracks its schema (``schema_evolution=``) keeps the columns it has seen in the
state store. Each run observes the columns of its own files and :func:`decide` turns
(tracked schema, observed columns, evolution mode) into the schema the run reads with, what it
adds, what goes to the rescued-data column and what fails the run. The modes carry Databricks
Auto Loader's names (``cloudFiles.schemaEvolutionMode``):

* ``addNewColumns`` (the default mode): new columns are appended to the tracked schema;
* ``rescue``: the schema never changes; values of new columns go to the rescued-data column;
* ``failOnNewColumns``: a run that sees a new column fails naming it (nothing is written);
* ``none``: new columns are ignored (and counted).

New fields inside a tracked column's structs (``address.zip``) are new in the same sense,
named by path (:mod:`.schema_nested`). In every mode a tracked column keeps its type
otherwise: a value that does not fit it is rescued (the
reader does that per value); :func:`decide` lists the columns whose observed type differs. A
name that differs from a tracked one only in case or surrounding whitespace (``Code`` for
``code``) is not a new column: its values are rescued, as Auto Loader does.

A field is ``Field(name, type)`` where ``type`` is Spark's JSON form of the type (``"long"``,
``{"type": "struct", ...}``) or None when the observation did not say (then it is never a
type change). Reserved names (the rescued-data column, Spark's corrupt-record column) never
enter a schema.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .schema_field import Field, name_key
from .schema_hints import Hint, as_hint, hinted_type
from .schema_nested import additions, path_text, with_fields

__all__ = ["apply_hints", "check_hints", "EVOLUTION_MODES", "EVOLUTION_OFF",
           "DEFAULT_EVOLUTION_MODE", "Field", "Hint", "SchemaDecision", "TRACKABLE_FORMATS",
           "decide", "effective_evolution_mode", "new_columns", "normalize_evolution_mode",
           "name_key", "changes_between"]

#: Auto Loader's schema evolution modes, in its spelling.
EVOLUTION_MODES: tuple[str, ...] = ("addNewColumns", "rescue", "failOnNewColumns", "none")
DEFAULT_EVOLUTION_MODE = "addNewColumns"
#: The value that turns tracking off (the read infers its schema every run, as Spark does).
EVOLUTION_OFF = "off"
#: File formats whose sources can track their schema.
TRACKABLE_FORMATS: tuple[str, ...] = ("json", "csv", "xml", "avro")


def effective_evolution_mode(mode: str | None, *, format: str, ctx: str | None,
                             schema_given: bool, read_mode: str = "PERMISSIVE") -> str | None:
    """The evolution mode a file read runs with (None: not tracked).

    ``mode`` None is the default: a source that can track its schema — a json, csv, xml or
    avro source read with a ``transformation_ctx``, no schema of the caller's, in PERMISSIVE
    mode — tracks it under ``addNewColumns``, as Auto Loader does when it infers; any other
    read is not tracked. ``"off"`` turns tracking off. Any other value is an evolution mode,
    asked for explicitly (the read then fails if it cannot track, naming why).
    """
    if mode is None:
        trackable = (ctx is not None and not schema_given
                     and format.strip().lower() in TRACKABLE_FORMATS
                     and read_mode.strip().upper() == "PERMISSIVE")
        return DEFAULT_EVOLUTION_MODE if trackable else None
    if isinstance(mode, str) and mode.strip().lower() == EVOLUTION_OFF:
        return None
    return normalize_evolution_mode(mode)


def normalize_evolution_mode(mode: str) -> str:
    """The canonical spelling of an evolution mode (matched case-insensitively); ConfigError
    naming the value and the modes otherwise."""
    text = mode.strip().lower() if isinstance(mode, str) else ""
    for known in EVOLUTION_MODES:
        if known.lower() == text:
            return known
    raise ConfigError(f"unknown schema evolution mode {mode!r}; expected one of: "
                      f"{', '.join(EVOLUTION_MODES)} (or {EVOLUTION_OFF})")


@dataclass(frozen=True)
class SchemaDecision:
    """What one run does with its source's schema (see :func:`decide`)."""

    schema: tuple[Field, ...]
    added: tuple[Field, ...] = ()
    new_columns: tuple[str, ...] = ()  # observed, not tracked (case-variants excluded)
    rescued_columns: tuple[str, ...] = ()  # observed columns whose values go to the rescue
    ignored_columns: tuple[str, ...] = ()  # new columns dropped (mode none)
    type_changes: tuple[str, ...] = ()  # tracked columns observed with another type
    error: str | None = None
    changes: tuple[dict[str, Any], ...] = field(default=())
    #: Fields observed inside tracked columns that their types do not name, as paths
    #: (``address.zip``, :mod:`.schema_nested`): added (``addNewColumns``), rescued
    #: (``rescue``), failing the run (``failOnNewColumns``) or ignored (``none``).
    new_fields: tuple[str, ...] = ()
    added_fields: tuple[str, ...] = ()  # the new fields the schema now holds
    ignored_fields: tuple[str, ...] = ()  # new fields dropped (mode none)

    @property
    def changed(self) -> bool:
        """Whether the tracked schema changes (to be committed with the run)."""
        return bool(self.added or self.added_fields)


def new_columns(tracked: Sequence[Field] | None, observed: Iterable[str],
                reserved: Collection[str] = ()) -> list[str]:
    """The observed names that are neither tracked (up to case and whitespace) nor reserved,
    in first-seen order without repeats (up to case and whitespace)."""
    known = {name_key(f.name) for f in tracked or ()}
    skip = {name_key(r) for r in reserved}
    out: list[str] = []
    for name in observed:
        key = name_key(name)
        if key in known or key in skip or not name.strip():
            continue
        known.add(key)
        out.append(name)
    return out


def changes_between(old: Sequence[Field] | None, new: Sequence[Field]) -> list[dict[str, Any]]:
    """The history entries that turn ``old`` into ``new``: added columns, fields added inside
    a column (``{"column": "address.zip", "path": ["address", "zip"], ...}``) and changed
    types."""
    before = {f.name: f.type for f in old or ()}
    out: list[dict[str, Any]] = []
    for f in new:
        if f.name not in before:
            out.append({"column": f.name, "change": "added", "type": f.type})
            continue
        inside = additions(before[f.name], f.type)
        if inside and with_fields(before[f.name], inside) == f.type:
            out += [{"column": path_text((f.name, *p)), "path": [f.name, *p],
                     "change": "added", "type": t} for p, t in inside]
        elif before[f.name] != f.type:
            out.append({"column": f.name, "change": "type", "type": f.type,
                        "old_type": before[f.name]})
    return out


def _by_column(hints: Sequence[Field]) -> dict[str, list[Hint]]:
    """``hints`` grouped by the column they are in (up to case and whitespace), in order."""
    out: dict[str, list[Hint]] = {}
    for h in hints:
        out.setdefault(name_key(h.name), []).append(as_hint(h))
    return out


def apply_hints(fields: Sequence[Field], hints: Sequence[Field], *,
                add_missing: bool = False) -> list[Field]:
    """``fields`` with the types that ``hints`` give (Auto Loader's ``schemaHints``), matched
    by name up to case and whitespace: a hint on a column replaces its type, a hint on a
    nested field (:class:`.schema_hints.Hint` with a path) replaces or adds that field inside
    it. ``add_missing`` appends the hinted columns not among ``fields`` (made up of their
    hints: a struct for ``a.b int``). ConfigError naming a hint whose path cannot go through
    its column's type (``id.x int`` with ``id bigint``)."""
    grouped = _by_column(hints)
    out = [Field(f.name, hinted_type(f.type, grouped[name_key(f.name)]))
           if name_key(f.name) in grouped else f for f in fields]
    if add_missing:
        present = {name_key(f.name) for f in fields}
        out += [Field(column[0].name, hinted_type(None, column))
                for key, column in grouped.items() if key not in present]
    return out


def check_hints(fields: Sequence[Field], hints: Sequence[Field]) -> None:
    """Refuse (ConfigError naming the hint) a nested hint whose path cannot go through its
    column's type in ``fields`` (tracked columns keep their types: nothing is applied)."""
    apply_hints([f for f in fields if f.type is not None], hints)


def _hinted_inside(type_: Any, added: Sequence[tuple[str, ...]], hints: Sequence[Field],
                   column: str) -> Any:
    """``type_`` (column ``column`` with fields ``added`` inside it) with the nested hints
    whose paths lie in an added field (``address.zip int``): a new nested field takes its
    hint as a new column does; the column's tracked fields keep their types."""
    def inside(path: Sequence[str]) -> bool:
        keys = [name_key(p) for p in path]
        return any(keys[:len(a)] == [name_key(x) for x in a] for a in added)

    under = [h for h in _by_column(hints).get(name_key(column), []) if h.path and inside(h.path)]
    return hinted_type(type_, under) if under else type_


def decide(tracked: Sequence[Field] | None, observed: Sequence[Field], mode: str,
           *, reserved: Collection[str] = (), hints: Sequence[Field] = ()) -> SchemaDecision:
    """The schema a run reads with, given the tracked one (None: the source's first run),
    the columns the run observed and the evolution mode.

    The first run takes the observed columns (minus reserved names and case-variants of an
    earlier column, which are rescued). Later runs keep every tracked column with its type, in
    order; new columns are appended (``addNewColumns``), rescued (``rescue``), make an error
    (``failOnNewColumns``) or are ignored (``none``). ``hints`` fix the type of a column, or
    of a field nested in it (:class:`.schema_hints.Hint`), when the column enters the schema
    (first run: hinted columns and fields not observed are added too); a tracked column keeps
    its type, nested fields included, but a nested hint whose path cannot go through it
    (``id.x int`` with ``id bigint``) is refused all the same (ConfigError naming the hint).

    A tracked column observed with a type that adds fields inside it (:mod:`.schema_nested`:
    ``address struct<city>`` observed as ``struct<city, zip>``) has *new fields*, named by
    path (``address.zip``): the mode treats them as it treats new columns — ``addNewColumns``
    puts them into the column's type (history entries per path), ``rescue`` leaves the type
    (the readers rescue the values holding them), ``failOnNewColumns`` fails naming them,
    ``none`` ignores them. What the observed type changes otherwise is a type change.
    """
    mode = normalize_evolution_mode(mode)
    skip = {name_key(r) for r in reserved}
    hints = [h for h in hints if name_key(h.name) not in skip]
    if tracked is None:
        schema: list[Field] = []
        seen: set[str] = set()
        rescued: list[str] = []
        for f in observed:
            key = name_key(f.name)
            if key in skip or not f.name.strip():
                continue
            if key in seen:
                rescued.append(f.name)
                continue
            seen.add(key)
            schema.append(f)
        schema = apply_hints(schema, hints, add_missing=True)
        return SchemaDecision(tuple(schema), added=tuple(schema),
                              rescued_columns=tuple(rescued),
                              changes=tuple(changes_between(None, schema)))
    check_hints(tracked, hints)
    exact = {f.name: f for f in tracked}
    keys = {name_key(f.name) for f in tracked}
    variants = [f.name for f in observed
                if f.name not in exact and name_key(f.name) in keys]
    # Fields inside tracked columns that their types do not name (address.zip).
    inside: dict[str, list[tuple[tuple[str, ...], Any]]] = {}
    for f in observed:
        if f.name in exact and f.type is not None and exact[f.name].type is not None:
            found = additions(exact[f.name].type, f.type)
            if found:
                inside[f.name] = found
    nested_paths = tuple(path_text((c, *p)) for c, found in inside.items() for p, _ in found)
    evolved = {c: _hinted_inside(with_fields(exact[c].type, found), [p for p, _ in found],
                                 hints, c) for c, found in inside.items()}
    type_changes = [f.name for f in observed
                    if f.name in exact and f.type is not None and exact[f.name].type is not None
                    and f.type != evolved.get(f.name, exact[f.name].type)]
    fresh_names = new_columns(tracked, [f.name for f in observed], reserved)
    by_name = {f.name: f for f in observed}
    fresh = apply_hints([by_name[n] for n in fresh_names], hints)
    # Names of observed columns that repeat a new one up to case: rescued, not added twice.
    fresh_keys = {name_key(n) for n in fresh_names}
    repeats = [f.name for f in observed if f.name not in fresh_names
               and name_key(f.name) in fresh_keys and f.name not in exact]
    rescued = list(dict.fromkeys(variants + type_changes + repeats))
    base = tuple(tracked)
    if mode == "addNewColumns":
        missing = [f.name for f in fresh if f.type is None]
        if missing:
            raise ConfigError("the types of new column(s) " + ", ".join(missing) +
                              " are unknown: observe them with types before deciding")
        grown = tuple(Field(f.name, evolved[f.name]) if f.name in evolved else f for f in base)
        return SchemaDecision(grown + tuple(fresh), added=tuple(fresh),
                              new_columns=tuple(fresh_names), rescued_columns=tuple(rescued),
                              type_changes=tuple(type_changes),
                              changes=tuple(changes_between(tracked, grown + tuple(fresh))),
                              new_fields=nested_paths, added_fields=nested_paths)
    if mode == "rescue":
        return SchemaDecision(base, new_columns=tuple(fresh_names),
                              rescued_columns=tuple(dict.fromkeys(rescued + fresh_names)),
                              type_changes=tuple(type_changes), new_fields=nested_paths)
    if mode == "failOnNewColumns":
        error = None
        if fresh_names or nested_paths:
            what = []
            if fresh_names:
                what.append("new column(s) " + ", ".join(fresh_names))
            if nested_paths:
                what.append("new nested field(s) " + ", ".join(nested_paths))
            error = (" and ".join(what) + " not in the tracked schema "
                     "(schema evolution mode failOnNewColumns)")
        return SchemaDecision(base, new_columns=tuple(fresh_names),
                              rescued_columns=tuple(rescued), type_changes=tuple(type_changes),
                              error=error, new_fields=nested_paths)
    return SchemaDecision(base, new_columns=tuple(fresh_names), rescued_columns=tuple(rescued),
                          ignored_columns=tuple(fresh_names), type_changes=tuple(type_changes),
                          new_fields=nested_paths, ignored_fields=nested_paths)
