"""Where a folder sink keeps its commit records: the state store (default) or the folder.

A staged publish (:mod:`._publish`) needs, per token ``(app id, version)``, a *pending* record
(written before the data; names the staging id and the files about to be published) and a
*commit* record (its presence means the run's output is published). Two places keep them:

* :class:`StateLog` — rows of the run's state store (:mod:`lakemark.state._folder_commits`),
  keyed by the folder's canonical root, the app id and the version; the commit is a
  compare-and-set in one store transaction, fenced by the run's lease. The output prefix then
  holds only data files. Records an older lakemark left in ``<target>/_lakemark_commits/`` are
  still read (a committed version is never written again) and their pending traces still
  rolled back.
* :class:`FolderLog` — the old layout, ``<target>/_lakemark_commits/<app id>-<version>.pending``
  and ``.json`` objects: for readers that read the records themselves (the documented recipe
  without lakemark), chosen with ``LAKEMARK_FOLDER_COMMITS=folder``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

from ..errors import ConfigError, SinkError
from ..storage._fs import FileSystem
from ._model import IdempotencyToken

__all__ = ["COMMITS", "FOLDER_COMMITS_ENV", "CommitLog", "FolderCommitStore", "FolderLog",
           "StateLog", "StoreRecords", "commit_layout", "folder_records", "logs_of"]

#: The old layout's folder of records under the target.
COMMITS = "_lakemark_commits"
#: Environment variable choosing where jobs keep folder commit records: ``store`` (default)
#: or ``folder``.
FOLDER_COMMITS_ENV = "LAKEMARK_FOLDER_COMMITS"
_LAYOUTS = ("store", "folder")


def commit_layout(env: Mapping[str, str] | None = None) -> str:
    """``store`` or ``folder`` from :data:`FOLDER_COMMITS_ENV` (default ``store``); a
    ConfigError names the variable for any other value."""
    value = (os.environ if env is None else env).get(FOLDER_COMMITS_ENV, "store")
    layout = value.strip().lower() or "store"
    if layout not in _LAYOUTS:
        raise ConfigError(f"environment variable {FOLDER_COMMITS_ENV}={value!r}: use "
                          f"{' or '.join(_LAYOUTS)}")
    return layout


class CommitLog(Protocol):
    """The records of a folder target's tokened writes (see the module docstring)."""

    def where(self, token: IdempotencyToken) -> str:
        """Where the token's records are kept, for messages."""
        ...

    def committed(self, token: IdempotencyToken) -> dict[str, Any] | None:
        """The commit record of the token's app id at its version or higher, or None."""
        ...

    def pending(self, token: IdempotencyToken) -> tuple[dict[str, Any], bool] | None:
        """A write's pending trace of exactly this token and whether that exact version is
        committed all the same (then only leftovers go), or None."""
        ...

    def begin(self, token: IdempotencyToken, write_id: str, files: Sequence[str]) -> None:
        """Write or update the pending record of the write ``write_id``."""
        ...

    def commit(self, token: IdempotencyToken, write_id: str, body: Mapping[str, Any]) -> None:
        """Write the commit record (atomically); after it the run's output is committed."""
        ...

    def drop(self, token: IdempotencyToken, write_id: str | None) -> None:
        """Remove the pending record (of that write only, if ``write_id`` is given)."""
        ...

    def records(self) -> list[dict[str, Any]]:
        """Every commit record of the target."""
        ...


def _record_name(token: IdempotencyToken) -> str:
    return f"{quote(token.app_id, safe='')}-{token.version}"


class FolderLog:
    """Records as objects under ``<target>/_lakemark_commits/`` (the old layout). ``also``:
    the state store's records of the same folder, still honoured (a job that switched to the
    old layout never redoes a version committed in the store, and rolls back a write that
    died there)."""

    def __init__(self, store: FileSystem, also: StateLog | None = None) -> None:
        self.store = store
        self.also = also

    def where(self, token: IdempotencyToken) -> str:
        return f"{self.store.root}/{COMMITS}/{_record_name(token)}"

    def _json(self, rel: str) -> dict[str, Any] | None:
        text = self.store.read_text(rel)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise SinkError(f"commit record {self.store.root}/{rel} is not valid JSON; "
                            "remove it only if that run's files are removed too") from exc
        if not isinstance(value, dict):
            raise SinkError(f"commit record {self.store.root}/{rel} is not a JSON object")
        return value

    def committed(self, token: IdempotencyToken) -> dict[str, Any] | None:
        prefix = quote(token.app_id, safe="")
        best: tuple[int, str] | None = None
        for name in self.store.names(COMMITS, start=f"{prefix}-"):
            if not name.endswith(".json") or name.startswith("."):
                continue
            app, _, version = name[:-len(".json")].rpartition("-")
            if app != prefix or not version.isdigit() or int(version) < token.version:
                continue
            if best is None or int(version) > best[0]:
                best = (int(version), name)
        if best is not None:
            return self._json(f"{COMMITS}/{best[1]}")
        return self.also.committed(token) if self.also is not None else None

    def pending(self, token: IdempotencyToken) -> tuple[dict[str, Any], bool] | None:
        name = _record_name(token)
        text = self.store.read_text(f"{COMMITS}/{name}.pending")
        if text is None:
            return None
        try:
            info = json.loads(text)
        except ValueError:
            info = {}
        done = self.store.read_text(f"{COMMITS}/{name}.json") is not None
        return (info if isinstance(info, dict) else {}), done

    def begin(self, token: IdempotencyToken, write_id: str, files: Sequence[str]) -> None:
        self.store.write_text(f"{COMMITS}/{_record_name(token)}.pending",
                              json.dumps({"staging": write_id, "files": list(files)}))

    def commit(self, token: IdempotencyToken, write_id: str, body: Mapping[str, Any]) -> None:
        self.store.write_text(f"{COMMITS}/{_record_name(token)}.json",
                              json.dumps(dict(body), indent=1, sort_keys=True))

    def drop(self, token: IdempotencyToken, write_id: str | None) -> None:
        self.store.delete([f"{COMMITS}/{_record_name(token)}.pending"])

    def records(self) -> list[dict[str, Any]]:
        found = self.also.state.folder_commits(self.also.target) if self.also else []
        for name in self.store.names(COMMITS):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            record = self._json(f"{COMMITS}/{name}")
            if record is not None:
                found.append(record)
        return found


