"""The ``lakemark`` command. It only parses, calls the library and prints.

Subcommands: ``ingest files`` (the zero-code incremental job), ``ingest s3-events`` and
``ingest s3-incremental`` (event-driven S3 ingestion), ``run`` (a script that uses the
API), ``bookmark show|history|reset|rewind|mark-processed``, ``runs list|show``,
``state prune`` (retention of old runs), ``schema show|reset`` (tracked source schemas),
``quarantine list|retry`` (source files set aside as unreadable),
``lineage extract|scan|analyze`` (static column lineage of Glue jobs), ``jobs list`` and
``files find`` (the console's views of a store), ``ui`` (the web console), ``server
start|stop|status`` (a local Spark Connect server) and ``demo``.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

import click

from .. import __version__

__all__ = ["main", "cli"]


def _load_ingest() -> click.Command:
    from ._ingest import ingest
    from ._ingest_events import s3_events, s3_incremental

    ingest.add_command(s3_events)
    ingest.add_command(s3_incremental)
    return ingest


#: Subcommand name → loader. A command's module (and what it imports: Spark, sqlglot, …) is
#: imported only when that command runs, so `lakemark bookmark show` starts in a fraction of
#: a second.
_COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("", ""),
    "run": ("._run", "run"),
    "bookmark": ("._bookmark", "bookmark"),
    "runs": ("._runs", "runs"),
    "state": ("._state", "state"),
    "schema": ("._schema", "schema"),
    "quarantine": ("._quarantine", "quarantine"),
    "demo": ("._demo", "demo"),
    "lineage": ("._lineage", "lineage"),
    "jobs": ("._jobs", "jobs"),
    "files": ("._files", "files"),
    "ui": ("._ui", "ui"),
    "server": ("._server", "server"),
}


class _LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        if cmd_name == "ingest":
            return _load_ingest()
        import importlib

        module, attr = _COMMANDS[cmd_name]
        command = getattr(importlib.import_module(module, __name__), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="lakemark")
def cli() -> None:
    """lakemark: incremental ETL for Apache Spark.

    Every run of a job processes only the input that earlier runs have not processed, with AWS
    Glue's job-bookmark semantics, and shows exactly what each run took.

    The bookmark state lives in the store named by --state or LAKEMARK_STATE
    (default: sqlite:///~/.lakemark/state.db).
    """


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Console-script entry point: run the command, then end the process at once.

    Exit status: 0 on success, 1 on a reported error, 2 on a malformed command line (a
    malformed ``--state`` URL included; a store that cannot be opened is 1). The
    process ends with ``os._exit`` after flushing output and running ``atexit`` handlers:
    native threads of deltalake/Arrow still alive at interpreter teardown can otherwise abort
    a command that succeeded ("terminate called without an active exception", status 134).
    """
    from ..session.jvm_stderr import enable

    enable()
    _leave(_run(argv))


def _run(argv: Sequence[str] | None) -> int:
    """Run the command line; its exit status, whatever way it ended."""
    try:
        result = cli.main(args=list(argv) if argv is not None else None, prog_name="lakemark",
                          standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        click.echo(str(exc.code), err=True)
        return 1
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except BaseException:  # unexpected: show it (without credentials), never as a success
        from ..redaction import redact

        sys.stderr.write(redact(traceback.format_exc()))
        return 1
    return result if isinstance(result, int) else 0


def _leave(code: int) -> NoReturn:
    from ..session.jvm_stderr import drain

    try:
        atexit._run_exitfuncs()
    finally:
        drain()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
