"""``df.writeTo(name)`` (DataFrameWriterV2) on Iceberg tables without the Iceberg runtime jar.

Spark resolves a ``writeTo`` name through a catalog plugin; Glue Iceberg jobs configure one
(``spark.sql.catalog.glue_catalog=org.apache.iceberg.spark.SparkCatalog``) and write
``df.writeTo("glue_catalog.db.events").append()``. Without the jar that plugin cannot load.
When lakemark serves ``format("iceberg")`` in the session (:func:`lakemark_iceberg`), a
``writeTo`` goes to lakemark's Iceberg sink if its name starts with a Spark catalog whose
plugin is Iceberg's (``SparkCatalog``/``SparkSessionCatalog``) or if ``.using("iceberg")`` was
called; the name resolves as ``load``/``save`` resolve it (:func:`._iceberg.resolve_name`:
through the Spark catalog's ``type``/``uri``/``warehouse`` settings mapped to pyiceberg, or,
for a plugin with no settings, ``db.events`` of lakemark's own catalog). Every other
``writeTo`` is Spark's own.

* ``append()``: the table must exist (Spark's rule); an append.
* ``create()``: the table must not exist; created from the frame with the ``partitionedBy``
  fields: column names (identity) and ``years``/``months``/``days``/``hours`` of
  ``pyspark.sql.functions.partitioning`` (:mod:`lakemark.planning.partition_transforms`).
* ``createOrReplace()`` / ``replace()``: the rows are replaced (an overwrite, the table's
  schema must fit the frame); ``replace`` needs the table, ``createOrReplace`` creates it.
* ``overwrite(condition)``, ``overwritePartitions()``, ``bucket`` partitions and table
  properties are refused naming them.

Options: ``mergeSchema``, ``compression``, ``txnAppId``/``txnVersion``, ``iceberg_catalog``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SourceError, UnsupportedError
from .._recorded import Record, record_option, record_options, recording

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..catalog._iceberg import CatalogChoice

__all__ = ["install_writer_v2"]

_STATE = "_lakemark_v2"
_ICEBERG_PLUGINS = ("org.apache.iceberg.spark.SparkCatalog",
                    "org.apache.iceberg.spark.SparkSessionCatalog")
_installed = False


def _state(writer: Any) -> dict[str, Any]:
    state: dict[str, Any] | None = writer.__dict__.get(_STATE)
    if state is None:
        state = {"table": None, "provider": None, "options": {}, "partition": [],
                 "properties": []}
        writer.__dict__[_STATE] = state
    return state


def _iceberg_name(spark: SparkSession, table: str, provider: str | None,
                  catalog: str | None) -> tuple[str, CatalogChoice] | None:
    """``(table, catalog)`` of the lakemark Iceberg table a ``writeTo(table)`` names (resolved
    as ``load``/``save`` resolve it: :func:`._iceberg.resolve_name`), or None (Spark's own)."""
    from ._iceberg import lakemark_iceberg, resolve_name

    parts = table.split(".")
    plugin = ""
    if len(parts) == 3:
        try:
            plugin = str(spark.conf.get(f"spark.sql.catalog.{parts[0]}", "") or "")
        except Exception:  # a stopped session
            plugin = ""
    iceberg_catalog = plugin in _ICEBERG_PLUGINS
    if not iceberg_catalog and (provider or "").strip().lower() != "iceberg":
        return None
    if not lakemark_iceberg(spark):
        return None
    return resolve_name(spark, table, catalog)


def _column_name(column: Any) -> str:
    if isinstance(column, str):
        return column
    jc = getattr(column, "_jc", None)
    text = str(jc.toString()) if jc is not None else str(column)
    return text.strip("`")


def _write(writer: Any, how: str, original: Any, args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> None:
    state = _state(writer)
    table = state["table"]
    options = dict(state["options"])
    given = next((v for k, v in options.items() if k.lower() == "iceberg_catalog"), None)
    resolved = _iceberg_name(writer._spark, table, state["provider"], given) if table else None
    if resolved is None:
        original(writer, *args, **kwargs)
        return
    name, catalog = resolved
    if how in ("overwrite", "overwritePartitions"):
        raise UnsupportedError(f"writeTo({table!r}).{how}(…) is not supported on Iceberg tables "
                               "without the Iceberg runtime; use append(), create(), "
                               "createOrReplace() or replace()")
    if state["properties"]:
        raise UnsupportedError(f"writeTo({table!r}).tableProperty(…) is not supported on Iceberg "
                               "tables without the Iceberg runtime")
    parts = [_column_name(c) for c in state["partition"]]  # "d", "days(ts)", "bucket(4, id)"
    options = {k: v for k, v in options.items() if k.lower() != "iceberg_catalog"}
    from ..sinks import write_target
    from ..sources.iceberg import open_table

    try:
        open_table(name, catalog)
        exists = True
    except SourceError:
        exists = False
    if how in ("append", "replace") and not exists:
        raise ConfigError(f"[TABLE_OR_VIEW_NOT_FOUND] Iceberg table {name} does not exist "
                          f"(writeTo({table!r}).{how}() needs it; create() makes it)")
    if how == "create" and exists:
        raise ConfigError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Iceberg table {name} already exists "
                          f"(writeTo({table!r}).create())")
    mode = "append" if how in ("append", "create") or not exists else "overwrite"
    write_target(writer._df.sparkSession, writer._df, name, format="iceberg", mode=mode,
                 partition_by=parts if not exists else [], options=options,
                 iceberg_catalog=catalog)


def install_writer_v2() -> None:
    """Wrap pyspark's ``DataFrameWriterV2`` once per process (module docstring)."""
    global _installed
    if _installed:
        return
    try:
        from pyspark.sql.readwriter import DataFrameWriterV2
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return
    W: Any = DataFrameWriterV2
    init = W.__init__

    def __init__(self: Any, df: Any, table: str) -> None:  # noqa: N807
        init(self, df, table)
        _state(self)["table"] = table

    def recorder(name: str, record: Record) -> Any:
        return recording(getattr(W, name), record, _state)

    def terminal(name: str) -> Any:
        original = getattr(W, name)

        def method(self: Any, *args: Any, **kwargs: Any) -> None:
            _write(self, name, original, args, kwargs)
        method.__name__ = name
        method.__doc__ = original.__doc__
        return method

    W.__init__ = __init__
    W.using = recorder("using", lambda s, a, k: s.update(provider=a[0] if a else
                                                           k.get("provider")))
    W.option = recorder("option", record_option)
    W.options = recorder("options", record_options)
    W.partitionedBy = recorder("partitionedBy", lambda s, a, k: s.update(partition=list(a)))
    W.tableProperty = recorder("tableProperty", lambda s, a, k: s["properties"].append(a))
    for name in ("append", "create", "createOrReplace", "replace", "overwrite",
                 "overwritePartitions"):
        setattr(W, name, terminal(name))
    _installed = True
