"""``lakemark server start|stop|status``: a local Spark Connect server kept warm for jobs."""

from __future__ import annotations

import time
from typing import Any

import click

from ..connect_server import (DEFAULT_HOST, DEFAULT_PORT, ServerInfo, server_status,
                              start_server, stop_server)
from ._common import json_option
from ._ingest import _spark_conf
from ._output import handle_errors, print_json


@click.group()
def server() -> None:
    """A local Spark Connect server that jobs share.

    Every classic run starts its own JVM; a server started once and kept warm lets each
    scheduled `lakemark ingest files --remote sc://127.0.0.1:15002` (or SPARK_REMOTE) skip
    JVM start and warm-up. The server is PySpark's own (its bin/spark-submit and Connect jar:
    nothing is downloaded); its Python workers run this Python with lakemark importable.
    Pid and endpoint are kept in $LAKEMARK_HOME/connect/server.json, its output in
    server.log beside it, managed tables (saveAsTable) in warehouse/ beside it unless
    --conf spark.sql.warehouse.dir=... says otherwise (LAKEMARK_HOME defaults to ~/.lakemark).
    See docs/connect.md.
    """


@server.command("start")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address the server listens on (keep it on loopback unless the network "
              "is trusted: a Connect server has no authentication).")
@click.option("--port", type=int, default=DEFAULT_PORT, show_default=True,
              help="TCP port of the server's gRPC endpoint.")
@click.option("--master", metavar="URL",
              help="Spark master of the server [env LAKEMARK_SPARK_MASTER; local[*]].")
@click.option("--driver-memory", metavar="SIZE",
              help="Memory of the server's JVM (Spark's --driver-memory), e.g. 4g.")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="A Spark setting of the server (repeatable), over lakemark's defaults and "
              "$LAKEMARK_SPARK_CONF.")
@click.option("--timeout", type=click.FloatRange(min=1), default=180, show_default=True,
              metavar="SECONDS", help="How long to wait for the server to listen.")
@json_option
@handle_errors
def start(host: str, port: int, master: str | None, driver_memory: str | None,
          spark_conf: tuple[str, ...], timeout: float, as_json: bool) -> None:
    """Start the server in the background; return once it accepts connections.

    Refused in one line when a lakemark server is already up or the port is in use.
    """
    info = start_server(host=host, port=port, master=master, conf=_spark_conf(spark_conf),
                        driver_memory=driver_memory, timeout=timeout)
    if as_json:
        print_json(_info_json(info))
    else:
        click.echo(f"up: {info.endpoint} (pid {info.pid}, master {info.master}); "
                   f"log {info.log}")


@server.command("stop")
@json_option
@handle_errors
def stop(as_json: bool) -> None:
    """Stop the server (it has 30 s to end cleanly, then it is killed)."""
    info = stop_server()
    if as_json:
        print_json({"stopped": info is not None, **(_info_json(info) if info else {})})
    elif info is None:
        click.echo("down: no lakemark Connect server was running")
    else:
        click.echo(f"stopped: {info.endpoint} (pid {info.pid})")


@server.command("status")
@json_option
@handle_errors
def status(as_json: bool) -> None:
    """Whether the server is up: endpoint, pid and uptime, in one line (or --json).

    Exit status 0 when up, 1 when down (for scripts: `lakemark server status || …`).
    """
    info = server_status()
    if as_json:
        print_json(_info_json(info) if info else {"up": False})
    elif info is None:
        click.echo("down: no lakemark Connect server is running")
    else:
        uptime = _duration(time.time() - info.started_at)
        click.echo(f"up: {info.endpoint} (pid {info.pid}, up {uptime}, master {info.master})")
    if info is None:
        raise SystemExit(1)


def _info_json(info: ServerInfo) -> dict[str, Any]:
    return {"up": True, "endpoint": info.endpoint, "pid": info.pid, "host": info.host,
            "port": info.port, "master": info.master,
            "uptime_s": round(time.time() - info.started_at, 1), "log": info.log}


def _duration(seconds: float) -> str:
    """``3h 4m``, ``5m 2s`` or ``7s``."""
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60}m"
    if s >= 60:
        return f"{s // 60}m {s % 60}s"
    return f"{s}s"
