"""How the CLI talks to people (rich) and machines (``--json``), and how it reports errors."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from datetime import datetime, UTC
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from ..errors import LakemarkError

F = TypeVar("F", bound=Callable[..., Any])

# No markup in what is printed: paths, reasons and errors are data (a file name or a link
# target such as ``[/x]`` must print as it is, not style the line or raise MarkupError). The few
# styled words ask for it (``markup=True``, ``Text.from_markup``) around escaped data.
console = Console(markup=False)
# Long lines (run ids, paths) are never folded on a pipe or file: there is no screen to fit.
console.soft_wrap = not console.is_terminal
err_console = Console(stderr=True, soft_wrap=True)  # an error is one line, however long


def setup_logging(verbose: bool) -> None:
    """lakemark's warnings on stderr; Spark's JVM noise stays off unless ``verbose``."""
    from ..session.jvm_stderr import set_verbose

    set_verbose(verbose)
    root = logging.getLogger("lakemark")
    root.handlers[:] = [RichHandler(console=err_console, show_time=False, show_path=False)]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False
    if not verbose:
        logging.getLogger("py4j").setLevel(logging.ERROR)


def print_table(table: Table) -> None:
    """Print a table; on a pipe or file at its natural width, so nothing is ever cut.

    A terminal gets the table fitted to its width (long cells wrap). A pipe or file has no
    width of its own: rich would assume 80 columns and crop run ids, paths and timestamps.
    """
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update_width(1_000_000), table).maximum
    # Console.print caps a width at the console's own: print through one that is wide enough.
    Console(file=console.file, width=max(natural, 1), color_system=None,
            soft_wrap=True, markup=False).print(table)


def print_json(data: Any) -> None:
    """One JSON document on stdout (for ``--json``)."""
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def fmt_ms(ms: int | None) -> str:
    """Epoch milliseconds as an ISO-8601 UTC time (or '-')."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def error_json(exc: LakemarkError) -> dict[str, Any]:
    """A failure for machines: the message, the kind of error and the fields it names."""
    out: dict[str, Any] = {"error": str(exc), "kind": type(exc).__name__}
    for name in ("option", "file", "key", "uri", "target", "store"):
        value = getattr(exc, name, None)
        if value is not None:
            out[name] = str(value)
    return out


def handle_errors(func: F) -> F:
    """Turn lakemark's errors into one clear line on stderr and exit status 1; with
    ``--json`` a JSON error object (``error``, ``kind``, …) is also printed on stdout, so a
    scheduler that parses stdout always gets a document."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LakemarkError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            if kwargs.get("as_json"):
                print_json(error_json(exc))
            sys.exit(1)
        except click.UsageError as exc:  # exit status 2, as for any malformed command line
            if kwargs.get("as_json"):
                print_json({"error": exc.format_message(), "kind": "UsageError"})
            raise
        except Exception as exc:
            message = (jvm_lost_message(exc) or connect_lost_message(exc)
                       or connect_missing_message(exc))
            if message is None:
                raise
            err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
            if kwargs.get("as_json"):
                print_json({"error": message, "kind": "SparkStopped"})
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def jvm_lost_message(exc: BaseException) -> str | None:
    """One line for a run whose Spark JVM went away under it (killed, or out of memory), or
    None for any other error. Py4J then fails with a refused or reset connection, or an empty
    answer, which says nothing of the cause; the run's failure is in the state store."""
    names = {type(e).__name__ for e in _chain(exc)}
    texts = " ".join(str(e) for e in _chain(exc))
    lost = bool(names & {"ConnectionRefusedError", "ConnectionResetError", "BrokenPipeError",
                         "Py4JNetworkError"}) or "Answer from Java side is empty" in texts
    if not lost:
        return None
    return ("the Spark JVM stopped during the run (killed, or out of memory: a file or record "
            "too large for spark.driver.memory); the run failed and its files stay for the "
            "next run. Rerun with --verbose to see the JVM's output; lower --max-record-bytes "
            "or give Spark more memory (spark.driver.memory)")


def connect_lost_message(exc: BaseException) -> str | None:
    """One line for a run whose Spark Connect server stopped answering (killed, stopped,
    restarted) after the client's retries (lakemark.spark.CONNECT_RETRY_S), or None for any
    other error: gRPC's own text is a dump of channel states that says nothing of the cause."""
    for error in _chain(exc):
        code = getattr(error, "getGrpcStatusCode", None)
        status = code() if callable(code) else getattr(error, "code", None)
        if callable(status):  # a raw grpc.RpcError
            status = status()
        if str(status) == "StatusCode.UNAVAILABLE":
            return ("the Spark Connect server stopped answering during the run (killed, "
                    "stopped or restarted); the run failed and its files stay for the next "
                    "run. Check it with `lakemark server status`, start it again with "
                    "`lakemark server start`, then rerun")
    return None


def connect_missing_message(exc: BaseException) -> str | None:
    """One line for a code path that reached for the JVM of a Spark Connect session (which
    has none in this process), or None for any other error. The paths lakemark knows of say
    their feature by name first (lakemark.spark.not_over_connect); this is the safety net."""
    for error in _chain(exc):
        get_class = getattr(error, "getCondition", None)
        if callable(get_class) and get_class() == "JVM_ATTRIBUTE_NOT_SUPPORTED":
            params = getattr(error, "getMessageParameters", lambda: None)() or {}
            attr = params.get("attr_name", "a JVM attribute")
            return (f"a feature of this run needs Spark's JVM in this process ({attr}) and "
                    "is not available over Spark Connect yet; run it without "
                    "--remote/SPARK_REMOTE")
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen
