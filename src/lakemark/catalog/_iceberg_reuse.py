"""Cheaper Iceberg commits and loads: parsed table metadata is reused, never deep-copied.

pyiceberg spends most of a commit on a long table history in two places that do not depend on
what the commit changes:

* it parses (and validates) the whole metadata JSON — every snapshot with its summary — each
  time a table is loaded, and a SQL or Glue catalog loads the table again inside
  ``commit_table``;
* ``update_table_metadata`` ends with a *deep* copy of the whole metadata, once for every
  view of a transaction and once more inside the catalog commit.

A metadata file is never rewritten (each commit writes a new one under a new name), and
pyiceberg's metadata models are frozen: so a catalog opened by :func:`reusing` keeps the
metadata it parsed or committed by location (a small process-wide cache) and hands out
:func:`shared` metadata, whose deep copy is a shallow one (the frozen snapshots, schemas and
summaries are shared; pyiceberg builds new lists and dicts on every update and never changes
them in place). Loading a table whose current metadata this process already read or wrote costs
the catalog query and no parsing.

The same hooks let :func:`metadata_location` ask a SQL or Glue catalog for a table's current
metadata file without reading it (for :mod:`lakemark.catalog._iceberg_light`).

Applies to pyiceberg's SQL and Glue catalogs (the ones lakemark resolves); other catalog types
get the shared-metadata commit path only. Built against pyiceberg 0.12's catalog internals
(``_convert_orm_to_iceberg``, ``_convert_glue_to_iceberg``, ``_update_and_stage_table``).
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata

__all__ = ["reusing", "shared", "cached_metadata", "metadata_location", "CACHE_SIZE"]

#: How many metadata versions the process keeps, least recently used dropped first. A version
#: a commit derived from a kept one shares its snapshot objects; one parsed from a file does not
#: (a 1,000-snapshot table's metadata is ~4.4 MB of Python objects).
CACHE_SIZE = 8

_lock = threading.Lock()
_cache: OrderedDict[str, Any] = OrderedDict()
_shared_classes: dict[type, type] = {}
_catalog_classes: dict[type, type] = {}
_locating = threading.local()  # set while metadata_location() asks the catalog


class _Located(Exception):
    """Carries a table's metadata location out of a catalog's ``load_table`` (no parsing)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


def _shared_class(cls: type) -> type:
    """``cls`` (a frozen pydantic metadata model) with a deep copy that copies one level."""
    with _lock:
        found = _shared_classes.get(cls)
        if found is None:
            def __deepcopy__(self: Any, memo: dict[int, Any] | None = None) -> Any:
                return self.__copy__()

            found = type(f"Shared{cls.__name__}", (cls,),
                         {"__deepcopy__": __deepcopy__, "__module__": __name__,
                          "__doc__": f"{cls.__name__} whose deep copy shares its frozen parts."})
            _shared_classes[cls] = found
            _shared_classes[found] = found
        return found


def shared(metadata: TableMetadata) -> TableMetadata:
    """``metadata`` as an object whose deep copies (and the copies pyiceberg derives from it)
    share its frozen parts; the same values, serialized identically."""
    cls = type(metadata)
    if _shared_classes.get(cls) is cls:
        return metadata
    out = copy.copy(metadata)
    object.__setattr__(out, "__class__", _shared_class(cls))
    return out


def _remember(location: str, metadata: TableMetadata) -> TableMetadata:
    kept = shared(metadata)
    with _lock:
        _cache[location] = kept
        _cache.move_to_end(location)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return kept


def cached_metadata(location: str) -> TableMetadata | None:
    """The metadata at ``location`` if this process parsed or wrote it (None otherwise)."""
    with _lock:
        found = _cache.get(location)
        if found is not None:
            _cache.move_to_end(location)
        return found  # type: ignore[no-any-return]


def _cached_table(catalog: Any, identifier: tuple[str, ...], location: Any) -> Table | None:
    """A table of ``catalog`` built on the cached metadata at ``location``, if any."""
    metadata = cached_metadata(location) if isinstance(location, str) and location else None
    if metadata is None:
        return None
    from pyiceberg.table import Table

    return Table(identifier=identifier, metadata=metadata, metadata_location=location,
                 io=catalog._load_file_io(metadata.properties, location), catalog=catalog)


def _kept(table: Table) -> Table:
    table.metadata = _remember(table.metadata_location, table.metadata)
    return table


def _stop_if_locating(location: Any) -> None:
    if getattr(_locating, "on", False) and isinstance(location, str) and location:
        raise _Located(location)


def metadata_location(catalog: Catalog, identifier: tuple[str, ...]) -> str | None:
    """The table's current metadata file, as the catalog's ``load_table`` finds it (same query,
    same errors for a missing table) but without reading or parsing the file; None for a
    catalog :func:`reusing` does not know how to ask (not a SQL or Glue catalog)."""
    if not getattr(type(catalog), "_lakemark_reusing", False) or not any(
            c.__name__ in ("SqlCatalog", "GlueCatalog") for c in type(catalog).__mro__):
        return None
    _locating.on = True
    try:
        catalog.load_table(identifier)
    except _Located as found:
        return found.location
    finally:
        _locating.on = False
    return None


def _reusing_class(cls: type) -> type:
    """A subclass of the catalog class ``cls`` that reuses metadata (module docstring).

    A subclass, not a mixin in front of ``cls``: CPython lets an object's class be changed
    only to one with the same layout, which a class with another base first does not have."""

    class Reusing(cls):  # type: ignore[valid-type,misc]
        __slots__ = ()
        _lakemark_reusing = True

        def _convert_orm_to_iceberg(self, orm_table: Any) -> Table:  # SQL catalog
            from pyiceberg.catalog import Catalog

            _stop_if_locating(getattr(orm_table, "metadata_location", None))
            namespace = getattr(orm_table, "table_namespace", None)
            table = getattr(orm_table, "table_name", None)
            if namespace and table:
                found = _cached_table(self, Catalog.identifier_to_tuple(namespace) + (table,),
                                      getattr(orm_table, "metadata_location", None))
                if found is not None:
                    return found
            return _kept(super()._convert_orm_to_iceberg(orm_table))

        def _convert_glue_to_iceberg(self, glue_table: Any) -> Table:  # Glue catalog
            parameters = glue_table.get("Parameters") or {}
            if str(parameters.get("table_type", "")).lower() == "iceberg":
                _stop_if_locating(parameters.get("metadata_location"))
            database, table = glue_table.get("DatabaseName"), glue_table.get("Name")
            if database and table and str(parameters.get("table_type", "")).lower() == "iceberg":
                found = _cached_table(self, (database, table), parameters.get("metadata_location"))
                if found is not None:
                    return found
            return _kept(super()._convert_glue_to_iceberg(glue_table))

        def _update_and_stage_table(self, current_table: Table | None, *args: Any,
                                    **kwargs: Any) -> Any:
            if current_table is not None:
                current_table.metadata = shared(current_table.metadata)
            return super()._update_and_stage_table(current_table, *args, **kwargs)

        def commit_table(self, table: Table, requirements: Any, updates: Any) -> Any:
            response = super().commit_table(table, requirements, updates)
            _remember(response.metadata_location, response.metadata)
            return response

    Reusing.__name__ = Reusing.__qualname__ = f"Reusing{cls.__name__}"
    return Reusing


def reusing(catalog: Catalog) -> Catalog:
    """``catalog``, made to reuse parsed metadata and skip deep copies (module docstring)."""
    cls = type(catalog)
    if getattr(cls, "_lakemark_reusing", False):
        return catalog
    with _lock:
        mixed = _catalog_classes.get(cls)
        if mixed is None:
            mixed = _catalog_classes[cls] = _reusing_class(cls)
    catalog.__class__ = mixed
    return catalog
