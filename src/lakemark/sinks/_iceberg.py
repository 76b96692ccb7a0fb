"""Iceberg tables: Spark writes the Parquet files, pyiceberg commits them (docs/iceberg.md).

One write is one Iceberg snapshot: the files Spark wrote are added with ``add_files`` (by
column name; lakemark's files carry no Iceberg field ids), and the snapshot summary carries the
write's id and, with an :class:`~lakemark.sinks.IdempotencyToken`, the token
(``lakemark.appId`` / ``lakemark.appVersion``), so "data visible" and "token recorded" are one
commit.

Sequence and guarantees:

1. Resolve the catalog and the name (ConfigError before anything is written), open the table.
   With a token, if an ancestor of the current snapshot records the same app id at a version
   at or above the token's, the write is skipped before Spark computes anything.
2. Check the DataFrame against the table (same column names, same types; nullability
   ignored). A new table gets the DataFrame's schema and the location
   ``<warehouse>/<db>.db/<table>``.
3. Spark writes the files into ``<location>/data`` (through a hidden staging folder, as for
   Delta). Files no snapshot lists are invisible to every Iceberg reader, so a killed write
   leaves no visible data; they are deleted if the write fails without being killed.
4. Commit against the metadata read in step 1: pyiceberg's commit asserts that ``main`` still
   points at the snapshot whose ancestry was checked, so a racing commit makes ours fail
   (pyiceberg's own rebuild-and-retry of the append is turned off). Then the table is
   reloaded: this write's id in the history → it committed; the token now there → skipped
   (our files deleted); otherwise the check runs again and the commit is retried. A new table
   is created and given its first snapshot in one catalog commit.

Appends merge manifests as Iceberg's do (``commit.manifest-merge.enabled``, true unless the
table says otherwise; new tables get it set), so a snapshot's manifest list stays short however
many runs appended; the catalog reuses metadata it already parsed and pyiceberg's deep copies
of the history are skipped (:mod:`lakemark.catalog._iceberg_reuse`).

``mode="overwrite"`` deletes every row and adds the new files in one transaction (a delete
and an append snapshot, committed together; the token is in both summaries). ``partition_by``
gives a new table its partition spec: columns (identity) and ``days(ts)``-style time and
truncate transforms (:mod:`lakemark.sinks._iceberg_partition`; Spark writes one folder per
partition value, each file holding the source columns); an existing table keeps its own.
``mergeSchema=true`` adds the DataFrame's new columns to the table's schema in the same commit
(columns it lacks read as null). Tables live on local disk (``file://``) or on S3
(``s3://``): there the files are written as the Delta sink writes them to S3, by pyarrow on the
executors
(:mod:`lakemark.sinks._arrow_writer`, no S3A connector needed), straight into
``<location>/data`` (no staging: files no snapshot lists are invisible), and pyiceberg's
PyArrow FileIO reads their footers and writes the metadata (endpoint and region from the
catalog, :func:`lakemark.catalog._iceberg.load_iceberg_catalog`).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._fault import fault_point
from .._commit_gate import before_commit
from ..catalog._iceberg import (
    CatalogChoice,
    IcebergTableName,
    load_iceberg_catalog,
    parse_table_name,
    resolve_iceberg_catalog,
    spec_for_table,
)
from ..errors import ConfigError, SinkError
from ..planning.partition_transforms import PartitionField, parse_partition_fields
from ._arrow_writer import ArrowWriteSpec, check_compression, run_arrow_write
from ._iceberg_partition import (
    add_to_spec,
    check_partition_schema,
    fields_of_table,
    with_partition_folders,
)
from ._location import Target, check_target, delete_files, resolve_target, sweep_write
from ._model import IdempotencyToken, WriteResult
from ._schema import arrow_schema, delta_schema, kinds_of
from ._spark_writer import spark_errors, spark_failure, write_delta_files
from ._values import zone

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["write_iceberg", "check_iceberg_write", "iceberg_committed", "iceberg_table_root",
           "MANIFEST_MERGE_KEY", "APP_ID_KEY", "APP_VERSION_KEY", "WRITE_ID_KEY",
           "MAX_COMMIT_ATTEMPTS"]

#: Iceberg's table property for merging manifests on append; lakemark's appends merge unless
#: a table sets it to false (Iceberg's own default), and new tables get it set to true.
MANIFEST_MERGE_KEY = "commit.manifest-merge.enabled"
APP_ID_KEY = "lakemark.appId"
APP_VERSION_KEY = "lakemark.appVersion"
WRITE_ID_KEY = "lakemark.writeId"
MAX_COMMIT_ATTEMPTS = 5


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _summaries(table: Table) -> Iterator[Mapping[str, str]]:
    """The snapshot summaries of ``main``'s ancestry, newest first (parent pointers followed
    through a map of the snapshots: one pass, however long the history)."""
    metadata = table.metadata
    by_id = {s.snapshot_id: s for s in metadata.snapshots}
    seen: set[int] = set()
    current = metadata.current_snapshot_id
    while current is not None and current not in seen:
        snapshot = by_id.get(current)
        if snapshot is None:
            return  # expired: the ancestry ends here
        seen.add(current)
        yield snapshot.summary.additional_properties if snapshot.summary is not None else {}
        current = snapshot.parent_snapshot_id


def _token_committed(table: Table, token: IdempotencyToken | None) -> bool:
    """Whether an ancestor of ``main`` records ``token``'s app id at a version at or above
    its own (the whole ancestry is read: versions need not grow along it)."""
    if token is None:
        return False
    for summary in _summaries(table):
        if summary.get(APP_ID_KEY) == token.app_id:
            with contextlib.suppress(ValueError):
                if int(summary.get(APP_VERSION_KEY, "-1")) >= token.version:
                    return True
    return False


def _has_write(table: Table, key: str, value: str) -> bool:
    return any(summary.get(key) == value for summary in _summaries(table))


def check_iceberg_write(table: str, *, mode: str, partition_by: Sequence[str],
                        options: Mapping[str, str], iceberg_catalog: CatalogChoice,
                        ) -> tuple[IcebergTableName, Any]:
    """Every check that needs no I/O: the name, the catalog setting, mode and options."""
    name = parse_table_name(table)
    spec = spec_for_table(resolve_iceberg_catalog(iceberg_catalog), name)
    if mode not in ("append", "overwrite"):
        raise ConfigError(f"Iceberg target {table}: mode {mode!r} is not supported (append or "
                          "overwrite)")
    unknown = sorted(k for k in options if k.lower() not in ("compression", "mergeschema"))
    if unknown:
        raise ConfigError(f"option(s) {', '.join(unknown)} are not supported for Iceberg "
                          f"target {table}; supported: compression, mergeSchema")
    _merge_schema(table, options)
    parse_partition_fields(partition_by)  # an unknown transform named before any I/O
    return name, spec


def _merge_schema(table: str, options: Mapping[str, str]) -> bool:
    value = next((v for k, v in options.items() if k.lower() == "mergeschema"), "false")
    if str(value).strip().lower() not in ("true", "false"):
        raise ConfigError(f"option mergeSchema of Iceberg target {table} must be true or "
                          f"false, not {value!r}")
    return str(value).strip().lower() == "true"


def _partition_fields(table: Table | None, name: IcebergTableName,
                      partition_by: Sequence[str]) -> list[PartitionField]:
    """The partition fields to write: ``partition_by`` for a new table; for an existing one
    its own spec (``partition_by`` must be empty or the same fields)."""
    given = parse_partition_fields(partition_by)
    if table is None:
        return given
    own = fields_of_table(table, str(name))
    if given and given != own:
        shown = ", ".join(f.text() for f in own) or "nothing"
        raise ConfigError(f"Iceberg table {name} is partitioned by {shown}, not "
                          f"{', '.join(f.text() for f in given)}: an existing table keeps its "
                          "partitioning")
    return own


def _open(catalog: Catalog, name: IcebergTableName) -> Table | None:
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    try:
        return catalog.load_table(name.identifier)
    except (NoSuchTableError, NoSuchNamespaceError):
        return None


def _differences(table: Table, frame: pa.Schema, merge: bool = False) -> list[str]:
    """How ``frame`` differs from the table; with ``merge`` (mergeSchema) new and missing
    columns, and fields added inside a column's structs (:func:`_grows`), are allowed (added
    to the table; read as null), only type changes are not."""
    have = {f.name: f.type for f in table.schema().as_arrow()}
    want = {f.name: f.type for f in frame}
    out = [] if merge else [f"column {n!r} is not in the table" for n in want if n not in have]
    if not merge:
        out += [f"table column {n!r} is missing from the DataFrame" for n in have
                if n not in want]
    out += [f"column {n!r} is {want[n]} here but {have[n]} in the table"
            for n in want if n in have and not _same_type(want[n], have[n])
            and not (merge and _grows(have[n], want[n]))]
    return out


def _grows(table: pa.DataType, frame: pa.DataType) -> bool:
    """Whether ``frame`` is ``table`` or ``table`` with fields added inside its structs (at
    any depth, through list elements and map values): what ``mergeSchema`` adds to a column
    (``union_by_name``), e.g. a tracked source's ``address.zip``."""
    import pyarrow as pa

    if _same_type(table, frame):
        return True
    if pa.types.is_struct(table) and pa.types.is_struct(frame):
        inner = {frame.field(i).name: frame.field(i).type for i in range(frame.num_fields)}
        return all(table.field(i).name in inner
                   and _grows(table.field(i).type, inner[table.field(i).name])
                   for i in range(table.num_fields))
    lists = (pa.types.is_list, pa.types.is_large_list)
    if any(t(table) for t in lists) and any(t(frame) for t in lists):
        return _grows(table.value_type, frame.value_type)
    if pa.types.is_map(table) and pa.types.is_map(frame):
        return (_same_type(table.key_type, frame.key_type)
                and _grows(table.item_type, frame.item_type))
    return False