class FolderCommitStore(Protocol):
    """What :class:`StateLog` needs of a state store (:mod:`lakemark.state._folder_commits`)."""

    def folder_commit(self, target: str, app_id: str, version: int) -> dict[str, Any] | None:
        ...

    def folder_pending(self, target: str, app_id: str, version: int) -> dict[str, Any] | None:
        ...

    def folder_commits(self, target: str) -> list[dict[str, Any]]:
        ...

    def set_folder_pending(self, target: str, app_id: str, version: int, staging: str,
                           body: Mapping[str, Any], *, run_id: str | None = None) -> None:
        ...

    def commit_folder(self, target: str, app_id: str, version: int, staging: str,
                      body: Mapping[str, Any], *, run_id: str | None = None) -> None:
        ...

    def drop_folder_pending(self, target: str, app_id: str, version: int,
                            staging: str | None = None) -> None:
        ...


class StateLog:
    """Records in the state store, keyed by the target's root; ``legacy`` (the folder's old
    records) is read too, so a version committed before an upgrade is never written again."""

    def __init__(self, state: FolderCommitStore, store: FileSystem,
                 run_id: str | None = None) -> None:
        self.state = state
        self.target = store.root.rstrip("/") or store.root
        self.run_id = run_id
        self.legacy = FolderLog(store)

    def where(self, token: IdempotencyToken) -> str:
        return f"the state store's record of {token.app_id!r} on {self.target}"

    def committed(self, token: IdempotencyToken) -> dict[str, Any] | None:
        found = self.state.folder_commit(self.target, token.app_id, token.version)
        return found if found is not None else self.legacy.committed(token)

    def pending(self, token: IdempotencyToken) -> tuple[dict[str, Any], bool] | None:
        info = self.state.folder_pending(self.target, token.app_id, token.version)
        return None if info is None else (info, False)  # pending -> committed is one step

    def begin(self, token: IdempotencyToken, write_id: str, files: Sequence[str]) -> None:
        self.state.set_folder_pending(self.target, token.app_id, token.version, write_id,
                                      {"staging": write_id, "files": list(files)},
                                      run_id=self.run_id)

    def commit(self, token: IdempotencyToken, write_id: str, body: Mapping[str, Any]) -> None:
        self.state.commit_folder(self.target, token.app_id, token.version, write_id, body,
                                 run_id=self.run_id)

    def drop(self, token: IdempotencyToken, write_id: str | None) -> None:
        self.state.drop_folder_pending(self.target, token.app_id, token.version, write_id)

    def records(self) -> list[dict[str, Any]]:
        return self.state.folder_commits(self.target) + self.legacy.records()


@dataclass(frozen=True)
class StoreRecords:
    """A job's choice to keep a folder sink's records in its state store: the store and the
    run whose lease fences the records' writes."""

    state: FolderCommitStore
    run_id: str | None = None
    #: ``LAKEMARK_FOLDER_COMMITS=folder``: new records go to the folder (the store's are
    #: still honoured).
    in_folder: bool = False

    def log(self, store: FileSystem) -> CommitLog:
        """The records of the folder ``store`` is rooted at."""
        found = StateLog(self.state, store, self.run_id)
        return FolderLog(store, also=found) if self.in_folder else found


def folder_records(state: Any, run_id: str | None) -> StoreRecords:
    """Where a job run keeps its folder sinks' records: in its state store ``state``, fenced
    by ``run_id`` (with ``LAKEMARK_FOLDER_COMMITS=folder``: in the folder)."""
    return StoreRecords(state, run_id, in_folder=commit_layout() == "folder")


def logs_of(log: CommitLog) -> list[CommitLog]:
    """The logs whose pending traces a write rolls back: ``log``, and the other place the
    same job may have left one — the folder's records behind a :class:`StateLog` (a write an
    older lakemark left half-done), the store's behind a :class:`FolderLog`."""
    other = getattr(log, "legacy", None) or getattr(log, "also", None)
    return [log] if other is None else [log, other]
