"""Bookmark state stores, chosen by URL (``sqlite:///path``, ``postgresql://…``).

Backends are looked up in a small registry and imported only when used, so a missing optional
dependency is reported with the extra to install instead of breaking ``import lakemark``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from ..redaction import redact
from ..planning.retention import RetentionPolicy
from ._retention import PruneReport, auto_policy
from ._sql import OlderSchema
from ._quarantine import QuarantineEntry
from ._schemas import PendingSchema, SourceSchema
from .base import BOOKMARK_OPTIONS, Bookmark, RunInputs, RunRecord, StateStore

__all__ = [
    "check_state_url",
    "BOOKMARK_OPTIONS",
    "Bookmark",
    "PruneReport",
    "RetentionPolicy",
    "PendingSchema",
    "QuarantineEntry",
    "SourceSchema",
    "RunInputs",
    "RunRecord",
    "StateStore",
    "auto_policy",
    "default_state_url",
    "open_store",
    "resolve_state_url",
]

# scheme -> "module:factory"; the factory takes the URL and returns a StateStore.
_BACKENDS: dict[str, str] = {
    "sqlite": "lakemark.state.sqlite:SQLiteStore.from_url",
    "postgresql": "lakemark.state.postgres:PostgresStore.from_url",
    "postgres": "lakemark.state.postgres:PostgresStore.from_url",
}


def default_state_url() -> str:
    """The embedded default: an SQLite file under ``~/.lakemark``."""
    return f"sqlite:///{Path.home() / '.lakemark' / 'state.db'}"


def resolve_state_url(explicit: str | None, env: Mapping[str, str] | None = None) -> str:
    """The state URL to use: the explicit value, then ``LAKEMARK_STATE``, then the default.

    An empty (or blank) value is refused with ConfigError rather than read as "not given": a
    script that passes ``--state "$STATE"`` with the variable unset would otherwise run against
    the default store and leave the store it meant untouched.
    """
    env = os.environ if env is None else env
    if explicit is not None:
        if not explicit.strip():
            raise ConfigError("the state URL (--state or state=) is empty: give one, e.g. "
                              "sqlite:///path/state.db, or leave it out to use LAKEMARK_STATE "
                              "or the default")
        return explicit
    value = env.get("LAKEMARK_STATE")
    if value is not None:
        if not value.strip():
            raise ConfigError("environment variable LAKEMARK_STATE is set but empty: set it to "
                              "a state URL, e.g. sqlite:///path/state.db, or unset it to use "
                              "the default")
        return value
    return default_state_url()


def check_state_url(url: str) -> str:
    """The scheme of state URL ``url``; ConfigError (naming the URL, credentials redacted)
    for one that names no backend. A check of the text only: nothing is opened."""
    scheme = url.split(":", 1)[0].split("+", 1)[0].lower() if ":" in url else ""
    if scheme not in _BACKENDS:
        known = ", ".join(f"{s}://" for s in sorted(_BACKENDS))
        raise ConfigError(f"state URL {redact(url)!r}: unknown scheme {scheme or '(none)'!r}; use "
                          f"one of {known}")
    return scheme


def open_store(url: str, *, read_only: bool = False) -> StateStore:
    """Open the state store that ``url`` names; ConfigError for an unknown scheme.

    ``read_only`` (for commands that only look: ``bookmark show|history``, ``runs list|show``)
    creates nothing and changes nothing: an SQLite file or folder that does not exist, or a
    PostgreSQL schema without lakemark's tables, is a StateError naming it — except the default
    location (``~/.lakemark/state.db``), which is created as a write would create it when it
    does not exist yet (an existing one is opened read-only, so it is read on a read-only
    file system too).
    """
    target = _BACKENDS[check_state_url(url)]
    module_name, _, attr = target.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if read_only and url == default_state_url() \
            and not (Path.home() / ".lakemark" / "state.db").exists():
        read_only = False  # the default store may be created by any command
    try:
        store = obj(url, read_only=read_only)  # type: ignore[operator]
    except OlderSchema:
        # A store written by an older lakemark: upgrade it in place (as any run would), then
        # look at it read-only.
        obj(url).close()  # type: ignore[operator]
        store = obj(url, read_only=True)  # type: ignore[operator]
    assert isinstance(store, StateStore)
    return store
