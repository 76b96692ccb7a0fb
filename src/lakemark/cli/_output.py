"""How the CLI talks to people (rich) and machines (``--json``), and how it reports errors."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from ..errors import LakemarkError

F = TypeVar("F", bound=Callable[..., Any])

console = Console()
err_console = Console(stderr=True)


def setup_logging(verbose: bool) -> None:
    """lakemark's warnings on stderr; Spark's JVM noise stays off unless ``verbose``."""
    root = logging.getLogger("lakemark")
    root.handlers[:] = [RichHandler(console=err_console, show_time=False, show_path=False)]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False
    if not verbose:
        logging.getLogger("py4j").setLevel(logging.ERROR)


def print_json(data: Any) -> None:
    """One JSON document on stdout (for ``--json``)."""
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def fmt_ms(ms: int | None) -> str:
    """Epoch milliseconds as an ISO-8601 UTC time (or '-')."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def handle_errors(func: F) -> F:
    """Turn lakemark's errors into one clear line on stderr and exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LakemarkError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