def _same_type(a: pa.DataType, b: pa.DataType) -> bool:
    import pyarrow as pa

    def norm(t: pa.DataType) -> pa.DataType:
        if pa.types.is_large_string(t):
            return pa.string()
        if pa.types.is_large_binary(t):
            return pa.binary()
        return t
    return bool(norm(a) == norm(b))


def _table_location(catalog: Catalog, name: IcebergTableName, current: Table | None) -> str:
    """The table's location; for a new table the catalog's own choice where it has one
    (``new_table_location``: a Hadoop catalog's ``<warehouse>/<db>/<table>``), else
    ``<warehouse>/<db>.db/<table>``."""
    if current is not None:
        return current.location()
    own = getattr(catalog, "new_table_location", None)
    if callable(own):
        return str(own(name.namespace, name.table))
    warehouse = catalog.properties.get("warehouse")
    if not warehouse:
        raise ConfigError(f"Iceberg catalog {catalog.name!r} has no warehouse for new table "
                          f"{name}")
    if "://" not in warehouse and not warehouse.startswith("/"):
        raise ConfigError(f"Iceberg catalog {catalog.name!r} has warehouse {warehouse!r}, not a "
                          f"location (a path or s3:// prefix), for new table {name}: lakemark "
                          "writes the data files before the table is created")
    return f"{warehouse.rstrip('/')}/{name.namespace}.db/{name.table}"


