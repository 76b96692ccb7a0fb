"""Stage timings of runs in the SQL state stores: the ``run_timings`` table.

One row per run that recorded them: ``{"plan": s, "read": s, "write": s, "commit": s}`` as JSON
(:mod:`lakemark.run.stage_timings`). Written once, when the run has ended (its commit's own
duration is only known then); a run that ended before lakemark recorded timings has no row.
The table is created with the others (``CREATE TABLE IF NOT EXISTS``), so a store written by
an older lakemark gains it when opened. SQL is parameterised (``?`` placeholders).
"""

from __future__ import annotations

from collections.abc import Mapping
import json
from typing import Any

from ..errors import UnknownRunError

__all__ = ["TimingRecords"]


class TimingRecords:
    """The ``run_timings`` operations a SQL store provides (mixed into SqlStore)."""

    _q: Any
    _tx: Any  # provided by SqlStore

    def record_timings(self, run_id: str, timings: Mapping[str, float]) -> None:
        """Record (replace) the stage timings of the run ``run_id`` (seconds per stage);
        UnknownRunError if the store has no such run."""
        body = json.dumps({str(k): float(v) for k, v in timings.items()})
        with self._tx() as db:
            if db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise UnknownRunError(f"no run {run_id!r} to record stage timings for")
            db.execute("DELETE FROM run_timings WHERE run_id = ?", (run_id,))
            db.execute("INSERT INTO run_timings (run_id, timings_json) VALUES (?, ?)",
                       (run_id, body))

    def run_timings(self, run_id: str) -> dict[str, float]:
        """The stage timings of ``run_id`` in run order (empty: none recorded)."""
        row = self._q.execute("SELECT timings_json FROM run_timings WHERE run_id = ?",
                              (run_id,)).fetchone()
        return {} if row is None else {str(k): float(v) for k, v in json.loads(row[0]).items()}
