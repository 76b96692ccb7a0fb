"""Commit records of folder sinks in the SQL state stores: the ``folder_commits`` table.

A job's write to a Parquet/JSON/CSV/ORC folder (local or S3) is exactly-once through a record
per ``(target, app id, version)`` (:mod:`lakemark.sinks._publish`). Kept here, the output
prefix holds only data files. One row per write of a token:

* ``pending`` — written before the data, then updated with the files about to be published
  and the write's staging id; the trace a retry rolls back;
* ``committed`` — the same row, moved from ``pending`` by a compare-and-set on its status and
  staging id in one transaction, after every file is in place. Its presence means "this run's
  output is published".

Writes of a run are fenced like every other state change of the run (the lease generation is
checked in the same transaction), so a run whose lease was taken over cannot commit a folder
write. ``target`` is the folder's canonical root (an absolute path or ``s3://bucket/prefix``,
no trailing ``/``). SQL is parameterised (``?`` placeholders). The table is created with the
others (``CREATE TABLE IF NOT EXISTS``); schema version 7 records that it exists.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import CommitConflict

__all__ = ["EARLIER_FILES", "FOLDER_COMMITS_SQLITE", "FOLDER_COMMITS_POSTGRES",
           "FolderCommitRecords", "prune_folder_commits"]

#: The keys a job's write puts in its commit record (``lakemark/run/keys.py``, ``run/sinks.py``;
#: not imported: the run is a layer above): the run id of the attempt and the job.
RUN_ID_KEY = "lakemark.runId"
JOB_KEY = "lakemark.job"
#: A committed record's list of the files of older records of its target and app id that
#: retention pruned (:func:`prune_folder_commits`).
EARLIER_FILES = "earlier_files"

FOLDER_COMMITS_SQLITE = """;
CREATE TABLE IF NOT EXISTS folder_commits (
    target TEXT NOT NULL,
    app_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    staging TEXT NOT NULL,
    body_json TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (target, app_id, version)
);
"""

FOLDER_COMMITS_POSTGRES = FOLDER_COMMITS_SQLITE.replace("INTEGER", "BIGINT")


class FolderCommitRecords:
    """The ``folder_commits`` operations of :class:`~lakemark.state._sql.SqlStore` (a mixin:
    it uses the store's ``_q`` reads, ``_tx`` transactions, ``_fenced`` and ``_stamp``)."""

    _q: Any
    _tx: Any  # provided by SqlStore
    _fenced: Any
    _stamp: Any

    def folder_commit(self, target: str, app_id: str, version: int) -> dict[str, Any] | None:
        """The committed record of ``app_id`` on ``target`` at ``version`` or a higher one
        (the highest), or None."""
        row = self._q.execute(
            "SELECT body_json FROM folder_commits WHERE target = ? AND app_id = ? "
            "AND version >= ? AND status = 'committed' ORDER BY version DESC LIMIT 1",
            (target, app_id, version)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def folder_pending(self, target: str, app_id: str, version: int) -> dict[str, Any] | None:
        """The ``pending`` record of exactly that write (a dead write's trace), or None."""
        row = self._q.execute(
            "SELECT body_json FROM folder_commits WHERE target = ? AND app_id = ? "
            "AND version = ? AND status = 'pending'", (target, app_id, version)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def folder_commits(self, target: str) -> list[dict[str, Any]]:
        """Every committed record of ``target``, by app id and version."""
        rows = self._q.execute(
            "SELECT body_json FROM folder_commits WHERE target = ? AND status = 'committed' "
            "ORDER BY app_id, version", (target,)).fetchall()
        return [dict(json.loads(r[0])) for r in rows]

    def set_folder_pending(self, target: str, app_id: str, version: int, staging: str,
                           body: Mapping[str, Any], *, run_id: str | None = None) -> None:
        """Write (or update) the ``pending`` record of a write whose staging id is ``staging``.
        CommitConflict if that version is already committed, or if another write (another
        staging id) holds the pending record; LeaseLost/LeaseError when ``run_id`` no longer
        holds its job's lease."""
        with self._tx() as db:
            if run_id is not None:
                self._fenced(db, run_id, "folder commit record")
            row = db.execute(
                "SELECT status, staging FROM folder_commits WHERE target = ? AND app_id = ? "
                "AND version = ?", (target, app_id, version)).fetchone()
            if row is not None and (row[0] != "pending" or row[1] != staging):
                raise CommitConflict(
                    f"folder {target}: the write of {app_id!r} at version {version} is "
                    f"already {'committed' if row[0] == 'committed' else 'being written'} "
                    "by another attempt")
            text = json.dumps(dict(body), sort_keys=True)
            if row is None:
                db.execute(
                    "INSERT INTO folder_commits (target, app_id, version, status, staging, "
                    "body_json, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
                    (target, app_id, version, staging, text, self._stamp()))
            else:
                db.execute(
                    "UPDATE folder_commits SET body_json = ?, updated_at = ? WHERE target = ? "
                    "AND app_id = ? AND version = ? AND status = 'pending' AND staging = ?",
                    (text, self._stamp(), target, app_id, version, staging))

    def commit_folder(self, target: str, app_id: str, version: int, staging: str,
                      body: Mapping[str, Any], *, run_id: str | None = None) -> None:
        """Move the write's record from ``pending`` to ``committed`` with ``body``: a
        compare-and-set on status and staging id (CommitConflict on a miss: the pending
        record was rolled back or taken by another attempt), fenced by ``run_id``."""
        with self._tx() as db:
            if run_id is not None:
                self._fenced(db, run_id, "folder commit")
            moved = db.execute(
                "UPDATE folder_commits SET status = 'committed', body_json = ?, updated_at = ? "
                "WHERE target = ? AND app_id = ? AND version = ? AND status = 'pending' "
                "AND staging = ?",
                (json.dumps(dict(body), sort_keys=True), self._stamp(), target, app_id,
                 version, staging)).rowcount
            if moved != 1:
                raise CommitConflict(
                    f"folder {target}: the pending record of {app_id!r} at version {version} "
                    "changed during the write; nothing was committed")

    def drop_folder_pending(self, target: str, app_id: str, version: int,
                            staging: str | None = None) -> None:
        """Remove the ``pending`` record of a write (of that staging id only, if given); a
        committed record is never removed."""
        query = ("DELETE FROM folder_commits WHERE target = ? AND app_id = ? AND version = ? "
                 "AND status = 'pending'")
        params: tuple[Any, ...] = (target, app_id, version)
        if staging is not None:
            query += " AND staging = ?"
            params += (staging,)
        with self._tx() as db:
            db.execute(query, params)


def prune_folder_commits(db: Any, job_name: str, run_ids: Sequence[str], *,
                         dry_run: bool = False) -> int:
    """Delete (or only count) the committed records that runs ``run_ids`` of ``job_name`` made,
    inside the store's write transaction ``db``; the number of records.

    The latest committed version of each target and app id always stays: it is what refuses a
    write of that version or a lower one again. A record that goes hands its files on to that
    kept record (its ``earlier_files``), so :func:`~lakemark.sinks._publish.committed_files`
    still names every committed file. ``pending`` records (a dead write's trace: the files a
    retry of that token rolls back) name no run and are never pruned here.
    """
    gone = set(run_ids)
    if not gone:
        return 0
    prefix = f"{job_name}/"
    rows = db.execute(
        "SELECT target, app_id, version, body_json FROM folder_commits "
        "WHERE status = 'committed' AND substr(app_id, 1, ?) = ?",
        (len(prefix), prefix)).fetchall()
    latest: dict[tuple[str, str], int] = {}
    for target, app_id, version, _ in rows:
        key = (str(target), str(app_id))
        latest[key] = max(latest.get(key, int(version)), int(version))
    handed: dict[tuple[str, str], set[str]] = {}
    doomed: list[tuple[str, str, int]] = []
    for target, app_id, version, text in rows:
        key = (str(target), str(app_id))
        if int(version) >= latest[key]:
            continue
        body = _body(text)
        if body.get(RUN_ID_KEY) not in gone or body.get(JOB_KEY, job_name) != job_name:
            continue
        doomed.append((key[0], key[1], int(version)))
        files = handed.setdefault(key, set())
        for name in ("files", EARLIER_FILES):
            value = body.get(name)
            if isinstance(value, list):
                files.update(str(f) for f in value)
    if dry_run or not doomed:
        return len(doomed)
    for (target, app_id), files in handed.items():
        version = latest[(target, app_id)]
        row = db.execute(
            "SELECT body_json FROM folder_commits WHERE target = ? AND app_id = ? "
            "AND version = ? AND status = 'committed'", (target, app_id, version)).fetchone()
        body = _body(row[0])
        earlier = body.get(EARLIER_FILES)
        if isinstance(earlier, list):
            files.update(str(f) for f in earlier)
        body[EARLIER_FILES] = sorted(files)
        db.execute(
            "UPDATE folder_commits SET body_json = ? WHERE target = ? AND app_id = ? "
            "AND version = ? AND status = 'committed'",
            (json.dumps(body, sort_keys=True), target, app_id, version))
    for target, app_id, version in doomed:
        db.execute("DELETE FROM folder_commits WHERE target = ? AND app_id = ? AND version = ? "
                   "AND status = 'committed'", (target, app_id, version))
    return len(doomed)


def _body(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