def iceberg_table_root(table: str, *, mode: str, partition_by: Sequence[str],
                       options: Mapping[str, str], iceberg_catalog: CatalogChoice) -> str:
    """Check an Iceberg write as far as it can be without data, opening the catalog; the
    table's local folder (where a job keeps the run's corrupt records, hidden from readers).

    A job calls it before it records anything, so a bad name, catalog, mode or option
    changes no state."""
    name, spec = check_iceberg_write(table, mode=mode, partition_by=partition_by,
                                     options=options, iceberg_catalog=iceberg_catalog)
    catalog = load_iceberg_catalog(spec)
    return _table_root(_table_location(catalog, name, _open(catalog, name)), str(name))


def _table_root(location: str, table: str) -> str:
    """The table's folder as lakemark's storage names it: a local path or ``s3://…``."""
    scheme, sep, rest = location.partition("://")
    if not sep:
        return location
    if scheme.lower() == "file":
        return rest
    if scheme.lower() in ("s3", "s3a", "s3n"):
        return "s3://" + rest
    raise SinkError(f"Iceberg table {table} is at {location}: lakemark writes tables on local "
                    "disk (file://) or S3 (s3://) only", target=table)


def write_iceberg(spark: SparkSession, df: DataFrame, table: str, *, mode: str,
                  partition_by: Sequence[str], token: IdempotencyToken | None,
                  options: Mapping[str, str], iceberg_catalog: CatalogChoice = None,
                  commit_info: Mapping[str, str] | None = None) -> WriteResult:
    """Append ``df`` to (or with ``mode="overwrite"`` replace the rows of) the Iceberg table
    ``table`` (see the module docstring)."""
    name, spec = check_iceberg_write(table, mode=mode, partition_by=partition_by,
                                     options=options, iceberg_catalog=iceberg_catalog)
    merge = _merge_schema(table, options)
    options = {k: v for k, v in options.items() if k.lower() != "mergeschema"}
    frame = arrow_schema(df.schema, target=table)
    catalog = load_iceberg_catalog(spec)
    current = _open(catalog, name)
    if current is not None and _token_committed(current, token):
        return WriteResult(str(name), "iceberg", 0, 0, 0, skipped=True,
                           table_version=_snapshot_id(current))
    parts = _partition_fields(current, name, partition_by)
    missing = [f.column for f in parts if f.column not in df.columns]
    if missing:
        raise SinkError(f"partition column(s) {', '.join(missing)} of Iceberg table {name} are "
                        "not in the DataFrame (nothing was written)", target=table)
    if current is None:
        check_partition_schema(partition_by, df.schema, str(name))
    if current is not None:
        differences = _differences(current, frame, merge)
        if differences:
            raise SinkError(f"the DataFrame does not match the schema of Iceberg table {name} "
                            "(nothing was written): " + "; ".join(differences), target=table)
    location = _table_location(catalog, name, current)
    data = resolve_target(_table_root(location, str(name)).rstrip("/") + "/data")
    fs = data.filesystem()
    codec = _arrow_codec(table, options) if data.is_s3 else ""
    if data.is_s3 and current is None:
        check_target(data, fs)  # a missing bucket named before Spark computes anything
    write_id = uuid.uuid4().hex
    placed: list[str] = []
    committed = False
    properties = {**(commit_info or {}), WRITE_ID_KEY: write_id}
    if token is not None:
        properties.update({APP_ID_KEY: token.app_id, APP_VERSION_KEY: str(token.version)})
    try:
        tz_name = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        tz = zone(tz_name)
        written, folders = with_partition_folders(df, parts)
        kinds = kinds_of(delta_schema(written.schema, target=table))
        if data.is_s3:  # the Delta sink's path to S3: pyarrow on the executors, no S3A
            spec = ArrowWriteSpec(fs_config=data.fs_config, root=data.fs_path,
                                  write_id=write_id, format="parquet",
                                  partition_cols=tuple(folders), kinds=tuple(kinds.items()),
                                  session_tz=tz_name, compression=codec)
            try:
                files = run_arrow_write(written, spec)
            except spark_errors() as exc:
                sweep_write(data, fs, write_id)  # files of tasks that did finish
                raise spark_failure(data, exc) from exc
            placed.extend(f.path for f in files)
        else:
            files = write_delta_files(spark, written, data, write_id=write_id,
                                      partition_cols=folders, kinds=kinds, tz=tz,
                                      options=options, placed=placed)
        fault_point("mid-write")
        before_commit()  # the run checks its input was read as planned
        paths = [_file_uri(data, f.path) for f in files]
        snapshot, skipped = _commit(catalog, name, current, frame, location, paths,
                                    properties, token, write_id,
                                    _Change(mode == "overwrite", merge, tuple(parts)))
        committed = not skipped
    finally:
        if not committed:
            delete_files(data, fs, placed)
    if skipped:
        return WriteResult(str(name), "iceberg", 0, 0, 0, skipped=True, table_version=snapshot)
    return WriteResult(str(name), "iceberg", rows=sum(f.rows for f in files), files=len(files),
                       bytes=sum(f.size for f in files), skipped=False, table_version=snapshot)


