"""Iceberg's Hadoop (file-system) catalog as a pyiceberg catalog, for a local warehouse.

Iceberg's ``HadoopCatalog`` (``spark.sql.catalog.X.type=hadoop``, ``.warehouse=PATH``) keeps no
catalog service: a namespace is a folder ``<warehouse>/<ns>``, a table the folder
``<warehouse>/<ns>/<table>`` whose ``metadata/`` holds ``v1.metadata.json``, ``v2.metadata.json``
… and ``version-hint.text`` (the current version's number). A commit writes the next
``v<N+1>.metadata.json`` only if no one else wrote it (the file-system's atomic
create-if-absent, which is what makes the catalog safe) and then the version hint. pyiceberg has
no such catalog, so :class:`HadoopCatalog` gives it (loaded through pyiceberg's
``py-catalog-impl``), reading and writing that same layout, so tables are shared with Iceberg's
Spark runtime in both directions:

* load: the version hint, then any later ``v<N>.metadata.json`` (Iceberg walks forward the same
  way when a hint lags); a missing or unreadable hint: the highest version present;
* commit: the new metadata is written to a temporary file, linked to ``v<N+1>.metadata.json``
  (fails when it exists: a concurrent commit wins, and this one fails with
  ``CommitFailedException``), then ``version-hint.text`` is replaced;
* as Iceberg's HadoopCatalog: no custom table locations, no namespace properties, no rename, no
  ``register_table``; dropping a table removes its folder.

Only local warehouses (a path or ``file://``): Iceberg documents that Hadoop tables need a file
system with atomic rename, which S3 is not, so an ``s3://`` warehouse is refused by name.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.exceptions import (CommitFailedException, NamespaceAlreadyExistsError,
                                  NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
                                  NoSuchViewError, TableAlreadyExistsError)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table.update import TableRequirement, TableUpdate
    from pyiceberg.view import View

from ._iceberg_spark import local_root

__all__ = ["HadoopCatalog"]

_VERSION = re.compile(r"v(\d+)\.metadata\.json")
_HINT = "version-hint.text"


class HadoopCatalog(MetastoreCatalog):
    """Iceberg's HadoopCatalog layout on a local folder (module docstring)."""

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        warehouse = properties.get("warehouse")
        if not warehouse:
            raise ValueError(f"Hadoop catalog {name!r} needs a warehouse")
        self._root = local_root(warehouse)

    # -- layout -------------------------------------------------------------------------------
    def _name(self, identifier: str | Identifier) -> str:
        return ".".join(self.identifier_to_tuple(identifier))

    def _table_dir(self, identifier: str | Identifier) -> Path:
        parts = self.identifier_to_tuple(identifier)
        if len(parts) < 2:
            raise NoSuchTableError(f"Hadoop catalog table name needs a namespace: {identifier}")
        return self._root.joinpath(*parts)

    def _namespace_dir(self, namespace: str | Identifier) -> Path:
        return self._root.joinpath(*self.identifier_to_tuple(namespace))

    @staticmethod
    def _versions(metadata: Path) -> list[int]:
        if not metadata.is_dir():
            return []
        return sorted(int(m.group(1)) for p in metadata.iterdir()
                      if (m := _VERSION.fullmatch(p.name)))

    @classmethod
    def _current(cls, table_dir: Path) -> int | None:
        """The table's current metadata version (module docstring), None if it has none."""
        metadata = table_dir / "metadata"
        version: int | None = None
        try:
            version = int((metadata / _HINT).read_text().strip())
        except (OSError, ValueError):
            versions = cls._versions(metadata)
            version = versions[-1] if versions else None
        if version is None or not (metadata / f"v{version}.metadata.json").exists():
            versions = cls._versions(metadata)
            if not versions:
                return None
            version = versions[-1] if version is None else max(
                [v for v in versions if v <= version] or [versions[-1]])
        while (metadata / f"v{version + 1}.metadata.json").exists():
            version += 1
        return version

    def _is_table(self, folder: Path) -> bool:
        return self._current(folder) is not None

    # -- tables -------------------------------------------------------------------------------
    def load_table(self, identifier: str | Identifier) -> Table:
        folder = self._table_dir(identifier)
        version = self._current(folder)
        if version is None:
            raise NoSuchTableError(f"Table does not exist: {self._name(identifier)}")
        location = str(folder / "metadata" / f"v{version}.metadata.json")
        io = self._load_file_io(location=location)
        metadata = FromInputFile.table_metadata(io.new_input(location))
        return Table(identifier=self.identifier_to_tuple(identifier), metadata=metadata,
                     metadata_location=location, io=io, catalog=self)

    def new_table_location(self, namespace: str, table: str) -> str:
        """Where a new table ``namespace.table`` lives (lakemark's Iceberg sink asks before it
        writes the data files): ``<warehouse>/<namespace>/<table>``."""
        return str(self._table_dir((*namespace.split("."), table)))

    def _resolve_table_location(self, location: str | None, database_name: str,
                                table_name: str) -> str:
        folder = self._table_dir((*database_name.split("."), table_name))
        if location is not None and location.rstrip("/") not in (str(folder), folder.as_uri()):
            raise ValueError(f"Cannot set a custom location for a Hadoop catalog table "
                             f"({location}); it is {folder}")
        return str(folder)

    def create_table(self, identifier: str | Identifier, schema: Schema | pa.Schema,
                     location: str | None = None,
                     partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
                     sort_order: SortOrder = UNSORTED_SORT_ORDER,
                     properties: Properties = EMPTY_DICT) -> Table:
        from pyiceberg.table import TableProperties
        from pyiceberg.table.metadata import new_table_metadata

        folder = self._table_dir(identifier)
        parts = self.identifier_to_tuple(identifier)
        self._resolve_table_location(location, ".".join(parts[:-1]), parts[-1])
        converted: Schema = self._convert_schema_if_needed(  # type: ignore[assignment]
            schema, int(properties.get(TableProperties.FORMAT_VERSION,  # type: ignore[arg-type]
                                       TableProperties.DEFAULT_FORMAT_VERSION)))
        if self._current(folder) is not None:
            raise TableAlreadyExistsError(f"Table already exists: {self._name(identifier)}")
        metadata = new_table_metadata(location=str(folder), schema=converted,
                                      partition_spec=partition_spec, sort_order=sort_order,
                                      properties=properties)
        self._publish(folder, 1, metadata, identifier)
        return self.load_table(identifier)

    def _publish(self, folder: Path, version: int, metadata: Any,
                 identifier: str | Identifier) -> str:
        """Write ``v<version>.metadata.json`` only if absent, then the version hint."""
        directory = folder / "metadata"
        directory.mkdir(parents=True, exist_ok=True)
        final = directory / f"v{version}.metadata.json"
        temporary = directory / f".{uuid.uuid4()}.metadata.json.tmp"
        io = self._load_file_io(location=str(temporary))
        ToOutputFile.table_metadata(metadata, io.new_output(str(temporary)))
        try:
            os.link(temporary, final)  # atomic, and fails when another commit made it
        except FileExistsError:
            name = ".".join(self.identifier_to_tuple(identifier))
            raise CommitFailedException(f"Table {name} was committed by another writer "
                                        f"(version {version} exists); retry") from None
        finally:
            temporary.unlink(missing_ok=True)
        hint = directory / f".{uuid.uuid4()}-{_HINT}.tmp"
        hint.write_text(str(version))
        os.replace(hint, directory / _HINT)
        return str(final)

    def commit_table(self, table: Table, requirements: tuple[TableRequirement, ...],
                     updates: tuple[TableUpdate, ...]) -> CommitTableResponse:
        identifier = table.name()
        folder = self._table_dir(identifier)
        try:
            current: Table | None = self.load_table(identifier)
        except NoSuchTableError:
            current = None
        staged = self._update_and_stage_table(current, identifier, requirements, updates)
        if current is not None and staged.metadata == current.metadata:
            return CommitTableResponse(  # type: ignore[call-arg]  # pydantic field by name
                metadata=current.metadata, metadata_location=current.metadata_location)
        version = (self._current(folder) or 0) + 1
        location = self._publish(folder, version, staged.metadata, identifier)
        return CommitTableResponse(  # type: ignore[call-arg]  # pydantic field by name
            metadata=staged.metadata, metadata_location=location)

    def drop_table(self, identifier: str | Identifier) -> None:
        folder = self._table_dir(identifier)
        if self._current(folder) is None:
            raise NoSuchTableError(f"Table does not exist: {self._name(identifier)}")
        shutil.rmtree(folder)

    def rename_table(self, from_identifier: str | Identifier,
                     to_identifier: str | Identifier) -> Table:
        raise NotImplementedError("Cannot rename Hadoop catalog tables (as Iceberg's "
                                  "HadoopCatalog)")

    def register_table(self, identifier: str | Identifier, metadata_location: str,
                       overwrite: bool = False) -> Table:
        raise NotImplementedError("Hadoop catalog tables cannot be registered (as Iceberg's "
                                  "HadoopCatalog)")

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        folder = self._namespace_dir(namespace)
        if not folder.is_dir():
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        base = self.identifier_to_tuple(namespace)
        return [(*base, p.name) for p in sorted(folder.iterdir())
                if p.is_dir() and self._is_table(p)]

    # -- namespaces ---------------------------------------------------------------------------
    def create_namespace(self, namespace: str | Identifier,
                         properties: Properties = EMPTY_DICT) -> None:
        if properties:
            raise ValueError("Hadoop catalog namespaces have no properties (as Iceberg's "
                             "HadoopCatalog)")
        folder = self._namespace_dir(namespace)
        if folder.exists():
            raise NamespaceAlreadyExistsError(f"Namespace already exists: {namespace}")
        folder.mkdir(parents=True)

    def drop_namespace(self, namespace: str | Identifier) -> None:
        folder = self._namespace_dir(namespace)
        if not folder.is_dir() or self._is_table(folder):
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        if any(folder.iterdir()):
            raise NamespaceNotEmptyError(f"Namespace is not empty: {namespace}")
        folder.rmdir()

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        base = self.identifier_to_tuple(namespace) if namespace else ()
        folder = self._root.joinpath(*base)
        if not folder.is_dir():
            return []
        return [(*base, p.name) for p in sorted(folder.iterdir())
                if p.is_dir() and not p.name.startswith(".") and not self._is_table(p)]

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        folder = self._namespace_dir(namespace)
        return folder.is_dir() and not self._is_table(folder)

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        return {"location": str(self._namespace_dir(namespace))}

    def update_namespace_properties(self, namespace: str | Identifier,
                                    removals: set[str] | None = None,
                                    updates: Properties = EMPTY_DICT) -> Any:
        raise NotImplementedError("Hadoop catalog namespaces have no properties")

    # -- views: Iceberg's HadoopCatalog has none ---------------------------------------------
    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        return []

    def view_exists(self, identifier: str | Identifier) -> bool:
        return False

    def load_view(self, identifier: str | Identifier) -> View:
        raise NoSuchViewError(f"Hadoop catalogs have no views: {identifier}")

    def drop_view(self, identifier: str | Identifier) -> None:
        raise NoSuchViewError(f"Hadoop catalogs have no views: {identifier}")

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> View:
        raise NotImplementedError("Hadoop catalogs have no views")

    def close(self) -> None:
        """Nothing to release: the catalog is the folder."""
