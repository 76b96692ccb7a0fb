"""The operator's console: read-only views of a state store.

:mod:`.queries` answers the questions an operator asks first (which jobs, how did their last
runs go, which run took this file) straight from the store's tables; the CLI's ``jobs list``
and ``files find`` and the web console (:mod:`.app`, ``lakemark ui``) both print its answers,
so the page, the JSON API and ``--json`` always agree.
"""

from __future__ import annotations

from .queries import Page, StateQueries, UnknownJobError, nearest_names

__all__ = ["Page", "StateQueries", "UnknownJobError", "nearest_names"]
