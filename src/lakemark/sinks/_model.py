"""The small value types of the sink layer: what a caller passes in and gets back.

:class:`IdempotencyToken` is the ``(txnAppId, txnVersion)`` pair of Delta's idempotent writes;
:class:`WriteResult` is what one :func:`~lakemark.sinks.write_target` call did. ``DataFile`` is
internal: one data file a writer produced, with everything a Delta ``add`` action needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ConfigError

__all__ = ["IdempotencyToken", "WriteResult", "DataFile", "FORMATS", "MODES"]

#: Output formats :func:`write_target` knows.
FORMATS: tuple[str, ...] = ("delta", "iceberg", "parquet", "json", "csv", "orc")
#: Save modes :func:`write_target` knows.
MODES: tuple[str, ...] = ("append", "overwrite")


@dataclass(frozen=True)
class IdempotencyToken:
    """Delta's ``txnAppId``/``txnVersion`` pair: a write carrying it commits at most once.

    A Delta table remembers, per ``app_id``, the highest ``version`` committed with it (in the
    same commit as the data). A later write with the same ``app_id`` and a ``version`` at or
    below that is skipped without writing anything; another ``app_id`` or a higher ``version``
    is written. lakemark's jobs use ``app_id = "<job>/<sink ctx>"`` and ``version = run number``.
    """

    app_id: str
    version: int

    def __post_init__(self) -> None:
        if not isinstance(self.app_id, str) or not self.app_id.strip():
            raise ConfigError(f"idempotency token app_id must be a non-empty string, not "
                              f"{self.app_id!r}")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 0:
            raise ConfigError(f"idempotency token version must be an integer >= 0, not "
                              f"{self.version!r}")


@dataclass(frozen=True)
class WriteResult:
    """What one write did.

    ``target`` is the normalized location (an absolute path or ``s3://bucket/prefix``).
    ``rows``/``files``/``bytes`` count what this write added (0 when skipped). ``skipped`` is
    True when an idempotency token showed the write was already committed; nothing was written
    then. ``table_version`` is the Delta table version of this write's commit (for a skipped
    write: the version in which the token was found; ``None`` for folder formats); for Iceberg
    the table's current snapshot id after the write (``None`` for a new, empty table).
    """

    target: str
    format: str
    rows: int
    files: int
    bytes: int
    skipped: bool = False
    table_version: int | None = None


@dataclass(frozen=True)
class DataFile:
    """One data file a writer produced, relative to the target root.

    ``path`` is the literal relative path (``/``-separated, partition folders as written on
    storage, not URL-encoded). ``partition_values`` are in Delta's serialized form (``None`` is
    SQL NULL). ``stats`` is the Delta statistics JSON, when computed. ``mtime_ms`` is epoch ms.
    """

    path: str
    size: int
    rows: int
    mtime_ms: int
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    stats: str | None = None
