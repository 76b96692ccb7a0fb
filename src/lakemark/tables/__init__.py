"""Tables in open formats served to Spark with no jars: ``format("delta")`` and
``format("iceberg")`` reads and writes (the latter in :mod:`._iceberg`).

:func:`register` adds lakemark's ``delta`` data source to a session (unless Delta's own jars
are on its classpath, which then keep the name). Reads from the Python driver take
:func:`fast_read` (Spark's Parquet reader on the snapshot's files) where the JVM can open the
files, else the data source. See docs/delta.md.

:func:`install_delta_shim` serves ``from delta.tables import DeltaTable`` (Delta's Python API:
merge, update, delete, history, optimize ...) from lakemark when delta-spark is absent; see
docs/upserts.md.
"""

from __future__ import annotations

from ._delta_fast import fast_read
from ._delta_save import save_delta
from ._delta_shim import delta_shim_path, install_delta_shim
from ._delta_snapshot import TZ_OPTION
from ._delta_source import FS_OPTION, READER_OPTION
from ._iceberg import iceberg_runtime_present, lakemark_iceberg, load_iceberg, save_iceberg
from ._register import delta_jars_present, is_registered, register

__all__ = ["FS_OPTION", "READER_OPTION", "TZ_OPTION", "delta_jars_present", "delta_shim_path",
           "fast_read", "iceberg_runtime_present", "install_delta_shim", "is_registered",
           "lakemark_iceberg", "load_iceberg", "register", "save_delta", "save_iceberg"]
