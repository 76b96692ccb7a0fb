"""The columns of a file source's run that takes no file: the schema of a file an earlier run
took.

A Parquet, ORC or Avro file carries its schema, so a read of no file has none to give: the
frame has no columns, and a script's ``df.select("id")`` or a sink's column checks fail on a
run with nothing new (Glue's ``from_catalog`` takes the catalog's columns instead). The
folder's columns can be known from a file an earlier successful run of the same job and ctx
took: its footer (or header) is read — one small read, only on a run that takes no file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from .context import RunContext

__all__ = ["SELF_DESCRIBING", "earlier_schema"]

log = logging.getLogger("lakemark")

#: Formats whose files carry their schema (a read of none has no columns).
SELF_DESCRIBING = ("parquet", "orc", "avro")
#: Attempts looked at, newest first (an empty run records no file; a few suffice).
_RUNS = 20


def earlier_schema(run_ctx: RunContext, ctx: str | None, *, root: str, format: str,
                   options: Mapping[str, str] | None) -> StructType | None:
    """The schema (data and partition columns under ``root``) of the newest file that a
    successful earlier run of the job took under ``ctx`` and that can still be read, or None."""
    if ctx is None or format not in SELF_DESCRIBING:
        return None
    from ..sources import read_files

    store = run_ctx.store
    runs = [r for r in store.list_runs(run_ctx.job_name)[-_RUNS:] if r.status == "SUCCEEDED"]
    for run in reversed(runs):
        for inputs in store.run_inputs(run.run_id):
            if inputs.ctx != ctx:
                continue
            for entry in reversed(list(inputs.files)):
                try:
                    schema: Any = read_files(run_ctx.spark(), [entry], root=root, format=format,
                                             options=options).schema
                except Exception as exc:  # noqa: BLE001 - gone, set aside, damaged: the next
                    log.debug("no schema from %s: %s", entry.path, exc)
                    continue
                if schema.fields:
                    return schema  # type: ignore[no-any-return]
    return None
