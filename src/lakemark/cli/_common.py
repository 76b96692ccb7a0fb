"""Options and checks shared by several subcommands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..errors import ConfigError
from ..state import StateStore, check_state_url, open_store, resolve_state_url

F = TypeVar("F", bound=Callable[..., Any])


def state_option(func: F) -> F:
    """``--state URL`` (falls back to LAKEMARK_STATE, then the embedded SQLite default)."""
    return click.option(
        "--state",
        "state_url",
        metavar="URL",
        default=None,
        help="Bookmark state store, e.g. sqlite:///path/state.db "
        "[env LAKEMARK_STATE; default sqlite:///~/.lakemark/state.db; an empty value is "
        "refused; a malformed URL exits 2, a store that cannot be opened exits 1].",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(func)


def verbose_option(func: F) -> F:
    return click.option(
        "-v", "--verbose", is_flag=True, help="Show debug messages and Spark's own logging."
    )(func)


def state_url_of(state_url: str | None) -> str:
    """The state URL a command uses (``--state``, then LAKEMARK_STATE, then the default).

    A malformed one (empty, or a scheme no backend has) is a usage error, exit status 2, like
    any other option value that cannot be understood; a well-formed URL whose store cannot be
    opened (unreachable server, not a state database, read-only) is a reported error, exit 1.
    """
    try:
        url = resolve_state_url(state_url)
        check_state_url(url)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    return url


def open_state(state_url: str | None, *, read_only: bool = False) -> StateStore:
    """Open the state store now, so a bad URL or file fails before any work (see
    :func:`state_url_of` for the exit status of each)."""
    return open_store(state_url_of(state_url), read_only=read_only)


def parse_key_values(pairs: tuple[str, ...], option: str) -> dict[str, str]:
    """``k=v`` pairs of a repeated option into a dict; ConfigError names the bad one."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out