def _file_uri(data: Target, relative: str) -> str:
    """A written file as the table lists it: ``file:///…`` or ``s3://bucket/…``."""
    if data.is_s3:
        return f"{data.root.rstrip('/')}/{relative}"
    return "file://" + os.path.join(data.root, relative)


def _arrow_codec(table: str, options: Mapping[str, str]) -> str:
    """The Parquet codec of a write to S3 (pyarrow writes it: ``compression`` is the only
    writer option, as for Delta tables on S3)."""
    codec = next((v for k, v in options.items() if k.lower() == "compression"), "snappy")
    if not check_compression("parquet", codec):
        raise ConfigError(f"option compression of Iceberg target {table}: unsupported Parquet "
                          f"codec {codec!r}")
    return codec.lower()


@dataclass(frozen=True)
class _Change:
    """How a commit changes the table besides adding files."""

    overwrite: bool = False  # delete every row first, in the same transaction
    merge_schema: bool = False  # add the DataFrame's new columns to the table's schema
    partition_by: tuple[PartitionField, ...] = ()  # the partition spec of a new table


def _snapshot_id(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot is not None else None


def _commit(catalog: Catalog, name: IcebergTableName, table: Table | None, frame: pa.Schema,
            location: str, paths: list[str], properties: dict[str, str],
            token: IdempotencyToken | None, write_id: str,
            change: _Change = _Change()) -> tuple[int | None, bool]:
    """Commit ``paths`` as one snapshot; ``(snapshot id, skipped)``."""
    from pyiceberg.exceptions import CommitFailedException, TableAlreadyExistsError
    from pyiceberg.table import Transaction

    for _attempt in range(MAX_COMMIT_ATTEMPTS):
        try:
            if table is None:
                with contextlib.suppress(Exception):  # exists already, or made by a racer
                    catalog.create_namespace_if_not_exists(name.namespace)
                tx: Transaction = catalog.create_table_transaction(
                    name.identifier, frame, location=location,
                    properties={MANIFEST_MERGE_KEY: "true"})
                if change.partition_by:
                    with tx.update_spec() as spec:
                        add_to_spec(spec, change.partition_by)
            else:
                tx = _transaction(table)
                if change.merge_schema and _differences(table, frame):
                    with tx.update_schema() as update:
                        update.union_by_name(frame)
                if change.overwrite and table.current_snapshot() is not None:
                    from pyiceberg.expressions import AlwaysTrue

                    tx.delete(AlwaysTrue(), snapshot_properties=properties)
            if paths or token is not None:
                tx.add_files(paths, snapshot_properties=properties, check_duplicate_files=False)
            committed = tx.commit_transaction()  # the table as this commit left it
        except (CommitFailedException, TableAlreadyExistsError) as exc:
            latest = _open(catalog, name)
            if latest is None:
                raise SinkError(f"committing to Iceberg table {name} failed: "
                                f"{_first_line(exc)}", target=str(name)) from exc
            if _has_write(latest, WRITE_ID_KEY, write_id):
                return _snapshot_id(latest), False
            if _token_committed(latest, token):
                return _snapshot_id(latest), True
            differences = _differences(latest, frame, change.merge_schema)
            if differences:
                raise SinkError(f"Iceberg table {name} changed its schema while this write ran: "
                                + "; ".join(differences), target=str(name)) from exc
            table = latest
            continue
        except ValueError as exc:  # add_files refuses files that do not fit the schema
            raise SinkError(f"committing to Iceberg table {name} failed: {_first_line(exc)}",
                            target=str(name)) from exc
        return _snapshot_id(committed), False
    raise SinkError(f"could not commit to Iceberg table {name}: other writers committed "
                    f"{MAX_COMMIT_ATTEMPTS} times in a row", target=str(name))


def _transaction(table: Table) -> Any:
    """``table.transaction()`` as lakemark commits it: shared metadata views, merged
    manifests, and no retry behind the token check's back.

    * pyiceberg's ``Transaction.table_metadata`` applies the pending updates to the table's
      metadata on every access, and one ``add_files`` reads it more than a dozen times; the
      view is computed once per set of updates (the models are frozen, so it can be shared)
      and is based on :func:`~lakemark.catalog._iceberg_reuse.shared` metadata, so no
      deep copy of the history is made.
    * Appends merge manifests as Iceberg's own appends do (pyiceberg's merge-append producer;
      ``commit.manifest-merge.enabled`` unset counts as true, as in Iceberg, while pyiceberg
      alone would make a fast append that adds one manifest to every later snapshot's list;
      ``commit.manifest.min-count-to-merge`` and ``commit.manifest.target-size-bytes`` apply).
    * A commit that loses a race fails with CommitFailedException instead of being rebuilt
      and retried inside pyiceberg: :func:`_commit` reloads the table and checks the write id
      and the token before it tries again, so a racing attempt with the same token is never
      appended twice.
    """
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table import MAIN_BRANCH, Transaction
    from pyiceberg.table.update import update_table_metadata
    from pyiceberg.utils.properties import property_as_bool

    from ..catalog._iceberg_reuse import shared

    base = shared(table.metadata)

    class _Viewed(Transaction):
        _view: tuple[Any, Any] | None = None

        @property
        def table_metadata(self) -> Any:
            if not self._updates:
                return base
            if self._view is None or self._view[0] is not self._updates:
                self._view = (self._updates, update_table_metadata(base, self._updates))
            return self._view[1]

        def _append_snapshot_producer(self, snapshot_properties: dict[str, str],
                                      branch: str | None = MAIN_BRANCH) -> Any:
            producer = self.update_snapshot(snapshot_properties=snapshot_properties,
                                            branch=branch).merge_append()
            producer._merge_enabled = property_as_bool(self.table_metadata.properties,
                                                       MANIFEST_MERGE_KEY, True)
            return producer

        def _rebuild_snapshot_updates(self) -> None:
            raise CommitFailedException(f"Iceberg table {'.'.join(table.name())} changed "
                                        "while committing")

    return _Viewed(table)


def iceberg_committed(table: str, iceberg_catalog: CatalogChoice, key: str, value: str) -> bool:
    """Whether a snapshot in the ancestry of ``table``'s current snapshot has ``key: value``
    in its summary (a job asks with its run id); False if the table does not exist."""
    name = parse_table_name(table)
    spec = spec_for_table(resolve_iceberg_catalog(iceberg_catalog), name)
    current = _open(load_iceberg_catalog(spec), name)
    return current is not None and _has_write(current, key, value)
