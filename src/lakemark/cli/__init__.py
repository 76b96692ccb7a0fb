"""The ``lakemark`` command. It only parses, calls the library and prints.

Subcommands: ``ingest files`` (the zero-code incremental job), ``ingest s3-events`` and
``ingest s3-incremental`` (event-driven S3 ingestion), ``run`` (a script that uses the
API), ``bookmark show|history|reset|rewind|mark-processed``, ``runs list|show``,
``lineage extract|scan|analyze`` (static column lineage of Glue jobs) and ``demo``.
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..redaction import redact_excepthook
from ._bookmark import bookmark
from ._demo import demo
from ._ingest import ingest
from ._lineage import lineage
from ._ingest_events import s3_events, s3_incremental
from ._run import run
from ._runs import runs

__all__ = ["main", "cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="lakemark")
def cli() -> None:
    """lakemark: incremental ETL for Apache Spark.

    Every run of a job processes only the input that earlier runs have not processed, with AWS
    Glue's job-bookmark semantics, and shows exactly what each run took.

    The bookmark state lives in the store named by --state or LAKEMARK_STATE
    (default: sqlite:///~/.lakemark/state.db).
    """


ingest.add_command(s3_events)
ingest.add_command(s3_incremental)
cli.add_command(ingest)
cli.add_command(run)
cli.add_command(bookmark)
cli.add_command(runs)
cli.add_command(demo)
cli.add_command(lineage)


def main() -> None:
    """Console-script entry point."""
    sys.excepthook = redact_excepthook  # an unexpected traceback is printed without credentials
    cli(prog_name="lakemark")
