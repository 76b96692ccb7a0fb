"""How the run summary and ``runs show`` word files taken before, modified files skipped and
files left out because they changed during the run (from a file source's manifest entry)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._shown import shown

__all__ = ["FILE_NOTE_KEYS", "ON_MODIFIED_HELP", "file_notes"]

#: The file source manifest's entries these notes come from (``runs show --json`` has them).
FILE_NOTE_KEYS = ("taken_before", "skipped_modified", "changed_during_run")

ON_MODIFIED_HELP = (
    "What a run does with a file that an earlier run took and that has changed since (new "
    "mtime or size): retake takes it whole again (AWS Glue's behaviour; reported as \"taken "
    "before (run N)\"), skip leaves it (Auto Loader's allowOverwrites=false), append takes "
    "only the bytes past those taken before (json, csv, text; a file that shrank, or a "
    "compressed one, is retaken whole). Apart from this, a file that changes while a run reads "
    "it is left out of that run (\"changed during the run\") and taken whole by the next. See "
    "docs/bookmarks.md.")


def _one(entry: Mapping[str, Any]) -> str:
    path = shown(entry.get("path"))
    if entry.get("offset"):
        return (f"{path} — taken before (run {entry.get('run')}, {entry.get('run_id')}): "
                f"appended tail from byte {entry.get('offset')}")
    return f"{path} — taken before (run {entry.get('run')}, {entry.get('run_id')}): retaken whole"


def file_notes(source: Mapping[str, Any], limit: int = 5) -> list[tuple[str, str]]:
    """``(label, text)`` rows for a summary table; none when nothing of the kind happened."""
    rows: list[tuple[str, str]] = []
    taken = list(source.get("taken_before") or [])
    if taken:
        listed = "\n".join(_one(e) for e in taken[:limit])
        more = f"\n… and {len(taken) - limit} more" if len(taken) > limit else ""
        rows.append((f"taken before ({len(taken)})", listed + more))
    skipped = list(source.get("skipped_modified") or [])
    if skipped:
        listed = "\n".join(shown(e.get("path")) for e in skipped[:limit])
        more = f"\n… and {len(skipped) - limit} more" if len(skipped) > limit else ""
        rows.append((f"modified, skipped ({len(skipped)})", listed + more))
    changed = list(source.get("changed_during_run") or [])
    if changed:
        listed = "\n".join(f"{shown(e.get('path'))} — {e.get('when')}; the next run takes it whole"
                          for e in changed[:limit])
        more = f"\n… and {len(changed) - limit} more" if len(changed) > limit else ""
        rows.append((f"changed during the run, left out ({len(changed)})", listed + more))
    return rows
