"""Writing ``format("delta")`` through the data source (to come: see docs/delta.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceWriter, WriterCommitMessage


class DeltaWriter(DataSourceWriter):  # type: ignore[misc]
    """Placeholder: refuses with a clear error."""

    def __init__(self, path: str, options: dict[str, str], schema: Any, overwrite: bool) -> None:
        from ..errors import UnsupportedError

        raise UnsupportedError("writing format 'delta' through the data source is not done yet")

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        raise NotImplementedError
