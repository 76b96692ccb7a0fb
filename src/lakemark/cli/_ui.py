"""``lakemark ui``: serve the web console (lakemark.console.app) over a state store."""

from __future__ import annotations

import ipaddress
import os

import click

from ..errors import ConfigError, EnvironmentProblem
from ..redaction import redact
from ..state import open_store
from ._common import state_option, state_url_of
from ._output import console, handle_errors

__all__ = ["TOKEN_ENV", "is_loopback", "ui"]

#: The environment variable that gives the token when ``--token`` is not.
TOKEN_ENV = "LAKEMARK_UI_TOKEN"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("ui")
@state_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any address other than loopback needs --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on.")
@click.option("--token", default=None, metavar="TOKEN",
              help=f"Every request must carry it (Authorization: Bearer TOKEN, or ?token=TOKEN "
                   f"once in the browser) [env {TOKEN_ENV}].")
@click.option("--stale-after", "stale_after_h", type=click.FloatRange(min=0), default=24.0,
              show_default=True, metavar="HOURS",
              help="A job whose last successful run ended longer ago is marked stale.")
@click.option("--lineage", "lineage_folder", metavar="FOLDER",
              help="Show the column lineage of this export folder (what `lakemark lineage "
                   "extract` wrote; scripts are analysed, never run) on the Lineage page.")
@click.option("--lineage-events", metavar="FILE",
              help="Show the lineage runs reported: the OpenLineage events file runs write "
                   "with LAKEMARK_OPENLINEAGE=file:FILE.")
@handle_errors
def ui(state_url: str | None, host: str, port: int, token: str | None,
       stale_after_h: float, lineage_folder: str | None, lineage_events: str | None) -> None:
    """Serve the operator's console, read-only: jobs (with their set-aside files), a job's
    runs and charts, a run's stage timings, files and set-aside, retaken and changed files,
    bookmark history, a job's tracked schema versions, which run took a file, column lineage
    (--lineage, --lineage-events), and a JSON API under /api/ (docs/console.md)."""
    token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback(host) and not token:
        raise ConfigError(f"--host {host} is not a loopback address: give --token "
                          f"(or {TOKEN_ENV}) so only those who hold it can read the console")
    try:
        import uvicorn

        from ..console._lineage import LineageViews
        from ..console.app import create_app
    except ImportError as exc:
        raise EnvironmentProblem(f"lakemark ui needs the ui extra ({exc.name} is missing): "
                                 "pip install 'lakemark[ui]'") from None
    lineage = LineageViews(lineage_folder, lineage_events)  # a wrong path fails before serving
    url = state_url_of(state_url)
    store = open_store(url, read_only=True)
    try:
        app = create_app(store, token=token, stale_after_s=stale_after_h * 3600,
                         lineage=lineage)
        shown = f"[{host}]" if ":" in host else host
        console.print(f"lakemark console for {redact(store.url)} on http://{shown}:{port}/ "
                      "(Ctrl-C stops it)", highlight=False)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        store.close()
